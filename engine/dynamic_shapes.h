// Dynamic shapes: a run whose sequence length changes from step to step, replayed through the caching allocator,
// so the growth of reserved memory ("fine at first, OOM after an hour") is predicted — and what length bucketing
// or expandable segments buy against it.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/alloc/caching_allocator.h"
#include "engine/arch/spec.h"
#include "engine/run_config.h"

namespace memplan {

struct DynamicStep {
  int64_t seq_len = 0;
  int64_t peak_allocated_bytes = 0;
  int64_t peak_reserved_bytes = 0;      // highest reserved so far, up to the end of this step
  int64_t reserved_at_end_bytes = 0;
};

struct DynamicRun {
  std::vector<DynamicStep> steps;
  int64_t peak_allocated_bytes = 0;
  int64_t peak_reserved_bytes = 0;
  int64_t num_alloc_retries = 0;
  bool oom = false;
};

// Replays one training step per entry of `seq_lens` (cfg.seq_len is ignored) and the allocator over all of them.
// `progress`, when set, is called with the fraction done in [0, 1] (building the step graphs, then the replay).
DynamicRun replay_dynamic(const ModelSpec& spec, const RunConfig& cfg, const std::vector<int64_t>& seq_lens,
                          const AllocatorOptions& allocator, const std::function<void(double)>& progress = {});

// Lengths rounded up to a multiple of `bucket` (padding), the usual cure for shape-driven fragmentation.
std::vector<int64_t> bucketed(const std::vector<int64_t>& seq_lens, int64_t bucket);

// Deterministic lengths uniform in [min, max] (a 64-bit LCG with `seed`), for a "length distribution" input.
std::vector<int64_t> sample_lengths(int64_t min, int64_t max, int64_t count, uint64_t seed);

}  // namespace memplan
