// Stages: parse a table's rows into (shape key -> spatial sizes -> batch points), then answer a lookup by the
// contract in kernel_tables.h (spatial size by pixel count, piecewise linear in N, fp16 from bf16).
#include "engine/time/kernel_tables.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/text_rows.h"

namespace memplan::time_embedded {
std::string_view h200_conv_time();
std::string_view h200_bn_time();
}  // namespace memplan::time_embedded

namespace memplan::timing {

namespace {

struct Point {
  double n = 0;
  std::array<double, 2> us{};  // the table's two time columns
};
struct Spatial {
  int64_t h = 0, w = 0;
  std::vector<Point> points;  // sorted by n
};
// Key (everything but h, w, n) -> its measured spatial sizes.
template <typename Key>
using Shapes = std::map<Key, std::vector<Spatial>>;

// Piecewise linear in n (kernel_tables.h).
double interpolate(const std::vector<Point>& pts, double n, size_t col) {
  const Point* prev = nullptr;
  const Point* last = nullptr;
  for (const Point& p : pts) {
    if (p.n >= n) {
      if (!last) return p.us[col] * n / p.n;
      return last->us[col] + (p.us[col] - last->us[col]) * (n - last->n) / (p.n - last->n);
    }
    prev = last;
    last = &p;
  }
  if (!prev) return last->us[col] * n / last->n;
  return std::max(0.0, last->us[col] + (last->us[col] - prev->us[col]) * (n - last->n) / (last->n - prev->n));
}

template <typename Key>
bool lookup_in(const Shapes<Key>& shapes, const Key& key, int64_t n, int64_t h, int64_t w, std::array<double, 2>& us) {
  const auto it = shapes.find(key);
  if (it == shapes.end() || h <= 0 || w <= 0 || n <= 0) return false;
  const double pixels = static_cast<double>(h) * static_cast<double>(w);
  const Spatial* best = nullptr;
  double best_gap = 0;
  for (const Spatial& sp : it->second) {
    const double gap = std::fabs(std::log(pixels / (static_cast<double>(sp.h) * static_cast<double>(sp.w))));
    if (!best || gap < best_gap) best = &sp, best_gap = gap;
  }
  const double nn = static_cast<double>(n) * pixels / (static_cast<double>(best->h) * static_cast<double>(best->w));
  for (size_t c = 0; c < 2; ++c) us[c] = std::max(0.0, interpolate(best->points, nn, c));
  return true;
}

template <typename Key>
void add_row(Shapes<Key>& shapes, const Key& key, int64_t h, int64_t w, double n, std::array<double, 2> us) {
  auto& sp = shapes[key];
  auto it = std::find_if(sp.begin(), sp.end(), [&](const Spatial& s) { return s.h == h && s.w == w; });
  if (it == sp.end()) it = sp.insert(sp.end(), Spatial{h, w, {}});
  it->points.push_back({n, us});
}

template <typename Key>
void finish(Shapes<Key>& shapes, const char* what) {
  for (auto& [k, sps] : shapes)
    for (Spatial& sp : sps) {
      std::sort(sp.points.begin(), sp.points.end(), [](const Point& a, const Point& b) { return a.n < b.n; });
      for (size_t i = 1; i < sp.points.size(); ++i)
        if (sp.points[i].n == sp.points[i - 1].n)
          throw InputError(what, std::to_string(static_cast<int64_t>(sp.points[i].n)), "a batch size listed twice for one shape");
    }
}

bool usable(double v) { return std::isfinite(v) && v >= 0; }
// Shape fields stay far below int64's range, so the extent arithmetic (conv_flops) cannot overflow.
bool small(int64_t v) { return v <= (int64_t{1} << 31); }

// The tables' dtype names (calibrate/conv_time.py): fp32, bf16, fp16.
bool table_dtype(const std::string& s, DType& d) {
  if (s == "fp32") d = DType::f32;
  else if (s == "bf16") d = DType::bf16;
  else if (s == "fp16") d = DType::f16;
  else return false;
  return true;
}

// dtype with rows of its own, else bf16 for fp16 (kernel_tables.h).
template <typename Key, typename MakeKey>
bool lookup_dtype(const Shapes<Key>& shapes, MakeKey make, DType dt, int64_t n, int64_t h, int64_t w, std::array<double, 2>& us) {
  if (lookup_in(shapes, make(dt), n, h, w, us)) return true;
  return dt == DType::f16 && lookup_in(shapes, make(DType::bf16), n, h, w, us);
}

}  // namespace

// ---- convolutions ----

namespace {

using ConvKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, DType>;
// c_in, c_out, kernel, stride, pad, groups, dilation, channels_last, dtype
using RateKey = std::pair<int, DType>;  // conv_class, dtype

int conv_class(const ConvKernelShape& s) {
  if (s.groups > 1) return s.groups == s.c_in ? 4 : 3;  // depthwise, grouped
  if (s.c_in <= 4) return 0;                             // the stem
  return s.kernel == 1 ? 1 : 2;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

double conv_flops(const ConvKernelShape& s) {
  const auto extent = [&](int64_t in) { return (in + 2 * s.pad - s.dilation * (s.kernel - 1) - 1) / s.stride + 1; };
  const double out = static_cast<double>(s.n) * static_cast<double>(s.c_out) *
                     static_cast<double>(std::max<int64_t>(1, extent(s.h))) * static_cast<double>(std::max<int64_t>(1, extent(s.w)));
  return 2.0 * out * static_cast<double>(s.c_in / std::max<int64_t>(1, s.groups)) * static_cast<double>(s.kernel * s.kernel);
}

struct ConvTimeTable::Table {
  Shapes<ConvKey> shapes;
  std::map<RateKey, std::pair<double, double>> class_rate;  // median forward, backward FLOP/s
  size_t rows = 0;
};

ConvTimeTable::ConvTimeTable(std::string_view text) : t_(std::make_unique<Table>()) {
  std::map<RateKey, std::pair<std::vector<double>, std::vector<double>>> rates;
  for_each_row(text, [&](int64_t line_no, const std::string& line) {
    std::istringstream ls(line);
    int64_t c, k, ker, st, pad, h, w, g, dil, cl, n;
    std::string dts, extra;
    double f, b;
    DType dt;
    const bool ok = static_cast<bool>(ls >> c >> k >> ker >> st >> pad >> h >> w >> g >> dil >> cl >> n >> dts >> f >> b) &&
                    !(ls >> extra) && table_dtype(dts, dt) && c > 0 && k > 0 && ker > 0 && st > 0 && pad >= 0 && h > 0 &&
                    w > 0 && g > 0 && dil > 0 && (cl == 0 || cl == 1) && n > 0 && usable(f) && usable(b) && small(c) &&
                    small(k) && small(ker) && small(st) && small(pad) && small(h) && small(w) && small(g) && small(dil) &&
                    small(n);
    if (!ok)
      throw InputError("conv time table line " + std::to_string(line_no), line,
                       "want 'c_in c_out kernel stride pad h w groups dilation channels_last n dtype forward_us "
                       "backward_us' (dtype fp32|bf16|fp16, sizes <= 2^31, times >= 0)");
    add_row(t_->shapes, ConvKey{c, k, ker, st, pad, g, dil, cl == 1, dt}, h, w, static_cast<double>(n), {f, b});
    const ConvKernelShape cs{n, c, h, w, k, ker, st, pad, g, dil, cl == 1, dt};
    const double fl = conv_flops(cs);
    if (f > 0 && b > 0) {
      rates[{conv_class(cs), dt}].first.push_back(fl / (f * 1e-6));
      rates[{conv_class(cs), dt}].second.push_back(2 * fl / (b * 1e-6));
    }
    ++t_->rows;
  });
  finish(t_->shapes, "conv time table");
  for (auto& [key, v] : rates) t_->class_rate[key] = {median_of(v.first), median_of(v.second)};
}
ConvTimeTable::~ConvTimeTable() = default;
ConvTimeTable::ConvTimeTable(ConvTimeTable&&) noexcept = default;
size_t ConvTimeTable::rows() const { return t_->rows; }

bool ConvTimeTable::lookup(const ConvKernelShape& s, KernelSeconds& out) const {
  std::array<double, 2> us{};
  const auto make = [&](DType d) {
    return ConvKey{s.c_in, s.c_out, s.kernel, s.stride, s.pad, s.groups, s.dilation, s.channels_last, d};
  };
  if (!lookup_dtype(t_->shapes, make, s.dtype, s.n, s.h, s.w, us)) return false;
  out.forward_s = us[0] * 1e-6;
  out.backward_s = us[1] * 1e-6;
  return true;
}

bool ConvTimeTable::class_rate(const ConvKernelShape& s, double& fwd_flops_per_s, double& bwd_flops_per_s) const {
  auto it = t_->class_rate.find({conv_class(s), s.dtype});
  if (it == t_->class_rate.end() && s.dtype == DType::f16) it = t_->class_rate.find({conv_class(s), DType::bf16});
  if (it == t_->class_rate.end()) return false;
  fwd_flops_per_s = it->second.first;
  bwd_flops_per_s = it->second.second;
  return true;
}

// ---- batch norm ----

using BnKey = std::tuple<int64_t, bool, DType>;  // c, channels_last, dtype

struct BnTimeTable::Table {
  Shapes<BnKey> shapes;
  size_t rows = 0;
};

BnTimeTable::BnTimeTable(std::string_view text) : t_(std::make_unique<Table>()) {
  for_each_row(text, [&](int64_t line_no, const std::string& line) {
    std::istringstream ls(line);
    int64_t c, h, w, cl, n;
    std::string dts, extra;
    double f, fb;
    DType dt;
    const bool ok = static_cast<bool>(ls >> c >> h >> w >> cl >> n >> dts >> f >> fb) && !(ls >> extra) &&
                    table_dtype(dts, dt) && c > 0 && h > 0 && w > 0 && (cl == 0 || cl == 1) && n > 0 && usable(f) &&
                    usable(fb) && small(c) && small(h) && small(w) && small(n);
    if (!ok)
      throw InputError("bn time table line " + std::to_string(line_no), line,
                       "want 'c h w channels_last n dtype forward_us forward_backward_us' (dtype fp32|bf16|fp16, "
                       "times >= 0)");
    add_row(t_->shapes, BnKey{c, cl == 1, dt}, h, w, static_cast<double>(n), {f, fb});
    ++t_->rows;
  });
  finish(t_->shapes, "bn time table");
}
BnTimeTable::~BnTimeTable() = default;
BnTimeTable::BnTimeTable(BnTimeTable&&) noexcept = default;
size_t BnTimeTable::rows() const { return t_->rows; }

bool BnTimeTable::lookup(int64_t n, int64_t c, int64_t h, int64_t w, bool channels_last, DType dtype,
                         KernelSeconds& out) const {
  std::array<double, 2> us{};
  const auto make = [&](DType d) { return BnKey{c, channels_last, d}; };
  if (!lookup_dtype(t_->shapes, make, dtype, n, h, w, us)) return false;
  out.forward_s = us[0] * 1e-6;
  out.backward_s = std::max(0.0, us[1] - us[0]) * 1e-6;
  return true;
}

const ConvTimeTable& h200_conv_time() {
  static const ConvTimeTable t(time_embedded::h200_conv_time());
  return t;
}
const BnTimeTable& h200_bn_time() {
  static const BnTimeTable t(time_embedded::h200_bn_time());
  return t;
}

}  // namespace memplan::timing
