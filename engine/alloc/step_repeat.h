// Repeated training steps in a caching-allocator replay (AllocatorReplayOptions::step_begin_events).
//
// A training step after the second usually repeats the one before it: the same events, block ids renamed, from
// the same allocator layout. The allocator is deterministic and reads a block id only to find the block, so
// such a step does exactly what the previous one did and need not be replayed. Two cases are recognised, each
// proved in O(blocks + events) before anything is skipped:
//   same:  the layout at step k's start equals the layout at step k-1's start (segments, blocks, the device
//          address space, counters) up to the ids of the live blocks. Step k repeats step k-1 move for move:
//          cudaMallocs, releases, retries and skipped workspaces included.
//   grown: the layout at step k's start is step k-1's plus the segments step k-1 cudaMalloc'd, each one whole
//          free block now; step k-1 served every request from the cache or from a new segment (no release, no
//          retry, no expandable segments). Step k finds those segments cached and takes each where step k-1
//          cudaMalloc'd it: it repeats step k-1 block for block, provided no cached new segment is a better fit
//          for a request step k-1 served from the cache, nor for the request that made another new segment
//          (checked request by request). Step k then takes nothing from the device: reserved stays at its start.
// Step k ends in the layout it started from (step k-1 ended there), so a later step repeating its
// predecessor's events is a `same` repeat of step k.
//
//   events   |- step k-1 --------|- step k ---------|- step k+1 --------|
//   layout   L                   L' = L (+ new)     L'                  L'
//   replayed  yes                 no: derived        no: derived
//
// What the derived steps contribute: allocated bytes after each event are step k-1's (no peak moves; the
// window of window_peak_allocated must start by step k-1's start), reserved bytes step k-1's (same) or its
// end's (grown), the counters step k-1's (same) or nothing (grown); the reserved curve repeats accordingly.
// Not taken when an allocated_after_events sample falls inside the derived steps; the replay then goes on.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/alloc/allocator_model.h"
#include "engine/alloc/caching_allocator.h"
#include "engine/mem_event.h"

namespace memplan {

// An alloc of the previous step, as StepRepeat's new_segments_unseen reads it: 32 bytes, one per alloc of a step
// (12,537 for a Llama-2-70B step; AllocTrace's 48 bytes made it the replay's largest buffer, page-faulted in anew
// on every estimate). The cudaMalloc'd segment of a new_segment alloc is in trace_segments_, in order.
struct StepRepeatTrace {
  int64_t size, cand_size, cand_addr;
  int32_t stream;
  bool new_segment;  // else served from the cache
  bool small;
};

class [[gnu::visibility("hidden")]] StepRepeat {  // it holds CachingAllocator's (hidden) types
 public:
  // The trace buffer comes from options.lent when one is lent, and goes back there with give_back_storage().
  StepRepeat(const MemEventStream& events, const AllocatorReplayOptions& options);
  void give_back_storage();

  // Event index of the next step start not yet reached, or -1.
  int64_t next_boundary() const { return next_ < begins_.size() ? begins_[next_] : -1; }
  // Called at next_boundary(), before its event, with the replay's figures so far. True: every remaining step
  // was derived; `s` then holds their contributions (curve, skipped workspaces, derived_steps) and the model is
  // where replaying them would have left it (layout, block ids, counters).
  bool at_step_start(CachingAllocator& model, AllocatorStats& s);
  // After each alloc event: how the model served it (needed for the `grown` case). A request served otherwise
  // than from the cache or a new segment rules the `grown` case out: tracing stops there.
  void after_alloc(const CachingAllocator& model) {
    if (!tracing_) return;
    const CachingAllocator::AllocTrace& t = model.last_alloc();
    if (t.path == CachingAllocator::AllocTrace::Path::other) {
      tracing_ = false;
      return;
    }
    traces_.push_back({t.size, t.cand_size, t.cand_addr, t.stream, t.path == CachingAllocator::AllocTrace::Path::new_segment, t.small});
    if (traces_.back().new_segment) trace_segments_.emplace_back(t.seg_size, t.seg_addr);
  }
  using Trace = StepRepeatTrace;

 private:
  struct Mark {  // the replay at a step start
    int64_t event = 0;
    int64_t retries = 0, device_allocs = 0, skipped = 0;
    size_t curve = 0;  // reserved-curve entries so far
    CachingAllocator::Layout layout;
    std::vector<int32_t> users;  // ids of the live blocks, in layout order
  };
  bool derive_tail(CachingAllocator& model, AllocatorStats& s, const Mark& cur);

  const MemEventStream& events_;
  const AllocatorReplayOptions& options_;
  std::vector<int64_t> begins_;  // step starts, ascending; the last step ends with the stream
  std::vector<bool> attempt_;    // by step: whether the steps from it on could be derived (lengths, options)
  size_t next_ = 0;
  bool have_prev_ = false;
  Mark prev_;  // the previous step's start
  bool tracing_ = false;
  std::vector<Trace> traces_;  // the allocs since prev_ (while tracing_)
  std::vector<std::pair<int64_t, int64_t>> trace_segments_;  // (size, address) of their new segments
};

// What a caching-allocator replay lends out and takes back between replays (AllocatorReplayOptions::lent): the
// allocator's user-id map (CachingAllocator's lent_live / take_live) and StepRepeat's traces (about 400 KB for a
// Llama-2-70B step). Only the capacity is reused.
struct AllocatorReplayStorage {
  std::vector<int32_t> live;
  std::vector<StepRepeatTrace> traces;
};

}  // namespace memplan
