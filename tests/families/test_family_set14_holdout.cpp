// The held-out family set 14: the task heads (sequence / token classification on llama, mistral, qwen2, qwen3,
// gpt2, bert, roberta, xlm-roberta, distilbert, modernbert, deberta-v2), bart, mbart, whisper, llama4_text,
// granitemoe / granitemoeshared, hunyuan_v1_dense and apertus on other widths and settings (odd batch shapes,
// GradScaler, accumulation, checkpointing, eager, generation with a chunked cache). Every case was predicted at
// db8bcb3 before it was measured (data/validation/predictions/families14-holdout.json). Each case is checked here
// at the bounds the builders were written to (allocated 0.1 %, reserved 1 %); the two blind misses and their
// fixes are listed below (data/validation/NOTES.md, "Family sets 13 and 14").
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "family_test_helpers.h"
#include "fidelity_cases.h"

namespace {

bool held_out_set(const memplan::ValidationCase& c) { return c.holdout && c.id.rfind("f14-", 0) == 0; }

memplan::testing::FamilyBounds bounds(const std::string&) {
  // Every row at the builders' bounds. Two missed blind and were traced after measuring (NOTES.md, "Family sets
  // 13 and 14"): f14-whisperm-ampfp16-b8t448 -1.50 % allocated / -1.13 % reserved (cuDNN's SDPA output in
  // Whisper's contiguous q layout, copied by transpose().contiguous(); now -0.02 % / 0.00 %) and
  // f14-deberta-seqcls-ampfp16-b16s512-ckpt-eager -0.27 % allocated (two Python lifetimes visible only under
  // checkpointing; now exact).
  return {0.001, 0.01};
}

}  // namespace

TEST_CASE("family set 14, held out: peak allocated and reserved as predicted before measuring",
          "[family][set14][holdout]") {
  const auto checked = memplan::testing::check_family_cases(held_out_set, bounds);
  CHECK(checked.size() == 37);
  int exact_allocated = 0;
  for (const auto& r : checked) exact_allocated += std::abs(r.allocated_err) < 0.0005 ? 1 : 0;
  CHECK(exact_allocated == 37);  // every row within 0.05 % since the two fixes
}
