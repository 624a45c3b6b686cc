// A calibration profile in the memplan-calibration/1 schema, as `estimate --calibration FILE` reads it.
#include "engine/errors.h"
#include "fuzz/fuzz_common.h"
#include "models/calibration_profile.h"
#include "models/json_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    (void)parse_calibration_profile(parse_json_input(fuzz::as_text(data, size), "--calibration"));
  } catch (const InputError&) {
  }
  return 0;
}
