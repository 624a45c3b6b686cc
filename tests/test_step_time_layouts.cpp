// The step-time model's layout and mask rates on graphs small enough to cost by hand (engine/time/step_time.h):
// an SDPA op given a mask is the full square's FLOPs at the measured masked rate (calibrate/sdpa_masked.py), a
// causal one half the square at the causal rate; a binary op with a broadcast operand moves its bytes at the
// measured broadcast fraction of the contiguous bandwidth (calibrate/elementwise_layout.py). Expected values are
// the formulas below applied to the embedded table's measured rows, looked up here by their keys.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "engine/graph_builder.h"
#include "engine/time/step_time.h"

using namespace memplan;
using namespace memplan::timing;

namespace {

RunConfig inference_cfg() {
  RunConfig c;
  c.mode = Mode::inference;
  c.precision = Precision::bf16;
  return c;
}

const OpRates::Sdpa& row(const std::vector<OpRates::Sdpa>& rows, int64_t d, int64_t s, bool causal) {
  for (const auto& r : rows)
    if (r.dtype == "bf16" && r.d == d && r.s == s && r.causal == causal) return r;
  FAIL("no bf16 row d " << d << " s " << s);
  return rows.front();
}

// The forward columns of the graph's ops of one name, summed.
Features forward_of(const Graph& g, const std::string& name) {
  for (const auto& o : op_breakdown(g, inference_cfg(), h200_op_rates(), false))
    if (o.name == name) return o.fwd;
  FAIL("no op " << name);
  return {};
}

}  // namespace

TEST_CASE("step time: SDPA with a mask is the full square at the masked rate, without one half at the causal rate", "[time][layout]") {
  struct Case {
    int64_t b, h, s, d;
  };
  const OpRates& r = h200_op_rates();
  REQUIRE(!r.sdpa_masked.empty());
  for (const Case& c : {Case{1, 32, 4096, 96}, Case{4, 16, 1024, 128}, Case{2, 8, 2048, 256}}) {
    INFO("b " << c.b << " h " << c.h << " s " << c.s << " d " << c.d);
    const double square = 4.0 * c.b * c.h * c.s * c.s * c.d;
    for (const bool with_mask : {false, true}) {
      GraphBuilder b(inference_cfg());
      const TensorId q = b.input({c.b, c.h, c.s, c.d}, DType::bf16);
      const TensorId k = b.input({c.b, c.h, c.s, c.d}, DType::bf16);
      const TensorId v = b.input({c.b, c.h, c.s, c.d}, DType::bf16);
      const TensorId mask = with_mask ? b.input({c.b, 1, c.s, c.s}, DType::boolean) : kNoTensor;
      b.sdpa(q, k, v, 0.0, !with_mask, mask);
      const Graph g = b.finish();
      const double expected = with_mask ? square / (row(r.sdpa_masked, c.d, c.s, false).fwd_tflops * 1e12)
                                        : 0.5 * square / (row(r.sdpa, c.d, c.s, true).fwd_tflops * 1e12);
      CHECK(forward_of(g, "sdpa_flash")[kAttn] == Approx(expected).epsilon(1e-9));
    }
  }
}

TEST_CASE("step time: a binary op with a broadcast operand moves its bytes at the broadcast fraction", "[time][layout]") {
  const OpRates& r = h200_op_rates();
  REQUIRE(r.mem_broadcast_ratio[0] < 0.6);  // measured 0.41 in bf16 (h200-elementwise-layout.json)
  struct Case {
    Shape other;
    bool broadcast;
  };
  const Shape x_shape{8, 1024, 2048};
  for (const Case& c : {Case{{2048}, true}, Case{{8, 1024, 1}, true}, Case{{8, 1024, 2048}, false}, Case{{1}, false}}) {
    INFO("other of " << c.other.size() << " dims, broadcast " << c.broadcast);
    GraphBuilder b(inference_cfg());
    const TensorId x = b.input(x_shape, DType::bf16);
    const TensorId y = b.input(c.other, DType::bf16);
    b.mul(x, y);
    const Graph g = b.finish();
    double other_elems = 1;
    for (int64_t d : c.other) other_elems *= static_cast<double>(d);
    const double full = 8.0 * 1024 * 2048;
    const double bytes = 2 * (full + other_elems + full);  // read both operands, write the output (bf16)
    const double expected = bytes / (r.mem_bf16_bytes_per_s * (c.broadcast ? r.mem_broadcast_ratio[0] : 1.0));
    CHECK(forward_of(g, "mul")[kMem] == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("step time: a LayerNorm of a non-contiguous input adds its copy at the rate of the view's layout", "[time][layout]") {
  // ViT's residual stream is a transpose that keeps the inner dimension ([B, L, E] read as [L, B, E]); ConvNeXt's
  // LayerNorm reads a channels-last permute of a [N, C, H, W] tensor, whose inner dimension moved.
  const OpRates& r = h200_op_rates();
  REQUIRE(r.mem_permuted_copy_ratio[1] < r.mem_strided_copy_ratio[1]);  // measured 0.29 and 0.61 in fp32
  struct Case {
    Shape base, viewed;
    double ratio;
  };
  for (const Case& c : {Case{{64, 197, 768}, {197, 64, 768}, r.mem_strided_copy_ratio[1]},
                        Case{{32, 96, 56, 56}, {32, 56, 56, 96}, r.mem_permuted_copy_ratio[1]}}) {
    INFO("view of " << c.viewed.size() << " dims");
    GraphBuilder b(inference_cfg());
    const int64_t e = c.viewed.back();
    const TensorId w = b.param("ln.weight", {e}, true, DType::f32);
    const TensorId bias = b.param("ln.bias", {e}, true, DType::f32);
    const TensorId x = b.input(c.base, DType::f32);
    b.layer_norm(b.view(x, c.viewed), w, bias, /*contiguous_copy=*/true);
    const Graph g = b.finish();
    const Op* ln = nullptr;
    for (const Op& op : g.ops)
      if (g.name_of(op.name) == "layer_norm") ln = &op;
    REQUIRE(ln != nullptr);
    REQUIRE(ln->fwd_temp_bytes.size() == 1);
    double moved = 0;  // the op's own traffic: its reads and its outputs (y, mean, rstd)
    for (TensorId t : ln->reads) moved += nbytes(g.tensors[static_cast<size_t>(t)]);
    for (TensorId t : ln->outs) moved += nbytes(g.tensors[static_cast<size_t>(t)]);
    const double copy = 2.0 * static_cast<double>(ln->fwd_temp_bytes[0]);  // read the view, write the copy
    (void)moved;  // the op's own kernel is timed by row length (the norm column, next test), not by its bytes
    CHECK(forward_of(g, "layer_norm")[kMem] == Approx(copy / (r.mem_fp32_bytes_per_s * c.ratio)).epsilon(1e-9));
    CHECK(forward_of(g, "layer_norm")[kNorm] > 0);
  }
}

namespace {
// The embedded norm row of (op, fp32, n) at the smaller or larger of its two measured sizes.
const OpRates::Norm& norm_row(const std::string& op, int64_t n, bool larger) {
  const OpRates::Norm* best = nullptr;
  for (const auto& x : h200_op_rates().norm)
    if (x.op == op && x.dtype == "fp32" && x.n == n && (!best || (larger ? x.numel > best->numel : x.numel < best->numel)))
      best = &x;
  if (!best) FAIL("no norm row " << op << " fp32 n " << n);
  return *best;
}
}  // namespace

TEST_CASE("step time: LayerNorm's kernel is timed by its row length and size", "[time][layout]") {
  // calibrate/norm_reduce.py timed native_layer_norm over rows of n at two sizes (2^22 and 2^25 elements, rounded
  // to whole rows). A LayerNorm of numel elements in rows of n costs the per-element time interpolated linearly in
  // log n between the measured lengths and in log numel between each length's two sizes; these expected values
  // apply that rule to the rows by hand.
  const auto per = [](const OpRates::Norm& x) { return x.s / static_cast<double>(x.numel); };
  const auto at_size = [&](int64_t n, double numel) {
    const OpRates::Norm &lo = norm_row("ln_fwd", n, false), &hi = norm_row("ln_fwd", n, true);
    const double w = std::log(numel / static_cast<double>(lo.numel)) /
                     std::log(static_cast<double>(hi.numel) / static_cast<double>(lo.numel));
    return per(lo) + w * (per(hi) - per(lo));
  };
  struct Case {
    Shape x;
    double expected_s;
  };
  // [64, 197, 768]: a measured length (768), 9.68 M elements between its two sizes
  const double n1 = 64.0 * 197 * 768;
  // [8, 1024, 1600]: GPT-2 XL's width, between the measured 1536 and 2048
  const double n2 = 8.0 * 1024 * 1600, w2 = std::log(1600.0 / 1536) / std::log(2048.0 / 1536);
  // [2, 1024, 96]: 196,608 elements, below every measured size: the smaller size's per-element time
  const double n3 = 2.0 * 1024 * 96;
  for (const Case& c : {Case{{64, 197, 768}, at_size(768, n1) * n1},
                        Case{{8, 1024, 1600}, (at_size(1536, n2) + w2 * (at_size(2048, n2) - at_size(1536, n2))) * n2},
                        Case{{2, 1024, 96}, per(norm_row("ln_fwd", 96, false)) * n3}}) {
    INFO("rows of " << c.x.back());
    GraphBuilder b(inference_cfg());
    const int64_t e = c.x.back();
    const TensorId w = b.param("ln.weight", {e}, true, DType::f32);
    const TensorId bias = b.param("ln.bias", {e}, true, DType::f32);
    b.layer_norm(b.input(c.x, DType::f32), w, bias);
    const Graph g = b.finish();
    const Features f = forward_of(g, "layer_norm");
    CHECK(f[kNorm] == Approx(c.expected_s).epsilon(1e-9));
    CHECK(f[kMem] == 0);  // a contiguous input: no copy, and the kernel is not costed twice
  }
  // Rows of 96 run far below the bandwidth (fp32: reading and writing 8 bytes per element at 0.13 of it), rows
  // of 1536 near it: the reason the bytes could not cost ConvNeXt's and Swin's LayerNorms.
  const double bw = h200_op_rates().mem_fp32_bytes_per_s;
  CHECK(per(norm_row("ln_fwd", 96, true)) > 4 * (8.0 / bw));
  CHECK(per(norm_row("ln_fwd", 1536, true)) < 1.5 * (8.0 / bw));
}

TEST_CASE("step time: torch.roll costs its profiled per-element time", "[time][layout]") {
  // Swin-T amp b128's profiled step: roll_cuda_kernel 9.9 ps (fp32) and 9.1 ps (bf16) per element
  // (step_time.cpp kRollSPerElem = 9.5 ps, either dtype), in the pool column (measured, fixed at 1).
  GraphBuilder b(inference_cfg());
  const TensorId x = b.input({128, 56, 56, 96}, DType::bf16);
  const Shape shape = b.shape(x);  // as engine/arch/vision/swin.cpp emits it: a new tensor of x's shape, backward fresh
  b.generic({"roll", {x}, {{shape, DType::bf16}}, {}, {}, {}, {}});
  const Graph g = b.finish();
  const Features f = forward_of(g, "roll");
  CHECK(f[kPool] == Approx(128.0 * 56 * 56 * 96 * 9.5e-12).epsilon(1e-9));
  CHECK(f[kMem] == 0);
}

TEST_CASE("step time: a broadcast operand's gradient costs the reduction that sums it back", "[time][layout]") {
  // x [8, 1024, H] * w: autograd sums the full-size gradient back to w's shape. w [H] (RMSNorm's weight): a sum
  // over the 8192 rows, at the measured column-sum time of rows of H; w [8, 1024, 1] (its rsqrt factor): a sum
  // along each row, at the measured row-reduction time; w [8, 1, H]: a middle broadcast, no reduction costed.
  RunConfig cfg;
  cfg.mode = Mode::training;
  cfg.precision = Precision::fp32;
  const OpRates& r = h200_op_rates();
  struct Case {
    Shape w;
    const char* table;  // the norm rows' op, or nullptr: none
  };
  for (const int64_t H : {128, 1024}) {
    const double n = 8.0 * 1024 * static_cast<double>(H);
    for (const Case& c : {Case{{H}, "colsum"}, Case{{8, 1024, 1}, "rowmean"}, Case{{8, 1, H}, nullptr}}) {
      INFO("H " << H << ", operand of " << c.w.size() << " dims, " << (c.table ? c.table : "none"));
      GraphBuilder b(cfg);
      const TensorId x = b.param("x", {8, 1024, H}, true, DType::f32);  // trainable: the op has a backward
      const TensorId w = b.param("w", c.w, true, DType::f32);
      b.mul(x, w);
      const Graph g = b.finish();
      double norm_bwd = -1;
      for (const auto& o : op_breakdown(g, cfg, r, true))
        if (o.name == "mul") norm_bwd = o.bwd[kNorm];
      const double expected = c.table ? norm_time_s(r, c.table, DType::f32, static_cast<double>(H), n) : 0.0;
      REQUIRE(expected >= 0);
      CHECK(norm_bwd == Approx(expected).epsilon(1e-12));
    }
  }
  // rows of 128 sum over the rows at a fraction of rows of 1024's rate (calibrate/norm_reduce.py: 203 vs 61 us per
  // 2^25 fp32 elements): why Qwen3's q / k norms' weight gradients cost what they do
  CHECK(norm_time_s(r, "colsum", DType::f32, 128, 1 << 25) > 2.5 * norm_time_s(r, "colsum", DType::f32, 1024, 1 << 25));
}

TEST_CASE("step time: an elementwise op reading a gapped view runs at the non-vectorized rate", "[time][layout]") {
  // qkv [8, 1024, 3 * 2048] split in three along the last dimension: each part is a view with gaps between its rows,
  // so silu of it runs TensorIterator's offset-calculator kernel (the measured broadcast fraction); silu of the
  // whole projection, of a reshape of it, or of a tensor it was copied into is contiguous.
  const OpRates& r = h200_op_rates();
  struct Case {
    const char* what;
    bool gapped;
  };
  const double part = 8.0 * 1024 * 2048;
  for (const Case& c : {Case{"split part", true}, Case{"reshape", false}, Case{"whole", false}}) {
    INFO(c.what);
    GraphBuilder b(inference_cfg());
    // an activation (a projection's output, here a relu's): the split of a graph input is not a gapped activation
    const TensorId qkv = b.unary("relu", b.input({8, 1024, 3 * 2048}, DType::bf16), false, true);
    TensorId x = qkv;
    if (std::string(c.what) == "split part") x = b.split(qkv, 3, {8, 1024, 2048})[1];
    if (std::string(c.what) == "reshape") x = b.view(qkv, {8, 1024, 3, 2048});
    b.unary("silu", x, true, false);
    const Graph g = b.finish();
    const double elems = std::string(c.what) == "split part" ? part : 3 * part;
    const double expected = 2 * (elems + elems) / (r.mem_bf16_bytes_per_s * (c.gapped ? r.mem_broadcast_ratio[0] : 1.0));
    CHECK(forward_of(g, "silu")[kMem] == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("step time: a split's backward writes its parts' gradients into one input-sized buffer", "[time][layout]") {
  // SplitBackward: a cat kernel reading the three parts' gradients and writing x's gradient, 2 x x's bytes at the
  // contiguous rate and one kernel; the forward split is a view (no kernel, no bytes).
  RunConfig cfg;
  cfg.mode = Mode::training;
  cfg.precision = Precision::bf16;
  const OpRates& r = h200_op_rates();
  for (const int64_t H : {512, 2048}) {
    INFO("H " << H);
    GraphBuilder b(cfg);
    const TensorId w = b.param("w", {3 * H, H}, true, DType::bf16);
    const TensorId x = b.input({4, 256, H}, DType::bf16);
    const auto parts = b.split(b.linear(x, w), 3, {4, 256, H});
    b.add(b.add(parts[0], parts[1]), parts[2]);
    const Graph g = b.finish();
    const double x_bytes = 2.0 * 4 * 256 * 3 * static_cast<double>(H);
    for (const auto& o : op_breakdown(g, cfg, r, true))
      if (o.name == "split") {
        CHECK(o.fwd[kMem] == 0);
        CHECK(o.fwd[kKernels] == 0);
        CHECK(o.bwd[kMemBwd] == Approx(2 * x_bytes / r.mem_bf16_bytes_per_s).epsilon(1e-9));
        CHECK(o.bwd[kKernels] == 1);
      }
  }
}

TEST_CASE("step time: an upcast to fp32 runs the casting kernel, a downcast the vectorized one", "[time][layout]") {
  // copy_ from bf16 to fp32 is TensorIterator's dynamically casting kernel (unrolled, the rate mixed_dtype.py
  // measured for it); fp32 to bf16 has a vectorized kernel of its own (bytes at the contiguous rate).
  const OpRates& r = h200_op_rates();
  REQUIRE(r.mem_mixed_ratio < 0.8);  // measured 0.64 (h200-mixed-dtype.json)
  struct Case {
    DType from, to;
    double ratio;
  };
  const double n = 8.0 * 1024 * 2048;
  for (const Case& c : {Case{DType::bf16, DType::f32, r.mem_mixed_ratio}, Case{DType::f16, DType::f32, r.mem_mixed_ratio},
                        Case{DType::f32, DType::bf16, 1.0}}) {
    INFO("from " << dtype_bytes(c.from) << " to " << dtype_bytes(c.to) << " bytes");
    GraphBuilder b(inference_cfg());
    b.to(b.input({8, 1024, 2048}, c.from), c.to);
    const Graph g = b.finish();
    const double bytes = n * static_cast<double>(dtype_bytes(c.from) + dtype_bytes(c.to));
    const double bw = c.to == DType::f32 ? r.mem_fp32_bytes_per_s : r.mem_bf16_bytes_per_s;
    CHECK(forward_of(g, "to_copy")[kMem] == Approx(bytes / (bw * c.ratio)).epsilon(1e-9));
  }
}

TEST_CASE("step time: autocast's activation casts cost the host one ATen dispatch, not a Python op", "[time][host]") {
  // Under amp, linear's autocast wrapper casts its fp32 input in C++: that to_copy carries no Python dispatch
  // (cpu_ops 0) and the measured host seconds of one small op with autograd (OpRates::dispatch_s) in cpu_host. The
  // weight's cast (the autocast cache's entry) and an explicit .to() in the model's Python (an RMSNorm's upcast)
  // keep a Python op's count and its elementwise class's measured cost.
  RunConfig cfg;
  cfg.mode = Mode::training;
  cfg.precision = Precision::amp_bf16;
  const OpRates& r = h200_op_rates();
  REQUIRE(r.dispatch_s > 0);
  GraphBuilder b(cfg);
  const TensorId w = b.param("w", {256, 512}, true);
  const TensorId x = b.unary("relu", b.param("x", {4, 128, 512}, true), false, true);  // an fp32 activation
  const TensorId y = b.linear(x, w);  // the input's cast, the weight's (cached) cast, then the bf16 GEMM
  b.to(y, DType::f32);                // the model's own upcast
  const Graph g = b.finish();
  int activation_casts = 0, param_casts = 0, explicit_casts = 0;
  for (const Op& op : g.ops) {
    if (g.name_of(op.name) != "to_copy") continue;
    const bool cached = g.tensors[static_cast<size_t>(op.outs[0])].autocast_cache;
    (!op.autocast_cast ? explicit_casts : cached ? param_casts : activation_casts) += 1;
  }
  CHECK(activation_casts == 1);
  CHECK(param_casts == 1);
  CHECK(explicit_casts == 1);
  for (const auto& o : op_breakdown(g, cfg, r, true))
    if (o.name == "to_copy") {
      CHECK(o.count == 3);
      CHECK(o.fwd[kCpu] == 2);  // the weight's cast and the explicit one
      const double python_op_host = r.host_by_class[OpRates::kHostRelu].fwd_s;
      CHECK(o.fwd[kCpuHost] == Approx(r.dispatch_s + 2 * python_op_host).epsilon(1e-12));
      CHECK(o.bwd[kCpu] == 3);  // every cast has its ToCopyBackward node
    }
}

TEST_CASE("step time: a frozen Linear's backward costs the host the frozen class, a trained one's its own", "[time][host]") {
  // A frozen weight's Linear (LoRA's base layer, a frozen layer) computes only the input gradient in backward: one
  // mm, no AccumulateGrad. host_overhead.py's linear_frozen chain measured its host cost at about half a trained
  // Linear's (data/calibration/h200-host-overhead.tsv); op_cost gives it that class, forward and backward. A
  // Linear whose input needs no gradient either has no backward at all.
  RunConfig cfg;
  cfg.mode = Mode::training;
  cfg.precision = Precision::bf16;
  const OpRates& r = h200_op_rates();
  const auto& frozen = r.host_by_class[OpRates::kHostLinearFrozen];
  const auto& trained = r.host_by_class[OpRates::kHostLinearNobias];
  REQUIRE(frozen.bwd_s > 0);
  REQUIRE(frozen.bwd_s < 0.7 * trained.bwd_s);
  struct Case {
    bool weight_trainable;
    const OpRates::HostSeconds* expected;
  };
  for (const Case& c : {Case{true, &trained}, Case{false, &frozen}}) {
    INFO("weight trainable " << c.weight_trainable);
    GraphBuilder b(cfg);
    const TensorId w = b.param("w", {256, 512}, c.weight_trainable);
    const TensorId x = b.unary("relu", b.param("x", {4, 128, 512}, true), false, true);  // an activation needing grad
    b.linear(x, w);
    const Graph g = b.finish();
    bool seen = false;
    for (const auto& o : op_breakdown(g, cfg, r, true))
      if (o.name == "linear") {
        seen = true;
        CHECK(o.fwd[kCpuHost] == Approx(c.expected->fwd_s).epsilon(1e-12));
        CHECK(o.bwd[kCpuHost] == Approx(c.expected->bwd_s).epsilon(1e-12));
      }
    CHECK(seen);
  }
}
