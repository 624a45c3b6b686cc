// The step-time model's mixture-of-experts and dropout kernels on graphs small enough to cost by hand
// (engine/time/step_time.h, eighth session): torch._grouped_mm at its measured grouped rate (bf16) or as ATen's
// per-expert loop (other dtypes), masked_fill with a broadcast mask at the broadcast fraction, x[idx]'s backward
// at its measured bytes-and-repeats cost, SDPA with dropout at its measured dropout rows. Expected values are the
// formulas below applied to the embedded table's measured rows (calibrate/moe_attn_kernels.py,
// calibrate/moe_odd_kernels.py), looked up here by their keys, or to rows written in the test.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "engine/errors.h"
#include "engine/graph_builder.h"
#include "engine/time/step_time.h"

using namespace memplan;
using namespace memplan::timing;

namespace {

RunConfig cfg_of(Mode m, Precision p) {
  RunConfig c;
  c.mode = m;
  c.precision = p;
  return c;
}

// A copy: callers pass op_breakdown's result as a temporary.
OpNameCost cost_of(const std::vector<OpNameCost>& ops, const std::string& name) {
  for (const auto& o : ops)
    if (o.name == name) return o;
  FAIL("no op " << name);
  return {};
}

const OpRates::GroupedMm& grouped_row(const OpRates& r, int64_t e, int64_t k, int64_t n, int64_t rows) {
  for (const auto& g : r.grouped_mm)
    if (g.dtype == "bf16" && g.experts == e && g.k == k && g.n == n && g.rows == rows) return g;
  FAIL("no grouped_mm row E " << e << " K " << k << " N " << n << " R " << rows);
  return r.grouped_mm.front();
}

// One grouped_mm of the experts' weight [E, N, K] (trainable) over R routed rows [R, K], as the MoE builders emit it.
Graph grouped_graph(Mode m, Precision p, DType dt, int64_t E, int64_t K, int64_t N, int64_t R) {
  GraphBuilder b(cfg_of(m, p));
  const TensorId w = b.param("experts.gate_up_proj", {E, N, K}, true);
  const TensorId x = b.input({R, K}, dt);
  const TensorId offs = b.input({E}, DType::i32);
  b.generic({"grouped_mm", {w, x, offs}, {{{R, N}, dt}}, {0, 1}, {}, {}, {}});
  return b.finish();
}

}  // namespace

TEST_CASE("grouped_mm rates: a measured shape is its own rate, others the log-distance-weighted mean; no row, -1", "[time][moe]") {
  OpRates r;
  r.grouped_mm.push_back({"bf16", 8, 1024, 1024, 8192, 400, 300});    // 1024 rows per expert
  r.grouped_mm.push_back({"bf16", 8, 1024, 1024, 32768, 600, 500});   // 4096 rows per expert
  CHECK(grouped_mm_flops_per_s(r, DType::bf16, 8, 1024, 1024, 8192, false) == Approx(400e12));
  CHECK(grouped_mm_flops_per_s(r, DType::bf16, 8, 1024, 1024, 32768, true) == Approx(500e12));
  // 2048 rows per expert: one octave from each row, equal weights, the geometric mean of the rates
  CHECK(grouped_mm_flops_per_s(r, DType::bf16, 8, 1024, 1024, 16384, false) == Approx(std::sqrt(400.0 * 600.0) * 1e12));
  CHECK(grouped_mm_flops_per_s(r, DType::bf16, 8, 1024, 1024, 16384, true) == Approx(std::sqrt(300.0 * 500.0) * 1e12));
  // fp16 and fp32 have no grouped kernel (ATen loops over the experts): no rate
  CHECK(grouped_mm_flops_per_s(r, DType::f16, 8, 1024, 1024, 8192, false) == -1);
  CHECK(grouped_mm_flops_per_s(r, DType::f32, 8, 1024, 1024, 8192, false) == -1);
  CHECK(grouped_mm_flops_per_s(r, DType::bf16, 0, 1024, 1024, 8192, false) == -1);
}

TEST_CASE("step time: a bf16 grouped_mm is 2 R K N FLOPs at its measured grouped rate, forward and weight gradient", "[time][moe]") {
  const OpRates& r = h200_op_rates();
  struct Case {
    int64_t e, k, n, rows;
  };
  // measured shapes of the embedded table: Qwen3-30B-A3B's gate_up at 256 rows per expert, Mixtral's down at 1024
  for (const Case& c : {Case{128, 2048, 1536, 32768}, Case{8, 14336, 4096, 8192}}) {
    INFO("E " << c.e << " K " << c.k << " N " << c.n << " R " << c.rows);
    const Graph g = grouped_graph(Mode::training, Precision::bf16, DType::bf16, c.e, c.k, c.n, c.rows);
    const auto ops = op_breakdown(g, cfg_of(Mode::training, Precision::bf16), r, true);
    const OpNameCost o = cost_of(ops, "grouped_mm");
    const OpRates::GroupedMm& row = grouped_row(r, c.e, c.k, c.n, c.rows);
    const double flops = 2.0 * c.rows * c.k * c.n;
    CHECK(o.fwd[kGemm] == Approx(flops / (row.fwd_tflops * 1e12)).epsilon(1e-9));
    CHECK(o.fwd[kKernels] == 1);
    // the rows need no gradient here (an input): only the weight's, one GEMM's FLOPs at the backward rate
    CHECK(o.bwd[kGemm] == Approx(flops / (row.bwd_tflops * 1e12)).epsilon(1e-9));
    CHECK(o.bwd[kKernels] == 1);
  }
}

TEST_CASE("step time: an fp32 or fp16 grouped_mm is ATen's loop of one mm per expert, slower than the bf16 kernel", "[time][moe]") {
  const OpRates& r = h200_op_rates();
  const int64_t E = 128, K = 2048, N = 1536, R = 32768;
  const auto fwd = [&](Precision p, DType dt) {
    const Graph g = grouped_graph(Mode::inference, p, dt, E, K, N, R);
    return cost_of(op_breakdown(g, cfg_of(Mode::inference, p), r, false), "grouped_mm").fwd;
  };
  const Features bf = fwd(Precision::bf16, DType::bf16), f32 = fwd(Precision::fp32, DType::f32),
                 f16 = fwd(Precision::fp16, DType::f16);
  CHECK(bf[kKernels] == 1);
  CHECK(f32[kKernels] == E);  // one launch per expert
  CHECK(f16[kKernels] == E);
  // fp32 on CUDA cores (moe_odd_kernels.py: 29 TFLOP/s at this shape, the grouped bf16 kernel 471): several times
  // the bf16 kernel's time (fp32 GEMMs are priced in their own column, gemm_fp32)
  CHECK(f32[kGemm] == 0);
  CHECK(f32[kGemmF32] > 5 * bf[kGemm]);
}

TEST_CASE("step time: masked_fill with a broadcast mask moves its bytes at the broadcast fraction after a clone, both passes", "[time][moe]") {
  const OpRates& r = h200_op_rates();
  const int64_t R = 65536, N = 1536;
  for (const bool broadcast : {false, true}) {
    INFO("broadcast " << broadcast);
    GraphBuilder b(cfg_of(Mode::training, Precision::bf16));
    const TensorId w = b.param("w", {R, N}, true);
    const TensorId mask = b.input(broadcast ? Shape{R, 1} : Shape{R, N}, DType::boolean);
    b.generic({"masked_fill", {w, mask}, {{{R, N}, DType::bf16}}, {1}, {}, {}, {}});
    const Graph g = b.finish();
    const OpNameCost o =
        cost_of(op_breakdown(g, cfg_of(Mode::training, Precision::bf16), r, true), "masked_fill");
    const double x = static_cast<double>(R) * N * 2, m = broadcast ? static_cast<double>(R) : static_cast<double>(R) * N;
    const double ratio = broadcast ? r.mem_broadcast_ratio[0] : 1.0;
    // out-of-place: clone() (the input read and written at the contiguous rate), then the fill kernel
    const double clone = 2 * x / r.mem_bf16_bytes_per_s;
    CHECK(o.fwd[kMem] == Approx((x + m + x) / (r.mem_bf16_bytes_per_s * ratio) + clone).epsilon(1e-9));
    CHECK(o.fwd[kKernels] == 2);
    // backward: grad.masked_fill(mask, 0): the gradient's clone, then the output gradient read, the saved mask
    // read, the input gradient written, at the same fraction
    CHECK(o.bwd[kMemBwd] == Approx((x + m + x) / (r.mem_bf16_bytes_per_s * ratio) + clone).epsilon(1e-9));
    CHECK(o.bwd[kKernels] == 2);
  }
}

TEST_CASE("step time: x[idx]'s backward is its bytes at the measured rate plus a cost per repeated row", "[time][moe]") {
  const OpRates& r = h200_op_rates();
  REQUIRE(r.index_bwd_bytes_per_s > 0);
  struct Case {
    int64_t src_rows, rows, width;
  };
  // the routed rows' gather (8 repeats), an inverse permutation (none), gpt_oss's bias gather (256 repeats)
  for (const Case& c : {Case{8192, 65536, 2048}, Case{65536, 65536, 2048}, Case{32, 8192, 5760}}) {
    INFO("src " << c.src_rows << " rows " << c.rows << " width " << c.width);
    GraphBuilder b(cfg_of(Mode::training, Precision::bf16));
    const TensorId src = b.param("table", {c.src_rows, c.width}, true);
    const TensorId idx = b.input({c.rows}, DType::i64);
    b.generic({"index", {src, idx}, {{{c.rows, c.width}, DType::bf16}}, {1}, {}, {}, {}});
    const Graph g = b.finish();
    const OpNameCost o = cost_of(op_breakdown(g, cfg_of(Mode::training, Precision::bf16), r, true), "index");
    const double bytes = (static_cast<double>(c.rows) + 2.0 * c.src_rows) * c.width * 2;
    const double dup = static_cast<double>(c.rows) / c.src_rows;
    CHECK(o.bwd[kNorm] == Approx(bytes / r.index_bwd_bytes_per_s + dup * r.index_bwd_dup_s).epsilon(1e-9));
    CHECK(o.bwd[kMemBwd] == 0);
  }
}

TEST_CASE("step time: SDPA with dropout while training runs at the measured dropout rows of its mode", "[time][moe]") {
  const OpRates& r = h200_op_rates();
  REQUIRE(!r.sdpa_dropout.empty());
  const int64_t B = 8, H = 16, S = 1024, D = 64;
  const double half = 0.5 * 4.0 * B * H * S * S * D;
  const auto sdpa_fwd = [&](double p) {
    GraphBuilder b(cfg_of(Mode::training, Precision::bf16));
    const TensorId q = b.param("q", {B, H, S, D}, true);
    const TensorId k = b.param("k", {B, H, S, D}, true);
    const TensorId v = b.param("v", {B, H, S, D}, true);
    b.sdpa(q, k, v, p, true);
    const Graph g = b.finish();
    return cost_of(op_breakdown(g, cfg_of(Mode::training, Precision::bf16), r, true), "sdpa_flash");
  };
  const OpRates::Sdpa* drop = nullptr;
  for (const auto& x : r.sdpa_dropout)
    if (x.dtype == "bf16" && x.d == D && x.s == S && x.causal && !drop) drop = &x;
  REQUIRE(drop);
  const OpNameCost with = sdpa_fwd(0.1), without = sdpa_fwd(0.0);
  CHECK(with.fwd[kAttn] == Approx(half / (drop->fwd_tflops * 1e12)).epsilon(1e-9));
  CHECK(with.bwd[kAttn] == Approx(2.5 * half / (drop->bwd_tflops * 1e12)).epsilon(1e-9));
  CHECK(with.fwd[kAttn] > 1.5 * without.fwd[kAttn]);  // the kernel draws the mask: ~2x forward (measured 2.3x)
}

TEST_CASE("op rates: grouped_mm, sdpa_dropout and index_bwd rows parse; bad ones are input errors naming the line", "[time][moe]") {
  const std::string base = "gemm_dims 128 256\ngemm bf16 1 1 1 1 1 1 1 1\nmem bf16 2900\nmem fp32 4100\n";
  const OpRates r = parse_op_rates(base + "grouped_mm bf16 8 1024 1024 8192 400 300\n"
                                          "sdpa_dropout bf16 64 1024 causal 126.8 178.6\n"
                                          "sdpa_dropout bf16 64 1024 masked 111.5 185.3\nindex_bwd 2784 0.93\n");
  REQUIRE(r.grouped_mm.size() == 1);
  CHECK(r.grouped_mm[0].rows == 8192);
  CHECK(r.grouped_mm[0].bwd_tflops == 300);
  REQUIRE(r.sdpa_dropout.size() == 1);
  CHECK(r.sdpa_dropout[0].causal);
  REQUIRE(r.sdpa_dropout_masked.size() == 1);
  CHECK(r.index_bwd_bytes_per_s == Approx(2784e9));
  CHECK(r.index_bwd_dup_s == Approx(0.93e-6));
  for (const char* bad : {"grouped_mm bf16 8 1024 1024 8192 0 300\n", "grouped_mm bf16 8 1024 1024\n",
                          "grouped_mm bf16 0 1024 1024 8192 1 1\n", "sdpa_dropout bf16 64 1024 sideways 1 1\n",
                          "sdpa_dropout bf16 64 1024 causal -1 1\n", "index_bwd 0 1\n", "index_bwd 100 -1\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_op_rates(base + bad), InputError);
  }
}
