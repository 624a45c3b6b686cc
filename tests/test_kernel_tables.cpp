// engine/time/kernel_tables.h: the lookup contract on small hand-written tables (every expected value derived in
// the comment next to it), the embedded H200 tables' coverage, and refusals of malformed rows.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/errors.h"
#include "engine/text_rows.h"
#include "engine/time/kernel_tables.h"
#include "engine/time/step_time.h"

using namespace memplan;
using namespace memplan::timing;

namespace {
// One dense 3x3 shape (64 -> 64, stride 1, pad 1) measured at 56 x 56, batches 8 and 32, bf16.
constexpr const char* kConvTable =
    "# c_in c_out kernel stride pad h w groups dilation channels_last n dtype forward_us backward_us\n"
    "64 64 3 1 1 56 56 1 1 0 8 bf16 20 50\n"
    "64 64 3 1 1 56 56 1 1 0 32 bf16 50 110\n";
ConvKernelShape shape(int64_t n, int64_t hw, DType dt = DType::bf16) {
  return {n, 64, hw, hw, 64, 3, 1, 1, 1, 1, false, dt};
}
}  // namespace

TEST_CASE("conv time table: the lookup contract", "[time][tables]") {
  const ConvTimeTable t(kConvTable);
  REQUIRE(t.rows() == 2);
  struct Row {
    const char* what;
    ConvKernelShape s;
    double fwd_us, bwd_us;
  };
  const Row rows[] = {
      {"a measured batch", shape(8, 56), 20, 50},
      // between 8 and 32: 20 + (50 - 20) * (20 - 8) / 24 = 35; 50 + 60 * 12 / 24 = 80
      {"between measured batches", shape(20, 56), 35, 80},
      // beyond 32 along the last segment: 50 + 30 * (64 - 32) / 24 = 90; 110 + 60 * 32 / 24 = 190
      {"beyond the largest", shape(64, 56), 90, 190},
      // below 8, proportional: 20 * 2 / 8 = 5; 50 * 2 / 8 = 12.5
      {"below the smallest", shape(2, 56), 5, 12.5},
      // 28 x 28 at n = 32 has the pixels of 56 x 56 at n = 8: the n = 8 row
      {"another spatial size at the same N*H*W", shape(32, 28), 20, 50},
      {"fp16 reads bf16's rows", shape(8, 56, DType::f16), 20, 50},
  };
  for (const Row& r : rows) {
    INFO(r.what);
    KernelSeconds k;
    REQUIRE(t.lookup(r.s, k));
    CHECK(k.forward_s == Approx(r.fwd_us * 1e-6));
    CHECK(k.backward_s == Approx(r.bwd_us * 1e-6));
  }
  KernelSeconds k;
  CHECK_FALSE(t.lookup(shape(8, 56, DType::f32), k));  // no fp32 rows
  ConvKernelShape other = shape(8, 56);
  other.stride = 2;
  CHECK_FALSE(t.lookup(other, k));  // another key
  // class rate: the median FLOP/s of the class's rows. Row n = 8: 2 * 8 * 64 * 56 * 56 * 64 * 9 FLOPs = 231.2 M
  // in 20 us = 11.56 TFLOP/s; n = 32: 924.8 M in 50 us = 18.50; the median of two is their mean, 15.03.
  double f = 0, b = 0;
  REQUIRE(t.class_rate(shape(8, 56), f, b));
  const double fl8 = 2.0 * 8 * 64 * 56 * 56 * 64 * 9;
  CHECK(f == Approx(0.5 * (fl8 / 20e-6 + 4 * fl8 / 50e-6)));
  CHECK(b == Approx(0.5 * (2 * fl8 / 50e-6 + 2 * 4 * fl8 / 110e-6)));
  CHECK(conv_flops(shape(8, 56)) == Approx(fl8));
}

TEST_CASE("bn time table: backward is forward + backward less the forward", "[time][tables]") {
  const BnTimeTable t("64 56 56 0 8 bf16 10 40\n64 56 56 0 32 bf16 30 100\n");
  KernelSeconds k;
  REQUIRE(t.lookup(8, 64, 56, 56, false, DType::bf16, k));
  CHECK(k.forward_s == Approx(10e-6));
  CHECK(k.backward_s == Approx(30e-6));
  REQUIRE(t.lookup(16, 64, 56, 56, false, DType::f16, k));  // 10 + 20 * 8 / 24, 40 + 60 * 8 / 24 = 60
  CHECK(k.forward_s == Approx((10 + 20.0 / 3) * 1e-6));
  CHECK(k.backward_s == Approx((60 - 10 - 20.0 / 3) * 1e-6));
  CHECK_FALSE(t.lookup(8, 128, 56, 56, false, DType::bf16, k));
}

TEST_CASE("kernel tables refuse malformed rows, naming the line", "[time][tables]") {
  const char* bad[] = {
      "64 64 3 1 1 56 56 1 1 0 8 bf16 20\n",              // a column missing
      "64 64 3 1 1 56 56 1 1 0 8 int8 20 50\n",           // no such dtype
      "64 64 3 1 1 56 56 1 1 2 8 bf16 20 50\n",           // channels_last not 0 / 1
      "64 64 3 1 1 56 56 1 1 0 8 bf16 -1 50\n",           // a negative time
      "64 64 3 1 1 56 56 1 1 0 8 bf16 20 50 7\n",         // a column too many
      "64 64 3 1 1 56 56 1 1 0 8 bf16 20 50\n64 64 3 1 1 56 56 1 1 0 8 bf16 21 51\n",  // a batch twice
  };
  for (const char* text : bad) {
    INFO(text);
    CHECK_THROWS_AS(ConvTimeTable(text), InputError);
  }
  CHECK_THROWS_AS(BnTimeTable("64 56 56 0 8 bf16 10\n"), InputError);
  CHECK_THROWS_AS(BnTimeTable("64 56 56 0 0 bf16 10 20\n"), InputError);  // batch 0
}

TEST_CASE("the embedded H200 tables cover the zoo's ResNet-50 at 224 x 224", "[time][tables]") {
  // ResNet-50's first bottleneck 3x3 (64 -> 64 at 56 x 56) at a measured batch, both dtypes the corpus runs
  KernelSeconds k;
  CHECK(h200_conv_time().lookup(shape(32, 56), k));
  CHECK(k.forward_s > 0);
  CHECK(h200_conv_time().lookup(shape(128, 56, DType::f32), k));
  CHECK(h200_bn_time().lookup(64, 64, 112, 112, false, DType::bf16, k));
  CHECK(h200_conv_time().rows() > 8000);
  CHECK(h200_bn_time().rows() > 3000);
}

TEST_CASE("op rates: a keyword line with too few fields is an input error (fuzz_time_tables found it)", "[time][tables]") {
  for (const char* text : {"gemm\n", "conv bf16\n", "opt adamw foreach\n", "mem\n", "overhead\n", "sdpa\n",
                           "sdpa_masked bf16 96 4096 230\n"}) {
    INFO(text);
    CHECK_THROWS_AS(parse_op_rates(text), InputError);
  }
}

TEST_CASE("op rates: a dimension out of range is an input error, not undefined behaviour", "[time][tables]") {
  for (const char* text : {"gemm_dims 128 1.2e22\n", "gemm_dims 128 -4\n", "gemm_dims 128 2.5\n", "sdpa bf16 1e30 512 1 1 1\n"}) {
    INFO(text);
    CHECK_THROWS_AS(parse_op_rates(text), InputError);
  }
}

TEST_CASE("op rates: the layout ratios (strided copy, broadcast) are read per dtype; a ratio outside 0 to 1 or another layout is an input error", "[time][tables]") {
  // a minimal table (two grid points, one bf16 GEMM row of 2^3 rates, the two bandwidths) plus the layout lines
  const std::string base = "gemm_dims 128 256\ngemm bf16 1 1 1 1 1 1 1 1\nmem bf16 2900\nmem fp32 4100\n";
  const auto r = parse_op_rates(base + "mem_layout strided_copy bf16 0.38\nmem_layout strided_copy fp32 0.61\n" +
                                "mem_layout broadcast bf16 0.41\nmem_layout broadcast fp32 0.64\n");
  CHECK(r.mem_strided_copy_ratio[0] == Approx(0.38));
  CHECK(r.mem_strided_copy_ratio[1] == Approx(0.61));
  CHECK(r.mem_broadcast_ratio[0] == Approx(0.41));
  CHECK(r.mem_broadcast_ratio[1] == Approx(0.64));
  CHECK(parse_op_rates(base).mem_strided_copy_ratio[0] == 1.0);  // no line: the contiguous rate
  CHECK(parse_op_rates(base).mem_broadcast_ratio[1] == 1.0);
  // the embedded table carries the measured ratios (calibrate/elementwise_layout.py: 1409.5 / 3704 GB/s for the
  // bf16 transposed copy; the median of the bf16 broadcast rows over the contiguous ones, 1511.7 / 3704)
  CHECK(h200_op_rates().mem_strided_copy_ratio[0] == Approx(0.38).margin(0.01));
  CHECK(h200_op_rates().mem_broadcast_ratio[0] == Approx(0.41).margin(0.01));
  for (const char* bad : {"mem_layout strided_copy bf16 0\n", "mem_layout strided_copy bf16 1.5\n",
                          "mem_layout permuted bf16 0.4\n", "mem_layout strided_copy bf16\n",
                          "mem_layout broadcast fp32 0\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_op_rates(base + bad), InputError);
  }
}

TEST_CASE("op rates: norm rows and the mixed-dtype ratios parse; a bad microsecond or field is an input error", "[time][tables]") {
  const std::string base = "gemm_dims 128 256\ngemm bf16 1 1 1 1 1 1 1 1\nmem bf16 2900\nmem fp32 4100\n";
  const auto r = parse_op_rates(base + "norm ln_fwd fp32 96 33554400 529.6\nnorm ln_fwd fp32 96 4194240 64.3\n" +
                                "mem_layout mixed fp32 0.64\nmem_layout mixed_broadcast fp32 0.5\n" +
                                "mem_layout mixed_broadcast_cast fp32 0.33\n");
  REQUIRE(r.norm.size() == 2);
  CHECK(r.norm[0].op == "ln_fwd");
  CHECK(r.norm[0].n == 96);
  CHECK(r.norm[0].numel == 33554400);
  CHECK(r.norm[0].s == Approx(529.6e-6));
  CHECK(r.mem_mixed_ratio == Approx(0.64));
  CHECK(r.mem_mixed_broadcast_ratio == Approx(0.5));
  CHECK(r.mem_mixed_broadcast_cast_ratio == Approx(0.33));
  // one measured length: any n reads it; between the two sizes the per-element time is interpolated in log numel
  // (529.6 us / 33554400 = 15.78 ps, 64.3 us / 4194240 = 15.33 ps; at the geometric mean, halfway: 15.56 ps)
  const double mid = std::sqrt(33554400.0 * 4194240.0);
  CHECK(norm_time_s(r, "ln_fwd", DType::f32, 768, mid) ==
        Approx(0.5 * (529.6e-6 / 33554400 + 64.3e-6 / 4194240) * mid).epsilon(1e-12));
  CHECK(norm_time_s(r, "ln_fwd", DType::bf16, 96, mid) == -1);  // no bf16 row
  CHECK(norm_time_s(r, "colsum", DType::f32, 96, mid) == -1);
  for (const char* bad : {"norm ln_fwd fp32 96 33554400 0\n", "norm ln_fwd fp32 96 33554400 -3\n",
                          "norm ln_fwd fp32 0 33554400 5\n", "norm ln_fwd fp32 96\n", "mem_layout mixed fp32 2\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_op_rates(base + bad), InputError);
  }
}

TEST_CASE("text rows: comments and blank lines skipped, line numbers a person sees, CRLF read as LF", "[time][tables]") {
  struct Case {
    const char* text;
    std::vector<std::pair<int64_t, std::string>> rows;  // (line_no, line) expected, by reading the text
  };
  const Case cases[] = {
      {"", {}},
      {"# only a comment\n\n", {}},
      {"a b\n# c\n\nd\n", {{1, "a b"}, {4, "d"}}},
      {"a\r\n#x\r\nb\r\n", {{1, "a"}, {3, "b"}}},
      {"no final newline", {{1, "no final newline"}}},
      {"\r\n  indented\n", {{2, "  indented"}}},  // a bare CR line is blank; leading spaces are data
  };
  for (const Case& c : cases) {
    std::vector<std::pair<int64_t, std::string>> got;
    for_each_row(c.text, [&](int64_t n, const std::string& line) { got.emplace_back(n, line); });
    CHECK(got == c.rows);
  }
  CHECK(split_ws("  gemm\tbf16  1 2 ") == std::vector<std::string>{"gemm", "bf16", "1", "2"});
}

TEST_CASE("op rates: host classes and GEMM caps are resolved once, as a scan of the rows would find them", "[time][tables]") {
  OpRates r;
  // host: the first fp32 row of a class wins (fp16 rows are not read); unknown classes stay listed only
  parse_host_overhead("linear fp32 10 20\nlinear fp32 99 99\nadd fp16 5 5\nadd fp32 3 4\ngelu fp32 7 8\n", r);
  CHECK(r.host.size() == 4);
  CHECK(r.host_by_class[OpRates::kHostLinear].fwd_s == Approx(10e-6));
  CHECK(r.host_by_class[OpRates::kHostLinear].bwd_s == Approx(20e-6));
  CHECK(r.host_by_class[OpRates::kHostAdd].fwd_s == Approx(3e-6));
  CHECK(r.host_by_class[OpRates::kHostRelu].fwd_s == 0);  // no relu row: no host seconds
  // alignment caps: the last row of a (dtype, class) wins; fp32 rows cap nothing
  parse_gemm_align("gemm_align bf16 odd 90 130 1\ngemm_align bf16 odd 95 138 2\ngemm_align fp16 even 228 235 3\n", r);
  CHECK(r.align_cap[0][0].fwd_flops_per_s == Approx(95e12));
  CHECK(r.align_cap[0][0].bwd_flops_per_s == Approx(138e12));
  CHECK(r.align_cap[0][1].fwd_flops_per_s == 0);  // bf16 even: no row
  CHECK(r.align_cap[1][1].fwd_flops_per_s == Approx(228e12));
  // the embedded tables: every class op_cost assigns has its measured row
  const OpRates& h = h200_op_rates();
  for (size_t c = 0; c < OpRates::kHostClasses; ++c) {
    INFO(OpRates::kHostClassNames[c]);
    CHECK(h.host_by_class[c].fwd_s > 0);
  }
  CHECK(h.gemm_table[0] >= 0);  // fp32
  CHECK(h.gemm_table[1] >= 0);  // bf16 (fp16 is filled from it)
}
