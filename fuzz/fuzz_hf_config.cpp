// HF config.json (and the other model documents load_model accepts): parse, import, count parameters, and
// estimate a small run of what was imported.
#include "engine/errors.h"
#include "fuzz/fuzz_common.h"
#include "models/load_model.h"
#include "models/param_count.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    // load_model_text: what `--model -` and the Python module's model= dict go through.
    const ModelSpec m = load_model_text(fuzz::as_text(data, size), "fuzz");
    (void)param_count(m);
    (void)estimate(m, fuzz::small_run(m, size));
  } catch (const InputError&) {
  }
  return 0;
}
