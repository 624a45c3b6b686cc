// Stages: (1) parse the embedded measured rates and fitted coefficients; (2) walk a Graph's forward ops once,
// costing each by its kernel class (step_time.h) into feature columns; (3) combine the columns with the
// coefficients; (4) the NNLS fit of the coefficients (alternating over which side of the max each row is on).
#include "engine/time/step_time.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "engine/errors.h"
#include "engine/time/nnls.h"

namespace memplan::time_embedded {
std::string_view h200_op_rates();
std::string_view h200_coefficients();
}  // namespace memplan::time_embedded

namespace memplan::timing {

namespace {

std::string dtype_key(DType d) {
  switch (d) {
    case DType::bf16: return "bf16";
    case DType::f16: return "fp16";
    default: return "fp32";
  }
}

std::vector<std::string> split_ws(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
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

OpRates parse_op_rates(std::string_view tsv) {
  OpRates r;
  std::istringstream in{std::string(tsv)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = split_ws(line);
    if (f.empty()) continue;
    const std::string& k = f[0];
    if (k == "gemm_dims") {
      for (size_t i = 1; i < f.size(); ++i) r.gemm_dims.push_back(static_cast<int64_t>(num(f, i, line)));
    } else if (k == "gemm") {
      std::vector<double> t;
      for (size_t i = 2; i < f.size(); ++i) t.push_back(num(f, i, line));
      r.gemm_tflops.emplace_back(f.at(1), std::move(t));
    } else if (k == "sdpa") {
      r.sdpa.push_back({f.at(1), static_cast<int64_t>(num(f, 2, line)), static_cast<int64_t>(num(f, 3, line)),
                        num(f, 4, line) != 0, num(f, 5, line), num(f, 6, line)});
    } else if (k == "mem") {
      (f.at(1) == "bf16" ? r.mem_bf16_bytes_per_s : r.mem_fp32_bytes_per_s) = num(f, 2, line) * 1e9;
    } else if (k == "conv") {
      r.conv.push_back({f.at(1), f.at(2), num(f, 3, line), num(f, 4, line)});
    } else if (k == "bn") {
      if (f.at(1) == "bf16") r.bn_bf16_fwd = num(f, 2, line) * 1e9, r.bn_bf16_fwd_bwd = num(f, 3, line) * 1e9;
      else r.bn_fp32_fwd = num(f, 2, line) * 1e9, r.bn_fp32_fwd_bwd = num(f, 3, line) * 1e9;
    } else if (k == "opt") {
      r.opt.push_back({f.at(1), f.at(2), f.at(3), num(f, 4, line) * 1e-9, num(f, 5, line) * 1e-6});
    } else if (k == "overhead") {
      if (f.at(1) == "add_autograd_us") r.dispatch_s = num(f, 2, line) * 1e-6;
    }  // other keys (kernel_floor_us): information for people
  }
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
  return r;
}

const OpRates& h200_op_rates() {
  static const OpRates r = parse_op_rates(time_embedded::h200_op_rates());
  return r;
}

Coefficients parse_coefficients(std::string_view tsv) {
  Coefficients c;
  std::istringstream in{std::string(tsv)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = split_ws(line);
    if (f.size() < 3 || f[0] != "coef") continue;
    const auto it = std::find(kColNames.begin(), kColNames.end(), f[1]);
    if (it == kColNames.end()) throw InputError("time coefficients", line, "names no feature column");
    c.c[static_cast<size_t>(it - kColNames.begin())] = num(f, 2, line);
  }
  return c;
}

const Coefficients& h200_coefficients() {
  static const Coefficients c = parse_coefficients(time_embedded::h200_coefficients());
  return c;
}

namespace {

// Seconds of one GEMM [m, k] x [k, n] in `dt` (step_time.h: log-grid interpolation of the rate; below the grid the
// smallest measured shape's time).
double gemm_s(const OpRates& r, DType dt, double m, double n, double k) {
  const std::string key = dtype_key(dt);
  const std::vector<double>* t = nullptr;
  for (const auto& [d, v] : r.gemm_tflops)
    if (d == key) t = &v;
  if (!t)
    for (const auto& [d, v] : r.gemm_tflops)
      if (d == "bf16") t = &v;
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
  return 2.0 * std::max(m, lo) * std::max(n, lo) * std::max(k, lo) / rate;
}

// Nearest measured SDPA row (dtype, causal, head dim, then sequence in log distance).
const OpRates::Sdpa* sdpa_row(const OpRates& r, DType dt, bool causal, double d, double s) {
  const std::string key = dtype_key(dt);
  const OpRates::Sdpa* best = nullptr;
  double bd = std::numeric_limits<double>::infinity();
  for (const auto& row : r.sdpa) {
    if (row.dtype != key) continue;
    const double dist = (row.causal != causal ? 100.0 : 0.0) + 10.0 * std::fabs(std::log2(static_cast<double>(row.d) / d)) +
                        std::fabs(std::log2(static_cast<double>(row.s) / std::max(1.0, s)));
    if (dist < bd) bd = dist, best = &row;
  }
  return best;
}

double conv_rate(const OpRates& r, const std::string& cls, DType dt, bool bwd) {
  const std::string key = dtype_key(dt) == "fp32" ? "fp32" : "bf16";
  for (const auto& c : r.conv)
    if (c.cls == cls && c.dtype == key) return (bwd ? c.bwd_tflops : c.fwd_tflops) * 1e12;
  for (const auto& c : r.conv)
    if (c.cls == "dense3x3" && c.dtype == key) return (bwd ? c.bwd_tflops : c.fwd_tflops) * 1e12;
  return 100e12;
}

struct OpCost {
  Features fwd{}, bwd{};
};

// Forward and backward cost of op `i` (kernels, seconds at the measured rates). Backward only when the op has one
// and the graph is a training graph.
OpCost op_cost(const Graph& g, size_t i, const TimeContext& ctx, const OpRates& r, bool training) {
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
  if (!allocates) return c;  // a view: no kernel
  double in_bytes = 0;
  for (TensorId id : op.reads) in_bytes += nbytes(T(id));
  c.fwd[kKernels] = 1;
  double fresh_grads = 0, grad_bytes = 0;
  for (const GradSpec& gs : op.grads)
    if (gs.alias_out < 0) fresh_grads += 1, grad_bytes += static_cast<double>(gs.bytes);
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
    c.fwd[kGemm] = gemm_s(r, out.dtype, m, n, k);
    if (bwd) {
      if (a.requires_grad) c.bwd[kGemm] += gemm_s(r, out.dtype, m, k, n);          // dgrad [m, k]
      if (b.requires_grad || b.trainable) c.bwd[kGemm] += gemm_s(r, out.dtype, n, k, m);  // wgrad [n, k]
      c.bwd[kKernels] = std::max(1.0, fresh_grads);
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
    const bool causal = ctx.causal_attention && sq > 1;
    const double flops = 4 * B * H * sq * sk * d * (causal && sq == sk ? 0.5 : 1.0);
    const OpRates::Sdpa* row = sdpa_row(r, q.dtype, causal, d, sq);
    const double bw = q.dtype == DType::f32 ? r.mem_fp32_bytes_per_s : r.mem_bf16_bytes_per_s;
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
    std::string cls;
    if (w.shape[1] == 1 && x.shape[1] > 1) cls = w.shape[2] >= 5 ? "dw7x7" : "dw3x3";
    else if (x.shape[1] <= 4) cls = "stem";
    else cls = w.shape[2] == 1 ? "dense1x1" : "dense3x3";
    const int col = cls.rfind("dw", 0) == 0 ? kConvDw : kConv;
    c.fwd[col] = flops / conv_rate(r, cls, out.dtype, false);
    if (bwd) {
      c.bwd[col] = 2 * flops / conv_rate(r, cls, out.dtype, true);
      c.bwd[kKernels] = std::max(1.0, fresh_grads);
    }
    return c;
  }
  if (name == "batch_norm" && !op.reads.empty()) {
    const TensorInfo& x = T(op.reads[0]);
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
  const double bw = out.dtype == DType::f32 ? r.mem_fp32_bytes_per_s : r.mem_bf16_bytes_per_s;
  c.fwd[kMem] = (in_bytes + out_bytes) / bw;
  if (bwd) {
    double saved = 0;
    for (TensorId s : op.saved) saved += nbytes(T(s));
    c.bwd[kMemBwd] = (out_bytes + saved + grad_bytes) / bw;
    c.bwd[kKernels] = std::max(1.0, fresh_grads);
  }
  return c;
}

void add(Features& a, const Features& b, double w = 1) {
  for (size_t j = 0; j < a.size(); ++j) a[j] += w * b[j];
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

Features forward_features(const Graph& g, const TimeContext& ctx, const OpRates& r, bool token) {
  Features f{};
  for (size_t i = 0; i < g.ops.size(); ++i) add(f, op_cost(g, i, ctx, r, false).fwd);
  f[token ? kToken : kPass] = 1;
  return f;
}

Features training_features(const Graph& g, const RunConfig& cfg, const TimeContext& ctx, const OpRates& r) {
  Features micro{};
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const OpCost c = op_cost(g, i, ctx, r, true);
    add(micro, c.fwd);
    add(micro, c.bwd);
    const Op& op = g.ops[i];
    // non-reentrant checkpointing: the layer's forward runs again inside its backward
    if (op.layer >= 0 && g.layers[static_cast<size_t>(op.layer)].checkpointed) add(micro, c.fwd);
  }
  Features f{};
  add(f, micro, static_cast<double>(std::max<int64_t>(1, cfg.grad_accum_steps)));
  // Optimizer: measured seconds per parameter and per tensor, by the trainable parameters' dtype.
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
  if (row) f[kOpt] = row->s_per_param * params + row->s_per_tensor * tensors;
  if (cfg.precision == Precision::amp_fp16)  // GradScaler: unscale + inf check reads and writes every gradient
    f[kMemBwd] += 3 * params * 4 / r.mem_fp32_bytes_per_s;
  f[kStep] = 1;
  f[kMicro] = static_cast<double>(std::max<int64_t>(1, cfg.grad_accum_steps));
  return f;
}

TimeSplit predict(const Features& f, const Coefficients& c) {
  TimeSplit t;
  for (int j : kGpuCols) t.gpu_s += c.c[static_cast<size_t>(j)] * f[static_cast<size_t>(j)];
  t.cpu_s = c.c[kCpu] * f[kCpu];
  t.cpu_bound = t.cpu_s > t.gpu_s;
  t.total_s = std::max(t.gpu_s, t.cpu_s);
  for (int j : {kStep, kMicro, kPass, kToken}) t.total_s += c.c[static_cast<size_t>(j)] * f[static_cast<size_t>(j)];
  return t;
}

FitResult fit(const std::vector<Features>& rows, const std::vector<double>& targets_s, const Coefficients& start,
              const std::array<bool, kCols>& fixed) {
  if (rows.empty() || rows.size() != targets_s.size()) throw InputError("time fit", std::to_string(rows.size()), "needs one target per row");
  FitResult res;
  res.coef = start;
  // first split: each row's side under the start values
  res.cpu_bound.assign(rows.size(), false);
  for (size_t i = 0; i < rows.size(); ++i) res.cpu_bound[i] = predict(rows[i], start).cpu_bound;
  std::vector<int> freec;
  for (int j = 0; j < kCols; ++j)
    if (!fixed[static_cast<size_t>(j)]) freec.push_back(j);
  for (res.rounds = 1; res.rounds <= 20; ++res.rounds) {
    Eigen::MatrixXd A(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(freec.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
      const double w = 1.0 / targets_s[i];
      double rhs = targets_s[i];
      Features x = rows[i];
      // the side of the max this row is on: the other side's columns drop out
      if (res.cpu_bound[i]) {
        for (int j : kGpuCols) x[static_cast<size_t>(j)] = 0;
      } else {
        x[kCpu] = 0;
      }
      for (int j = 0; j < kCols; ++j)
        if (fixed[static_cast<size_t>(j)]) rhs -= start.c[static_cast<size_t>(j)] * x[static_cast<size_t>(j)];
      for (size_t jj = 0; jj < freec.size(); ++jj) A(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(jj)) = w * x[static_cast<size_t>(freec[jj])];
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
    for (size_t jj = 0; jj < freec.size(); ++jj)
      res.coef.c[static_cast<size_t>(freec[jj])] = s.x(static_cast<Eigen::Index>(jj)) * scale(static_cast<Eigen::Index>(jj));
    bool changed = false;
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool cb = predict(rows[i], res.coef).cpu_bound;
      if (cb != res.cpu_bound[i]) changed = true, res.cpu_bound[i] = cb;
    }
    if (!changed) break;
  }
  res.rounds = std::min(res.rounds, 20);
  return res;
}

}  // namespace memplan::timing
