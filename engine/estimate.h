// The engine's front door: ModelSpec + RunConfig -> a training-step (or inference) memory estimate.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/alloc/allocator_model.h"
#include "engine/alloc/caching_allocator.h"
#include "engine/alloc/step_repeat.h"
#include "engine/arch/spec.h"
#include "engine/dist/dist.h"
#include "engine/graph.h"
#include "engine/inference_replay.h"
#include "engine/run_config.h"
#include "engine/step_replay.h"

namespace memplan {

struct EstimateOptions {
  ReplayOptions replay;
  InferenceReplayOptions inference;  // cfg.mode == inference
  // capacity_bytes: the device or per-process cap (0 = unlimited). The unlimited replay always runs (what the
  // step needs); a capped replay runs as well when a capacity is set (whether and where it would OOM).
  AllocatorOptions allocator;
  bool simulate_allocator = true;
};

struct Estimate {
  int64_t params = 0;             // parameter count (trainable and frozen)
  int64_t trainable_params = 0;
  int64_t weights_bytes = 0;      // allocated after building the model
  ReplayResult replay;            // steps, peak with its ledger, the event stream (inference: no steps; peak
                                  // and events of the inference run)
  InferenceResult inference;      // cfg.mode == inference: prefill / KV cache / generate figures
  AllocatorStats allocator;       // the caching allocator replayed over the whole run without a cap
  std::optional<AllocatorStats> capped;  // the same under the capacity, when one was given
  int64_t capacity_bytes = 0;     // the cap the capped replay ran under (0: none)
  bool expandable_segments = false;
  // cfg.distributed.enabled(): rank cfg.distributed.rank's wrapper figures (engine/dist/dist.h); the replay,
  // ledger, events and allocator stats above are that rank's.
  std::optional<dist::RankReport> distributed;
  // The verdict under the capacity: the caching allocator replayed under the cap, with its free-and-retry
  // (and, for expandable segments, unmapping) before an OOM. Given the real event stream the allocator
  // model is exact; with the replayed stream it got all 76 measured capped runs right (data/validation/
  // NOTES.md), including runs whose natural reserved peak exceeds the cap yet fit through a retry.
  bool fits() const { return !capped || !capped->oom; }
  // Peak of the live tensors (the ledger's total): requested bytes rounded to 512 B.
  int64_t peak_allocated_bytes() const { return replay.peak.bytes; }
  // torch.cuda.max_memory_allocated as PyTorch counts it: block sizes, with the unsplit tails (< 1 MiB) of large
  // blocks; the allocator replay's peak over the steps / passes, or the tensor peak without the allocator model.
  int64_t torch_peak_allocated_bytes() const {
    return allocator.window_peak_allocated_bytes > 0 ? allocator.window_peak_allocated_bytes : replay.peak.bytes;
  }
  // Inference: the KV figure as the harness measures it, memory_allocated after the prefill minus before (block
  // sizes: a K/V or workspace block cut from a cached segment keeps its unsplit tail); the live-tensor delta
  // when the allocator was not replayed.
  int64_t torch_kv_cache_bytes() const {
    const auto& a = allocator.allocated_after_events_bytes;
    return a.size() == 2 ? a[1] - a[0] : inference.kv_cache_bytes;
  }
  // What the run reserves at its peak: under the cap when one is set and the run fits (release-and-retry can
  // hold it below the natural peak), else the natural peak of the uncapped replay.
  int64_t run_peak_reserved_bytes() const {
    return capped && !capped->oom ? capped->peak_reserved_bytes : allocator.peak_reserved_bytes;
  }
};

Estimate estimate(const ModelSpec& spec, const RunConfig& cfg, const EstimateOptions& opt = {});

// Memory that estimates reuse from one call to the next, for a caller that runs many (the planner confirms
// candidate after candidate, a benchmark repeats one). An estimate writes several MB of tables (Llama-2-70B
// training: 77,393 events of 16 B, 38,697 tracker blocks of 16 B, 12,537 StepRepeat traces of 32 B, the
// allocator's id map); freed at its end, they leave more free memory at the top of the heap than glibc's trim
// threshold, glibc returns it to the kernel, and the next estimate page-faults every page in again: 924
// faults, about 1 ms of a 6 ms estimate on the development VM. With a workspace those tables are written into
// memory the previous estimate wrote, and (measured, glibc 2.36) what an estimate still frees stays below the
// threshold: no page faults after the first estimate (bench/README.md, part 8).
//
// What it lends: the step replay's event stream and block table (MemoryTracker::Storage), the caching
// allocator's user-id map and StepRepeat's traces (AllocatorReplayStorage), to training estimates (one rank
// of a distributed run included); an inference estimate does not use it.
// Contract: an estimate's result never depends on the workspace: only the buffers' capacity carries over, each
// is emptied before use. The estimate returned still owns its event stream; recycle() hands it back once the
// caller is done with it (without that, the next estimate writes a fresh stream). One workspace serves one
// estimate at a time: one per thread. An estimate that throws leaves the workspace valid (some buffers then
// empty). The first estimate with a fresh workspace costs what estimate() without one costs.
struct EstimateWorkspace {
  // Takes back the event stream of an estimate the caller is done with (`e` keeps its other figures), for the
  // next estimate to write its stream into.
  void recycle(Estimate&& e) {
    tracker.events = std::move(e.replay.events);
    e.replay.events.clear();
  }

  MemoryTracker::Storage tracker;    // the step replay's (replay_training's `lent`)
  AllocatorReplayStorage allocator;  // the caching-allocator replays' (AllocatorReplayOptions::lent)
};
Estimate estimate(const ModelSpec& spec, const RunConfig& cfg, const EstimateOptions& opt, EstimateWorkspace& ws);

Estimate estimate_graph(const Graph& g, const RunConfig& cfg, const EstimateOptions& opt = {});

// The graph one rank of a distributed training step runs (cfg.distributed.enabled()): tensor parallel's local
// shard rewritten by dist::tensor_parallel_rewrite and shard_sequence, built at FSDP2's param_dtype where one is
// set. `compute` is the run configuration it is replayed with, `built_dtype` the dtype its parameters are built
// in. estimate() replays it; an event dump labels its ops by it (the model's own graph has other ops).
struct RankGraph {
  Graph graph;
  RunConfig compute;
  DType built_dtype = DType::f32;
};
RankGraph rank_graph(const ModelSpec& spec, const RunConfig& cfg);

// Validates cfg.distributed (world / tp / pp / cp degrees, rank, mixed-precision dtypes); throws InputError naming
// the field (distributed.<key>).
void validate_distributed(const RunConfig& cfg, const ModelSpec& spec);

// Validates a RunConfig; throws InputError naming the field.
void validate_run_config(const RunConfig& cfg, const ModelSpec& spec);

}  // namespace memplan
