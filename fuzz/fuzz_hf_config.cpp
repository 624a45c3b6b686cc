// HF config.json (and the other model documents load_model accepts): parse, import, count parameters, and
// estimate a small run of what was imported.
#include "engine/errors.h"
#include "fuzz/fuzz_common.h"
#include "models/json_input.h"
#include "models/load_model.h"
#include "models/param_count.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    const nlohmann::json doc = parse_json_input(fuzz::as_text(data, size), "model");
    const ModelSpec m = model_from_json(doc, "fuzz");
    (void)param_count(m);
    (void)estimate(m, fuzz::small_run(m, size));
  } catch (const InputError&) {
  }
  return 0;
}
