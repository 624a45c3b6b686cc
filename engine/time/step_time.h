// Step time from the op graph (issue 17 part 3): every forward op of the Graph is costed by its kernel class at a
// rate measured on the GPU (calibrate/op_rates.py -> data/calibration/h200-op-rates.tsv, embedded), backward and
// checkpoint recompute derived from the same op, and a few coefficients that no microbenchmark can give (how
// well the measured rates carry over to the model's kernels, the per-kernel gaps, Python's dispatch) fitted by
// non-negative least squares (engine/time/nnls.h), anchored to profiled steps' kernel time per class (cli/time_fit.h
// ClassAnchor), to a timing corpus measured one case at a time
// (data/validation/h200-timing.jsonl; the fit's inputs and outputs in data/calibration/time-fit*.json,
// coefficients embedded from data/calibration/h200-time-coefficients.tsv).
//
// Per forward op (views, which launch no kernel, cost CPU dispatch only):
//   gemm   linear / addmm / matmul: forward [m, n] = [m, k] x [k, n]; backward dgrad (when the input needs a
//          gradient) and wgrad (when the weight is trainable), each a GEMM of its own shape; seconds = FLOPs /
//          the measured TFLOP/s of that (m, n, k) and dtype (log-grid interpolation, dimensions below the grid
//          at the grid's edge), but never less than moving its operands and result at HBM bandwidth (LoRA's
//          rank-16 GEMMs, decode's batch-sized rows: bound by memory, not FLOPs); 16-bit layers whose n or k is
//          not a multiple of 8 at most at the measured narrow-alignment rate (GPT-2's and BERT's vocabularies)
//   attn   fused SDPA: 4 B H Sq Sk D FLOPs (half for causal self-attention) at the measured forward and backward
//          rates of the nearest (dtype, head dim, sequence) row, but never faster than reading q, k, v and writing
//          the output at HBM bandwidth (decode: one query against the whole cache); given a mask (a sliding
//          window: the op reads the additive bias) the full square at the measured masked rows' rate
//   conv   conv2d: the measured GPU time of its own shape, layout and dtype (kernel_tables.h: cuDNN's heuristic
//          engine, ATen's native depthwise kernels, channels-last), forward and backward (dgrad + wgrad); a
//          shape the table lacks at the table's median FLOP rate of its class (stem, dense 1x1, dense k x k,
//          grouped, depthwise) and dtype. Depthwise convolutions in their own column (conv_dw)
//   bn     batch norm: the measured time of its own shape (kernel_tables.h), else by bytes at the measured
//          batch-norm bandwidth (in the mem columns)
//   mem    everything else: bytes read + written at the measured elementwise bandwidth, at its measured fraction
//          for the non-vectorized layouts (a binary op with a broadcast operand, an op reading a gapped view: a split
//          or inner slice of an activation, contiguous() of a transposed view, LayerNorm's copies of a
//          non-contiguous input, an upcast to fp32: copy_'s casting kernel); backward reads the output gradient and
//          the saved tensors and writes the fresh gradients; a split's backward writes its parts' gradients into
//          one input-sized buffer
//   kernels one per op that allocates (forward), one per fresh gradient (backward)
//   cpu    Python + autograd dispatch: one per forward op (views included) and per backward node (cpu_ops), and
//          the measured host seconds of its class (cpu_host: conv dense / with bias / grouped / depthwise, batch
//          norm, linear with and without bias, layer norm, dropout, add, views, other elementwise ops); a cast
//          autocast inserts for an activation (Op::autocast_cast) is issued in C++: one ATen dispatch's measured
//          seconds in cpu_host, no Python count
// Per step: G micro-batches of (forward + backward + recompute of checkpointed layers), then the optimizer
// (measured seconds per parameter and per tensor of that optimizer / implementation / dtype).
//   gpu  = sum of c_j x column j over gemm, attn, conv, conv_dw, bn, mem, mem_bwd, opt, kernels
//   cpu  = c_cpu_ops cpu_ops + c_cpu_host cpu_host (training), c_cpu_infer cpu_infer (inference passes)
//          + c_step (per step) + c_micro (per micro-batch) + c_pass / c_token (inference)
//   step = the critical path of host and GPU over the step's ops in issue order (critical_path below)
// Inference: the prefill is one forward (no backward, no optimizer) + c_pass; decode per token is one forward of
// the decode graph (one new token, the cache at the middle of generation) + c_token (generate()'s per-token work).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph.h"
#include "engine/run_config.h"
#include "engine/time/kernel_tables.h"

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
  // Out of line (step_time.cpp), so not constexpr: clang 14 corrupts its own heap constant-evaluating this struct's
  // default member initialisers (`OpRates r;` and `OpRates r = OpRates();` both crashed the sanitizer and fuzz
  // builds, at random sources).
  OpRates();
  std::vector<int64_t> gemm_dims;                       // log2-spaced grid of m, n, k
  std::vector<std::pair<std::string, std::vector<double>>> gemm_tflops;  // dtype -> (i_m * n + i_n) * n + i_k; <0: none
  struct Sdpa {
    std::string dtype;
    int64_t d = 0, s = 0;
    bool causal = false;
    double fwd_tflops = 0, bwd_tflops = 0;
  };
  std::vector<Sdpa> sdpa;
  // SDPA given an explicit mask ("sdpa_masked dtype d s fwd bwd": calibrate/sdpa_masked.py), TFLOP/s of the full
  // square (no causal halving): causal is false in these rows.
  std::vector<Sdpa> sdpa_masked;
  // SDPA with dropout_p > 0 ("sdpa_dropout dtype d s mode fwd bwd", mode full | causal | masked:
  // calibrate/moe_attn_kernels.py at p = 0.1): the kernel draws the dropout mask as it goes, which doubles the
  // forward (1.8 .. 2.4x the p = 0 call) and slows the backward by 0 .. 60 %. TFLOP/s counted as the op counts
  // them (half the square when causal, the full square when masked). sdpa_dropout_masked holds the masked rows.
  std::vector<Sdpa> sdpa_dropout, sdpa_dropout_masked;
  // torch._grouped_mm as transformers' experts run it ("grouped_mm dtype E K N R fwd bwd": calibrate/
  // moe_attn_kernels.py): E experts' weights, K x N each, against R routed rows split by a uniform random router;
  // TFLOP/s by 2 R K N forward, 2x that backward (grad input and grad weight together). The rate rises with the
  // rows per expert (R / E: 64 rows ~0.27 of a dense GEMM of the same total shape, 1024 rows 0.69 .. 0.96), which a
  // byte count cannot say; fp32 rows are ATen's per-expert loop (calibrate/moe_odd_kernels.py).
  // grouped_mm_flops_per_s reads them.
  struct GroupedMm {
    std::string dtype;
    int64_t experts = 0, k = 0, n = 0, rows = 0;
    double fwd_tflops = 0, bwd_tflops = 0;
  };
  std::vector<GroupedMm> grouped_mm;
  // The backward of advanced indexing x[idx] ("index_bwd GB_PER_S DUP_US": calibrate/moe_odd_kernels.py through
  // op_rates.py's least squares): a zero fill of x's gradient, a sort of idx and index_put_ with accumulate, which
  // reads the output gradient and serialises the rows that land on the same source row: bytes (the output gradient
  // plus twice x's gradient) at index_bwd_bytes_per_s, plus index_bwd_dup_s per repeat (rows / source rows: the
  // MoE experts' per-row bias gathers repeat each expert's row R / E times, Swin's relative-position table 14x).
  // 0: costed by bytes at the elementwise bandwidth.
  double index_bwd_bytes_per_s = 0, index_bwd_dup_s = 0;
  double mem_bf16_bytes_per_s = 0, mem_fp32_bytes_per_s = 0;
  // contiguous() of a transposed view (attention heads, windows) runs ATen's non-vectorized copy kernel: its
  // bandwidth as a fraction of the contiguous one (calibrate/elementwise_layout.py, "mem_layout strided_copy"
  // lines; [0] 16-bit, [1] fp32; 1 where the table has none).
  std::array<double, 2> mem_strided_copy_ratio{1, 1};
  // A copy of a permuted view that moved the inner dimension ("mem_layout permuted_copy").
  std::array<double, 2> mem_permuted_copy_ratio{1, 1};
  // A binary elementwise op with a broadcast operand runs the same non-vectorized kernel ("mem_layout broadcast").
  std::array<double, 2> mem_broadcast_ratio{1, 1};
  // A binary op whose operands differ in dtype (an fp32 and a bf16 operand under autocast: the residual adds, GELU's
  // products) runs TensorIterator's casting kernels (calibrate/mixed_dtype.py, fp32 results): same shapes
  // ("mem_layout mixed fp32"), a broadcast operand of the other dtype ("mixed_broadcast"), or the full-size operand
  // of the other dtype, cast on every read ("mixed_broadcast_cast"). 1 where the table has none.
  double mem_mixed_ratio = 1, mem_mixed_broadcast_ratio = 1, mem_mixed_broadcast_cast_ratio = 1;
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
  // LayerNorm and column sums by row length ("norm OP DTYPE N NUMEL US": calibrate/norm_reduce.py): the measured
  // microseconds of one call of OP (ln_fwd, ln_bwd_input, ln_bwd_all, colsum, rowmean) over NUMEL elements in rows of N.
  // Their kernels run far below the elementwise bandwidth at short rows (fp32 LayerNorm forward over rows of 96:
  // 0.13 of it), which bytes cannot say. norm_time_s reads them.
  struct Norm {
    std::string op, dtype;  // dtype: fp32 | bf16 (fp16 reads bf16's rows: the same bytes)
    int64_t n = 0, numel = 0;
    double s = 0;
  };
  std::vector<Norm> norm;
  // Resolved by parse_op_rates, for norm_time_s (op_cost calls it for every LayerNorm, biased addmm and broadcast
  // binary op of every graph costed): the indices into `norm` of each op of kNormOps and dtype slot ([0] bf16,
  // [1] fp32), in file order; rows of another op name are kept in `norm` and indexed nowhere.
  static constexpr std::array<std::string_view, 5> kNormOps = {"ln_fwd", "ln_bwd_input", "ln_bwd_all", "colsum",
                                                               "rowmean"};
  std::array<std::array<std::vector<uint32_t>, 2>, kNormOps.size()> norm_rows{};
  double dispatch_s = 0;  // CPU time of one tiny op with autograd (overhead add_autograd)
  // Per-shape kernel times (kernel_tables.h); null: every conv / batch norm by its class rate. h200_op_rates()
  // carries the H200 tables.
  const ConvTimeTable* conv_time = nullptr;
  const BnTimeTable* bn_time = nullptr;
  // Host microseconds per module class (calibrate/host_overhead.py: "class precision forward_us backward_us"
  // lines, merged in by parse_host_overhead); empty: the cpu_host column stays 0.
  struct Host {
    std::string cls;
    double fwd_s = 0, bwd_s = 0;
  };
  std::vector<Host> host;
  // The classes op_cost assigns ops to, their seconds resolved from `host` by parse_host_overhead (the first row
  // of a class wins; a class without a row costs 0). op_cost runs for every op of every graph the planner costs,
  // so it indexes these instead of matching names.
  enum HostClass : int {
    kHostView, kHostConvDepthwise, kHostConvGrouped, kHostConv3x3Bias, kHostConv3x3, kHostBatchNorm, kHostLinear,
    kHostLinearNobias, kHostLinearFrozen, kHostLayerNorm, kHostDropout, kHostAdd, kHostRelu, kHostClasses
  };
  static constexpr std::array<std::string_view, kHostClasses> kHostClassNames = {
      "view", "conv_depthwise", "conv_grouped", "conv3x3_bias", "conv3x3", "batch_norm", "linear",
      "linear_nobias", "linear_frozen", "layer_norm", "dropout", "add", "relu"};
  struct HostSeconds {
    double fwd_s = 0, bwd_s = 0;
  };
  std::array<HostSeconds, kHostClasses> host_by_class{};
  // Host seconds non-reentrant activation checkpointing adds to a checkpointed layer beyond re-issuing its forward
  // (calibrate/ckpt_host.py): per layer and per tensor its ops save for backward, in the forward (a pack hook per
  // saved tensor) and in the backward (the recompute's pack hooks, an unpack hook per tensor, the metadata check).
  // Measured without autocast, used for every precision: under autocast the benchmark's linear blocks cost more
  // only because the recompute casts their weights again (its sin blocks cost the same within 8 %), and the
  // recomputed forward's own to_copy ops already price that. Merged in by parse_ckpt_host; zero: checkpointing
  // costs the host only the recomputed ops.
  struct CkptHost {
    double fwd_layer_s = 0, fwd_saved_s = 0, bwd_layer_s = 0, bwd_saved_s = 0;
  };
  CkptHost ckpt_host{};
  // 16-bit GEMMs whose layer has an n or k that is not a multiple of 8 (a vocabulary of 50257): cuBLAS's
  // narrow-alignment kernels cap the rate (calibrate/gemm_align.py: ~95 TFLOP/s forward when odd, ~230 when even;
  // merged in by parse_gemm_align). Empty: no cap.
  struct AlignCap {
    std::string dtype, cls;  // bf16 | fp16; odd | even
    double fwd_flops_per_s = 0, bwd_flops_per_s = 0;
  };
  std::vector<AlignCap> gemm_align;
  // Resolved by the parsers, for op_cost: the gemm_tflops entry of each dtype slot (dtype_slot: fp32, bf16,
  // fp16; the last row of a dtype wins; -1: none, bf16's is used), and the cap of each 16-bit dtype (bf16, fp16)
  // and class (odd, even) from gemm_align (the last row wins; null-like 0 rates: no cap).
  std::array<int, 3> gemm_table{-1, -1, -1};
  std::array<std::array<AlignCap, 2>, 2> align_cap{};
};
OpRates parse_op_rates(std::string_view tsv);  // InputError naming the line on malformed text
void parse_host_overhead(std::string_view tsv, OpRates& r);  // fp32 rows (the classes' host cost)
void parse_gemm_align(std::string_view tsv, OpRates& r);     // "gemm_align dtype class fwd_tflops bwd_tflops cases"
// calibrate/ckpt_host.py's rows ("block precision run ops saved plain_fwd_us plain_fwd_bwd_us ckpt_fwd_us
// ckpt_fwd_bwd_us"; precision fp32 or amp_bf16): over the fp32 rows of every run, the forward's extra (ckpt_fwd - plain_fwd)
// and the backward's (ckpt_fwd_bwd - plain_fwd_bwd - ckpt_fwd) are each fitted as layer + saved x per-tensor by
// least squares, both terms >= 0 (a negative slope: 0, the mean as the layer term). amp_bf16 rows are checked and
// kept for people (OpRates::CkptHost says why they are not used).
void parse_ckpt_host(std::string_view tsv, OpRates& r);
const OpRates& h200_op_rates();                 // data/calibration/h200-op-rates.tsv, parsed once
// The H100 SXM's: its GPU-side tables (data/calibration/h100/: op rates, GEMM alignment caps, conv and batch-norm
// times per shape) with the reference host's (host costs per class, checkpointing's, one dispatch): a host is not a
// GPU, and the H100 host's one run fell inside the spread of the H200 host's own runs.
const OpRates& h100_op_rates();
// The rates of one GPU from its tables' text (calibrate/time_tables.sh writes them for any GPU; data/calibration/h100/
// holds the H100's): op rates (required), per-shape conv and batch-norm times and the GEMM alignment caps (each
// optional: "" leaves the class rates), with the reference host's tables. Owns the per-shape tables its OpRates
// points at, so it lives on the heap. InputError naming the table's line on malformed text.
struct LoadedRates {
  OpRates rates;
  std::unique_ptr<ConvTimeTable> conv;
  std::unique_ptr<BnTimeTable> bn;
};
std::unique_ptr<LoadedRates> load_rates(std::string_view op_rates_tsv, std::string_view conv_time_tsv,
                                        std::string_view bn_time_tsv, std::string_view gemm_align_tsv);
// A GPU whose kernel rates were measured, by its id in data/gpus.json. The coefficients (h200_coefficients) are the
// same for every one: they say how the measured rates carry over to a model's kernels and what the host adds.
struct MeasuredGpu {
  std::string_view gpu_id;  // "h200-sxm-141gb"
  std::string_view label;   // for people: "an H200"
  // its rates, parsed on the first call (a GPU's tables take ~20 ms to parse: a run on one GPU does not pay for
  // another's)
  const OpRates& (*rates)() = nullptr;
};
const MeasuredGpu* measured_gpu(std::string_view gpu_id);  // null: no tables measured on that GPU
// Seconds of one `op` call (OpRates::Norm) on `numel` elements in rows of `n`: the per-element time of the measured
// rows of that op and dtype interpolated linearly in (log n, log numel) and clamped to their ends (past the largest
// measured size the per-element time stays; a call below the smallest keeps its per-element time too: the
// kernels column prices the launch). -1 when the table has no row of that op and dtype.
double norm_time_s(const OpRates& r, std::string_view op, DType dtype, double n, double numel);
// FLOP/s of torch._grouped_mm over `experts` weights of k x n against `rows` routed rows (OpRates::GroupedMm),
// forward or backward: the measured rows of that dtype weighted
// by inverse distance to the fourth power in log2 of (rows per expert, k, n, experts), the log rates averaged; a
// measured shape returns its own rate. -1 when the table has no row of that dtype. ATen runs its grouped kernel for
// bf16 only; fp16 and fp32 fall back to one mm per expert (moe_odd_kernels.py: the op's time is the loop's to
// within 4 %), whose rows are the op timed in those dtypes.
double grouped_mm_flops_per_s(const OpRates& r, DType dtype, double experts, double k, double n, double rows,
                              bool backward);

// Feature columns (seconds at the measured rates, or counts), in the fit's column order.
// conv_dw: depthwise convolutions (memory-bound kernels, rates far from the dense ones'); mem_bwd: the backward
// of memory-bound ops (its bytes are an estimate from the saved tensors and gradients, not a kernel's count).
// micro: a constant per micro-batch (the loss, the batch, autograd's start and end: what accumulation repeats).
// bn: training-mode batch norm at its measured per-shape times (engine/time/kernel_tables.h). norm: LayerNorm
// forward / backward and the column sums of bias gradients at their measured times by row length (OpRates::Norm);
// fixed at 1 like bn, appended last like pool. cpu_host: the
// host seconds of each op's class measured by calibrate/host_overhead.py (forward and backward; a cuDNN
// convolution or a batch norm costs the host several times what an elementwise op does), next to cpu_ops, the
// plain count; cpu_infer: the count of an inference pass's ops (under torch.inference_mode no autograd graph is
// recorded, so the training host costs do not carry over).
// pool: ATen's pooling kernels and torch.roll at the per-element times of the profiled steps (max_pool2d forward and backward,
// avg_pool2d backward: several times slower than their bytes at HBM bandwidth); measured, fixed at 1 like conv
// and bn. Appended last, so the columns before it keep their indices in time-fit-inputs.json.
// gemm_fp32: the GEMMs whose output is fp32 (fp32 training: cuBLAS's SIMT kernels, TF32 off as in PyTorch's default),
// at their measured fp32 rates like gemm; a coefficient of their own because the profiled steps that anchor gemm are
// all 16-bit (tensor-core kernels), and fp32 transformer steps read 5 .. 17 % slow against gemm's (NOTES-time.md,
// twenty-first round). Appended last.
enum Col : int {
  kGemm, kAttn, kConv, kConvDw, kBn, kMem, kMemBwd, kOpt, kKernels,
  kCpu, kCpuHost, kCpuInfer,
  kStep, kMicro, kPass, kToken, kPool, kNorm, kGemmF32, kCols
};
constexpr std::array<std::string_view, kCols> kColNames = {
    "gemm", "attn", "conv", "conv_dw", "bn", "mem", "mem_bwd", "opt", "kernels",
    "cpu_ops", "cpu_host", "cpu_infer", "step", "micro", "pass", "token", "pool", "norm", "gemm_fp32"};
constexpr std::array<int, 12> kGpuCols = {kGemm, kAttn, kConv, kConvDw, kBn, kMem, kMemBwd, kOpt, kKernels, kPool, kNorm,
                                          kGemmF32};
constexpr std::array<int, 3> kCpuCols = {kCpu, kCpuHost, kCpuInfer};
using Features = std::array<double, kCols>;

struct Coefficients {
  std::array<double, kCols> c{};  // c[kCpuCols] multiply the CPU side of the max; the rest the GPU side / constants
};
Coefficients parse_coefficients(std::string_view tsv);
const Coefficients& h200_coefficients();  // data/calibration/h200-time-coefficients.tsv

// A step as the host issues it: chunks of consecutive ops (at most a few, within one layer) in issue order, each
// with both sides' columns: what the host spends issuing them (cpu_ops, cpu_host, cpu_infer and the constants
// step, micro, pass, token) and what the GPU spends running them (the other columns). Training: per micro-batch
// the forward, then the backward in reverse op order with a checkpointed layer's recomputed forward right before
// its backward, then the optimizer. Inference: one forward pass.
using Timeline = std::vector<Features>;
Timeline training_timeline(const Graph& g, const RunConfig& cfg, const OpRates& r);
Timeline forward_timeline(const Graph& g, const OpRates& r, bool token);

// Where a graph's columns come from, for people (calibrate/profile_compare.py sets them beside a profiled step's
// kernels): per op name, the number of ops and the sum of their forward and backward columns (seconds at the
// measured rates and counts, before coefficients), in first-appearance order; a training graph's optimizer as the
// pseudo-op "optimizer.step". One micro-batch, no checkpoint recompute (the timeline has those).
struct OpNameCost {
  std::string name;
  int64_t count = 0;
  Features fwd{}, bwd{};
};
std::vector<OpNameCost> op_breakdown(const Graph& g, const RunConfig& cfg, const OpRates& r,
                                     bool training);

// The host runs ahead of the GPU through the launch queue; the GPU starts a chunk once it is issued and the one
// before it has run (a two-stage flow shop in a fixed order). The step takes max over k of (host time of chunks
// 0..k) + (GPU time of chunks k..end): a step is neither max(host, GPU), which assumes they overlap perfectly,
// nor their sum. Returns the columns of that critical path (host columns of chunks <= k*, GPU columns of chunks
// >= k*), so predict() of them with the same coefficients is the step time.
Features critical_path(const Timeline& t, const Coefficients& c);

// The critical-path columns under the embedded H200 coefficients: one training step (G micro-batches +
// optimizer), one forward pass (inference: prefill, or one decode step with `token`).
Features training_features(const Graph& g, const RunConfig& cfg, const OpRates& r);
Features forward_features(const Graph& g, const OpRates& r, bool token);

// The host and GPU shares of a critical path (seconds); total = their sum.
struct TimeSplit {
  double gpu_s = 0, cpu_s = 0, total_s = 0;
  bool cpu_bound = false;  // more of the critical path is the host's
};
TimeSplit predict(const Features& f, const Coefficients& c);

// NNLS fit of the coefficients (columns with `fixed[j]` keep `start.c[j]`, subtracted from the targets) to
// timelines and their measured seconds. Rows are weighted 1 / target (relative errors: a 30 ms and a 500 ms step
// count alike). Alternating: each row's critical path under the current coefficients, the linear problem on those
// columns, until no row's path moves (at most 30 rounds).
struct FitResult {
  Coefficients coef;
  std::vector<Features> effective;  // per row, its critical path at the solution
  std::vector<bool> cpu_bound;      // per row, at the solution
  int rounds = 0;
};
FitResult fit(const std::vector<Timeline>& rows, const std::vector<double>& targets_s, const Coefficients& start,
              const std::array<bool, kCols>& fixed);

// The same fit with rows weighted by how repeatable their measurement is: row i's residual is divided by
// target_i x sigma_i, sigma_i its relative noise: where two runs of the case exist, the spread of their mean
// (|a - b| / (a + b), `spread[i]`, < 0 where there is one run), never below the model's; else the model
// gpu + host x h_i, h_i the host's share of the row's critical path under the current coefficients (host-bound
// steps moved by up to 1.9x between device calls, GPU-bound ones by 2 %: data/validation/NOTES-time.md).
struct NoiseModel {
  double gpu = 0, host = 0;  // relative sigma of a GPU-bound step, and what a fully host-bound one adds
};
FitResult fit(const std::vector<Timeline>& rows, const std::vector<double>& targets_s, const Coefficients& start,
              const std::array<bool, kCols>& fixed, const std::vector<double>& spread, const NoiseModel& noise);
// sigma_i of a row (the weighting above) from its critical path under `c`.
double row_noise(const Features& path, const Coefficients& c, double spread, const NoiseModel& noise);

// Convenience for the CLI: build and cost the graphs of a case (training: one step; inference: prefill and the
// mean decode step). Milliseconds; decode 0 without generate_tokens.
struct CaseTime {
  double step_ms = 0;               // training
  double prefill_ms = 0, decode_ms_per_token = 0;  // inference
  TimeSplit split;                  // training step or prefill
};

}  // namespace memplan::timing
