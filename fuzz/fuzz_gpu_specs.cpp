// A GPU spec document in the data/gpus.json schema.
#include "engine/errors.h"
#include "fuzz/fuzz_common.h"
#include "models/gpu_specs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    (void)parse_gpu_specs(fuzz::as_text(data, size));
  } catch (const InputError&) {
  }
  return 0;
}
