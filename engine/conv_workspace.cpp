#include "engine/conv_workspace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/errors.h"
#include "engine/text_rows.h"

namespace memplan {

namespace conv_workspace_embedded {
std::string_view h200_table();  // generated from data/calibration/h200-cudnn-conv-workspace.tsv
}

namespace {

constexpr int kPasses = 3;  // forward, dgrad, wgrad

struct Point {
  double n = 0;
  std::array<int64_t, kPasses> bytes{};  // -1: not measured
};

struct Spatial {
  int64_t h = 0, w = 0;
  std::vector<Point> points;  // sorted by n
};

// c_in c_out kernel stride pad dtype groups dilation channels_last
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, DType, int64_t, int64_t, bool>;

// The generic fallback's class: pass, kernel_class, dtype, group_class, channels_last. The layout is part of it so
// the medians of channels-last and contiguous rows never mix (they run different cuDNN engines).
using RatioKey = std::tuple<int, int, DType, int, bool>;

Key key_of(const ConvShape& s) {
  return Key{s.c_in, s.c_out, s.kernel, s.stride, s.pad, s.dtype, s.groups, s.dilation, s.channels_last};
}

// A whole token as a decimal integer ("2x", "" and "1.5" are not).
bool parse_int(const std::string& tok, int64_t& out) {
  const char* end = tok.data() + tok.size();
  const auto r = std::from_chars(tok.data(), end, out);
  return !tok.empty() && r.ec == std::errc() && r.ptr == end;
}

// The layout column: "nhwc" channels-last, "nchw" contiguous.
bool parse_layout(const std::string& tok, bool& channels_last) {
  if (tok == "nhwc") channels_last = true;
  else if (tok == "nchw") channels_last = false;
  else return false;
  return true;
}

bool parse_dtype(const std::string& s, DType& out) {
  if (s == "fp32") out = DType::f32;
  else if (s == "bf16") out = DType::bf16;
  else if (s == "fp16") out = DType::f16;
  else return false;
  return true;
}

int64_t out_extent(int64_t in, int64_t k, int64_t stride, int64_t pad) {
  return stride > 0 ? std::max<int64_t>(0, (in + 2 * pad - k) / stride + 1) : 0;
}

// Larger of the input and output activation bytes: what the generic ratio is relative to.
double activation_bytes(const ConvShape& s) {
  const double elem = static_cast<double>(dtype_bytes(s.dtype));
  const double in = static_cast<double>(s.n) * s.c_in * s.h * s.w * elem;
  const double out = static_cast<double>(s.n) * s.c_out * out_extent(s.h, s.kernel, s.stride, s.pad) *
                     out_extent(s.w, s.kernel, s.stride, s.pad) * elem;
  return std::max(in, out);
}

int64_t to_bytes(double v) {
  if (!(v > 0)) return 0;
  return v >= 4e18 ? static_cast<int64_t>(4e18) : static_cast<int64_t>(std::llround(v));
}

// Piecewise linear in n over the points measuring `pass`; beyond the largest, along the last segment; below the
// smallest (or with a single point), proportional to n. -1: no point measures the pass.
double interpolate(const std::vector<Point>& pts, double n, int pass) {
  const auto y = [pass](const Point* p) { return static_cast<double>(p->bytes[static_cast<size_t>(pass)]); };
  const auto line = [&](const Point* a, const Point* b) {
    return std::max(0.0, y(a) + (y(b) - y(a)) * (n - a->n) / (b->n - a->n));
  };
  const Point* before_last = nullptr;
  const Point* last = nullptr;  // the measured points below n, the nearest last
  for (const Point& p : pts) {
    if (p.bytes[static_cast<size_t>(pass)] < 0) continue;
    if (p.n >= n) return last ? line(last, &p) : y(&p) * n / p.n;
    before_last = last;
    last = &p;
  }
  if (!last) return -1;
  return before_last ? line(before_last, last) : y(last) * n / last->n;
}

// 0 a k x k kernel, 1 a 1x1, 2 a patch stem: the image (at most 4 channels) cut into non-overlapping patches
// (kernel == stride > 1, no padding). The stems run other engines than a 3x3 of the same activation: the 16-bit
// ViT-style stems ask for no forward workspace at most shapes and a wgrad workspace of 2 .. 17x the output, where
// the k x k medians gave 15 .. 58 MiB forward (patchify rows, 2026-12-06).
int kernel_class(const ConvShape& s) {
  if (s.kernel == 1) return 1;
  return s.kernel == s.stride && s.pad == 0 && s.c_in <= 4 ? 2 : 0;
}

// 0 dense, 1 grouped, 2 depthwise (groups == c_in): each class has its own engines, so its own fallback ratio.
int group_class(const ConvShape& s) {
  if (s.groups <= 1) return 0;
  return s.groups == s.c_in ? 2 : 1;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Fills the passes of `ws` still unset (< 0) from the measured rows under `key`: the measured spatial size nearest
// in pixel count (exact when measured), at the batch with the same N*H*W. Passes those rows do not measure stay -1.
void fill_from_rows(const std::map<Key, std::vector<Spatial>>& shapes, const Key& key, const ConvShape& s,
                    std::array<double, kPasses>& ws) {
  const auto it = shapes.find(key);
  if (it == shapes.end() || s.h <= 0 || s.w <= 0) return;
  const Spatial* best = nullptr;
  const double pixels = static_cast<double>(s.h) * static_cast<double>(s.w);
  double best_gap = 0;
  for (const Spatial& sp : it->second) {
    const double gap = std::abs(std::log(pixels / (static_cast<double>(sp.h) * static_cast<double>(sp.w))));
    if (!best || gap < best_gap) best = &sp, best_gap = gap;
  }
  const double n = static_cast<double>(s.n) * pixels / (static_cast<double>(best->h) * static_cast<double>(best->w));
  for (int p = 0; p < kPasses; ++p)
    if (ws[static_cast<size_t>(p)] < 0) ws[static_cast<size_t>(p)] = interpolate(best->points, n, p);
}

// Fills the passes of `ws` still unset (< 0) from the class medians of the given layout; passes whose class has no
// measured row of that layout stay -1.
void fill_from_ratios(const std::map<RatioKey, double>& ratio, const ConvShape& s, bool channels_last,
                      std::array<double, kPasses>& ws) {
  for (int p = 0; p < kPasses; ++p) {
    if (ws[static_cast<size_t>(p)] >= 0) continue;
    const auto r = ratio.find(RatioKey{p, kernel_class(s), s.dtype, group_class(s), channels_last});
    if (r != ratio.end()) ws[static_cast<size_t>(p)] = r->second * activation_bytes(s);
  }
}

}  // namespace

struct MeasuredConvWorkspace::Table {
  std::map<Key, std::vector<Spatial>> shapes;
  // Generic fallback: median workspace / activation_bytes per (pass, kernel_class, dtype, group_class,
  // channels_last).
  std::map<RatioKey, double> ratio;
  size_t rows = 0;
};

MeasuredConvWorkspace::MeasuredConvWorkspace(std::string_view text) : t_(std::make_unique<Table>()) {
  std::map<RatioKey, std::vector<double>> ratios;
  for_each_row(text, [&](int64_t line_no, const std::string& line) {
    std::istringstream ls(line);
    ConvShape s;
    std::string dtype;
    std::array<int64_t, kPasses> bytes{};
    const bool base = static_cast<bool>(ls >> s.c_in >> s.c_out >> s.kernel >> s.stride >> s.pad >> s.h >> s.w >> s.n >>
                                        dtype >> bytes[0] >> bytes[1] >> bytes[2]);
    // Optional trailing columns, each needing the ones before it: groups, dilation (absent: 1), layout (absent:
    // nchw), then `exact`: a row looked up for its own shape only, kept out of the class medians (a family whose
    // convs the medians do not describe: adding SegFormer's moved 15 measured predictions of other families by
    // up to 8 points of reserved, 6 closer and 9 further). Anything after that is malformed.
    std::vector<std::string> tail;
    for (std::string tok; base && ls >> tok;) tail.push_back(tok);
    bool tail_ok = base && tail.size() <= 4;
    bool exact_only = false;
    if (tail_ok && tail.size() >= 1) tail_ok = parse_int(tail[0], s.groups);
    if (tail_ok && tail.size() >= 2) tail_ok = parse_int(tail[1], s.dilation);
    if (tail_ok && tail.size() >= 3) tail_ok = parse_layout(tail[2], s.channels_last);
    if (tail_ok && tail.size() >= 4) tail_ok = exact_only = tail[3] == "exact";
    const bool bad_tail = !tail_ok || s.groups < 1 || s.dilation < 1;
    if (!base || bad_tail || !parse_dtype(dtype, s.dtype) || s.c_in <= 0 || s.c_out <= 0 || s.kernel <= 0 ||
        s.stride <= 0 || s.pad < 0 || s.h <= 0 || s.w <= 0 || s.n <= 0 || bytes[0] < 0 || bytes[1] < -1 ||
        bytes[2] < 0)
      throw InputError("conv workspace table line " + std::to_string(line_no), line,
                       "want 'c_in c_out kernel stride pad h w n dtype forward dgrad wgrad [groups [dilation "
                       "[layout [exact]]]]' (dtype fp32|bf16|fp16, layout nchw|nhwc)");
    auto& spatials = t_->shapes[key_of(s)];
    auto it = std::find_if(spatials.begin(), spatials.end(), [&](const Spatial& sp) { return sp.h == s.h && sp.w == s.w; });
    if (it == spatials.end()) it = spatials.insert(spatials.end(), Spatial{s.h, s.w, {}});
    it->points.push_back({static_cast<double>(s.n), bytes});
    const double act = activation_bytes(s);
    for (int p = 0; p < kPasses && !exact_only; ++p)
      if (bytes[static_cast<size_t>(p)] >= 0 && act > 0)
        ratios[RatioKey{p, kernel_class(s), s.dtype, group_class(s), s.channels_last}].push_back(
            static_cast<double>(bytes[static_cast<size_t>(p)]) / act);
    ++t_->rows;
  });
  for (auto& [key, spatials] : t_->shapes)
    for (Spatial& sp : spatials) {
      std::sort(sp.points.begin(), sp.points.end(), [](const Point& a, const Point& b) { return a.n < b.n; });
      for (size_t i = 1; i < sp.points.size(); ++i)
        if (sp.points[i].n == sp.points[i - 1].n)
          throw InputError("conv workspace table", std::to_string(static_cast<int64_t>(sp.points[i].n)),
                           "a batch size listed twice for one shape");
    }
  for (auto& [k, v] : ratios) t_->ratio[k] = median(std::move(v));
}

MeasuredConvWorkspace::~MeasuredConvWorkspace() = default;

size_t MeasuredConvWorkspace::rows() const { return t_->rows; }

ConvWorkspaceBytes MeasuredConvWorkspace::workspace(const ConvShape& s) const {
  // Per pass, the first source that has an answer (-1: none yet). A channels-last shape first asks the nhwc rows
  // of its key, then the nhwc median of its class (a channels-last conv runs a different engine, which another
  // nhwc shape predicts better than the same shape's contiguous rows), and only then what a contiguous shape asks:
  // the nchw rows of its key, then the nchw median of its class. Nothing: 0 B.
  std::array<double, kPasses> ws{-1, -1, -1};
  ConvShape contiguous = s;
  contiguous.channels_last = false;
  if (s.channels_last) {
    fill_from_rows(t_->shapes, key_of(s), s, ws);
    fill_from_ratios(t_->ratio, s, /*channels_last=*/true, ws);
  }
  fill_from_rows(t_->shapes, key_of(contiguous), contiguous, ws);
  fill_from_ratios(t_->ratio, contiguous, /*channels_last=*/false, ws);
  return {to_bytes(ws[0]), to_bytes(ws[1]), to_bytes(ws[2])};
}

const ConvWorkspaceModel& shipped_conv_workspace() {
  static const MeasuredConvWorkspace kTable(conv_workspace_embedded::h200_table());
  return kTable;
}

}  // namespace memplan
