// The allocation event stream: what the step replay emits and what allocator models consume.
//
// Contract: events are in execution order. Every free names a block that an earlier alloc created and that
// was not freed since. `size_bytes` is the size PyTorch requests (before the caching allocator's 512 B
// rounding). Integer time is the index of the event in the stream.
#pragma once
#include <cstdint>
#include <vector>

namespace memplan {

struct MemEvent {
  enum class Action : uint8_t { alloc, free };
  Action action = Action::alloc;
  int32_t block = 0;        // dense id, shared by an alloc and its free
  int64_t size_bytes = 0;   // requested bytes
  int32_t stream = 0;       // CUDA stream; 0 is the default stream
  // A workspace the kernel can do without: when the allocator cannot provide it (after releasing its cache),
  // ATen's cuDNN convolution moves on to the next engine of the heuristic's list instead of raising OOM. The
  // replay then skips the alloc and its free (the next engine is taken to need no workspace).
  bool optional = false;
};

using MemEventStream = std::vector<MemEvent>;

}  // namespace memplan
