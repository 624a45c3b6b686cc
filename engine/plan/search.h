// Joint search over how to train a model on G GPUs: micro-batch (accumulation holds the global batch),
// precision, activation checkpointing (how many layers of a stage, placed by checkpoint_dp), optimizer,
// data-parallel framework and offload, and TP x PP x DP factorisations.
//
// Stages:
//   1. enumerate factorisations: tp in powers of two dividing the heads (within a node), pp dividing the
//      layers, dp = G / (tp * pp) dividing the global batch;
//   2. per (precision, tp, checkpoint mode) fit the shard's closed forms from 4 replays (shard_fit.h), cached;
//   3. evaluate each configuration in O(1): distributed_memory() + step_time() (its compute and recompute from
//      the step-time model of engine/time/ on the local shard, timed(); communication, bubble, offload and the
//      optimizer from the closed forms of time_model.h); prune with bounds: memory is
//      increasing in the micro-batch (stop at the first that does not fit even fully checkpointed) and
//      decreasing in checkpointed layers (start at the least count that fits, solved in closed form);
//   4. rank by step time (same global batch, so time per step orders throughput); keep the memory-vs-time
//      Pareto frontier;
//   5. confirm finalists with the full replay of their local shard (caching allocator included): the
//      checkpointed layers are placed by optimal_checkpoints(), and the confirmed device bytes replace the
//      closed form; finalists that do not fit after confirmation are dropped and the next one is confirmed
//      (at most 4k + 4 confirmations for the top k, up to 16k + 16 while none has fitted).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "engine/arch/spec.h"
#include "engine/estimate.h"
#include "engine/plan/distributed.h"
#include "engine/plan/shard_fit.h"
#include "engine/plan/time_model.h"
#include "engine/run_config.h"

namespace memplan::plan {

struct PlanSpace {
  int64_t gpus = 1;
  int64_t global_batch = 8;                 // samples per optimizer step
  std::vector<Precision> precisions{Precision::amp_bf16, Precision::bf16};
  std::vector<OptimizerKind> optimizers{OptimizerKind::adamw};
  std::vector<DataParallel> dp_kinds{DataParallel::ddp, DataParallel::zero1, DataParallel::zero2,
                                     DataParallel::zero3, DataParallel::fsdp2, DataParallel::megatron};
  std::vector<Offload> offloads{Offload::none, Offload::optimizer, Offload::optimizer_and_params};
  int64_t max_micro_batch = 64;
  int64_t max_tp = 8, max_pp = 64;
  bool checkpointing = true;
  bool sequence_parallel = true;           // with tp > 1
  int64_t capacity_bytes = 0;              // per GPU
  int64_t non_pytorch_bytes = 0;           // CUDA context and kernels per GPU
  FrameworkOptions framework;
  DeviceRates rates;
};

struct PlanCandidate {
  ParallelConfig par;
  int64_t micro_batch = 1;
  Precision precision = Precision::amp_bf16;
  OptimizerKind optimizer = OptimizerKind::adamw;
  int64_t stage_layers = 0;   // layers on the first pipeline stage
  int64_t ckpt_layers = 0;    // of those, checkpointed
  DistributedMemory mem;
  int64_t device_bytes = 0;   // closed form: mem.gpu_total() + non-PyTorch
  StepTime time;
  bool confirmed = false;     // full replay ran
  int64_t confirmed_device_bytes = 0;  // with the replay's activations and caching-allocator slack
  std::vector<int64_t> checkpoint_layers;  // the placement the confirmation replayed
};

struct PlanResult {
  std::vector<PlanCandidate> top;     // fastest first, confirmed
  std::vector<PlanCandidate> pareto;  // memory ascending, time descending (closed form)
  int64_t configs_evaluated = 0;
  int64_t configs_feasible = 0;
  int replays = 0;                    // fit + confirmation replays
  int rejected_on_confirmation = 0;
};

using Progress = std::function<void(double fraction)>;

class Planner {
 public:
  Planner(ModelSpec model, RunConfig base);
  PlanResult search(const PlanSpace& space, size_t top_k, const Progress& progress = {});
  // Every configuration, every micro-batch and checkpoint count, no pruning: the reference for tests.
  PlanCandidate brute_force_best(const PlanSpace& space, int64_t* evaluated = nullptr);
  // The closed form of one configuration (fits the shard on first use).
  PlanCandidate evaluate(const PlanSpace& space, const ParallelConfig& par, int64_t micro_batch, Precision precision,
                         OptimizerKind optimizer, int64_t ckpt_layers);
  // Full replay of the candidate's local shard; fills confirmed_*.
  void confirm(PlanCandidate& c, const PlanSpace& space);
  int replays() const { return replays_; }

 private:
  struct Fits { const ShardFit* none; const ShardFit* ckpt; const ShardFit* none_tp1; const ShardFit* ckpt_tp1; };
  const ShardFit& fit(Precision p, int64_t tp, bool ckpt);
  Fits fits(Precision p, int64_t tp, bool sp);
  PlanCandidate eval_fast(const PlanSpace& s, const Fits& f, const ParallelConfig& par, int64_t b, Precision prec,
                          OptimizerKind opt, int64_t k, int64_t stage_layers) const;
  std::vector<ParallelConfig> factorisations(const PlanSpace& s) const;
  // The step-time model's (engine/time/) features of the local shard at micro-batch b: features are sums over
  // ops, so exactly affine in the stacked layers L (identical layers) and in the micro-batch count G; fitted
  // from the graphs at the shard fit's two depths, without and with every layer checkpointed (4 graph builds,
  // no replay), cached per (precision, tp, b).
  struct TimedShard {
    timing::Features micro_c0{}, micro_cl{};  // one micro-batch, no checkpointing: c0 + cl L
    timing::Features step{};                  // once per step (optimizer column zeroed: kept in closed form)
    timing::Features recompute_per_layer{};   // what checkpointing one layer adds per micro-batch
  };
  // The shard's step-time features on the GPU of `r`: each replayed timeline scaled to it before its critical
  // path is taken (time_model.h scaled_timeline), so the features are already that GPU's (no timed_on after).
  const TimedShard& timed(const Fits& f, Precision p, int64_t tp, int64_t b, const DeviceRates& r) const;

  ModelSpec model_;
  RunConfig base_;
  int64_t layers_ = 0;
  std::map<std::tuple<int, int64_t, bool>, ShardFit> fits_;
  // eval_fast is const; a cache by precision, tp, micro-batch and the GPU's three time scales
  mutable std::map<std::tuple<int, int64_t, int64_t, double, double, double, std::uintptr_t>, TimedShard> timed_;
  int replays_ = 0;
  EstimateWorkspace workspace_;  // the confirmation replays', one after another (engine/estimate.h)
};

// True when `a` is no worse than `b` in memory and time and better in one.
bool dominates(const PlanCandidate& a, const PlanCandidate& b);

}  // namespace memplan::plan
