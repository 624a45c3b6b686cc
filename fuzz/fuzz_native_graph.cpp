// A native JSON model graph (models/NATIVE-FORMAT.md): parse, validate, build through GraphBuilder and
// estimate a small run, as `memplan estimate --model graph.json` does.
#include "engine/errors.h"
#include "fuzz/fuzz_common.h"
#include "models/json_input.h"
#include "models/load_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    const nlohmann::json doc = parse_json_input(fuzz::as_text(data, size), "model");
    const ModelSpec m = model_from_json(doc, "fuzz");
    (void)estimate(m, fuzz::small_run(m, size));
  } catch (const InputError&) {
  }
  return 0;
}
