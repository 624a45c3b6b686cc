#include "cli/plan_replay.h"

#include <algorithm>

#include "cli/report_dist.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "models/dist_config.h"

namespace memplan::cli {

namespace {
// plan's data-parallel frameworks as the replay's strategies; false: not replayed. Megatron's distributed
// optimizer has its own contiguous buffers; plan's zero1 is DeepSpeed's stage 1 (engine/plan/distributed.h: a
// reduce bucket, no DDP), while the replay's zero1 is torch's ZeroRedundancyOptimizer over DDP (DDP's gradient
// buckets as well): not the same run.
bool strategy_of(plan::DataParallel k, DistStrategy& out, std::string& why) {
  switch (k) {
    case plan::DataParallel::none: out = DistStrategy::none; return true;
    case plan::DataParallel::ddp: out = DistStrategy::ddp; return true;
    case plan::DataParallel::zero1:
      why = "plan's zero1 is DeepSpeed stage 1; the per-rank replay's zero1 is torch's ZeroRedundancyOptimizer over DDP";
      return false;
    case plan::DataParallel::zero2: out = DistStrategy::zero2; return true;
    case plan::DataParallel::zero3: out = DistStrategy::zero3; return true;
    case plan::DataParallel::fsdp2: out = DistStrategy::fsdp2; return true;
    case plan::DataParallel::megatron: why = "Megatron's distributed optimizer is not replayed"; return false;
  }
  return false;
}
}  // namespace

std::string dist_flags(const DistributedConfig& d) {
  std::string s = "--gpus " + std::to_string(d.world_size) + " --strategy " + std::string(dist_strategy_name(d.strategy));
  if (d.tp > 1) s += " --tp " + std::to_string(d.tp);
  if (d.sequence_parallel) s += " --sequence-parallel";
  if (d.offload != DistOffload::none) s += " --offload " + std::string(dist_offload_name(d.offload));
  return s;
}

RunConfig candidate_run(const RunConfig& base, const plan::PlanCandidate& c, std::string& why) {
  RunConfig rc = base;
  rc.precision = c.precision;
  rc.optimizer = c.optimizer;
  rc.batch_size = c.micro_batch;
  rc.grad_accum_steps = c.par.micro_batches;
  rc.grad_checkpointing = c.ckpt_layers > 0;
  rc.checkpoint_layers.clear();
  if (c.ckpt_layers > 0 && c.ckpt_layers < c.stage_layers) {
    rc.checkpoint_layers = c.checkpoint_layers;  // the confirmation's placement, else the last k layers
    if (rc.checkpoint_layers.empty())
      for (int64_t i = c.stage_layers - c.ckpt_layers; i < c.stage_layers; ++i) rc.checkpoint_layers.push_back(i);
  }
  DistributedConfig& d = rc.distributed;
  d = DistributedConfig{};
  if (c.par.pp > 1) {
    why = "pipeline parallel is not replayed yet";
    return rc;
  }
  if (!strategy_of(c.par.dp_kind, d.strategy, why)) return rc;
  d.world_size = c.par.world();
  d.tp = c.par.tp;
  d.sequence_parallel = c.par.sequence_parallel && c.par.tp > 1;
  d.offload = c.par.offload == plan::Offload::optimizer            ? DistOffload::optimizer
              : c.par.offload == plan::Offload::optimizer_and_params ? DistOffload::params
                                                                     : DistOffload::none;
  return rc;
}

RankReplay replay_run(const ModelSpec& m, const RunConfig& run, const DeviceBudget& d, bool expandable_segments) {
  RankReplay r;
  r.run = run;
  r.dist = run.distributed;
  try {
    DistributedConfig checked = run.distributed;
    finish_distributed(checked, m, run, kDistCaseFields);  // the surface's own checks (pp, dtypes, ...)
    r.nccl_bytes = dist_nccl_bytes(checked);
    const int64_t outside = checked_add(d.non_pytorch_bytes, r.nccl_bytes, "non-PyTorch bytes");
    EstimateOptions opt;
    opt.allocator.expandable_segments = expandable_segments;
    if (d.capacity_bytes > 0) opt.allocator.capacity_bytes = std::max<int64_t>(0, d.capacity_bytes - outside);
    // Two steps: the second has the optimizer state (steps 2 and 3 are identical); plan replays several.
    opt.replay.steps = 2;
    const Estimate e = estimate(m, run, opt);
    r.replayed = true;
    r.peak_allocated_bytes = e.torch_peak_allocated_bytes();
    r.peak_reserved_bytes = e.run_peak_reserved_bytes();
    r.nccl_bytes = nccl_bytes(e);
    r.device_bytes = checked_add(checked_add(r.peak_reserved_bytes, d.non_pytorch_bytes, "device bytes"), r.nccl_bytes,
                                 "device bytes");
    r.fits = e.fits() && (d.capacity_bytes <= 0 || r.device_bytes <= d.capacity_bytes);
  } catch (const InputError& e) {
    // What the replay does not model (a ZeRO stage or offload engine/dist/ refuses, an uneven tensor-parallel
    // split): the closed form stands, and says so.
    r.replayed = false;
    r.closed_form_because = e.what();
  }
  return r;
}

RankReplay replay_candidate(const ModelSpec& m, const RunConfig& base, const plan::PlanCandidate& c,
                            const DeviceBudget& d, bool expandable_segments) {
  std::string why;
  const RunConfig rc = candidate_run(base, c, why);
  if (!why.empty()) {
    RankReplay r;
    r.run = rc;
    r.closed_form_because = why;
    return r;
  }
  return replay_run(m, rc, d, expandable_segments);
}

nlohmann::json rank_replay_json(const RankReplay& r) {
  nlohmann::json j = {{"replayed", r.replayed}};
  if (!r.replayed) {
    j["closed_form_because"] = r.closed_form_because;
    return j;
  }
  j["rank"] = r.dist.rank;
  j["world_size"] = r.dist.world_size;
  j["config"] = nlohmann::json::parse(distributed_to_json(r.dist).dump());
  j["flags"] = r.dist.enabled() ? dist_flags(r.dist) : "";
  j["peak_allocated_bytes"] = r.peak_allocated_bytes;
  j["peak_reserved_bytes"] = r.peak_reserved_bytes;
  j["nccl_bytes"] = r.nccl_bytes;
  j["device_bytes"] = r.device_bytes;
  j["fits"] = r.fits;
  return j;
}

}  // namespace memplan::cli
