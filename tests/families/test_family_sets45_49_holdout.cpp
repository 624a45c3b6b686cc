// Family sets 45 .. 49 (LLaVA-OneVision, ERNIE, BioGPT, XLM-RoBERTa-XL, MPT), held out: each predicted before any
// device saw it (data/validation/predictions/families45..49-holdout.json) and measured on an H100 in the
// thirty-second session (data/validation/h100-families.jsonl). Sets 45, 46 and 48 are checked as predicted (no
// builder change since); BioGPT's position ids (set 47) and MPT's attention (set 49) were corrected after their rows
// were measured, from the installed 5.17 modeling files (notes-f47 / notes-f49). The bounds round the measured
// errors up; each miss is listed in the notes.
#include <catch2/catch.hpp>

#include "family_test_helpers.h"

namespace {
using memplan::testing::FamilyBounds;
bool in_set(const memplan::ValidationCase& c, const char* prefix) { return c.holdout && c.id.rfind(prefix, 0) == 0; }
}  // namespace

TEST_CASE("family sets 45 .. 48, held out: predicted blind", "[family][set45][set46][set47][set48][holdout]") {
  // LLaVA-OneVision: allocated within 0.07 % (the 7B-width row), reserved within 0.33 % (amp anyres_max).
  const auto s45 = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f45-"); },
      [](const std::string&) { return FamilyBounds{0.0008, 0.004}; }, "h100-families.jsonl");
  CHECK(s45.size() == 12);  // the thirteenth, the lower cap, ran out of memory as predicted
  // ERNIE: every row within 0.01 % allocated and exact reserved.
  const auto s46 = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f46-"); },
      [](const std::string&) { return FamilyBounds{0.0002, 0.0002}; }, "h100-families.jsonl");
  CHECK(s46.size() == 7);
  // BioGPT: allocated within 0.01 %, reserved exact in training (blind: within 0.04 % / 0.23 %); +1.05 % and +5.28 %
  // (68 MiB) reserved on the two generate() rows until the thirty-fourth session's whole-run stream showed the
  // cache update freeing the projected k after v's cat (the tuple assignment, bart_attention): 0.00 and -0.12 %.
  const auto s47 = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f47-"); },
      [](const std::string& id) {
        return id.find("-infer-") != std::string::npos ? FamilyBounds{0.0005, 0.0015} : FamilyBounds{0.0002, 0.0002};
      },
      "h100-families.jsonl");
  CHECK(s47.size() == 8);
  // XLM-RoBERTa-XL: allocated within 0.01 %, reserved within 0.10 %.
  const auto s48 = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f48-"); },
      [](const std::string&) { return FamilyBounds{0.0002, 0.0011}; }, "h100-families.jsonl");
  CHECK(s48.size() == 7);
}

TEST_CASE("family set 49 (MPT) after the 5.17 corrections", "[family][set49][holdout]") {
  // Allocated within 0.02 %; reserved within 1.2 % but the checkpointed row (+3.98 %, over). The thirty-fifth
  // session's stream of that row with frames showed the block's attn_outputs and the MLP's GELU / down_proj outputs
  // bound until their functions return: the checkpointed row +3.98 -> 0.00 %, the other rows unchanged. The thirty-fourth
  // session's stream of that row showed the training mask as sdpa_mask's [1, 1, S, L] boolean (no attention mask
  // is passed or made): the bf16 row -0.11 -> 0.00 %. The generate() row's
  // config says use_cache false (mpt-7b's published value), so generate() recomputed the whole sequence at every
  // token without a cache: -57 % reserved under the cached replay, exact (allocated -0.04 %, reserved 0.00 %) since
  // the replay models the uncached loop (inference_replay.h; after the fact: the mechanism was written from this
  // row, and held-out set 53 tests it blind).
  const auto s49 = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f49-"); },
      [](const std::string& id) {
        if (id.find("-infer-") != std::string::npos) return FamilyBounds{0.0005, 0.001};
        return FamilyBounds{0.0003, 0.012};
      },
      "h100-families.jsonl");
  CHECK(s49.size() == 7);
}
