// `plan`'s and `fit`'s finalists re-estimated with the per-rank replay (issue 14): the closed forms of
// engine/plan/ rank thousands of configurations; the few that are listed are then replayed as one rank of the
// distributed step (estimate(spec, cfg) with cfg.distributed, engine/dist/), whose figure replaces the closed
// form where the replay models the configuration. Where it does not (pipeline parallel, Megatron's optimizer, a
// strategy engine/dist/ refuses), the closed form stays and the reason is reported.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/report.h"
#include "engine/arch/spec.h"
#include "engine/plan/search.h"
#include "engine/run_config.h"

namespace memplan::cli {

struct RankReplay {
  bool replayed = false;
  std::string closed_form_because;   // !replayed: why the closed form stands
  DistributedConfig dist;            // the configuration replayed (rank 0)
  RunConfig run;                     // the full run configuration replayed
  int64_t peak_allocated_bytes = 0;  // torch.cuda.max_memory_allocated as PyTorch counts it, rank 0
  int64_t peak_reserved_bytes = 0;   // the run's reserved peak (under the capacity when one is given)
  int64_t nccl_bytes = 0;            // outside the allocator (derived)
  int64_t device_bytes = 0;          // reserved + non-PyTorch (CUDA context, kernels) + NCCL
  bool fits = false;                 // within the capacity, the allocator replay under it included
};

// The run a candidate describes (micro-batch, accumulation, precision, optimizer, checkpointed layers) and its
// distributed configuration; `why` is set when the replay does not model it.
RunConfig candidate_run(const RunConfig& base, const plan::PlanCandidate& c, std::string& why);
// Rank 0 of the candidate's step, replayed; `d` is the per-GPU budget (capacity and non-PyTorch memory).
RankReplay replay_candidate(const ModelSpec& m, const RunConfig& base, const plan::PlanCandidate& c,
                            const DeviceBudget& d, bool expandable_segments = false);
// The same for a run configuration already built (fit's remedies).
RankReplay replay_run(const ModelSpec& m, const RunConfig& run, const DeviceBudget& d, bool expandable_segments = false);
// --json: {"replayed", "closed_form_because" | "rank", "world_size", "config", "peak_allocated_bytes", ...}.
nlohmann::json rank_replay_json(const RankReplay& r);
// The memplan flags that replay it: "--gpus 8 --strategy fsdp2 --tp 2 --sequence-parallel".
std::string dist_flags(const DistributedConfig& d);

}  // namespace memplan::cli
