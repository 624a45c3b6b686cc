// Pasted PyTorch OOM text: parse, check its numbers against each other, classify, and format every size as
// explain-oom prints it.
#include "engine/errors.h"
#include "engine/oom_explain.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  try {
    const OomReport r = parse_oom_message(fuzz::as_text(data, size));
    (void)check_consistency(r);
    const OomDiagnosis d = classify(r);
    (void)oom_kind_name(d.kind);
    for (int64_t b : {r.requested_bytes, r.total_bytes, r.free_bytes, r.allocated_bytes,
                      r.reserved_unallocated_bytes, r.other_processes_bytes, r.cap_bytes})
      (void)format_size(b);
  } catch (const InputError&) {
  }
  return 0;
}
