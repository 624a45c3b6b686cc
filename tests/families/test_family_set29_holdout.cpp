// The held-out family set 29 (twenty-second session, calibrate/cases/families29/frozen_experts.py): frozen expert
// weights in the mixture-of-experts families family set 28 did not cover: LoRA on the attention of Mixtral,
// Qwen3-MoE (checkpointed, amp), Qwen2-MoE (a shared expert), OLMoE and DeepSeek-V2, and a Qwen3-MoE full fine-tune
// with two layers frozen. Predicted at d3b6a94 with family set 28's rule (a product saves an operand only for the
// other operand's gradient, so frozen experts' grouped_mm keeps no input), before the call that measured them
// (data/validation/predictions/families29-holdout.json). Blind: allocated exact on all 6, reserved exact on 5 and
// -0.03 % on OLMoE.
#include <catch2/catch.hpp>

#include <string>

#include "family_test_helpers.h"

TEST_CASE("family set 29, held out: frozen experts (LoRA on MoE attention, frozen layers) as predicted",
          "[family][set29][holdout][lora]") {
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return c.holdout && c.id.rfind("f29-", 0) == 0; },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.0005, 0.0005}; });
  CHECK(checked.size() == 6);
}
