// Stages: (1) parse the embedded measured rates and fitted coefficients; (2) walk a Graph's forward ops once,
// costing each by its kernel class (step_time.h) into feature columns; (3) combine the columns with the
// coefficients; (4) the NNLS fit of the coefficients (alternating over which side of the max each row is on).
#include "engine/time/step_time.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>

#include "engine/errors.h"
#include "engine/text_rows.h"
#include "engine/time/nnls.h"

namespace memplan::time_embedded {
std::string_view h200_op_rates();
std::string_view h200_coefficients();
std::string_view h200_host_overhead();
std::string_view h200_gemm_align();
std::string_view h200_ckpt_host();
std::string_view h100_op_rates();
std::string_view h100_gemm_align();
std::string_view h100_conv_time();
std::string_view h100_bn_time();
}  // namespace memplan::time_embedded

namespace memplan::timing {

namespace {

std::string_view dtype_key(DType d) {
  switch (d) {
    case DType::bf16: return "bf16";
    case DType::f16: return "fp16";
    default: return "fp32";
  }
}
// OpRates::gemm_table's slot of a dtype, in dtype_key's names: fp32 0, bf16 1, fp16 2.
int dtype_slot(DType d) { return d == DType::bf16 ? 1 : d == DType::f16 ? 2 : 0; }
int dtype_slot(std::string_view key) { return key == "bf16" ? 1 : key == "fp16" ? 2 : key == "fp32" ? 0 : -1; }

// The measured elementwise bandwidth of a dtype's ops: fp32's, or the 16-bit one (bf16 and fp16 alike).
double elementwise_bw(const OpRates& r, DType d) {
  return d == DType::f32 ? r.mem_fp32_bytes_per_s : r.mem_bf16_bytes_per_s;
}

double num(const std::vector<std::string>& f, size_t i, const std::string& line) {
  if (i >= f.size()) throw InputError("op rates", line, "has too few fields");
  if (f[i] == "-") return -1;
  try {
    size_t used = 0;
    const double v = std::stod(f[i], &used);
    if (used != f[i].size() || !std::isfinite(v)) throw std::invalid_argument("x");
    return v;
  } catch (const std::exception&) {
    throw InputError("op rates", line, "field " + std::to_string(i) + " is not a number");
  }
}

}  // namespace

OpRates::OpRates() = default;

OpRates parse_op_rates(std::string_view tsv) {
  OpRates r;
  for_each_row(tsv, [&](int64_t, const std::string& line) {
    const auto f = split_ws(line);
    if (f.empty()) return;
    const std::string& k = f[0];
    // a named field, or the line's error (never a std::out_of_range: fuzz_time_tables)
    const auto field = [&](size_t i) -> const std::string& {
      if (i >= f.size()) throw InputError("op rates", line, "has too few fields");
      return f[i];
    };
    // a dimension: a whole number in [1, 2^40] (the cast below is defined only in range: fuzz_time_tables)
    const auto dim = [&](size_t i) {
      const double v = num(f, i, line);
      if (!(v >= 1 && v <= 1099511627776.0) || v != std::floor(v))
        throw InputError("op rates", line, "field " + std::to_string(i) + " is not a dimension in [1, 2^40]");
      return static_cast<int64_t>(v);
    };
    if (k == "gemm_dims") {
      for (size_t i = 1; i < f.size(); ++i) r.gemm_dims.push_back(dim(i));
    } else if (k == "gemm") {
      std::vector<double> t;
      for (size_t i = 2; i < f.size(); ++i) t.push_back(num(f, i, line));
      r.gemm_tflops.emplace_back(field(1), std::move(t));
    } else if (k == "sdpa") {
      r.sdpa.push_back({field(1), dim(2), dim(3),
                        num(f, 4, line) != 0, num(f, 5, line), num(f, 6, line)});
    } else if (k == "sdpa_masked") {
      r.sdpa_masked.push_back({field(1), dim(2), dim(3), false, num(f, 4, line), num(f, 5, line)});
    } else if (k == "sdpa_dropout") {
      const std::string& mode = field(4);
      if (mode != "full" && mode != "causal" && mode != "masked")
        throw InputError("op rates", line, "an sdpa_dropout row's mode is full, causal or masked");
      const OpRates::Sdpa row{field(1), dim(2), dim(3), mode == "causal", num(f, 5, line), num(f, 6, line)};
      if (!(row.fwd_tflops > 0 && row.bwd_tflops > 0))
        throw InputError("op rates", line, "an sdpa_dropout row's rates are positive");
      (mode == "masked" ? r.sdpa_dropout_masked : r.sdpa_dropout).push_back(row);
    } else if (k == "index_bwd") {
      r.index_bwd_bytes_per_s = num(f, 1, line) * 1e9;
      r.index_bwd_dup_s = num(f, 2, line) * 1e-6;
      if (!(r.index_bwd_bytes_per_s > 0 && r.index_bwd_dup_s >= 0))
        throw InputError("op rates", line, "index_bwd needs a positive bandwidth and a non-negative repeat cost");
    } else if (k == "grouped_mm") {
      const double fwd = num(f, 6, line), bwd = num(f, 7, line);
      if (!(fwd > 0 && bwd > 0)) throw InputError("op rates", line, "a grouped_mm row's rates are positive");
      r.grouped_mm.push_back({field(1), dim(2), dim(3), dim(4), dim(5), fwd, bwd});
    } else if (k == "mem") {
      (field(1) == "bf16" ? r.mem_bf16_bytes_per_s : r.mem_fp32_bytes_per_s) = num(f, 2, line) * 1e9;
    } else if (k == "mem_layout") {
      const double ratio = num(f, 3, line);
      if (!(ratio > 0 && ratio <= 1)) throw InputError("op rates", line, "a layout ratio is in (0, 1]");
      const size_t slot = field(2) == "fp32" ? 1 : 0;
      if (field(1) == "strided_copy") r.mem_strided_copy_ratio[slot] = ratio;
      else if (field(1) == "permuted_copy") r.mem_permuted_copy_ratio[slot] = ratio;
      else if (field(1) == "broadcast") r.mem_broadcast_ratio[slot] = ratio;
      else if (field(1) == "mixed") r.mem_mixed_ratio = ratio;
      else if (field(1) == "mixed_broadcast") r.mem_mixed_broadcast_ratio = ratio;
      else if (field(1) == "mixed_broadcast_cast") r.mem_mixed_broadcast_cast_ratio = ratio;
      else
        throw InputError("op rates", line,
                         "the layouts are strided_copy, permuted_copy, broadcast, mixed, mixed_broadcast and "
                         "mixed_broadcast_cast");
    } else if (k == "conv") {
      r.conv.push_back({field(1), field(2), num(f, 3, line), num(f, 4, line)});
    } else if (k == "bn") {
      if (field(1) == "bf16") r.bn_bf16_fwd = num(f, 2, line) * 1e9, r.bn_bf16_fwd_bwd = num(f, 3, line) * 1e9;
      else r.bn_fp32_fwd = num(f, 2, line) * 1e9, r.bn_fp32_fwd_bwd = num(f, 3, line) * 1e9;
    } else if (k == "norm") {
      const double us = num(f, 5, line);
      if (!(us > 0)) throw InputError("op rates", line, "a norm row's microseconds are positive");
      r.norm.push_back({field(1), field(2), dim(3), dim(4), us * 1e-6});
    } else if (k == "opt") {
      r.opt.push_back({field(1), field(2), field(3), num(f, 4, line) * 1e-9, num(f, 5, line) * 1e-6});
    } else if (k == "overhead") {
      if (field(1) == "add_autograd_us") r.dispatch_s = num(f, 2, line) * 1e-6;
    }  // other keys (kernel_floor_us): information for people
  });
  const size_t n = r.gemm_dims.size();
  if (n < 2) throw InputError("op rates", "gemm_dims", "needs at least two grid points");
  for (auto& [dt, t] : r.gemm_tflops)
    if (t.size() != n * n * n) throw InputError("op rates", "gemm " + dt, "needs " + std::to_string(n * n * n) + " values");
  // Fill unmeasured grid points: fp16 from bf16 (the same tensor-core rate), fp32 past its measured FLOP cap from
  // the best rate measured at a shape no larger in any dimension (fp32 saturates long before the cap).
  const std::vector<double>* bf = nullptr;
  for (auto& [dt, t] : r.gemm_tflops)
    if (dt == "bf16") bf = &t;
  for (auto& [dt, t] : r.gemm_tflops) {
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        for (size_t l = 0; l < n; ++l) {
          double& v = t[(i * n + j) * n + l];
          if (v > 0) continue;
          if (dt == "fp16" && bf) {
            v = (*bf)[(i * n + j) * n + l];
            continue;
          }
          double best = 0;
          for (size_t a = 0; a <= i; ++a)
            for (size_t b = 0; b <= j; ++b)
              for (size_t c = 0; c <= l; ++c) best = std::max(best, t[(a * n + b) * n + c]);
          v = best;
        }
    for (double v : t)
      if (!(v > 0)) throw InputError("op rates", "gemm " + dt, "has a grid point no rate can be filled in for");
  }
  if (r.mem_bf16_bytes_per_s <= 0 || r.mem_fp32_bytes_per_s <= 0) throw InputError("op rates", "mem", "needs bf16 and fp32 rows");
  for (size_t i = 0; i < r.gemm_tflops.size(); ++i) {
    const int slot = dtype_slot(r.gemm_tflops[i].first);
    if (slot >= 0) r.gemm_table[static_cast<size_t>(slot)] = static_cast<int>(i);
  }
  for (size_t i = 0; i < r.norm.size(); ++i) {
    const OpRates::Norm& x = r.norm[i];
    const auto op = std::find(OpRates::kNormOps.begin(), OpRates::kNormOps.end(), x.op);
    if (op == OpRates::kNormOps.end() || (x.dtype != "bf16" && x.dtype != "fp32")) continue;
    r.norm_rows[static_cast<size_t>(op - OpRates::kNormOps.begin())][x.dtype == "fp32" ? 1 : 0].push_back(
        static_cast<uint32_t>(i));
  }
  return r;
}

void parse_host_overhead(std::string_view tsv, OpRates& r) {
  for_each_row(tsv, [&](int64_t, const std::string& line) {
    const auto f = split_ws(line);
    if (f.size() != 4) throw InputError("host overhead", line, "want 'class precision forward_us backward_us'");
    const double fw = num(f, 2, line), bw = num(f, 3, line);
    if (fw < 0 || bw < 0) throw InputError("host overhead", line, "times must be >= 0");
    if (f[1] == "fp32") r.host.push_back({f[0], fw * 1e-6, bw * 1e-6});
  });
  // Resolve the classes op_cost assigns, the first row of a class winning: walked backwards, earlier rows
  // overwrite later ones. Classes it never assigns (conv1x1, gelu, permute, silu) stay in `host`, for people.
  r.host_by_class = {};
  for (auto h = r.host.rbegin(); h != r.host.rend(); ++h) {
    const auto it = std::find(OpRates::kHostClassNames.begin(), OpRates::kHostClassNames.end(), h->cls);
    if (it != OpRates::kHostClassNames.end())
      r.host_by_class[static_cast<size_t>(it - OpRates::kHostClassNames.begin())] = {h->fwd_s, h->bwd_s};
  }
}

void parse_gemm_align(std::string_view tsv, OpRates& r) {
  for_each_row(tsv, [&](int64_t, const std::string& line) {
    const auto f = split_ws(line);
    if (f.size() != 6 || f[0] != "gemm_align" || (f[2] != "odd" && f[2] != "even"))
      throw InputError("gemm align", line, "want 'gemm_align dtype odd|even forward_tflops backward_tflops cases'");
    const double fw = num(f, 3, line), bw = num(f, 4, line);
    if (!(fw > 0) || !(bw > 0)) throw InputError("gemm align", line, "rates must be > 0");
    r.gemm_align.push_back({f[1], f[2], fw * 1e12, bw * 1e12});
    const int slot = dtype_slot(std::string_view(f[1]));
    if (slot >= 1) r.align_cap[static_cast<size_t>(slot - 1)][f[2] == "odd" ? 0 : 1] = r.gemm_align.back();
  });
}

namespace {
// y = a + b x by least squares over (x, y), both >= 0: a negative slope gives b = 0 and a = mean(y); a negative
// intercept gives a = 0 and b through the origin. One distinct x: b = 0.
std::pair<double, double> nonneg_line(const std::vector<std::pair<double, double>>& pts) {
  if (pts.empty()) return {0, 0};
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : pts) n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  const double den = n * sxx - sx * sx;
  double b = den > 1e-12 * std::max(1.0, n * sxx) ? (n * sxy - sx * sy) / den : 0;
  if (b < 0) b = 0;
  double a = (sy - b * sx) / n;
  if (a < 0) a = 0, b = sxx > 0 ? std::max(0.0, sxy / sxx) : 0;
  return {a, b};
}
}  // namespace

void parse_ckpt_host(std::string_view tsv, OpRates& r) {
  std::vector<std::pair<double, double>> fwd, bwd;
  for_each_row(tsv, [&](int64_t, const std::string& line) {
    const auto f = split_ws(line);
    if (f.size() != 9)
      throw InputError("checkpoint host", line,
                       "want 'block precision run ops saved plain_fwd_us plain_fwd_bwd_us ckpt_fwd_us ckpt_fwd_bwd_us'");
    if (f[1] != "fp32" && f[1] != "amp_bf16") throw InputError("checkpoint host", line, "precision: fp32 or amp_bf16");
    const double saved = num(f, 4, line), pf = num(f, 5, line), pfb = num(f, 6, line), cf = num(f, 7, line),
                 cfb = num(f, 8, line);
    // The times are slopes between two chain lengths: noise can make a small one negative (a run of 2026-12-02
    // read -44 us for a forward). Bounded so that the fit's sums of squares stay finite.
    constexpr double kMax = 1e9;  // us (17 minutes a block) and tensors
    const auto within = [](double v, double lo) { return v >= lo && v <= kMax; };
    if (!within(saved, 0) || !within(pf, -kMax) || !within(pfb, -kMax) || !within(cf, -kMax) || !within(cfb, -kMax))
      throw InputError("checkpoint host", line, "saved must be in [0, 1e9] and the times in [-1e9, 1e9] us");
    if (f[1] != "fp32") return;
    fwd.push_back({saved, (cf - pf) * 1e-6});
    bwd.push_back({saved, (cfb - pfb - cf) * 1e-6});
  });
  const auto [fa, fb] = nonneg_line(fwd);
  const auto [ba, bb] = nonneg_line(bwd);
  r.ckpt_host = {fa, fb, ba, bb};
}

const OpRates& h200_op_rates() {
  static const OpRates r = [] {
    OpRates o = parse_op_rates(time_embedded::h200_op_rates());
    o.conv_time = &h200_conv_time();
    o.bn_time = &h200_bn_time();
    parse_host_overhead(time_embedded::h200_host_overhead(), o);
    parse_gemm_align(time_embedded::h200_gemm_align(), o);
    parse_ckpt_host(time_embedded::h200_ckpt_host(), o);
    return o;
  }();
  return r;
}

std::unique_ptr<LoadedRates> load_rates(std::string_view op_rates_tsv, std::string_view conv_time_tsv,
                                        std::string_view bn_time_tsv, std::string_view gemm_align_tsv) {
  auto out = std::make_unique<LoadedRates>();
  OpRates& o = out->rates;
  o = parse_op_rates(op_rates_tsv);
  if (!conv_time_tsv.empty()) {
    out->conv = std::make_unique<ConvTimeTable>(conv_time_tsv);
    o.conv_time = out->conv.get();
  }
  if (!bn_time_tsv.empty()) {
    out->bn = std::make_unique<BnTimeTable>(bn_time_tsv);
    o.bn_time = out->bn.get();
  }
  if (!gemm_align_tsv.empty()) parse_gemm_align(gemm_align_tsv, o);
  // the host's side: the reference host's tables (data/calibration/h100/README.md says why), and its dispatch
  const OpRates& ref = h200_op_rates();
  o.dispatch_s = ref.dispatch_s;
  o.host = ref.host;
  o.host_by_class = ref.host_by_class;
  o.ckpt_host = ref.ckpt_host;
  return out;
}

const OpRates& h100_op_rates() {
  static const std::unique_ptr<LoadedRates> r =
      load_rates(time_embedded::h100_op_rates(), time_embedded::h100_conv_time(), time_embedded::h100_bn_time(),
                 time_embedded::h100_gemm_align());
  return r->rates;
}

const MeasuredGpu* measured_gpu(std::string_view gpu_id) {
  static constexpr std::array<MeasuredGpu, 2> gpus = {{{"h200-sxm-141gb", "an H200", &h200_op_rates},
                                                       {"h100-sxm-80gb", "an H100 SXM", &h100_op_rates}}};
  for (const MeasuredGpu& m : gpus)
    if (m.gpu_id == gpu_id) return &m;
  return nullptr;
}

double grouped_mm_flops_per_s(const OpRates& r, DType dtype, double experts, double k, double n, double rows,
                              bool backward) {
  if (!(experts >= 1 && k >= 1 && n >= 1 && rows >= 1)) return -1;
  const std::string_view key = dtype_key(dtype);
  const double rpe = rows / experts;
  double wsum = 0, lsum = 0;
  for (const OpRates::GroupedMm& g : r.grouped_mm) {
    if (g.dtype != key) continue;
    const double rate = (backward ? g.bwd_tflops : g.fwd_tflops) * 1e12;
    const double d_rpe = std::log2(static_cast<double>(g.rows) / static_cast<double>(g.experts) / rpe);
    const double d_k = std::log2(static_cast<double>(g.k) / k), d_n = std::log2(static_cast<double>(g.n) / n);
    const double d_e = std::log2(static_cast<double>(g.experts) / experts);
    const double d2 = d_rpe * d_rpe + d_k * d_k + d_n * d_n + d_e * d_e;
    if (d2 < 1e-12) return rate;
    const double w = 1.0 / (d2 * d2);
    wsum += w;
    lsum += w * std::log(rate);
  }
  return wsum > 0 ? std::exp(lsum / wsum) : -1.0;
}

double norm_time_s(const OpRates& r, std::string_view op, DType dtype, double n, double numel) {
  const auto op_it = std::find(OpRates::kNormOps.begin(), OpRates::kNormOps.end(), op);
  if (op_it == OpRates::kNormOps.end() || !(n > 0) || !(numel > 0)) return -1;
  // this op's and dtype's rows (fp16 reads bf16's: the same bytes)
  const std::vector<uint32_t>& rows =
      r.norm_rows[static_cast<size_t>(op_it - OpRates::kNormOps.begin())][dtype == DType::f32 ? 1 : 0];
  // the weight of the upper of two bracketing points in log space
  const auto weight = [](double lo, double hi, double x) { return hi > lo ? std::log(x / lo) / std::log(hi / lo) : 0.0; };
  // The per-element seconds of the rows of length `rn` at `numel` elements: interpolated between that length's
  // measured sizes (each length was measured at its own element counts: rows x n), clamped to them.
  const auto per_elem_at = [&](int64_t rn) {
    const OpRates::Norm *below = nullptr, *above = nullptr;
    for (uint32_t i : rows) {
      const OpRates::Norm& x = r.norm[i];
      if (x.n != rn) continue;
      const double sz = static_cast<double>(x.numel);
      if (sz <= numel && (!below || x.numel > below->numel)) below = &x;
      if (sz >= numel && (!above || x.numel < above->numel)) above = &x;
    }
    if (!below) below = above;  // smaller than every measured size
    if (!above) above = below;  // larger than every measured size
    const double lo = below->s / static_cast<double>(below->numel), hi = above->s / static_cast<double>(above->numel);
    const double w = weight(static_cast<double>(below->numel), static_cast<double>(above->numel), numel);
    return lo + w * (hi - lo);
  };
  // the measured row lengths bracketing n (clamped)
  int64_t n_lo = -1, n_hi = -1;
  for (uint32_t i : rows) {
    const OpRates::Norm& x = r.norm[i];
    const double xn = static_cast<double>(x.n);
    if (xn <= n && (n_lo < 0 || x.n > n_lo)) n_lo = x.n;
    if (xn >= n && (n_hi < 0 || x.n < n_hi)) n_hi = x.n;
  }
  if (n_lo < 0 && n_hi < 0) return -1;
  if (n_lo < 0) n_lo = n_hi;
  if (n_hi < 0) n_hi = n_lo;
  const double a = per_elem_at(n_lo), b = per_elem_at(n_hi);
  const double w = weight(static_cast<double>(n_lo), static_cast<double>(n_hi), n);
  return (a + w * (b - a)) * numel;
}

Coefficients parse_coefficients(std::string_view tsv) {
  Coefficients c;
  for_each_row(tsv, [&](int64_t, const std::string& line) {
    const auto f = split_ws(line);
    if (f.size() < 3 || f[0] != "coef") return;
    const auto it = std::find(kColNames.begin(), kColNames.end(), f[1]);
    if (it == kColNames.end()) throw InputError("time coefficients", line, "names no feature column");
    c.c[static_cast<size_t>(it - kColNames.begin())] = num(f, 2, line);
  });
  return c;
}

const Coefficients& h200_coefficients() {
  static const Coefficients c = parse_coefficients(time_embedded::h200_coefficients());
  return c;
}

namespace {

// The column a GEMM with output dtype `dt` is priced in: fp32's SIMT kernels apart from the tensor-core ones
// (step_time.h gemm_fp32).
int gemm_col(DType dt) { return dt == DType::f32 ? kGemmF32 : kGemm; }

// Seconds of one GEMM [m, k] x [k, n] in `dt` (step_time.h: log-grid interpolation of the rate, dimensions below
// the grid at its edge; never less than its operands' and result's traffic at HBM bandwidth).
double gemm_s(const OpRates& r, DType dt, double m, double n, double k) {
  int row = r.gemm_table[static_cast<size_t>(dtype_slot(dt))];
  if (row < 0) row = r.gemm_table[1];
  if (row < 0) throw InputError("op rates", "gemm", "has no " + std::string(dtype_key(dt)) + " or bf16 table");
  const std::vector<double>* t = &r.gemm_tflops[static_cast<size_t>(row)].second;
  const size_t g = r.gemm_dims.size();
  const double lo = static_cast<double>(r.gemm_dims.front()), hi = static_cast<double>(r.gemm_dims.back());
  auto pos = [&](double x, size_t& i, double& f) {
    const double c = std::clamp(x, lo, hi);
    const double lx = std::log2(c);
    i = 0;
    while (i + 2 < g && std::log2(static_cast<double>(r.gemm_dims[i + 1])) <= lx) ++i;
    const double a = std::log2(static_cast<double>(r.gemm_dims[i])), b = std::log2(static_cast<double>(r.gemm_dims[i + 1]));
    f = std::clamp((lx - a) / (b - a), 0.0, 1.0);
  };
  size_t im, in, ik;
  double fm, fn, fk;
  pos(m, im, fm);
  pos(n, in, fn);
  pos(k, ik, fk);
  double lr = 0;  // trilinear in log(rate)
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) {
        const double w = (a ? fm : 1 - fm) * (b ? fn : 1 - fn) * (c ? fk : 1 - fk);
        if (w == 0) continue;
        lr += w * std::log((*t)[((im + a) * g + in + b) * g + ik + c]);
      }
  const double rate = std::exp(lr) * 1e12;
  // A dimension below the grid: the measured rate at the grid's edge is a rate at which moving the larger
  // operands dominates, so the GEMM is costed as the smallest measured shape when m is small (decode: the
  // weights are read whatever the rows), and by its true FLOPs but at least its traffic when n or k is small
  // (LoRA's rank-r factors: inflating r to the grid's edge would cost 128 / r times the FLOPs).
  const double bw = elementwise_bw(r, dt);
  const double traffic_s = (m * k + k * n + m * n) * static_cast<double>(dtype_bytes(dt)) / bw;
  return std::max(2.0 * std::max(m, lo) * n * k / rate, traffic_s);
}

// Nearest measured SDPA row (dtype, causal, head dim, then sequence in log distance).
const OpRates::Sdpa* sdpa_row(const std::vector<OpRates::Sdpa>& rows, DType dt, bool causal, double d, double s) {
  const std::string_view key = dtype_key(dt);
  const OpRates::Sdpa* best = nullptr;
  double bd = std::numeric_limits<double>::infinity();
  for (const auto& row : rows) {
    if (row.dtype != key) continue;
    const double dist = (row.causal != causal ? 100.0 : 0.0) + 10.0 * std::fabs(std::log2(static_cast<double>(row.d) / d)) +
                        std::fabs(std::log2(static_cast<double>(row.s) / std::max(1.0, s)));
    if (dist < bd) bd = dist, best = &row;
  }
  return best;
}

double conv_rate(const OpRates& r, const std::string& cls, DType dt, bool bwd) {
  const std::string_view key = dtype_key(dt) == "fp32" ? "fp32" : "bf16";
  for (const auto& c : r.conv)
    if (c.cls == cls && c.dtype == key) return (bwd ? c.bwd_tflops : c.fwd_tflops) * 1e12;
  for (const auto& c : r.conv)
    if (c.cls == "dense3x3" && c.dtype == key) return (bwd ? c.bwd_tflops : c.fwd_tflops) * 1e12;
  return 100e12;
}

struct OpCost {
  Features fwd{}, bwd{};
};

// The host-overhead class of op `i` (calibrate/host_overhead.py's module classes).
OpRates::HostClass host_class(const Graph& g, const Op& op, const std::string& name, bool is_view) {
  if (is_view) return OpRates::kHostView;
  if (name == "conv2d" || name == "conv2d_depthwise") {
    const ConvAttrs* a = op.conv >= 0 && static_cast<size_t>(op.conv) < g.convs.size() ? &g.convs[static_cast<size_t>(op.conv)] : nullptr;
    const TensorInfo* x = op.reads.empty() ? nullptr : &g.tensors[static_cast<size_t>(op.reads[0])];
    if (name == "conv2d_depthwise" || (a && x && x->shape.size() == 4 && a->groups == x->shape[1] && a->groups > 1))
      return OpRates::kHostConvDepthwise;
    if (a && a->groups > 1) return OpRates::kHostConvGrouped;
    if (op.reads.size() >= 3) return OpRates::kHostConv3x3Bias;
    return OpRates::kHostConv3x3;
  }
  if (name == "batch_norm") return OpRates::kHostBatchNorm;
  if (name == "linear" || name == "addmm" || name == "matmul") {
    // A frozen weight (LoRA's base layer, a frozen layer): its backward computes the input gradient alone, one mm
    // and no AccumulateGrad, so the host pays about half a trained Linear's backward (host_overhead.py's
    // linear_frozen class, 2026-12-05)
    const TensorInfo* w = op.reads.size() >= 2 ? &g.tensors[static_cast<size_t>(op.reads[1])] : nullptr;
    if (name == "linear" && w && w->kind == TensorKind::param && !w->trainable && !w->requires_grad)
      return OpRates::kHostLinearFrozen;
    return op.reads.size() >= 3 ? OpRates::kHostLinear : OpRates::kHostLinearNobias;
  }
  if (name == "layer_norm" || name == "rms_norm") return OpRates::kHostLayerNorm;
  if (name == "dropout") return OpRates::kHostDropout;
  if (name == "add") return OpRates::kHostAdd;
  return OpRates::kHostRelu;  // other ops: an elementwise op's cost
}

void add_host(const OpRates& r, OpRates::HostClass cls, OpCost& c, bool bwd) {
  // host_overhead.py's view module makes two view ops (a flatten and its inverse): half its cost per op
  const double per = cls == OpRates::kHostView ? 0.5 : 1.0;
  const OpRates::HostSeconds& h = r.host_by_class[static_cast<size_t>(cls)];
  c.fwd[kCpuHost] = per * h.fwd_s;
  if (bwd) c.bwd[kCpuHost] = per * h.bwd_s;
}

// An in-place op (GraphBuilder::emit_inplace: ATen's trailing-underscore name, one output aliasing its first
// operand): it allocates nothing, like a view, but launches a kernel.
bool is_in_place(const Graph& g, const Op& op, const std::string& name) {
  if (name.size() < 2 || name.back() != '_' || op.outs.size() != 1 || op.reads.empty()) return false;
  const TensorInfo& o = g.tensors[static_cast<size_t>(op.outs[0])];
  const TensorInfo& x = g.tensors[static_cast<size_t>(op.reads[0])];
  return o.storage == x.storage && o.shape == x.shape;
}

// ATen's pooling kernels per element of the pooled input, from the profiled steps
// (data/calibration/raw/h200-step-profiles*.json.gz, calibrate/profile_compare.py): max_pool_forward_nchw 4.1 ps
// (3x3/2, ResNets at b64 .. b256, bf16 and fp32 alike: per element, not per byte) and 3.0 ps (2x2/2, VGG-16's
// five pools); max_pool_backward_nchw 11.2 and 9.5 ps, plus the zero fill of the input gradient;
// avg_pool2d_backward_out_cuda_frame 8.6 ps (DenseNet-121's 2x2/2 transitions). The bytes at HBM bandwidth would
// give 0.7 .. 1.4 ps forward and 3 .. 4 ps backward.
constexpr double kMaxPoolFwdSPerElem = 3.5e-12, kMaxPoolBwdSPerElem = 10.3e-12, kAvgPoolBwdSPerElem = 8.6e-12;
// torch.roll (Swin's shifted windows) runs roll_cuda_kernel, an index-bound kernel: in Swin-T amp b128's profiled
// step (h200-step-profiles-6.json.gz) its 20 fp32 calls took 1,719 us and its 20 bf16 calls 1,583 us over
// 173.4 M elements each (five shifted blocks, two rolls each forward and their rolls back in backward, on
// [128, 56, 56, 96], [128, 28, 28, 192] and 3 x [128, 14, 14, 384]): 9.9 and 9.1 ps per element, per element
// rather than per byte (fp32 0.20 and bf16 0.15 of the elementwise bandwidth). Forward and backward alike.
constexpr double kRollSPerElem = 9.5e-12;

// Host seconds of one sum and of one CatBackward narrow, from calibrate/host_profile.py's DenseNet-201 amp b24
// step (2026-12-01, data/calibration/raw/h200-host-profile.json): aten::add_ 1,906 calls, 18.3 ms of CPU
// (launch included), aten::narrow 1,909 calls, 7.1 ms, under a profiler that stretched the step from 87.5 to
// 150.6 ms; scaled by that ratio, 5.6 and 2.2 us. In the cpu_host column (measured host seconds), not cpu_ops (a
// Python-dispatched op's count): the autograd engine issues both from C++.
constexpr double kSumHostS = 5.6e-6, kCatNarrowHostS = 2.2e-6;

// The fraction of the contiguous elementwise bandwidth op `i` runs at (data/calibration/h200-elementwise-layout.json,
// outputs of 2^23+ elements): contiguous() copies a transposed view (the graph emits it only for a non-contiguous
// input) at OpRates::mem_strided_copy_ratio (0.38 in bf16, 0.61 in fp32); a binary op with a broadcast operand
// (RMSNorm's x * rsqrt(var) and weight * x, RoPE's cos / sin, a bias, a layer scale) runs TensorIterator's
// offset-calculator kernel, not the vectorized one, at OpRates::mem_broadcast_ratio (0.41 / 0.64): the largest
// elementwise kernels of the profiled amp transformer steps (Qwen3-0.6B: 676 non-vectorized fp32 muls, 25.5 ms of
// 130 ms of elementwise kernels). Tried alone in the fourth round, the broadcast rate moved the one fitted mem
// coefficient instead; with the fit anchored to the profiles' class times (cli/time_fit.cpp) it was pre-registered
// on held out 6 and adopted (NOTES-time.md, fifth round). Forward only: the backward of a broadcast mul is one
// broadcast mul, one contiguous mul and a reduction, left at the contiguous rate. Operands of two dtypes (autocast's
// fp32 residual stream plus a bf16 branch) run the casting kernels at their measured fractions (mixed_dtype.py:
// 0.64 same shapes, 0.50 / 0.33 with a broadcast operand; seventh session, NOTES-time.md sixth round).
bool binary_elementwise(const std::string& name) {
  return name == "add" || name == "add_" || name == "mul" || name == "mul_" || name == "div" || name == "sub";
}
// Whether the op reads an operand of fewer elements than its output (and more than one: a
// one-element operand is a scalar argument of the vectorized kernel).
bool reads_broadcast(const Graph& g, const Op& op, const TensorInfo& out) {
  const double n = numel(out);
  for (TensorId id : op.reads) {
    const double m = numel(g.tensors[static_cast<size_t>(id)]);
    if (m > 1 && m < n) return true;
  }
  return false;
}
// masked_fill / masked_fill_ with a mask of fewer elements than its result (the MoE experts' sentinel rows: an
// [R, 1] mask over [R, N]): the broadcast operand's non-vectorized kernel, forward and in its backward (the output
// gradient masked_fill-ed with the same mask). Held out 12's Qwen3-30B-A3B-shape profile: 24 masked_fill kernels
// of 8.3 ms, the bytes at the broadcast rate 7.6 ms, at the contiguous rate 3.1.
// Returns that fraction of the contiguous bandwidth, 1 for any other op.
double masked_fill_ratio(const Graph& g, const Op& op, const std::string& name, const TensorInfo& out,
                         const OpRates& r) {
  if ((name != "masked_fill" && name != "masked_fill_") || !reads_broadcast(g, op, out)) return 1.0;
  return r.mem_broadcast_ratio[out.dtype == DType::f32 ? 1 : 0];
}
// The copy rate of a non-contiguous tensor by what its view did to the storage's layout (the graph has no
// strides): a view whose last dimension is not its storage's moved the inner dimension (a channels-last permute,
// 0.18 / 0.29 of the contiguous bandwidth), else a transpose that kept it (0.38 / 0.61).
double copy_ratio(const Graph& g, const TensorInfo& x, const OpRates& r) {
  const size_t slot = x.dtype == DType::f32 ? 1 : 0;
  const TensorInfo* base = x.storage >= 0 ? &g.tensors[static_cast<size_t>(x.storage)] : nullptr;
  const bool inner_moved = base && !base->shape.empty() && !x.shape.empty() && base->shape.back() != x.shape.back();
  return inner_moved ? r.mem_permuted_copy_ratio[slot] : r.mem_strided_copy_ratio[slot];
}

// A gapped view: a view of part of an activation's storage that leaves holes between its rows (x.split(...) or
// x[..., :n] along an inner dimension: a fused projection's q / k / v, Phi-3's gate / up halves, rotate_half's
// halves, a partial rotary's rotated and pass-through parts). The graph has no strides: a view of an activation
// with fewer elements than its storage is taken for one (a slice along the leading dimension alone has no gaps and
// would be counted too; views of parameters, a stacked expert weight's rows, are not). An elementwise kernel
// reading one cannot run TensorIterator's vectorized path, only the offset-calculator kernel (the broadcast
// ratio's): the profiled Phi-3-mini step ran 674 such bf16 muls of 28.5 ms (its gate_up chunk and rotary), and
// Pythia's step its partial rotary's cats as CatArrayBatchedCopy's non-vectorized kernel (NOTES-time.md,
// twenty-second round).
bool gapped_view(const Graph& g, const TensorInfo& t) {
  if (t.storage < 0 || t.bytes > 0) return false;
  const TensorInfo& base = g.tensors[static_cast<size_t>(t.storage)];
  if (base.kind != TensorKind::activation) return false;
  const double n = numel(t);
  return n > 1 && n < numel(base);
}
bool reads_gapped(const Graph& g, const Op& op) {
  for (TensorId id : op.reads)
    if (gapped_view(g, g.tensors[static_cast<size_t>(id)])) return true;
  return false;
}

double layout_ratio(const Graph& g, const Op& op, const std::string& name, const TensorInfo& out, const OpRates& r) {
  const size_t slot = out.dtype == DType::f32 ? 1 : 0;
  if (name == "contiguous") return r.mem_strided_copy_ratio[slot];
  if (reads_gapped(g, op)) return r.mem_broadcast_ratio[slot];
  // An upcast to fp32 (RMSNorm's hidden_states.to(float32), the logits' .float(), autocast's fp32-policy casts)
  // runs copy_'s dynamically casting kernel, unrolled and not vectorized (the profiles' unrolled_elementwise_kernel
  // <direct_copy_kernel_cuda ... (float)>: Qwen3-4B's checkpointed step 874 of them, 30 ms), the kernel the mixed-dtype
  // binary ops run (mixed_dtype.py's ratio); a downcast from fp32 has vectorized kernels of its own
  // (bfloat16_copy_kernel_cuda, float16_copy_kernel_cuda) and stays at the contiguous rate.
  if (name == "to_copy" && out.dtype == DType::f32 && !op.reads.empty() &&
      g.tensors[static_cast<size_t>(op.reads[0])].dtype != DType::f32)
    return r.mem_mixed_ratio;
  if (!binary_elementwise(name)) return masked_fill_ratio(g, op, name, out, r);
  // operands of more than one element (a one-element operand is a scalar argument): whether one differs from the
  // result's dtype, and whether the full-size one does
  const double n = numel(out);
  bool mixed = false, full_cast = false;
  for (TensorId id : op.reads) {
    const TensorInfo& t = g.tensors[static_cast<size_t>(id)];
    const double m = numel(t);
    if (m <= 1 || t.dtype == out.dtype) continue;
    mixed = true;
    if (m >= n) full_cast = true;
  }
  const bool broadcast = reads_broadcast(g, op, out);
  if (mixed) {
    if (!broadcast) return r.mem_mixed_ratio;
    return full_cast ? r.mem_mixed_broadcast_cast_ratio : r.mem_mixed_broadcast_ratio;
  }
  return broadcast ? r.mem_broadcast_ratio[slot] : 1.0;
}

// The reductions a binary op's backward runs for its broadcast operands that need a gradient: the full-size
// gradient summed back to the operand's shape (autograd's sum_to_size), a reduce kernel of its own. An operand that
// keeps the last dimension ([H]: RMSNorm's weight, a bias) is a sum over the rows, at the measured column-sum time
// of rows of that length; one that keeps every dimension but a last one of 1 ([B, S, 1]: RMSNorm's rsqrt factor) is
// a sum along the rows, at the measured row-reduction time (norm_reduce.py's rowmean: a mean is the same kernel).
// Other patterns (a broadcast middle dimension: ConvNeXt's [C, 1, 1] layer scale) stay in the backward's bytes.
// Qwen3-0.6B amp's profiled step: 113 column sums of 7.0 ms (its q / k norms' rows are 128 long: 0.16 of the
// bandwidth) and 113 row sums of 2.6 ms, which the bytes had costed at the contiguous rate. Seconds in the norm
// column; 0 without table rows.
double broadcast_grad_reductions_s(const Graph& g, const Op& op, const TensorInfo& out, const OpRates& r) {
  const double n = numel(out);
  if (out.shape.empty()) return 0;
  const double last = static_cast<double>(out.shape.back());
  double s = 0;
  for (const GradSpec& gs : op.grads) {
    if (gs.input < 0) continue;
    const TensorInfo& t = g.tensors[static_cast<size_t>(gs.input)];
    const double m = numel(t);
    if (!(m > 1 && m < n) || t.shape.empty()) continue;
    // align the operand's dimensions to the output's from the right (broadcasting's rule)
    const size_t ro = out.shape.size(), rt = t.shape.size();
    if (rt > ro) continue;
    const auto dim_t = [&](size_t i) { return i + rt >= ro ? t.shape[i + rt - ro] : int64_t{1}; };  // i: output's dim
    // kept trailing dims, then only 1s: a sum over the leading rows ([H], [1, 1, H])
    size_t k = ro;
    while (k > 0 && dim_t(k - 1) == out.shape[k - 1]) --k;
    bool ones_before = true;
    for (size_t i = 0; i < k; ++i) ones_before = ones_before && dim_t(i) == 1;
    // every dim kept but the last, which is 1: a sum along each row ([B, S, 1])
    bool row = dim_t(ro - 1) == 1 && last > 1;
    for (size_t i = 0; i + 1 < ro; ++i) row = row && dim_t(i) == out.shape[i];
    double x = -1;
    if (ones_before && k < ro && k > 0) {
      double kept = 1;
      for (size_t i = k; i < ro; ++i) kept *= static_cast<double>(out.shape[i]);
      x = norm_time_s(r, "colsum", out.dtype, kept, n);
    } else if (row) {
      x = norm_time_s(r, "rowmean", out.dtype, last, n);
    }
    if (x > 0) s += x;
  }
  return s;
}

// Products whose operands broadcast over several dimensions at once (an outer product, or 4+ iteration
// dimensions): TensorIterator's offset-calculator kernel is bound by its index arithmetic, not by bytes, at a time
// per output element that rises with the number of dimensions left after merging neighbours every operand keeps or
// broadcasts alike, the same in fp32 and bf16 (calibrate/broadcast_rank.py, data/calibration/raw/
// h200-broadcast-rank.json: 0.0024 .. 0.0025 ns at 2 .. 3 dimensions, 0.0029 at 4, 0.0034 at 5). Reductions of
// such results run at 0.0009 ns per input element in fp32 (0.0005 bf16) when the innermost dimension is kept and
// 0.0018 (0.0013) when it is summed. Transformers' chunked SSD in PyTorch (Mamba2 and its hybrids) is made of them:
// the profiled Mamba2 layer of held out 24 spent 105 ms in such products and 54 ms in their sums, which the bytes
// had priced at a third of that. Seconds in the norm column (measured times).
constexpr double kProductSPerElemByRank[] = {2.45e-12, 2.45e-12, 2.45e-12, 2.45e-12, 2.88e-12, 3.36e-12, 3.82e-12};
constexpr double kSumKeepInnerSPerElem[2] = {0.52e-12, 0.90e-12};  // [bf16/fp16, fp32]
constexpr double kSumInnerSPerElem[2] = {1.3e-12, 1.8e-12};
// Reductions of at least this many input elements are priced at the rates above (smaller ones are launch-bound).
constexpr double kLargeReductionElems = 16777216.0;

// The coalesced iteration rank of a binary op's output over its operands (right-aligned, contiguous), and whether
// every operand of more than one element broadcasts. rank 0: no operand broadcasts (the vectorized kernel).
struct BroadcastPattern {
  int rank = 0;
  bool all_broadcast = false;
};
BroadcastPattern broadcast_pattern(const Graph& g, const Op& op, const TensorInfo& out) {
  BroadcastPattern p;
  const double n = numel(out);
  const size_t ro = out.shape.size();
  std::vector<const TensorInfo*> ins;
  bool any = false, all = true;
  for (TensorId id : op.reads) {
    const TensorInfo& t = g.tensors[static_cast<size_t>(id)];
    const double m = numel(t);
    if (m <= 1) continue;
    if (t.shape.size() > ro) return p;
    ins.push_back(&t);
    if (m < n) any = true; else all = false;
  }
  if (!any) return p;
  p.all_broadcast = all;
  std::vector<char> prev;
  for (size_t i = 0; i < ro; ++i) {
    if (out.shape[i] <= 1) continue;
    std::vector<char> key;
    for (const TensorInfo* t : ins) {
      const size_t rt = t->shape.size();
      const int64_t d = i + rt >= ro ? t->shape[i + rt - ro] : 1;
      key.push_back(d == out.shape[i] ? 1 : 0);
    }
    if (key != prev) ++p.rank;
    prev = std::move(key);
  }
  return p;
}
double product_s_per_elem(int rank) {
  const int n = static_cast<int>(std::size(kProductSPerElemByRank));
  return kProductSPerElemByRank[std::clamp(rank, 0, n - 1)];
}
// A sum of `in_elems` elements: `inner` when the innermost dimension is summed away.
double reduction_s(DType d, double in_elems, bool inner) {
  const size_t slot = d == DType::f32 ? 1 : 0;
  return in_elems * (inner ? kSumInnerSPerElem[slot] : kSumKeepInnerSPerElem[slot]);
}

// Forward and backward cost of op `i` (kernels, seconds at the measured rates). Backward only when the op has one
// and the graph is a training graph.
OpCost op_cost(const Graph& g, size_t i, const OpRates& r, bool training) {
  OpCost c;
  const Op& op = g.ops[i];
  const std::string& name = g.name_of(op.name);
  auto T = [&](TensorId id) -> const TensorInfo& { return g.tensors[static_cast<size_t>(id)]; };
  c.fwd[kCpu] = 1;  // Python dispatch of every op, views included
  double out_bytes = 0;
  bool allocates = false;
  for (TensorId o : op.outs) {
    out_bytes += nbytes(T(o));
    if (T(o).bytes > 0) allocates = true;
  }
  const bool bwd = training && op.has_backward;
  if (bwd) c.bwd[kCpu] = 1;
  const bool in_place = !allocates && is_in_place(g, op, name);
  // An in-place op keeps the view's host class: costing its host as an elementwise op's (tried) put the deep
  // ResNets' host-bound rows at +12 .. +20 % (NOTES-time.md, third round)
  add_host(r, host_class(g, op, name, !allocates), c, bwd);
  // A cast autocast inserts for an activation is issued in C++ by the autocast wrapper of the op that needs it: no
  // Python call of its own, so no cpu_ops count and not an elementwise module's measured cost, but one ATen
  // dispatch with autograd, at its measured host cost (OpRates::dispatch_s). A parameter's cast (the autocast
  // cache's entry) keeps a Python op's price: host_overhead.py's autocast chains (raw runs 2 and 3) put a weight
  // cast at 9 .. 50 us of host (amp linear / conv against fp32), where an op of the elementwise class costs 23.
  // Costed as Python ops, activation casts had put amp encoders' host-bound steps 13 .. 43 % over (NOTES-time.md,
  // twenty-second round).
  if (op.autocast_cast && !g.tensors[static_cast<size_t>(op.outs[0])].autocast_cache) {
    c.fwd[kCpu] = 0;
    c.fwd[kCpuHost] = r.dispatch_s;
  }
  double in_bytes = 0;
  for (TensorId id : op.reads) in_bytes += nbytes(T(id));
  double fresh_grads = 0, grad_bytes = 0;
  for (const GradSpec& gs : op.grads)
    if (gs.alias_out < 0) fresh_grads += 1, grad_bytes += static_cast<double>(gs.bytes);
  if (in_place) {
    // relu_, add_ (a residual sum), div_, mul_, masked_fill_: one elementwise kernel that reads its operands and
    // writes over the first; its backward runs a kernel only where it makes a fresh gradient (threshold_backward
    // of relu_ reads the output gradient and the saved result); add_ passes its gradient through
    const TensorInfo& self = T(op.outs[0]);
    const double bw = elementwise_bw(r, self.dtype);
    c.fwd[kKernels] = 1;
    c.fwd[kMem] = (in_bytes + nbytes(self)) / (bw * layout_ratio(g, op, name, self, r));
    if (bwd && fresh_grads > 0) {
      double saved = 0;
      for (TensorId sv : op.saved) saved += nbytes(T(sv));
      c.bwd[kMem] = (nbytes(self) + saved + grad_bytes) / bw;  // exact bytes: the forward column's rate
      c.bwd[kMem] /= masked_fill_ratio(g, op, name, self, r);
      c.bwd[kKernels] = fresh_grads;
      if (name == "masked_fill_") {  // its gradient is grad.masked_fill(mask, 0): a clone first (see below)
        c.bwd[kMem] += 2 * grad_bytes / bw;
        c.bwd[kKernels] += 1;
      }
      if (binary_elementwise(name)) c.bwd[kNorm] += broadcast_grad_reductions_s(g, op, self, r);
    }
    return c;
  }
  // A split's backward (SplitBackward, SplitWithSizesBackward) writes its parts' gradients into one fresh buffer
  // of the input's size: a cat kernel reading and writing those bytes, which a view's pass-through does not have.
  // GPT-2's fused c_attn split: one CatArrayBatchedCopy a layer in the profiled steps.
  if (!allocates) {
    if (bwd && grad_bytes > 0 && name == "split") {
      c.bwd[kMemBwd] = 2 * grad_bytes / elementwise_bw(r, T(op.reads[0]).dtype);
      c.bwd[kKernels] = fresh_grads;
    }
    return c;  // a view: no kernel
  }
  c.fwd[kKernels] = 1;
  const TensorInfo& out = T(op.outs[0]);

  // Shapes are checked before they are indexed: a native graph may carry an op of these names with other ranks;
  // such an op is costed as memory-bound below.
  auto rank = [&](size_t read) { return op.reads.size() > read ? T(op.reads[read]).shape.size() : size_t{0}; };
  if ((name == "linear" || name == "addmm" || name == "matmul") && rank(0) >= 1 && rank(1) >= 1 && !out.shape.empty()) {
    const TensorInfo& a = T(op.reads[0]);
    const TensorInfo& b = T(op.reads[1]);
    const double n = static_cast<double>(out.shape.back());
    const double m = numel(out) / std::max(1.0, n);
    const double k = static_cast<double>(a.shape.back());
    // the layer's n and k are the leading dimensions of all three GEMMs (forward, dgrad, wgrad)
    const OpRates::AlignCap* cap = nullptr;
    if (out.dtype == DType::bf16 || out.dtype == DType::f16) {
      const int64_t ni = out.shape.back(), ki = a.shape.back();
      const int cls = (ni % 2 || ki % 2) ? 0 : ((ni % 8 || ki % 8) ? 1 : -1);  // odd, even, aligned
      if (cls >= 0) {
        const OpRates::AlignCap& ac = r.align_cap[out.dtype == DType::bf16 ? 0 : 1][static_cast<size_t>(cls)];
        if (ac.fwd_flops_per_s > 0) cap = &ac;
      }
    }
    const auto timed = [&](double gm, double gn, double gk, bool backward) {
      const double t = gemm_s(r, out.dtype, gm, gn, gk);
      return cap ? std::max(t, 2 * gm * gn * gk / (backward ? cap->bwd_flops_per_s : cap->fwd_flops_per_s)) : t;
    };
    const int gcol = gemm_col(out.dtype);
    c.fwd[gcol] = timed(m, n, k, false);
    if (bwd) {
      if (a.requires_grad) c.bwd[gcol] += timed(m, k, n, true);          // dgrad [m, k]
      if (b.requires_grad || b.trainable) c.bwd[gcol] += timed(n, k, m, true);  // wgrad [n, k]
      c.bwd[kKernels] = std::max(1.0, fresh_grads);
      // addmm's bias: the forward adds it in the GEMM's epilogue, but its gradient is the output gradient summed
      // over the rows (a reduce kernel of its own: the profiled ConvNeXt and Swin steps' bf16 reduce_kernel sums),
      // at the measured column-sum time of rows of n
      if (op.reads.size() >= 3) {
        const TensorInfo& bias = T(op.reads[2]);
        const double t = (bias.requires_grad || bias.trainable) ? norm_time_s(r, "colsum", out.dtype, n, numel(out)) : -1;
        if (t > 0) c.bwd[kNorm] += t;
      }
    }
    return c;
  }
  // torch.bmm of a batched weight and its rows (Llama 4's experts: weight [E, K, N] first, rows [E, M, K], out
  // [E, M, N]): E GEMMs of (M, N, K) at the dense table's rate, its backward the rows' gradient (M, K, N) and the
  // weight's (K, N, M) each E times. Costed by bytes it read 40 % low on step-time set 20's Llama-4-Scout row (the
  // profile: the expert GEMMs ran 165 ms of the 300). Other ranks (a decode step's per-row bmm) stay memory-bound.
  if (name == "bmm" && rank(0) == 3 && rank(1) == 3 && out.shape.size() == 3) {
    const TensorInfo& w = T(op.reads[0]);
    const TensorInfo& x = T(op.reads[1]);
    const double E = static_cast<double>(out.shape[0]), M = static_cast<double>(out.shape[1]);
    const double N = static_cast<double>(out.shape[2]), K = static_cast<double>(x.shape[2]);
    const double floor_s = (in_bytes + out_bytes) / elementwise_bw(r, out.dtype);
    const int gcol = gemm_col(out.dtype);
    c.fwd[gcol] = std::max(E * gemm_s(r, out.dtype, M, N, K), floor_s);
    if (bwd) {
      const bool gx = x.requires_grad, gw = w.requires_grad || w.trainable;
      if (gx) c.bwd[gcol] += std::max(E * gemm_s(r, out.dtype, M, K, N), floor_s);
      if (gw) c.bwd[gcol] += std::max(E * gemm_s(r, out.dtype, K, N, M), floor_s);
      c.bwd[kKernels] = std::max(1.0, fresh_grads);
    }
    return c;
  }
  // torch._grouped_mm (transformers' experts: the experts' weight [E, N, K], gpt_oss [E, K, N], the routed rows
  // [R, K], the offsets): 2 R K N FLOPs at the measured grouped rate of its shape (grouped_mm_flops_per_s); its
  // backward a grad input when the rows need one and a grad weight when the experts train, each 2 R K N at the
  // backward rate. Costed by bytes, as before, it read as 3 .. 8x too fast (held out 12's profiled MoE steps: the
  // GroupProblem kernels ran 14 ms where the bytes said 8 in Qwen3-30B-A3B's shape, 25 against 7 in Mixtral's).
  // ATen has the grouped kernel for bf16 only; fp16 and fp32 loop one mm per expert (fp32 is what amp runs:
  // grouped_mm is not autocast, so the rows are cast to the fp32 weight). fp32's rows are that loop timed; a dtype
  // without rows (fp16) is E GEMMs of the mean rows per expert at the dense table's rate.
  if (name == "grouped_mm" && rank(0) == 3 && rank(1) == 2 && out.shape.size() == 2) {
    const TensorInfo& w = T(op.reads[0]);
    const TensorInfo& x = T(op.reads[1]);
    const double E = static_cast<double>(w.shape[0]), R = static_cast<double>(out.shape[0]);
    const double N = static_cast<double>(out.shape[1]), K = static_cast<double>(x.shape[1]);
    const double flops = 2 * R * K * N;
    const double floor_s = (in_bytes + out_bytes) / elementwise_bw(r, out.dtype);
    // pass 0 forward, 1 the rows' gradient, 2 the weight's. The loop runs one mm per expert of the mean rows per
    // expert: [rpe, K] x [K, N] forward, [rpe, N] x [N, K] for the rows, [N, rpe] x [rpe, K] for the weight (its
    // inner dimension the rows: held out 13's amp DeepSeek-V2-Lite profile, E 64 at 384 rows, ran its fp32 loop
    // 28 % over the forward-shaped estimate).
    const double rpe = std::max(1.0, R / E);
    const double fwd_rate = grouped_mm_flops_per_s(r, out.dtype, E, K, N, R, false);
    const double bwd_rate = grouped_mm_flops_per_s(r, out.dtype, E, K, N, R, true);
    const auto seconds = [&](int pass) {
      const double rate = pass > 0 ? bwd_rate : fwd_rate;
      double t = 0;
      if (rate > 0) t = flops / rate;
      else if (pass == 0) t = E * gemm_s(r, out.dtype, rpe, N, K);
      else if (pass == 1) t = E * gemm_s(r, out.dtype, rpe, K, N);
      else t = E * gemm_s(r, out.dtype, N, K, rpe);
      return std::max(t, floor_s);
    };
    const bool grouped_kernel = out.dtype == DType::bf16;  // ATen's grouped kernel; other dtypes loop
    const int gcol = gemm_col(out.dtype);
    c.fwd[gcol] = seconds(0);
    c.fwd[kKernels] = grouped_kernel ? 1 : E;
    if (bwd) {
      const bool gx = x.requires_grad, gw = w.requires_grad || w.trainable;
      c.bwd[gcol] = (gx ? seconds(1) : 0.0) + (gw ? seconds(2) : 0.0);
      c.bwd[kKernels] = ((gx ? 1.0 : 0.0) + (gw ? 1.0 : 0.0)) * (grouped_kernel ? 1 : E);
    }
    return c;
  }
  if ((name.rfind("sdpa_flash", 0) == 0 || name.rfind("sdpa_efficient", 0) == 0 || name.rfind("sdpa_cudnn", 0) == 0) &&
      rank(0) == 4 && rank(1) == 4) {
    const TensorInfo& q = T(op.reads[0]);
    const TensorInfo& k = T(op.reads[1]);
    const double B = static_cast<double>(q.shape[0]), H = static_cast<double>(q.shape[1]);
    const double sq = static_cast<double>(q.shape[2]), d = static_cast<double>(q.shape[3]);
    const double sk = static_cast<double>(k.shape[2]);
    // A fourth read is the additive mask SDPA made of a boolean one (a sliding window, padding): the fused kernel
    // then computes every score block, causal or not, and reads the bias (calibrate/sdpa_masked.py: Phi-3-mini's
    // sliding-window layers at s4096 ran 2.9x the is_causal kernel's time): the full square's FLOPs at the masked
    // rows' rate, else (a dtype they lack) at the unmasked non-causal rate.
    const bool masked = op.reads.size() >= 4;
    // is_causal as the builder passed it (an encoder's and a cross-attention's are not: BART / Whisper encoders
    // were costed at half their FLOPs when the whole model's flag decided; step-time set 20's Whisper fp32 row)
    const bool causal = op.causal && sq > 1 && !masked;
    const double flops = 4 * B * H * sq * sk * d * (causal && sq == sk ? 0.5 : 1.0);
    // With dropout (op.dropout: dropout_p > 0 while training) the measured dropout rows of that mode, where the
    // table has them (StarCoder2-3B's profiled masked layers at s4096 ran 1.23 ms forward, 2.73 backward; the
    // p = 0.1 rows 1.28 / 2.83, the p = 0 ones 0.66 / 1.74).
    const OpRates::Sdpa* row = nullptr;
    if (op.dropout) {
      const auto& rows = masked ? r.sdpa_dropout_masked : r.sdpa_dropout;
      row = sdpa_row(rows, q.dtype == DType::f16 ? DType::bf16 : q.dtype, causal, d, sq);  // fp16: bf16's kernels
      if (row && row->causal != causal) row = nullptr;  // no row of this mode
    }
    if (!row && masked) row = sdpa_row(r.sdpa_masked, q.dtype, false, d, sq);
    if (!row) row = sdpa_row(r.sdpa, q.dtype, causal, d, sq);
    const double bw = elementwise_bw(r, q.dtype);
    const double io = in_bytes + out_bytes;
    c.fwd[kAttn] = std::max(row ? flops / (row->fwd_tflops * 1e12) : 0.0, io / bw);
    if (bwd) {
      c.bwd[kAttn] = std::max(row ? 2.5 * flops / (row->bwd_tflops * 1e12) : 0.0, (2 * io + grad_bytes) / bw);
      c.bwd[kKernels] = 2;  // the backward kernel and its dq conversion / preprocessing
    }
    return c;
  }
  if ((name == "conv2d" || name == "conv2d_depthwise") && rank(0) == 4 && rank(1) == 4) {
    const TensorInfo& x = T(op.reads[0]);
    const TensorInfo& w = T(op.reads[1]);
    const double cin_g = static_cast<double>(w.shape[1]);
    const double rr = static_cast<double>(w.shape[2]) * static_cast<double>(w.shape[3]);
    const double flops = 2 * numel(out) * cin_g * rr;
    const bool depthwise = w.shape[1] == 1 && x.shape[1] > 1;
    const int col = depthwise ? kConvDw : kConv;
    if (bwd) c.bwd[kKernels] = std::max(1.0, fresh_grads);
    // The bias is not cuDNN's: ATen adds it to the output in a broadcast add (read + write the output) and its
    // gradient is a sum of the output gradient over N, H, W; calibrate/conv_time.py timed convs without bias
    // (VGG-16 b64's 13 biased convs: 2.6 ms of adds, 1.5 ms of sums in the profiled step).
    // ATen's native depthwise kernel (conv2d_depthwise) adds its bias itself; its gradient is the same sum.
    if (op.reads.size() >= 3) {
      const double bw = elementwise_bw(r, out.dtype);
      if (name != "conv2d_depthwise") c.fwd[kMem] += 2 * out_bytes / bw, c.fwd[kKernels] += 1;
      const TensorInfo& bias = T(op.reads[2]);
      if (bwd && (bias.requires_grad || bias.trainable)) c.bwd[kMem] += out_bytes / bw, c.bwd[kKernels] += 1;
    }
    // The measured time of this shape, else the table's class rate, else the microbenchmark's class rate.
    if (op.conv >= 0 && static_cast<size_t>(op.conv) < g.convs.size() && r.conv_time) {
      const ConvAttrs& a = g.convs[static_cast<size_t>(op.conv)];
      const ConvKernelShape ks{x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0], w.shape[2], a.stride,
                               a.pad, a.groups, a.dilation, a.channels_last, x.dtype};
      KernelSeconds t;
      double rf = 0, rb = 0;
      if (r.conv_time->lookup(ks, t)) {
        c.fwd[col] = t.forward_s;
        if (bwd) c.bwd[col] = t.backward_s;
        return c;
      }
      if (r.conv_time->class_rate(ks, rf, rb) && rf > 0 && rb > 0) {
        c.fwd[col] = flops / rf;
        if (bwd) c.bwd[col] = 2 * flops / rb;
        return c;
      }
    }
    std::string cls;
    if (depthwise) cls = w.shape[2] >= 5 ? "dw7x7" : "dw3x3";
    else if (x.shape[1] <= 4) cls = "stem";
    else cls = w.shape[2] == 1 ? "dense1x1" : "dense3x3";
    c.fwd[col] = flops / conv_rate(r, cls, out.dtype, false);
    if (bwd) c.bwd[col] = 2 * flops / conv_rate(r, cls, out.dtype, true);
    return c;
  }
  if (name == "batch_norm" && !op.reads.empty() && !training) {
    // model.eval(): the running statistics normalise, one elementwise pass (read the input, write the output);
    // the training kernels' statistics reductions (the bn table, measured in training mode) do not run. Costed
    // at the training table, ResNet-50's inference forward read +73 % (held out 23: NOTES-time.md, fifteenth round).
    c.fwd[kMem] = (nbytes(T(op.reads[0])) + out_bytes) / elementwise_bw(r, T(op.outs[0]).dtype);
    return c;
  }
  if (name == "batch_norm" && !op.reads.empty()) {
    const TensorInfo& x = T(op.reads[0]);
    KernelSeconds t;
    if (r.bn_time && x.shape.size() == 4 &&
        r.bn_time->lookup(x.shape[0], x.shape[1], x.shape[2], x.shape[3], false, x.dtype, t)) {
      c.fwd[kBn] = t.forward_s;
      if (bwd) {
        c.bwd[kBn] = t.backward_s;
        c.bwd[kKernels] = std::max(1.0, fresh_grads);
      }
      return c;
    }
    const bool f32 = x.dtype == DType::f32;
    const double rf = f32 ? r.bn_fp32_fwd : r.bn_bf16_fwd, rfb = f32 ? r.bn_fp32_fwd_bwd : r.bn_bf16_fwd_bwd;
    if (rf > 0 && rfb > 0) {
      const double xb = nbytes(x);
      c.fwd[kMem] = 3 * xb / rf;
      if (bwd) {
        c.bwd[kMemBwd] = std::max(0.0, 8 * xb / rfb - c.fwd[kMem]);
        c.bwd[kKernels] = std::max(1.0, fresh_grads);
      }
      return c;
    }
  }
  // Memory-bound: bytes at the measured elementwise bandwidth of the op's dtype.
  const double bw = elementwise_bw(r, out.dtype);
  if (name == "max_pool2d" && rank(0) == 4) {
    const double n_in = numel(T(op.reads[0]));
    c.fwd[kPool] = n_in * kMaxPoolFwdSPerElem;
    if (bwd) {
      c.bwd[kPool] = n_in * kMaxPoolBwdSPerElem;
      c.bwd[kMem] = nbytes(T(op.reads[0])) / bw;  // the zero fill of the input gradient
      c.bwd[kKernels] = 2;
    }
    return c;
  }
  if (name == "roll") {
    c.fwd[kPool] = numel(out) * kRollSPerElem;
    if (bwd) {
      c.bwd[kPool] = numel(out) * kRollSPerElem;
      c.bwd[kKernels] = std::max(1.0, fresh_grads);
    }
    return c;
  }
  if (binary_elementwise(name)) {
    const BroadcastPattern bp = broadcast_pattern(g, op, out);
    if (bp.rank > 0 && (bp.all_broadcast || bp.rank >= 4)) {
      const double n = numel(out);
      const double prod = n * product_s_per_elem(bp.rank);
      c.fwd[kNorm] = prod;
      if (bwd) {
        // each fresh gradient: a product of the (expanded) output gradient with the other operand (mul, div; add and
        // sub pass it on), then, for a broadcast operand, its sum back to the operand's shape (the innermost
        // dimension summed when the operand's last one is 1)
        double kernels = 0;
        for (const GradSpec& gs : op.grads) {
          if (gs.input < 0 || gs.alias_out >= 0) continue;
          const TensorInfo& t = T(gs.input);
          if (name == "mul" || name == "div") c.bwd[kNorm] += prod, kernels += 1;
          if (numel(t) < n && !t.shape.empty()) {
            const bool inner = t.shape.back() == 1 && out.shape.back() > 1;
            c.bwd[kNorm] += reduction_s(out.dtype, n, inner);
            kernels += 1;
          }
        }
        c.bwd[kKernels] = std::max(1.0, kernels);
      }
      return c;
    }
  }
  // A large sum (the SSD's contractions): at the reduction rates above; the innermost dimension is summed when the
  // result's last dimension is not the input's. Its backward expands the gradient: a view, no kernel.
  if (name == "sum" && !op.reads.empty() && !out.shape.empty() && !T(op.reads[0]).shape.empty() &&
      numel(T(op.reads[0])) >= kLargeReductionElems) {
    const TensorInfo& x = T(op.reads[0]);
    c.fwd[kNorm] = reduction_s(x.dtype, numel(x), x.shape.back() != out.shape.back());
    return c;
  }
  c.fwd[kMem] = (in_bytes + out_bytes) / (bw * layout_ratio(g, op, name, out, r));
  // Out-of-place masked_fill is clone() then masked_fill_: a device-to-device copy of the whole input before the
  // fill kernel (the measured broadcast rate above is the fill kernel's alone), and its backward, the gradient's
  // masked_fill, the same. Step-time set 20's GraniteMoE profile: 193 DtoD copies of 8.4 ms besides 144 fill
  // kernels of 26.2 ms; the MoE rows (the experts' sentinel masks) read 5 .. 14 % under without them.
  const bool fill_clone = name == "masked_fill";
  if (fill_clone) {
    c.fwd[kMem] += 2 * out_bytes / bw;
    c.fwd[kKernels] += 1;
  }
  // layer_norm of a non-contiguous input (GraphBuilder::layer_norm's contiguous_copy: ViT's transposed residual
  // stream, ConvNeXt's channels-last permute) copies it first, and its backward copies the input and the incoming
  // gradient again: its fwd / bwd temps, each read and written at the strided-copy rate of its layout.
  double copy_fwd = 0, copy_bwd = 0;
  if (name == "layer_norm" && !op.fwd_temp_bytes.empty()) {
    const double cbw = bw * copy_ratio(g, T(op.reads[0]), r);
    for (int64_t t : op.fwd_temp_bytes) copy_fwd += 2 * static_cast<double>(t) / cbw;
    for (int64_t t : op.bwd_temp_bytes) copy_bwd += 2 * static_cast<double>(t) / cbw;
    c.fwd[kMem] += copy_fwd;
    c.fwd[kKernels] += static_cast<double>(op.fwd_temp_bytes.size());
  }
  // LayerNorm's own kernels at their measured time for its row length (the last dimension) and size, in place
  // of its bytes: at rows of 96 .. 768 channels (ConvNeXt, Swin) they run at 0.1 .. 0.6 of the elementwise
  // bandwidth (calibrate/norm_reduce.py). Backward: the input gradient, and the weight / bias gradients' kernel
  // when the affine parameters train. Where the table has no row the bytes above stay.
  double ln_bwd_s = -1;
  if (name == "layer_norm" && rank(0) >= 1) {
    const TensorInfo& x = T(op.reads[0]);
    const double n = static_cast<double>(x.shape.back()), elems = numel(x);
    const double f = norm_time_s(r, "ln_fwd", x.dtype, n, elems);
    if (f >= 0) {
      c.fwd[kMem] = copy_fwd;
      c.fwd[kNorm] = f;
      bool affine_grad = false;
      for (const GradSpec& gs : op.grads)
        if (gs.input >= 0 && gs.input != op.reads[0]) affine_grad = true;
      if (bwd) ln_bwd_s = norm_time_s(r, affine_grad ? "ln_bwd_all" : "ln_bwd_input", x.dtype, n, elems);
    }
  }
  if (name == "avg_pool2d" && rank(0) == 4 && bwd) {
    c.bwd[kPool] = numel(T(op.reads[0])) * kAvgPoolBwdSPerElem;
    c.bwd[kKernels] = 1;
    return c;
  }
  if (bwd) {
    double saved = 0;
    for (TensorId s : op.saved) saved += nbytes(T(s));
    c.bwd[kMemBwd] = (out_bytes + saved + grad_bytes) / bw + copy_bwd;
    c.bwd[kMemBwd] /= masked_fill_ratio(g, op, name, out, r);
    if (fill_clone) c.bwd[kMemBwd] += 2 * grad_bytes / bw;
    // x[idx]'s backward (OpRates::index_bwd_*): a measured time in the norm column, for the source's gradient
    if (name == "index" && r.index_bwd_bytes_per_s > 0 && op.reads.size() >= 2 && !out.shape.empty()) {
      const TensorInfo& src = T(op.reads[0]);
      if (!src.shape.empty() && (src.requires_grad || src.trainable)) {
        const double rows = static_cast<double>(out.shape[0]), src_rows = static_cast<double>(src.shape[0]);
        const double dup = std::max(1.0, rows / std::max(1.0, src_rows));
        c.bwd[kMemBwd] = copy_bwd;
        c.bwd[kNorm] += (nbytes(out) + 2 * nbytes(src)) / r.index_bwd_bytes_per_s + dup * r.index_bwd_dup_s;
      }
    }
    if (ln_bwd_s >= 0) c.bwd[kMemBwd] = copy_bwd, c.bwd[kNorm] = ln_bwd_s;
    if (binary_elementwise(name)) c.bwd[kNorm] += broadcast_grad_reductions_s(g, op, out, r);
    c.bwd[kKernels] = std::max(1.0, fresh_grads) + (copy_bwd > 0 ? static_cast<double>(op.bwd_temp_bytes.size()) : 0.0) +
                      (fill_clone ? 1.0 : 0.0);
    // CatBackward hands each input a narrow() of the output gradient: host work per input, no kernel
    if (name == "cat") c.bwd[kCpuHost] += kCatNarrowHostS * static_cast<double>(op.grads.size());
  }
  return c;
}

void add(Features& a, const Features& b, double w = 1) {
  for (size_t j = 0; j < a.size(); ++j) a[j] += w * b[j];
}

// Autograd's gradient sums: a tensor read by k differentiable ops receives k gradients in backward, and its
// InputBuffer adds each one after the first into the held one (in place, or into a fresh buffer: engine/
// step_replay.cpp accumulate), one add kernel each, launched from the autograd engine (no Python) by the node
// that delivers it. Per op, the sums its backward's deliveries cause: its kernels, their bytes (read both, write
// one) at the elementwise bandwidth (exact bytes: the forward mem column's rate, like an in-place op) and each
// one's measured host seconds (kSumHostS). DenseNet's concatenations make them quadratic in a block's depth: DenseNet-201
// b24's profiled step runs 1,803 such adds (6.4 ms of kernels; its four blocks of 6, 12, 48 and 32 layers sum
// 21 + 78 + 1,176 + 528 gradients), which the model had not costed (NOTES-time.md, fourth round). Parameters'
// sums (a tied embedding) happen in AccumulateGrad's buffer the same way.
std::vector<Features> gradient_sums(const Graph& g, const OpRates& r) {
  std::vector<Features> out(g.ops.size(), Features{});
  std::vector<char> delivered(g.tensors.size(), 0);
  for (size_t i = g.ops.size(); i-- > 0;) {  // backward order: the last reader delivers first
    const Op& op = g.ops[i];
    if (!op.has_backward) continue;
    for (const GradSpec& gs : op.grads) {
      if (gs.input < 0) continue;
      char& d = delivered[static_cast<size_t>(gs.input)];
      if (!d) { d = 1; continue; }
      const TensorInfo& t = g.tensors[static_cast<size_t>(gs.input)];
      const double bw = elementwise_bw(r, t.dtype);
      out[i][kKernels] += 1;
      out[i][kMem] += 3 * nbytes(t) / bw;
      out[i][kCpuHost] += kSumHostS;
    }
  }
  return out;
}

// Every op's cost (op_cost), a training graph's backward with the gradient sums its deliveries cause.
std::vector<OpCost> op_costs(const Graph& g, const OpRates& r, bool training) {
  std::vector<OpCost> cost;
  cost.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) cost.push_back(op_cost(g, i, r, training));
  if (training) {
    const std::vector<Features> sums = gradient_sums(g, r);
    for (size_t i = 0; i < g.ops.size(); ++i) add(cost[i].bwd, sums[i]);
  }
  return cost;
}

std::string opt_name(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::sgd: return "sgd";
    case OptimizerKind::sgd_momentum: return "sgd_momentum";
    case OptimizerKind::adam: return "adam";
    default: return "adamw";  // adafactor / adam8bit: no measured row; AdamW's foreach traffic is the nearest
  }
}
std::string impl_name(OptimizerImpl i) {
  switch (i) {
    case OptimizerImpl::fused: return "fused";
    case OptimizerImpl::forloop: return "forloop";
    default: return "foreach";
  }
}

}  // namespace

namespace {

// Chunks of a timeline: consecutive ops of one layer, at most kChunkOps of them (the flow-shop split falls
// between chunks; step_time.h).
constexpr int kChunkOps = 64;

struct ChunkBuilder {
  Timeline t;
  Features cur{};
  int ops = 0, layer = -2;
  void add_op(const Features& f, int op_layer) {
    if (ops >= kChunkOps || op_layer != layer) flush();
    add(cur, f);
    ++ops;
    layer = op_layer;
  }
  void flush() {
    if (ops > 0) t.push_back(cur);
    cur = Features{};
    ops = 0;
    layer = -2;
  }
  void add_alone(const Features& f) {
    flush();
    t.push_back(f);
  }
};

}  // namespace

Timeline forward_timeline(const Graph& g, const OpRates& r, bool token) {
  ChunkBuilder b;
  Features start{};
  start[token ? kToken : kPass] = 1;  // generate()'s per-token work / the call's: on the host before the ops
  b.add_alone(start);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Features f = op_cost(g, i, r, false).fwd;
    // inference_mode: the dispatch count in its own column, the training host costs dropped (step_time.h)
    f[kCpuInfer] = f[kCpu];
    f[kCpu] = f[kCpuHost] = 0;
    b.add_op(f, g.ops[i].layer);
  }
  b.flush();
  return b.t;
}

namespace {
// The optimizer step: measured seconds per parameter and per tensor, by the trainable parameters' dtype; the
// optimizer's Python and zero_grad as the per-step constant (issued before its kernels).
Features optimizer_cost(const Graph& g, const RunConfig& cfg, const OpRates& r) {
  Features opt{};
  double params = 0, tensors = 0;
  DType pdt = DType::f32;
  for (const TensorInfo& t : g.tensors)
    if (t.kind == TensorKind::param && t.trainable) params += numel(t), tensors += 1, pdt = t.dtype;
  const std::string on = opt_name(cfg.optimizer), im = impl_name(cfg.optimizer_impl);
  const std::string dt = pdt == DType::f32 ? "fp32" : "bf16";
  const OpRates::Opt* row = nullptr;
  for (const auto& o : r.opt)
    if (o.optimizer == on && o.impl == im && o.dtype == dt) row = &o;
  if (!row)
    for (const auto& o : r.opt)
      if (o.optimizer == on && o.impl == "foreach" && o.dtype == dt) row = &o;
  if (!row)
    for (const auto& o : r.opt)
      if (o.optimizer == "adamw" && o.impl == "foreach" && o.dtype == dt) row = &o;
  if (row) opt[kOpt] = row->s_per_param * params + row->s_per_tensor * tensors;
  if (cfg.precision == Precision::amp_fp16)  // GradScaler: unscale + inf check reads and writes every gradient
    opt[kMemBwd] += 3 * params * 4 / r.mem_fp32_bytes_per_s;
  opt[kStep] = 1;  // the optimizer's Python, zero_grad: host work per step, issued before its kernels
  return opt;
}
}  // namespace

namespace {
// What non-reentrant checkpointing costs the host in each checkpointed layer beyond re-issuing its forward
// (OpRates::CkptHost), indexed by layer (empty when none is checkpointed; zero for a layer that is not): the
// forward's part (issued with the layer's first op) and the backward's (with the recompute, before its ops).
// Saved tensors are counted as the graph's ops save them for backward, the weights included (a pack hook runs for
// every tensor autograd saves).
struct CkptHostCost {
  Features fwd{}, bwd{};
};
std::vector<CkptHostCost> checkpoint_host(const Graph& g, const OpRates& r) {
  std::vector<CkptHostCost> out;
  const OpRates::CkptHost& h = r.ckpt_host;
  for (size_t l = 0; l < g.layers.size(); ++l) {
    const LayerInfo& L = g.layers[l];
    if (!L.checkpointed) continue;
    out.resize(g.layers.size());
    double saved = 0;
    for (int32_t j = L.first_op; j < L.end_op; ++j)
      saved += static_cast<double>(g.ops[static_cast<size_t>(j)].saved.size());
    out[l].fwd[kCpuHost] = h.fwd_layer_s + h.fwd_saved_s * saved;
    out[l].bwd[kCpuHost] = h.bwd_layer_s + h.bwd_saved_s * saved;
  }
  return out;
}
}  // namespace

Timeline training_timeline(const Graph& g, const RunConfig& cfg, const OpRates& r) {
  const std::vector<OpCost> cost = op_costs(g, r, true);
  const std::vector<CkptHostCost> ckpt = checkpoint_host(g, r);
  ChunkBuilder b;
  const int64_t micro_batches = std::max<int64_t>(1, cfg.grad_accum_steps);
  for (int64_t m = 0; m < micro_batches; ++m) {
    Features start{};
    start[kMicro] = 1;  // the batch, the loss, autograd's start and end: host work per micro-batch
    b.add_alone(start);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op& op = g.ops[i];
      if (op.layer >= 0) {
        const LayerInfo& L = g.layers[static_cast<size_t>(op.layer)];
        if (L.checkpointed && L.first_op == static_cast<int32_t>(i))
          b.add_op(ckpt[static_cast<size_t>(op.layer)].fwd, op.layer);
      }
      b.add_op(cost[i].fwd, op.layer);
    }
    b.flush();
    // backward in reverse order; a checkpointed layer's forward runs again right before its backward
    for (size_t i = g.ops.size(); i-- > 0;) {
      const Op& op = g.ops[i];
      if (op.layer >= 0) {
        const LayerInfo& L = g.layers[static_cast<size_t>(op.layer)];
        if (L.checkpointed && static_cast<int32_t>(i) == L.end_op - 1) {
          b.flush();
          b.add_op(ckpt[static_cast<size_t>(op.layer)].bwd, op.layer);
          for (int32_t j = L.first_op; j < L.end_op; ++j) b.add_op(cost[static_cast<size_t>(j)].fwd, op.layer);
          b.flush();
        }
      }
      b.add_op(cost[i].bwd, op.layer);
    }
    b.flush();
  }
  b.add_alone(optimizer_cost(g, cfg, r));
  return b.t;
}

std::vector<OpNameCost> op_breakdown(const Graph& g, const RunConfig& cfg, const OpRates& r,
                                     bool training) {
  std::vector<OpNameCost> out;
  const std::vector<OpCost> cost = op_costs(g, r, training);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const std::string& name = g.name_of(g.ops[i].name);
    auto it = std::find_if(out.begin(), out.end(), [&](const OpNameCost& o) { return o.name == name; });
    if (it == out.end()) it = out.insert(out.end(), OpNameCost{name, 0, {}, {}});
    it->count += 1;
    add(it->fwd, cost[i].fwd);
    add(it->bwd, cost[i].bwd);
  }
  if (training) out.push_back({"optimizer.step", 1, optimizer_cost(g, cfg, r), {}});
  return out;
}

namespace {
bool host_col(size_t j) {
  for (int c : kCpuCols)
    if (static_cast<size_t>(c) == j) return true;
  return j == kStep || j == kMicro || j == kPass || j == kToken;
}
double side_s(const Features& f, const Coefficients& c, bool host) {
  double s = 0;
  for (size_t j = 0; j < f.size(); ++j)
    if (host_col(j) == host) s += c.c[j] * f[j];
  return s;
}
}  // namespace

Features critical_path(const Timeline& t, const Coefficients& c) {
  // max over k of host(chunks <= k) + gpu(chunks >= k): one pass with the host prefix and a GPU suffix.
  const size_t n = t.size();
  Features out{};
  if (n == 0) return out;
  std::vector<double> gpu_suffix(n + 1, 0.0);
  for (size_t k = n; k-- > 0;) gpu_suffix[k] = gpu_suffix[k + 1] + side_s(t[k], c, false);
  double host = 0, best = -1;
  size_t best_k = 0;
  for (size_t k = 0; k < n; ++k) {
    host += side_s(t[k], c, true);
    if (host + gpu_suffix[k] > best) best = host + gpu_suffix[k], best_k = k;
  }
  for (size_t k = 0; k < n; ++k)
    for (size_t j = 0; j < out.size(); ++j) {
      const bool h = host_col(j);
      if ((h && k <= best_k) || (!h && k >= best_k)) out[j] += t[k][j];
    }
  return out;
}

Features forward_features(const Graph& g, const OpRates& r, bool token) {
  return critical_path(forward_timeline(g, r, token), h200_coefficients());
}

Features training_features(const Graph& g, const RunConfig& cfg, const OpRates& r) {
  return critical_path(training_timeline(g, cfg, r), h200_coefficients());
}

TimeSplit predict(const Features& f, const Coefficients& c) {
  TimeSplit t;
  t.gpu_s = side_s(f, c, false);
  t.cpu_s = side_s(f, c, true);
  t.cpu_bound = t.cpu_s > t.gpu_s;
  t.total_s = t.gpu_s + t.cpu_s;
  return t;
}

double row_noise(const Features& path, const Coefficients& c, double spread, const NoiseModel& noise) {
  const TimeSplit t = predict(path, c);
  const double h = t.total_s > 0 ? std::clamp(t.cpu_s / t.total_s, 0.0, 1.0) : 0.0;
  return std::max(noise.gpu + noise.host * h, spread);
}

FitResult fit(const std::vector<Timeline>& rows, const std::vector<double>& targets_s, const Coefficients& start,
              const std::array<bool, kCols>& fixed) {
  return fit(rows, targets_s, start, fixed, std::vector<double>(rows.size(), -1.0), NoiseModel{});
}

FitResult fit(const std::vector<Timeline>& rows, const std::vector<double>& targets_s, const Coefficients& start,
              const std::array<bool, kCols>& fixed, const std::vector<double>& spread, const NoiseModel& noise) {
  if (rows.empty() || rows.size() != targets_s.size()) throw InputError("time fit", std::to_string(rows.size()), "needs one target per row");
  if (spread.size() != rows.size()) throw InputError("time fit", std::to_string(spread.size()), "needs one spread per row");
  const bool weighted = noise.gpu > 0 || noise.host > 0;
  FitResult res;
  res.coef = start;
  std::vector<int> freec;
  for (int j = 0; j < kCols; ++j)
    if (!fixed[static_cast<size_t>(j)]) freec.push_back(j);
  std::vector<Features> eff(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) eff[i] = critical_path(rows[i], res.coef);
  for (res.rounds = 1; res.rounds <= 30; ++res.rounds) {
    Eigen::MatrixXd A(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(freec.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
      const double w = 1.0 / (targets_s[i] * (weighted ? row_noise(eff[i], res.coef, spread[i], noise) : 1.0));
      double rhs = targets_s[i];
      for (int j = 0; j < kCols; ++j)
        if (fixed[static_cast<size_t>(j)]) rhs -= start.c[static_cast<size_t>(j)] * eff[i][static_cast<size_t>(j)];
      for (size_t jj = 0; jj < freec.size(); ++jj)
        A(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(jj)) = w * eff[i][static_cast<size_t>(freec[jj])];
      b(static_cast<Eigen::Index>(i)) = w * rhs;
    }
    // Columns are in very different units (seconds vs counts): scale each to unit norm for the solver.
    Eigen::VectorXd scale(A.cols());
    for (Eigen::Index j = 0; j < A.cols(); ++j) {
      const double nrm = A.col(j).norm();
      scale(j) = nrm > 0 ? 1.0 / nrm : 1.0;
      A.col(j) *= scale(j);
    }
    const NnlsResult s = nnls(A, b);
    const Coefficients before = res.coef;
    for (size_t jj = 0; jj < freec.size(); ++jj)
      res.coef.c[static_cast<size_t>(freec[jj])] = s.x(static_cast<Eigen::Index>(jj)) * scale(static_cast<Eigen::Index>(jj));
    // each row's critical path under the new coefficients; done when none moved (weighted: and the weights, which
    // follow the coefficients through the host shares, have settled)
    bool changed = false;
    if (weighted)
      for (size_t j = 0; j < kCols; ++j)
        if (std::fabs(res.coef.c[j] - before.c[j]) > 1e-7 * std::max(std::fabs(before.c[j]), 1e-12)) changed = true;
    for (size_t i = 0; i < rows.size(); ++i) {
      const Features e = critical_path(rows[i], res.coef);
      if (e != eff[i]) changed = true, eff[i] = e;
    }
    if (!changed) break;
  }
  res.rounds = std::min(res.rounds, 30);
  res.effective = eff;
  res.cpu_bound.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) res.cpu_bound[i] = predict(eff[i], res.coef).cpu_bound;
  return res;
}

}  // namespace memplan::timing
