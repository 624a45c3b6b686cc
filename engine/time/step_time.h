// Step time from the op graph (issue 17 part 3): every forward op of the Graph is costed by its kernel class at a
// rate measured on the GPU (calibrate/op_rates.py -> data/calibration/h200-op-rates.tsv, embedded), backward and
// checkpoint recompute derived from the same op, and a few coefficients that no microbenchmark can give (how
// well the measured rates carry over to the model's kernels, the per-kernel gaps, Python's dispatch) fitted by
// non-negative least squares (engine/time/nnls.h) to a timing corpus measured one case at a time
// (data/validation/h200-timing.jsonl; the fit's inputs and outputs in data/calibration/time-fit*.json,
// coefficients embedded from data/calibration/h200-time-coefficients.tsv).
//
// Per forward op (views, which launch no kernel, cost CPU dispatch only):
//   gemm   linear / addmm / matmul: forward [m, n] = [m, k] x [k, n]; backward dgrad (when the input needs a
//          gradient) and wgrad (when the weight is trainable), each a GEMM of its own shape; seconds = FLOPs /
//          the measured TFLOP/s of that (m, n, k) and dtype (log-grid interpolation; below the grid the time of
//          the smallest measured shape: such GEMMs are bound by memory and launch, not by FLOPs)
//   attn   fused SDPA: 4 B H Sq Sk D FLOPs (half for causal self-attention) at the measured forward and backward
//          rates of the nearest (dtype, head dim, sequence) row, but never faster than reading q, k, v and writing
//          the output at HBM bandwidth (decode: one query against the whole cache)
//   conv   cuDNN conv2d: 2 x out x C/g x r^2 FLOPs at the measured rate of its class (stem, dense 1x1 / 3x3,
//          depthwise), backward (dgrad + wgrad) at the measured backward rate
//   mem    everything else: bytes read + written at the measured elementwise bandwidth; backward reads the
//          output gradient and the saved tensors and writes the fresh gradients
//   kernels one per op that allocates (forward), one per fresh gradient (backward)
//   cpu    Python + autograd dispatch: one per forward op (views included) and per backward node
// Per step: G micro-batches of (forward + backward + recompute of checkpointed layers), then the optimizer
// (measured seconds per parameter and per tensor of that optimizer / implementation / dtype).
//   bn     batch norm: at the measured batch-norm rates (forward, forward + backward), in the mem columns
//   gpu  = c_gemm gemm + c_attn attn + c_conv conv + c_conv_dw conv_dw + c_mem mem + c_mem_bwd mem_bwd
//          + c_opt opt + c_kernel kernels
//   step = max(gpu, c_cpu cpu) + c_step + c_micro G
// Inference: the prefill is one forward (no backward, no optimizer) + c_pass; decode per token is one forward of
// the decode graph (one new token, the cache at the middle of generation) + c_token (generate()'s per-token work).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph.h"
#include "engine/run_config.h"

namespace memplan::timing {

// A tensor's element count and bytes in double precision, for cost models (FLOPs and traffic of any size, no
// overflow checks needed); also engine/plan/time_model.cpp's.
inline double numel(const TensorInfo& t) {
  double n = 1;
  for (int64_t d : t.shape) n *= static_cast<double>(d);
  return n;
}
inline double nbytes(const TensorInfo& t) { return numel(t) * static_cast<double>(dtype_bytes(t.dtype)); }

// Measured rates of one GPU (the embedded table; parse_op_rates for another one).
struct OpRates {
  std::vector<int64_t> gemm_dims;                       // log2-spaced grid of m, n, k
  std::vector<std::pair<std::string, std::vector<double>>> gemm_tflops;  // dtype -> (i_m * n + i_n) * n + i_k; <0: none
  struct Sdpa {
    std::string dtype;
    int64_t d = 0, s = 0;
    bool causal = false;
    double fwd_tflops = 0, bwd_tflops = 0;
  };
  std::vector<Sdpa> sdpa;
  double mem_bf16_bytes_per_s = 0, mem_fp32_bytes_per_s = 0;
  struct Conv {
    std::string cls, dtype;
    double fwd_tflops = 0, bwd_tflops = 0;
  };
  std::vector<Conv> conv;
  // batch norm (training) of a [N, C, H, W] input of x bytes: forward 3x / fwd, forward + backward 8x / fwd_bwd
  double bn_bf16_fwd = 0, bn_bf16_fwd_bwd = 0, bn_fp32_fwd = 0, bn_fp32_fwd_bwd = 0;  // bytes per second
  struct Opt {
    std::string optimizer, impl, dtype;
    double s_per_param = 0, s_per_tensor = 0;
  };
  std::vector<Opt> opt;
  double dispatch_s = 0;  // CPU time of one tiny op with autograd (overhead add_autograd)
};
OpRates parse_op_rates(std::string_view tsv);  // InputError naming the line on malformed text
const OpRates& h200_op_rates();                 // data/calibration/h200-op-rates.tsv, parsed once

// Feature columns (seconds at the measured rates, or counts), in the fit's column order.
// conv_dw: depthwise convolutions (memory-bound kernels, rates far from the dense ones'); mem_bwd: the backward
// of memory-bound ops (its bytes are an estimate from the saved tensors and gradients, not a kernel's count).
// micro: a constant per micro-batch (the loss, the batch, autograd's start and end: what accumulation repeats).
enum Col : int { kGemm, kAttn, kConv, kConvDw, kMem, kMemBwd, kOpt, kKernels, kCpu, kStep, kMicro, kPass, kToken, kCols };
constexpr std::array<std::string_view, kCols> kColNames = {"gemm",  "attn",    "conv",    "conv_dw", "mem",
                                                            "mem_bwd", "opt", "kernels", "cpu_ops", "step",
                                                            "micro", "pass",  "token"};
constexpr std::array<int, 8> kGpuCols = {kGemm, kAttn, kConv, kConvDw, kMem, kMemBwd, kOpt, kKernels};
using Features = std::array<double, kCols>;

struct Coefficients {
  std::array<double, kCols> c{};  // c[kCpu] multiplies the CPU side of the max; the rest the GPU side / constants
};
Coefficients parse_coefficients(std::string_view tsv);
const Coefficients& h200_coefficients();  // data/calibration/h200-time-coefficients.tsv

// What kind of attention the graph's fused SDPA ops run: causal self-attention (decoder LMs) or full (encoders,
// vision transformers).
struct TimeContext {
  bool causal_attention = true;
};

// One training step (G micro-batches + optimizer) of a training graph.
Features training_features(const Graph& g, const RunConfig& cfg, const TimeContext& ctx, const OpRates& r);
// One forward pass (inference: prefill or one decode step): `token` sets the per-token column, else the per-pass.
Features forward_features(const Graph& g, const TimeContext& ctx, const OpRates& r, bool token);

// The GPU and CPU sides and their combination (seconds).
struct TimeSplit {
  double gpu_s = 0, cpu_s = 0, total_s = 0;
  bool cpu_bound = false;
};
TimeSplit predict(const Features& f, const Coefficients& c);

// NNLS fit of the coefficients (columns with `fixed[j]` keep `start.c[j]`, subtracted from the targets): rows are
// feature vectors, targets measured seconds. Rows are weighted 1 / target (relative errors: a 30 ms and a 500 ms
// step count alike). The max(gpu, cpu) split is fitted by alternating: each row's side is decided by the
// current coefficients, the linear problem re-solved, until no row changes side (at most 20 rounds).
struct FitResult {
  Coefficients coef;
  std::vector<bool> cpu_bound;  // per row, at the solution
  int rounds = 0;
};
FitResult fit(const std::vector<Features>& rows, const std::vector<double>& targets_s, const Coefficients& start,
              const std::array<bool, kCols>& fixed);

// Convenience for the CLI: build and cost the graphs of a case (training: one step; inference: prefill and the
// mean decode step). Milliseconds; decode 0 without generate_tokens.
struct CaseTime {
  double step_ms = 0;               // training
  double prefill_ms = 0, decode_ms_per_token = 0;  // inference
  TimeSplit split;                  // training step or prefill
};

}  // namespace memplan::timing
