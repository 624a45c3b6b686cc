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
  OptimizerModel(OptimizerKind kind, OptimizerImpl impl) : kind_(kind), impl_(impl) {}
  // Emits the allocations of one optimizer.step() on `mem` (state on the first call, then temporaries).
  void step(MemoryTracker& mem, const std::vector<TrainableParam>& params);
  // Bytes of persistent state once initialised (for closed-form callers).
  static int64_t state_bytes(OptimizerKind kind, OptimizerImpl impl, const std::vector<TrainableParam>& params);

 private:
  void init_state(MemoryTracker& mem, const std::vector<TrainableParam>& params);
  OptimizerKind kind_;
  OptimizerImpl impl_;
  bool initialised_ = false;
  std::vector<int32_t> state_blocks_;
};

}  // namespace memplan
