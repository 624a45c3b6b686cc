// A calibration profile in the memplan-calibration/1 schema.
#include "engine/errors.h"
#include "fuzz/fuzz_common.h"
#include "models/calibration_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    (void)parse_calibration_profile(fuzz::as_text(data, size));
  } catch (const InputError&) {
  }
  return 0;
}
