// Stages of one step():
//   1. first call only: lazy state init, parameter by parameter (torch.optim _init_group order);
//   2. the update with its temporaries, per implementation:
//      foreach Adam/AdamW: _foreach_sqrt(exp_avg_sq) materialises one tensor per parameter (1x parameter bytes),
//        freed after _foreach_addcdiv_ (measured: +475.5 MiB for GPT-2 small fp32);
//      fused Adam/AdamW: one kernel, no temporaries, but `step` lives on the device (a 4-byte tensor per param);
//      for-loop Adam/AdamW: denom = (exp_avg_sq.sqrt() / bc2).add_(eps) -> two parameter-sized temporaries;
//      SGD (momentum): in-place foreach ops, momentum buffers cloned from grads at the first step;
//      Adafactor (transformers): per parameter, fp32 copies of 16-bit gradients and parameters and fp32 update
//        tensors, with the state created inside the loop (adafactor_update);
//      Adam8bit (bitsandbytes, blockwise): uint8 states with one fp32 absmax per 256 elements for parameters
//        of >= 4096 elements, fp32 states otherwise; a fused kernel, no temporaries.
#include "engine/optimizer_model.h"

#include <algorithm>

#include "engine/checked.h"
#include "engine/reduce_workspace.h"

namespace memplan {

namespace {
constexpr int64_t kBnbBlock = 256;
constexpr int64_t kBnbMinNumel = 4096;

int64_t bytes_f32(int64_t numel) { return checked_mul(numel, 4, "optimizer state bytes"); }

// Adafactor's factored second moments: row and column vectors for >= 2-d parameters, else a full tensor.
std::vector<int64_t> adafactor_state(const TrainableParam& p) {
  if (p.shape.size() >= 2) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < p.shape.size(); ++i) rows = checked_mul(rows, p.shape[i]);
    int64_t cols = p.shape.back();
    for (size_t i = 0; i + 2 < p.shape.size(); ++i) cols = checked_mul(cols, p.shape[i]);
    return {bytes_f32(rows), bytes_f32(cols)};
  }
  return {bytes_f32(p.numel)};
}
}  // namespace

int64_t OptimizerModel::state_bytes(OptimizerKind kind, OptimizerImpl impl, const std::vector<TrainableParam>& params) {
  int64_t total = 0;
  for (const auto& p : params) {
    int64_t b = 0;
    switch (kind) {
      case OptimizerKind::sgd: b = 0; break;
      case OptimizerKind::sgd_momentum: b = round_up(p.bytes, 512); break;
      case OptimizerKind::adam: case OptimizerKind::adamw:
        b = checked_mul(round_up(p.bytes, 512), 2, "optimizer state bytes");
        if (impl == OptimizerImpl::fused) b = checked_add(b, 512, "optimizer state bytes");
        break;
      case OptimizerKind::adafactor:
        for (int64_t s : adafactor_state(p)) b = checked_add(b, round_up(s, 512), "optimizer state bytes");
        break;
      case OptimizerKind::adam8bit:
        if (p.numel >= kBnbMinNumel)
          b = checked_mul(2, checked_add(round_up(p.numel, 512), round_up(bytes_f32((p.numel - 1) / kBnbBlock + 1), 512)),
                          "optimizer state bytes");
        else
          b = checked_mul(2, round_up(bytes_f32(p.numel), 512), "optimizer state bytes");
        break;
    }
    total = checked_add(total, b, "optimizer state bytes");
  }
  return total;
}

void OptimizerModel::init_state(MemoryTracker& mem, const std::vector<TrainableParam>& params) {
  for (const auto& p : params) {
    switch (kind_) {
      case OptimizerKind::sgd: break;
      case OptimizerKind::sgd_momentum: state_blocks_.push_back(mem.alloc(p.bytes, Row::optimizer_state)); break;
      case OptimizerKind::adam: case OptimizerKind::adamw:
        if (impl_ == OptimizerImpl::fused) state_blocks_.push_back(mem.alloc(4, Row::optimizer_state));
        state_blocks_.push_back(mem.alloc(p.bytes, Row::optimizer_state));
        state_blocks_.push_back(mem.alloc(p.bytes, Row::optimizer_state));
        break;
      case OptimizerKind::adafactor: break;  // created inside the update loop (adafactor_update)
      case OptimizerKind::adam8bit:
        for (int i = 0; i < 2; ++i) {
          if (p.numel >= kBnbMinNumel) {
            state_blocks_.push_back(mem.alloc(p.numel, Row::optimizer_state));
            state_blocks_.push_back(mem.alloc(bytes_f32((p.numel + kBnbBlock - 1) / kBnbBlock), Row::optimizer_state));
          } else {
            state_blocks_.push_back(mem.alloc(bytes_f32(p.numel), Row::optimizer_state));
          }
        }
        break;
    }
  }
  initialised_ = true;
}

// transformers' Adafactor.step, one parameter at a time, with Python's lifetimes: `grad = p.grad.float()` and
// `p_data_fp32 = p.float()` (copies only for 16-bit parameters), the state created lazily right after the
// gradient copy, `update = grad**2 + eps` (two fp32 tensors, the square freed), then a fresh full tensor
// replaces it (the factored estimate row x col, or exp_avg_sq.rsqrt() for vectors) and `-update` is a
// transient. `grad`, `p_data_fp32` and `update` stay bound until the next parameter rebinds them, so the
// previous parameter's update is still alive while the next `grad**2 + eps` is allocated (whole-run stream,
// TinyLlama-shape bf16: the embedding's fp32 grad, parameter, square and update, 4 x 250 MiB, at the peak).
void OptimizerModel::adafactor_update(MemoryTracker& mem, const std::vector<TrainableParam>& params) {
  int32_t grad32 = -1, p32 = -1, update = -1;
  auto release = [&](int32_t& b) {
    if (b >= 0) mem.free(b);
    b = -1;
  };
  for (const auto& p : params) {
    const int64_t f32 = bytes_f32(p.numel);
    const bool half = p.dtype != DType::f32;
    release(grad32);  // `grad = p.grad` rebinds
    if (half) grad32 = mem.alloc(f32, Row::transient);
    if (!initialised_)
      for (int64_t st : adafactor_state(p)) state_blocks_.push_back(mem.alloc(st, Row::optimizer_state));
    release(p32);  // `p_data_fp32 = p` rebinds
    if (half) p32 = mem.alloc(f32, Row::transient);
    const int32_t sq = mem.alloc(f32, Row::transient);
    const int32_t sum = mem.alloc(f32, Row::transient);
    mem.free(sq);
    release(update);  // `update = grad**2 + eps` rebinds only once the sum exists
    update = sum;
    if (p.shape.size() >= 2) {
      // update.mean(dim=-2) reduces over rows: Reduce.cuh's column-sum staging buffer (88 MiB for a
      // [5632, 2048] fp32 update in the recording, as engine/reduce_workspace.h computes).
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < p.shape.size(); ++d) rows = checked_mul(rows, p.shape[d], "optimizer rows");
      const ReduceWorkspace w = column_sum_workspace(rows, p.shape.back(), num_sms_, max_threads_per_sm_);
      if (w.buffer_bytes > 0) {
        mem.workspace(w.buffer_bytes);
        mem.workspace(w.semaphore_bytes);
      }
    }
    const int32_t fresh = mem.alloc(f32, Row::transient);
    release(update);
    update = fresh;
    mem.free(mem.alloc(f32, Row::transient));  // p_data_fp32.add_(-update)
  }
  release(update);
  release(p32);
  release(grad32);
  initialised_ = true;
}

void OptimizerModel::step(MemoryTracker& mem, const std::vector<TrainableParam>& params) {
  if (!initialised_ && kind_ != OptimizerKind::adafactor) init_state(mem, params);
  const bool adam_like = kind_ == OptimizerKind::adam || kind_ == OptimizerKind::adamw;
  if (adam_like && impl_ == OptimizerImpl::foreach) {
    std::vector<int32_t> tmp;
    tmp.reserve(params.size());
    for (const auto& p : params) tmp.push_back(mem.alloc(p.bytes, Row::transient));
    for (int32_t b : tmp) mem.free(b);
  } else if (adam_like && impl_ == OptimizerImpl::forloop) {
    for (const auto& p : params) {
      int32_t sq = mem.alloc(p.bytes, Row::transient);
      int32_t denom = mem.alloc(p.bytes, Row::transient);
      mem.free(sq);
      mem.free(denom);
    }
  } else if (kind_ == OptimizerKind::adafactor) {
    adafactor_update(mem, params);
  }
  // sgd, sgd_momentum (foreach/for-loop), fused Adam/AdamW, adam8bit: in-place updates, no temporaries.
}

}  // namespace memplan
