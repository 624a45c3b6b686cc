// One line of a validation JSONL file: parse, and estimate the case as `memplan validate` does.
#include "engine/errors.h"
#include "fuzz/fuzz_common.h"
#include "models/json_input.h"
#include "models/validation_case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    const ValidationCase c = parse_validation_case(parse_json_input(fuzz::as_text(data, size), "line"));
    (void)estimate(c.model, c.run, estimate_options_for(c));
  } catch (const InputError&) {
  }
  return 0;
}
