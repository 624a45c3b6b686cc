// Optimizer step memory: state created lazily at the first step() and the temporaries each implementation
// allocates (torch.optim foreach / fused / for-loop, transformers Adafactor, bitsandbytes 8-bit Adam).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/dtype.h"
#include "engine/memory_tracker.h"
#include "engine/run_config.h"

namespace memplan {

struct TrainableParam {
  std::vector<int64_t> shape;
  DType dtype = DType::f32;
  int64_t numel = 0;
  int64_t bytes = 0;
};

class OptimizerModel {
 public:
  // `num_sms` / `max_threads_per_sm`: the GPU's, for reduction workspaces (Adafactor's column means).
  OptimizerModel(OptimizerKind kind, OptimizerImpl impl, int32_t num_sms = 132, int32_t max_threads_per_sm = 2048)
      : kind_(kind), impl_(impl), num_sms_(num_sms), max_threads_per_sm_(max_threads_per_sm) {}
  // Emits the allocations of one optimizer.step() on `mem` (state on the first call, then temporaries).
  void step(MemoryTracker& mem, const std::vector<TrainableParam>& params);
  // Bytes of persistent state once initialised (for closed-form callers).
  static int64_t state_bytes(OptimizerKind kind, OptimizerImpl impl, const std::vector<TrainableParam>& params);

 private:
  void init_state(MemoryTracker& mem, const std::vector<TrainableParam>& params);
  void adafactor_update(MemoryTracker& mem, const std::vector<TrainableParam>& params);
  OptimizerKind kind_;
  OptimizerImpl impl_;
  int32_t num_sms_, max_threads_per_sm_;
  bool initialised_ = false;
  std::vector<int32_t> state_blocks_;
};

}  // namespace memplan
