// Allocator models: what a device allocator does with a MemEventStream, behind one small interface.
//
// Stages: (1) a model consumes events one at a time (alloc / free) and keeps its own block layout;
// (2) replay_allocator() drives a model over a stream and records the figures PyTorch's memory stats would show
// (memory_allocated / memory_reserved, their peaks, the OOM point).
//
// Two models ship (as XLA's heap simulator reports a no-fragmentation bound next to the packed peak):
//   - CachingAllocator (caching_allocator.h): PyTorch's CUDACachingAllocator, segment by segment.
//   - NoFragmentation: reserved == allocated (512 B rounded requests), the lower bound any packing can reach.
//
// Contract: a model never throws on a failed allocation; it returns false and leaves itself in the state
// PyTorch would be in when it raises OutOfMemoryError (cached segments already released). Bad input
// (negative size, free of an unknown block) is an InputError.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/mem_event.h"

namespace memplan {

struct AllocatorReplayStorage;  // step_repeat.h

class AllocatorModel {
 public:
  virtual ~AllocatorModel() = default;

  // Serves `size_bytes` (requested, before rounding) for dense id `block` on `stream`.
  // Returns false when the device (or the configured cap) cannot hold it: an OOM.
  virtual bool alloc(int32_t block, int64_t size_bytes, int32_t stream) = 0;
  // Returns the block to the model. The block must be live.
  virtual void free(int32_t block) = 0;

  // torch.cuda.memory_allocated(): sizes of live blocks after rounding, unsplit tails included.
  virtual int64_t allocated_bytes() const = 0;
  // torch.cuda.memory_reserved(): bytes obtained from the device (cudaMalloc'd or mapped).
  virtual int64_t reserved_bytes() const = 0;
  // cudaMalloc-level counters (0 for models without segments).
  virtual int64_t num_alloc_retries() const { return 0; }
  virtual int64_t num_segments() const { return 0; }
  virtual int64_t num_device_allocs() const { return 0; }
};

// The figures a replay produces. All byte counts are as PyTorch's allocator stats report them.
struct AllocatorStats {
  int64_t peak_reserved_bytes = 0;
  int64_t peak_allocated_bytes = 0;
  int64_t reserved_at_end_bytes = 0;
  int64_t allocated_at_end_bytes = 0;
  // At the first event where reserved reached its peak.
  int64_t allocated_at_peak_reserved_bytes = 0;
  int64_t reserved_at_peak_reserved_bytes = 0;
  int64_t num_alloc_retries = 0;
  int64_t num_segments = 0;       // segments held at the end (or at the OOM)
  int64_t num_skipped_workspaces = 0;  // optional workspaces (MemEvent::optional) that did not fit
  int64_t num_device_allocs = 0;  // cudaMalloc / page-map calls during the replay
  // torch.cuda.max_memory_allocated over the events from AllocatorReplayOptions::window_begin_event on: block
  // sizes, so a large block's unsplit tail (under 1 MiB, MECHANICS §1) counts as allocated.
  int64_t window_peak_allocated_bytes = 0;
  // Training steps not replayed because they repeat the step before them (AllocatorReplayOptions::
  // step_begin_events, step_repeat.h): every figure here is what replaying them gives.
  int64_t derived_steps = 0;

  // OOM: the replay stops at the first allocation that does not fit. The allocated / reserved figures are
  // those PyTorch's OutOfMemoryError message quotes (after releasing cached segments).
  bool oom = false;
  int64_t oom_event_index = -1;
  int64_t oom_requested_bytes = 0;
  int64_t oom_allocated_bytes = 0;
  int64_t oom_reserved_bytes = 0;

  // reserved bytes after each event; empty unless AllocatorReplayOptions::record_reserved_curve.
  std::vector<int64_t> reserved_curve_bytes;
  // Allocated bytes (block sizes, as torch.cuda.memory_allocated) after the first n events, for each n of
  // AllocatorReplayOptions::allocated_after_events, in that order (an n past an OOM reads the OOM's state).
  std::vector<int64_t> allocated_after_events_bytes;
};

struct AllocatorReplayOptions {
  bool record_reserved_curve = false;  // off by default: one int64 per event
  // AllocatorStats::window_peak_allocated_bytes is taken over the events from this index on, up to (excluding)
  // window_end_event (-1: to the end of the stream).
  int64_t window_begin_event = 0;
  int64_t window_end_event = -1;
  // Event counts to sample allocated bytes at (ascending); see AllocatorStats::allocated_after_events_bytes.
  std::vector<int64_t> allocated_after_events{};
  // First event of each training step, ascending, the last step running to the end of the stream; empty: no
  // steps known. The caching allocator then derives, rather than replays, steps that provably repeat their
  // predecessor (step_repeat.h), with the same figures; the model ends in the same layout, block ids included.
  std::vector<int64_t> step_begin_events{};
  // Storage a caching-allocator replay writes into instead of fresh memory (EstimateWorkspace; not owned, may
  // be null): only its capacity carries over, the figures never depend on it. Other models ignore it.
  AllocatorReplayStorage* lent = nullptr;
};

// Drives `model` over `events` from the model's current state. Peaks start from the model's state at entry.
AllocatorStats replay_allocator(AllocatorModel& model, const MemEventStream& events, const AllocatorReplayOptions& options = {});

// Lower bound: every allocation takes exactly its 512 B-rounded size and nothing is cached, so
// reserved == allocated at every instant. `capacity_bytes` (0 = unlimited) caps allocated.
class NoFragmentation final : public AllocatorModel {
 public:
  explicit NoFragmentation(int64_t capacity_bytes = 0) : capacity_bytes_(capacity_bytes) {}
  bool alloc(int32_t block, int64_t size_bytes, int32_t stream) override;
  void free(int32_t block) override;
  int64_t allocated_bytes() const override { return allocated_bytes_; }
  int64_t reserved_bytes() const override { return allocated_bytes_; }

 private:
  int64_t capacity_bytes_;
  int64_t allocated_bytes_ = 0;
  std::vector<int64_t> live_bytes_;  // by block id; -1 when not live
};

}  // namespace memplan
