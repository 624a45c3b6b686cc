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
};

using MemEventStream = std::vector<MemEvent>;

}  // namespace memplan
