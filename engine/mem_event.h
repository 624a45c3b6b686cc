// The allocation event stream: what the step replay emits and what allocator models consume.
//
// Contract: events are in execution order. Every free names a block that an earlier alloc created and that
// was not freed since. `size_bytes` is the size PyTorch requests (before the caching allocator's 512 B
// rounding). Integer time is the index of the event in the stream.
#pragma once
#include <cassert>
#include <cstdint>
#include <vector>

namespace memplan {

// 16 bytes: an estimate writes one per alloc and free (77,393 for a Llama-2-70B training run), so the stream is
// one of the largest tables it writes (every page written for the first time is a page fault). The constructor
// keeps the fields' historical order (action, block, size, stream, optional) for braced initialisation; the
// members are laid out widest first.
struct MemEvent {
  enum class Action : uint8_t { alloc, free };
  MemEvent() = default;
  constexpr MemEvent(Action a, int32_t block_id, int64_t bytes, int32_t stream_id = 0, bool is_optional = false)
      : size_bytes(bytes), block(block_id), stream(static_cast<int16_t>(stream_id)), action(a), optional(is_optional) {
    assert(stream_id >= INT16_MIN && stream_id <= INT16_MAX && "stream ids are small (engine/dist/rank_hooks.h)");
  }
  int64_t size_bytes = 0;   // requested bytes
  int32_t block = 0;        // dense id, shared by an alloc and its free
  int16_t stream = 0;       // CUDA stream; 0 is the default stream (a rank's side streams are 1-3)
  Action action = Action::alloc;
  // A workspace the kernel can do without: when the allocator cannot provide it (after releasing its cache),
  // ATen's cuDNN convolution moves on to the next engine of the heuristic's list instead of raising OOM. The
  // replay then skips the alloc and its free (the next engine is taken to need no workspace).
  bool optional = false;
};
static_assert(sizeof(MemEvent) == 16);

using MemEventStream = std::vector<MemEvent>;

}  // namespace memplan
