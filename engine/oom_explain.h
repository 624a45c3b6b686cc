// Reading a PyTorch CUDA out-of-memory message and saying why it happened.
//
// Stages: (1) find the caching allocator's OOM message in pasted text (tracebacks, log prefixes, wrapped
// lines), (2) parse its sizes into exact byte counts (OomReport), (3) check the numbers against each other
// (check_consistency), (4) classify the failure into one kind with reasons and an ordered list of concrete
// fixes (OomDiagnosis).
//
// The two message layouts, as c10/cuda/CUDACachingAllocator.cpp builds them (sizes come from its
// format_size: "N bytes" up to 1 KiB, else two decimals of KiB / MiB / GiB):
//
//   legacy (torch < 2.1):
//     CUDA out of memory. Tried to allocate R (GPU d; T total capacity; A already allocated; F free;
//     [C allowed; ] V reserved in total by PyTorch) ...
//     (torch <= 1.3 printed "U cached)" instead of "V reserved in total by PyTorch)", U = V - A.)
//   current (torch >= 2.1):
//     CUDA out of memory. Tried to allocate R. GPU d has a total capacity of T of which F is free.
//     {Process p has P memory in use. | Including non-PyTorch memory, this process has S memory in use. }*
//     [C allowed; ]Of the allocated memory A is allocated by PyTorch, [with G allocated in private pools
//     (e.g., CUDA Graphs), ]and U is reserved by PyTorch but unallocated. ...
//     The process entries come from NVML in its order; there are none when NVML is unavailable.
//
// R is the size of the segment the allocator tried to cudaMalloc (already rounded: 2 MiB for small
// requests, 20 MiB for 1-10 MiB ones), not the tensor size. The message is raised after the allocator has
// already released every unsplit cached block, so U is memory it holds in blocks it could not free.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

enum class OomFormat : uint8_t { legacy, current };

// Sizes from one OOM message, in bytes. Printed sizes carry two decimals, so each value is exact to within
// half a unit of the last printed digit (e.g. +-5.12 MiB for a GiB value); parsing rounds to the nearest
// byte of the printed decimal value.
struct OomReport {
  OomFormat format = OomFormat::current;
  int device = -1;                          // GPU index; -1 when the message left it out
  int64_t requested_bytes = 0;              // "Tried to allocate"
  int64_t total_bytes = 0;                  // device capacity
  int64_t free_bytes = 0;                   // device free memory (cudaMemGetInfo) at the failure
  int64_t process_in_use_bytes = 0;         // this process per NVML incl. CUDA context; 0 when not reported
  bool process_in_use_reported = false;     // current format and NVML listed this process
  int64_t allocated_bytes = 0;              // held by live tensors (incl. private pools in current format)
  int64_t reserved_unallocated_bytes = 0;   // cached by the allocator but not handed out
  int64_t other_processes_bytes = 0;        // sum of "Process N has M memory in use" (0 in legacy format)
  int other_process_count = 0;
  int64_t cap_bytes = 0;                    // "X allowed;" from set_per_process_memory_fraction; 0 when unset
  int64_t private_pool_bytes = 0;           // "with G allocated in private pools"; 0 when absent
  int64_t reserved_printed_bytes = -1;      // legacy "V reserved in total by PyTorch"; -1 when not printed

  // Half a unit of each size's last printed digit ("3.30 GiB": 0.005 GiB): how far the true value may lie from
  // the parsed one. 0 for sizes printed in bytes and for reports built in code; summed over listed processes.
  struct Tolerance {
    int64_t requested = 0, total = 0, free = 0, process_in_use = 0, allocated = 0, reserved_unallocated = 0,
            reserved_printed = 0, other_processes = 0, cap = 0;
  } tolerance;

  // allocated + reserved-but-unallocated: what memory_reserved() reported.
  int64_t reserved_bytes() const { return allocated_bytes + reserved_unallocated_bytes; }
};

// Finds and parses the first complete allocator OOM message in `text`.
// Accepted around and inside it: any prefix ("torch.OutOfMemoryError: ", "RuntimeError: ", traceback lines),
// line breaks and repeated spaces anywhere (wrapped or hard-wrapped pastes), "[rankN]:" line prefixes from
// torchrun, a missing tail (the message may stop anywhere after the last size it needs).
// Throws InputError (field "oom_message" or the size's field name) when no OOM message is found, a required
// part is missing, a number is malformed, or a size overflows int64 bytes.
OomReport parse_oom_message(std::string_view text);

enum class OomKind : uint8_t {
  capacity,         // the work itself needs more than the device (or cap) holds
  fragmentation,    // enough bytes are cached by this process, but not in one usable block
  other_processes,  // other processes on the GPU hold what this one needed
  fraction_cap,     // set_per_process_memory_fraction refused while the device had room
  inconsistent,     // the message's numbers cannot all hold at one instant: no classification is honest
};

std::string_view oom_kind_name(OomKind k);

struct OomDiagnosis {
  OomKind kind = OomKind::capacity;
  std::string verdict;                        // one line
  std::vector<std::string> reasons;           // facts behind the verdict, with numbers
  std::vector<std::string> recommendations;   // ordered: most likely to help and cheapest first
  bool consistent = true;                     // check_consistency found nothing
  std::vector<std::string> inconsistencies;   // check_consistency's sentences
};

// The message's numbers checked against each other, each comparison within the sizes' printed tolerance:
//   allocated <= reserved (legacy prints both), reserved <= in use on the device (capacity - free),
//   free <= capacity, cap <= capacity, the request > what was free and under the cap (else nothing refused it),
//   NVML's figure for this process >= reserved.
// One sentence per disagreement: which numbers, by how much, and what produces such a message (a cap the
// message does not show, other processes freeing memory between the failure and the report, readings taken
// at different moments, numbers edited by hand). Empty when they agree.
std::vector<std::string> check_consistency(const OomReport& r);

// Pure function of the report; the decision rules are documented in oom_explain.cpp. Inconsistent numbers
// (check_consistency) give kind `inconsistent` and recommendations for getting numbers one can trust.
OomDiagnosis classify(const OomReport& r);

// PyTorch's format_size layout ("20.00 MiB", "512 bytes") so explanations read like the message.
std::string format_size(int64_t bytes);

}  // namespace memplan
