// Family sets 67 .. 75 of the thirty-sixth session, held out: each written by a helper from the installed
// transformers 5.17 modeling file and predicted before any device saw it (data/validation/predictions/
// familiesNN-holdout.json; the merged tree predicts their memory figures byte for byte), measured on an H100
// (data/validation/h100-families.jsonl; the environments in NOTES.md). No builder changed after measuring: these are
// the blind errors, and the bounds round them up.
#include <catch2/catch.hpp>

#include "family_test_helpers.h"

using memplan::testing::FamilyBounds;

namespace {
bool in_set(const memplan::ValidationCase& c, const char* prefix) { return c.holdout && c.id.rfind(prefix, 0) == 0; }
}  // namespace

TEST_CASE("family set 67, held out: MiniCPM3 predicted blind", "[family][set67][holdout]") {
  // MLA with MiniCPM's scaled embedding (an int64 scale buffer's fresh copy), depth-scaled residuals and the head's
  // division: allocated within 0.02 %, reserved within 0.31 % (LoRA, 20 MiB under); both capped verdicts right
  // (envs/h100-families71-env.json).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f67-"); },
      [](const std::string& id) {
        // generate()'s KV cache: 2.02 MiB predicted, 2.0 measured, which the harness rounds to 0.1 MiB
        if (id == "f67-mcpm-infer-bf16-b3s300-g16") return FamilyBounds{0.0003, 0.0035, 0.015};
        return FamilyBounds{0.0003, 0.0035};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 7);  // the lower cap ran out of memory, as predicted
}

TEST_CASE("family set 68, held out: LongCat-Flash predicted blind", "[family][set68][holdout]") {
  // Two MLA sublayers and two dense MLPs a layer, the shortcut MoE's routed and identity experts through the Python
  // expert loop: fp32 eager, checkpointed and generate() within 0.02 % allocated; amp bf16 -1.68 %, amp fp16 with
  // accumulation -1.29 % and the published widths' bf16 LoRA -1.58 % allocated (128 .. 307 MiB under: not traced,
  // no stream was recorded); reserved within 1.67 %; both capped verdicts right.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return in_set(c, "f68-"); },
      [](const std::string& id) {
        if (id == "f68-lcs-ampbf16-b3s1000" || id == "f68-lcs-ampbf16-b3s1000-cap-hi")
          return FamilyBounds{0.0175, 0.011};
        if (id == "f68-lcs-ampfp16-b4s700-acc2") return FamilyBounds{0.0135, 0.0135};
        if (id == "f68-lcp1-bf16-lora-b3s300") return FamilyBounds{0.0165, 0.0175};
        // generate()'s KV cache: 4.05 MiB predicted, 4.0 measured, which the harness rounds to 0.1 MiB
        if (id == "f68-lcp-infer-bf16-b3s300-g16") return FamilyBounds{0.0003, 0.006, 0.015};
        return FamilyBounds{0.0003, 0.006};
      },
      "h100-families.jsonl");
  CHECK(checked.size() == 7);
}

// Sets 69 .. 75 were measured in the session's last call (envs/h100-families72-env.json; the device's installed
// sources byte-identical to the builders'). Its deadline reached 11 of the 56 rows: the published widths' rows
// took up to 79 s each. Every row measured is within 0.01 %, and 8 of 8 capped verdicts are right.

TEST_CASE("family sets 69 .. 75, held out: their first rows predicted blind", "[family][set69][set70][set71][set72]"
          "[set73][set75][holdout]") {
  // MiMo-V2-Flash amp bf16 (sinks, hybrid windows, DeepSeek-V3's router), Laguna amp bf16 (per-layer heads, softplus
  // gates) and its upper cap, Hy3 at its published widths (4 layers of 16 experts) bf16 and its upper cap, K-EXAONE's
  // upper cap (bf16, published widths), Code World Model's upper cap (amp bf16 at 6144 wide), HyperCLOVA X's upper
  // cap (amp bf16, peri-LN): allocated exact to the 0.1 MiB but MiMo's (0.8 MiB over), reserved within 2 MiB.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        for (const char* p : {"f69-", "f70-", "f71-", "f72-", "f73-", "f74-", "f75-"})
          if (in_set(c, p)) return true;
        return false;
      },
      [](const std::string&) { return FamilyBounds{0.0001, 0.0001}; }, "h100-families.jsonl");
  CHECK(checked.size() == 8);  // and three lower caps (sets 69, 71, 73) ran out of memory, as predicted
}
