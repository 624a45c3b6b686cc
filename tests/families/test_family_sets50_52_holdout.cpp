// Family sets 50 (CodeGen), 51 (Swin V2) and 52 (Qwen2-Audio), held out: each written by a helper from the
// installed transformers 5.17 modeling file and predicted before any device saw it
// (data/validation/predictions/families50/51/52-holdout.json; the merged tree predicts their memory figures byte for
// byte), measured on an H100 in the thirty-third session (data/validation/h100-families.jsonl,
// envs/h100-families59..62-env.json). No builder changed after measuring: these are the blind errors, and the
// bounds round them up.
#include <catch2/catch.hpp>

#include "family_test_helpers.h"

using memplan::testing::FamilyBounds;

namespace {
bool in_set(const memplan::ValidationCase& c, const char* prefix) { return c.holdout && c.id.rfind(prefix, 0) == 0; }
}  // namespace

TEST_CASE("family set 50, held out: CodeGen predicted blind", "[family][set50][holdout]") {
  // Every training row exact (allocated and reserved); generate() +0.02 % allocated, -0.48 % reserved (not traced).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f50-"); },
      [](const std::string& id) {
        if (id == "f50-cg2b8-infer-bf16-b4s900-g16") return FamilyBounds{0.0003, 0.0049};
        return FamilyBounds{0.0001, 0.0001};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the lower cap ran out of memory, as predicted
}

TEST_CASE("family set 51, held out: Swin V2 predicted blind", "[family][set51][holdout]") {
  // Allocated within 0.14 % but the stage-checkpointed row (-0.55 %); reserved within 0.24 % but three amp rows,
  // over: tiny b32 +2.66 %, checkpointed small +2.60 %, base window 16 +0.90 %. The whole-run streams of the first
  // two (recordings/families51/) show normalize's backward allocating fp32 where the replay allocates 16-bit
  // (NOTES.md); not yet traced further.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f51-"); },
      [](const std::string& id) {
        if (id == "f51-v2t-ampbf16-b32" || id == "f51-v2t-ampbf16-b32-cap-hi") return FamilyBounds{0.0013, 0.027};
        if (id == "f51-v2s10-ampbf16-b36-ckpt") return FamilyBounds{0.0056, 0.027};
        if (id == "f51-v2b16-ampbf16-b15") return FamilyBounds{0.0005, 0.0091};
        return FamilyBounds{0.0015, 0.0025};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the lower cap ran out of memory, as predicted
}

TEST_CASE("family set 52, held out: Qwen2-Audio predicted blind", "[family][set52][holdout]") {
  // Allocated within 0.01 % on every row; reserved exact but fp32 (-0.03 %) and the text-only serving row (+0.73 %,
  // over: not traced).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f52-"); },
      [](const std::string& id) {
        if (id == "f52-q2a-infer-bf16-b2s1024-g16-a4t2") return FamilyBounds{0.0002, 0.0074};
        return FamilyBounds{0.0002, 0.0004};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the lower cap ran out of memory, as predicted
}
