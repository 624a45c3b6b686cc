// Family sets 54 .. 59 of the thirty-fourth session, held out: each written by a helper from the installed
// transformers 5.17 modeling file and predicted before any device saw it (data/validation/predictions/
// familiesNN-holdout.json; the merged tree predicts their memory figures byte for byte), measured on an H100
// (data/validation/h100-families.jsonl; the environments in NOTES.md). No builder changed after measuring: these are
// the blind errors, and the bounds round them up. Rows a device call's deadline left unmeasured are not in the file.
#include <catch2/catch.hpp>

#include "family_test_helpers.h"

using memplan::testing::FamilyBounds;

namespace {
bool in_set(const memplan::ValidationCase& c, const char* prefix) { return c.holdout && c.id.rfind(prefix, 0) == 0; }
}  // namespace

TEST_CASE("family set 56, held out: GLM-4.7-Flash (glm4_moe_lite) predicted blind", "[family][set56][holdout]") {
  // DeepSeek-V3's statements at GLM-4.7-Flash's widths with mlp_layer_types: allocated within 0.01 %, reserved exact
  // but the fp32 row (+0.09 %, over).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f56-"); },
      [](const std::string& id) {
        if (id == "f56-glm47f-2l-fp32-b2s300") return FamilyBounds{0.0001, 0.001};
        return FamilyBounds{0.0001, 0.0001};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the lower cap ran out of memory, as predicted; the LoRA and generate() rows measured in
                               // the thirty-fifth session (still blind)
}

TEST_CASE("family set 57, held out: Arcee Trinity (afmoe) predicted blind", "[family][set57][holdout]") {
  // Allocated exact to 0.01 %; reserved within 0.07 % (generate(), under by 2 MiB).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f57-"); },
      [](const std::string&) { return FamilyBounds{0.0001, 0.0008}; }, "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the lower cap ran out of memory, as predicted; the LoRA row measured in the
                               // thirty-fifth session (still blind)
}

TEST_CASE("family set 54, held out: NanoChat predicted blind", "[family][set54][holdout]") {
  // Blind: allocated within 0.13 % in training, the generate() row -2.16 % (34 MiB short); reserved within 0.34 %
  // but the LoRA row (-9.12 %, one 1000 MiB block short) and generate() (-2.11 %). Traced in the thirty-fifth session
  // from their whole-run streams (recordings/families35s): ReLUSquaredActivation's argument (fc1's output) lives
  // until the square returns (phi_parts.h relu_squared), and the builder had freed it after the relu. Every row is
  // now exact; the bounds below are the fixed model's, no longer blind.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f54-"); },
      [](const std::string&) { return FamilyBounds{0.0001, 0.0001}; },
      "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the caps, measured in the thirty-fifth session: the lower ran out of memory, as predicted
}

TEST_CASE("family set 55, held out: VaultGemma predicted blind", "[family][set55][holdout]") {
  // Allocated within 0.02 %, reserved within 0.01 % on every row; both capped verdicts right.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f55-"); },
      [](const std::string&) { return FamilyBounds{0.0002, 0.0001}; }, "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the lower cap ran out of memory, as predicted
}

TEST_CASE("family set 58, held out: DeepSeek-V3.2 predicted blind", "[family][set58][holdout]") {
  // Blind: allocated within 0.05 %; reserved exact but the eager bf16 row (-5.28 %, under) and the fp32 row (+6.51 %,
  // over). The thirty-fifth session's whole-run streams of those two rows (recordings/families35s) corrected the
  // indexer: index_scores lives until it returns, topk's values die before the int32 cast, and the multi-block radix
  // select's scratch (engine/arch/topk.h). Allocated moved by at most 4 MiB (the amp rows +0.01 -> +0.03 %); the two
  // reserved misses stay: their streams replay to the measured figures, ours still differ in where the second
  // step's blocks land (not traced further).
  // Of the two rows at the published widths, generate() was measured in the thirty-fifth session (exact, blind); the
  // training row was left by both calls' deadlines.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f58-"); },
      [](const std::string& id) {
        if (id == "f58-v32s-bf16-eager-b3s1000") return FamilyBounds{0.0003, 0.053};
        if (id.rfind("f58-v32s-ampbf16-b2s2600", 0) == 0) return FamilyBounds{0.0003, 0.0001};
        if (id == "f58-v32s-fp32-b1s2400") return FamilyBounds{0.0006, 0.066};
        if (id == "f58-v32p-infer-bf16-b2s2200-g12") return FamilyBounds{0.0001, 0.0002};  // reserved 2 MiB under
        return FamilyBounds{0.0002, 0.0001};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 8);  // the lower cap ran out of memory, as predicted
}

TEST_CASE("family set 59, held out: T5Gemma predicted blind", "[family][set59][holdout]") {
  // Every training row exact to the MiB in allocated and reserved (amp, bf16, fp32, eager, checkpointed, an encoder
  // wider than its decoder); generate() -0.20 % allocated, exact reserved.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f59-"); },
      [](const std::string& id) {
        if (id == "f59-t5gbb-infer-bf16-b4s500-g16") return FamilyBounds{0.0021, 0.0001};
        return FamilyBounds{0.0001, 0.0001};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 9);  // the lower cap ran out of memory, as predicted (thirty-fifth session)
}
