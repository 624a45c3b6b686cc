// Step replay: runs a Graph through model build and N training steps (or an inference pass) as PyTorch
// executes them, emitting every allocation and free on integer time.
//
// Stages of one training step:
//   for each micro-batch: batch -> forward (saved tensors retained, Python references dropped at last use,
//   autocast cache cleared at forward end) -> loss -> backward (nodes in reverse creation order; a checkpointed
//   layer is recomputed when backward first reaches it; gradients allocated, output gradients and saved tensors
//   released, parameter gradients accumulated) -> batch freed;
//   then optimizer.step() (state on the first step, temporaries) and zero_grad(set_to_none) freeing .grad.
//
// Non-tensor allocations PyTorch makes through the caching allocator are replayed too: cuBLAS/cuBLASLt
// workspaces on the first GEMM of the forward thread and of the autograd thread (MECHANICS.md §3).
//
// Repeated steps: from the third step on, a step of the same graph that starts from the same replay state as
// the step before (refcounts, storages, gradient buffers, .grad, workspaces, live bytes and ledger) after a
// step that freed every block it allocated and re-rowed no older one is not replayed: the replay is
// deterministic in that state and the optimizer no longer changes after its first step, so the step's events
// are the previous step's with fresh block ids and its figures the previous step's (ReplayOptions::repeat_steps).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/graph.h"
#include "engine/memory_tracker.h"
#include "engine/run_config.h"

namespace memplan {

namespace dist { class RankHooks; }

struct StepStats {  // allocated bytes at phase boundaries, as the validation harness measures them
  int64_t start = 0, batch = 0, fwd_peak = 0, after_fwd = 0, bwd_peak = 0, micro_rest_peak = 0, after_bwd = 0,
          opt_peak = 0, end = 0, step_peak = 0;
  PeakInfo peak;  // the step's peak with its ledger
  int64_t event_begin = 0, event_end = 0;  // [begin, end) indices of the step's events in ReplayResult::events
};

// One layer's share of the steady-state forward (first micro-batch), the table practitioners build with hooks.
struct LayerStats {
  std::string name;
  int64_t param_count = 0;
  int64_t param_bytes = 0;
  int64_t saved_bytes = 0;           // what the layer's forward leaves allocated (kept for backward)
  int64_t transient_peak_bytes = 0;  // the highest point inside its forward above where it started
};

struct ReplayOptions {
  // Step 1 lacks optimizer state; step 2 is the steady state of the live set. Step 3 matters for the
  // allocator under a cap: a release-and-retry in step 2 leaves a different layout, and measured capped
  // runs (gpt2-medium, bert-large; data/validation/NOTES.md) fit step 2 but OOM in step 3.
  int32_t steps = 3;
  int64_t cublas_workspace_bytes = 32 << 20;  // per (thread, stream), compute capability 9.x
  int64_t cublaslt_workspace_bytes = 1 << 20;
  bool record_timeline = false;
  // One rank of a distributed step: the wrapper's own allocations (engine/dist/rank_hooks.h). Not owned.
  dist::RankHooks* rank_hooks = nullptr;
  // A step from the third on that provably repeats the step before it (same graph, same replay state at its
  // start, the step before left the live set as it found it) is not replayed: its events are the previous
  // step's with fresh block ids, its figures the previous step's. false: replay every step (tests compare).
  // Never with rank_hooks or record_timeline.
  bool repeat_steps = true;
};

struct ReplayResult {
  int64_t weights_bytes = 0;            // allocated after building the model
  std::vector<StepStats> steps;         // one per training step
  std::vector<LayerStats> layers;       // per layer of the Graph, in order
  PeakInfo peak;                        // steady-state peak (last step)
  MemEventStream events;                // the whole run, for allocator models
  std::vector<int64_t> timeline;        // per-event allocated bytes when requested
  std::vector<Location> timeline_where;
  std::vector<Ledger> timeline_ledgers;
  int32_t repeated_steps = 0;  // steps not replayed (ReplayOptions::repeat_steps)
};

// `lent`: storage to write the event stream and the block table into (MemoryTracker::Storage; not owned, may be
// null): the stream ends in ReplayResult::events, the block table goes back to `lent`. Results never depend on it.
ReplayResult replay_training(const Graph& g, const RunConfig& cfg, const ReplayOptions& opt = {},
                             MemoryTracker::Storage* lent = nullptr);

// Dynamic shapes: step k runs step_graphs[k] (graphs of one model at different sequence lengths, built with the
// same RunConfig otherwise). Memory, parameters, gradients and optimizer state carry across steps, so the
// allocator sees the real history. `opt.steps` is ignored.
ReplayResult replay_training_sequence(const std::vector<const Graph*>& step_graphs, const RunConfig& cfg,
                                      const ReplayOptions& opt = {}, MemoryTracker::Storage* lent = nullptr);

}  // namespace memplan
