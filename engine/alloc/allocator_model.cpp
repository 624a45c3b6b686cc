// replay_allocator() driver and the NoFragmentation lower bound. See allocator_model.h for the contracts.
#include "engine/alloc/allocator_model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/alloc/caching_allocator.h"
#include "engine/alloc/step_repeat.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// A template over the model: replaying the caching allocator calls its alloc / free and reads its counters
// without a virtual call per event (the shipped models are final classes).
template <class Model>
AllocatorStats replay(Model& model, const MemEventStream& events, const AllocatorReplayOptions& options) {
  AllocatorStats s;
  const int64_t retries_at_start = model.num_alloc_retries();
  const int64_t device_allocs_at_start = model.num_device_allocs();
  s.peak_reserved_bytes = s.reserved_at_peak_reserved_bytes = model.reserved_bytes();
  s.peak_allocated_bytes = model.allocated_bytes();
  s.allocated_at_peak_reserved_bytes = model.allocated_bytes();
  if (options.record_reserved_curve) s.reserved_curve_bytes.reserve(events.size());

  std::vector<bool> skipped;  // optional workspaces the allocator could not provide
  size_t sample = 0;
  auto take_samples = [&](int64_t events_done) {
    for (; sample < options.allocated_after_events.size() && options.allocated_after_events[sample] <= events_done;
         ++sample)
      s.allocated_after_events_bytes.push_back(model.allocated_bytes());
  };
  // Repeated training steps (step_repeat.h): the caching allocator only.
  constexpr bool kRepeats = std::is_same_v<Model, CachingAllocator>;
  std::optional<StepRepeat> repeat;
  if (kRepeats && !options.step_begin_events.empty()) repeat.emplace(events, options);
  int64_t step_start = repeat ? repeat->next_boundary() : -1;
  for (size_t i = 0; i < events.size(); ++i) {
    take_samples(static_cast<int64_t>(i));
    if constexpr (kRepeats) {
      if (static_cast<int64_t>(i) == step_start) {
        if (repeat->at_step_start(model, s)) break;  // the remaining steps derived
        step_start = repeat->next_boundary();
      }
    }
    const MemEvent& e = events[i];
    if (e.action == MemEvent::Action::alloc) {
      const bool served = model.alloc(e.block, e.size_bytes, e.stream);
      if constexpr (kRepeats) {
        if (repeat) repeat->after_alloc(model);
      }
      if (!served) {
        if (e.optional) {
          if (static_cast<size_t>(e.block) >= skipped.size()) skipped.resize(static_cast<size_t>(e.block) + 1, false);
          skipped[static_cast<size_t>(e.block)] = true;
          ++s.num_skipped_workspaces;
          continue;
        }
        s.oom = true;
        s.oom_event_index = static_cast<int64_t>(i);
        s.oom_requested_bytes = e.size_bytes;
        s.oom_allocated_bytes = model.allocated_bytes();
        s.oom_reserved_bytes = model.reserved_bytes();
        if (options.record_reserved_curve) s.reserved_curve_bytes.push_back(model.reserved_bytes());
        break;
      }
    } else if (static_cast<size_t>(e.block) < skipped.size() && skipped[static_cast<size_t>(e.block)]) {
      continue;
    } else {
      model.free(e.block);
    }
    const int64_t reserved = model.reserved_bytes();
    const int64_t allocated = model.allocated_bytes();
    if (reserved > s.peak_reserved_bytes) {
      s.peak_reserved_bytes = reserved;
      s.reserved_at_peak_reserved_bytes = reserved;
      s.allocated_at_peak_reserved_bytes = allocated;
    }
    if (allocated > s.peak_allocated_bytes) s.peak_allocated_bytes = allocated;
    if (static_cast<int64_t>(i) >= options.window_begin_event &&
        (options.window_end_event < 0 || static_cast<int64_t>(i) < options.window_end_event) &&
        allocated > s.window_peak_allocated_bytes)
      s.window_peak_allocated_bytes = allocated;
    if (options.record_reserved_curve) s.reserved_curve_bytes.push_back(reserved);
  }
  take_samples(INT64_MAX);
  if constexpr (kRepeats) {
    if (repeat) repeat->give_back_storage();
  }
  s.reserved_at_end_bytes = model.reserved_bytes();
  s.allocated_at_end_bytes = model.allocated_bytes();
  s.num_alloc_retries = model.num_alloc_retries() - retries_at_start;
  s.num_device_allocs = model.num_device_allocs() - device_allocs_at_start;
  s.num_segments = model.num_segments();
  return s;
}

}  // namespace

AllocatorStats replay_allocator(AllocatorModel& model, const MemEventStream& events, const AllocatorReplayOptions& options) {
  if (auto* caching = dynamic_cast<CachingAllocator*>(&model)) return replay(*caching, events, options);
  return replay(model, events, options);
}

bool NoFragmentation::alloc(int32_t block, int64_t size_bytes, int32_t /*stream*/) {
  if (block < 0) throw InputError("block", std::to_string(block), "block id must be >= 0");
  if (static_cast<size_t>(block) >= live_bytes_.size()) live_bytes_.resize(static_cast<size_t>(block) + 1, -1);
  if (live_bytes_[block] >= 0) throw InputError("block", std::to_string(block), "allocated twice without a free");
  const int64_t bytes = CachingAllocator::round_size(size_bytes, 0);
  const int64_t next = checked_add(allocated_bytes_, bytes, "allocated bytes");
  if (capacity_bytes_ > 0 && next > capacity_bytes_) return false;
  allocated_bytes_ = next;
  live_bytes_[block] = bytes;
  return true;
}

void NoFragmentation::free(int32_t block) {
  if (block < 0 || static_cast<size_t>(block) >= live_bytes_.size() || live_bytes_[block] < 0)
    throw InputError("block", std::to_string(block), "free of a block that is not live");
  allocated_bytes_ -= live_bytes_[block];
  live_bytes_[block] = -1;
}

}  // namespace memplan
