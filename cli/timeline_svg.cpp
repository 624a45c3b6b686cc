// Stages: (1) bucket the per-event curves into at most kColumns columns, keeping each column's maximum (so
// peaks survive); (2) stack the ledger rows of the column's peak event; (3) draw areas, the reserved line, phase
// bands and the peak marker; (4) legend and axes in MiB.
#include "cli/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/checked.h"

namespace memplan::cli {

namespace {
constexpr size_t kColumns = 1200;
constexpr double kWidth = 1200, kHeight = 520, kLeft = 70, kRight = 200, kTop = 40, kBottom = 50;

const char* kRowColors[kRowCount] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                     "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6"};

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}
}  // namespace

Axis round_axis(int64_t max_bytes) {
  Axis a;
  const bool gib = max_bytes >= 2 * kGiB;
  a.unit_bytes = gib ? kGiB : kMiB;
  a.unit_name = gib ? "GiB" : "MiB";
  const double units = static_cast<double>(std::max<int64_t>(max_bytes, 1)) / static_cast<double>(a.unit_bytes);
  constexpr int kMaxIntervals = 8;
  // The smallest 1 / 2 / 5 x 10^k step that covers the maximum in kMaxIntervals (10^-3 MiB at the least).
  for (double decade = 1e-3;; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double step = m * decade;
      if (step * kMaxIntervals >= units) {
        a.step_units = step;
        a.intervals = std::max(1, static_cast<int>(std::ceil(units / step - 1e-9)));
        return a;
      }
    }
  }
}

std::string timeline_svg(const Estimate& e, const std::string& title) {
  const auto& alloc = e.replay.timeline;
  const auto& ledgers = e.replay.timeline_ledgers;
  const auto& where = e.replay.timeline_where;
  const auto& reserved = e.allocator.reserved_curve_bytes;
  const size_t n = alloc.size();
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kWidth + kRight << "' height='" << kHeight
    << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  o << "<text x='" << kLeft << "' y='22' font-size='15'>" << title << "</text>\n";
  if (n == 0) return o.str() + "</svg>\n";
  // (1) columns: the event with the highest allocated bytes in each bucket
  const size_t cols = std::min(n, kColumns);
  std::vector<size_t> pick(cols);
  std::vector<int64_t> rmax(cols, 0);
  for (size_t c = 0; c < cols; ++c) {
    const size_t b = c * n / cols, en = std::max(b + 1, (c + 1) * n / cols);
    size_t best = b;
    for (size_t i = b; i < en; ++i) {
      if (alloc[i] > alloc[best]) best = i;
      if (i < reserved.size()) rmax[c] = std::max(rmax[c], reserved[i]);
    }
    pick[c] = best;
  }
  int64_t peak = 1;
  for (size_t i = 0; i < n; ++i) peak = std::max(peak, alloc[i]);
  for (int64_t r : rmax) peak = std::max(peak, r);
  const Axis axis = round_axis(peak);
  const double ymax = axis.top_units() * static_cast<double>(axis.unit_bytes);
  const double plot_w = kWidth - kLeft, plot_h = kHeight - kTop - kBottom;
  auto X = [&](size_t c) { return kLeft + plot_w * static_cast<double>(c) / static_cast<double>(cols); };
  auto Y = [&](double b) { return kTop + plot_h * (1.0 - b / ymax); };
  // (3a) phase bands: alternate shading where the (step, phase) changes
  size_t band_start = 0;
  int band = 0;
  for (size_t c = 1; c <= cols; ++c) {
    const bool change = c == cols || where[pick[c]].phase != where[pick[c - 1]].phase ||
                        where[pick[c]].step != where[pick[c - 1]].step;
    if (!change) continue;
    const auto& w = where[pick[band_start]];
    if (band++ % 2 == 0)
      o << "<rect x='" << fmt(X(band_start)) << "' y='" << kTop << "' width='" << fmt(X(c) - X(band_start))
        << "' height='" << plot_h << "' fill='#f3f3f3'/>\n";
    if (X(c) - X(band_start) > 40)
      o << "<text x='" << fmt(X(band_start) + 3) << "' y='" << kTop + plot_h + 14 << "' font-size='10'>s" << w.step
        << " " << phase_name(w.phase) << "</text>\n";
    band_start = c;
  }
  // (2)+(3b) stacked rows as polygons, bottom row first
  std::vector<int64_t> base(cols, 0);
  for (size_t r = 0; r < kRowCount; ++r) {
    bool any = false;
    for (size_t c = 0; c < cols && !any; ++c) any = ledgers[pick[c]].bytes[r] > 0;
    if (!any) continue;
    std::ostringstream top, bottom;
    for (size_t c = 0; c < cols; ++c) {
      const int64_t lo = base[c], hi = lo + ledgers[pick[c]].bytes[r];
      top << fmt(X(c)) << "," << fmt(Y(hi)) << " " << fmt(X(c + 1)) << "," << fmt(Y(hi)) << " ";
      base[c] = hi;
      (void)lo;
    }
    for (size_t c = cols; c-- > 0;) {
      const int64_t lo = base[c] - ledgers[pick[c]].bytes[r];
      bottom << fmt(X(c + 1)) << "," << fmt(Y(lo)) << " " << fmt(X(c)) << "," << fmt(Y(lo)) << " ";
    }
    o << "<polygon fill='" << kRowColors[r] << "' fill-opacity='0.85' points='" << top.str() << bottom.str() << "'/>\n";
  }
  // (3c) reserved line
  if (!reserved.empty()) {
    o << "<polyline fill='none' stroke='black' stroke-width='1.5' stroke-dasharray='5,3' points='";
    for (size_t c = 0; c < cols; ++c) o << fmt(X(c)) << "," << fmt(Y(rmax[c])) << " " << fmt(X(c + 1)) << "," << fmt(Y(rmax[c])) << " ";
    o << "'/>\n";
  }
  // (3d) the steady-state peak
  size_t peak_c = 0;
  for (size_t c = 0; c < cols; ++c)
    if (alloc[pick[c]] >= alloc[pick[peak_c]]) peak_c = c;
  o << "<line x1='" << fmt(X(peak_c)) << "' x2='" << fmt(X(peak_c)) << "' y1='" << kTop << "' y2='" << kTop + plot_h
    << "' stroke='red' stroke-width='1'/>\n<text x='" << fmt(X(peak_c) - 4) << "' y='" << kTop - 4
    << "' fill='red' text-anchor='end'>peak " << fmt(to_mib(alloc[pick[peak_c]])) << " MiB ("
    << phase_name(where[pick[peak_c]].phase) << ")</text>\n";
  // (4) axes and legend
  for (int k = 0; k <= axis.intervals; ++k) {
    const double units = axis.step_units * k;
    const double b = units * static_cast<double>(axis.unit_bytes);
    char label[32];
    std::snprintf(label, sizeof label, "%g", units);
    o << "<line x1='" << kLeft << "' x2='" << kWidth << "' y1='" << fmt(Y(b)) << "' y2='" << fmt(Y(b))
      << "' stroke='#ccc' stroke-width='0.5'/>\n<text x='" << kLeft - 6 << "' y='" << fmt(Y(b) + 4)
      << "' text-anchor='end'>" << label << "</text>\n";
  }
  o << "<text x='14' y='" << kTop + plot_h / 2 << "' transform='rotate(-90 14 " << kTop + plot_h / 2
    << ")' text-anchor='middle'>" << axis.unit_name << "</text>\n";
  double ly = kTop + 10;
  for (size_t r = 0; r < kRowCount; ++r) {
    o << "<rect x='" << kWidth + 15 << "' y='" << ly - 9 << "' width='12' height='12' fill='" << kRowColors[r]
      << "'/><text x='" << kWidth + 32 << "' y='" << ly + 1 << "'>" << row_name(static_cast<Row>(r)) << "</text>\n";
    ly += 18;
  }
  o << "<line x1='" << kWidth + 15 << "' x2='" << kWidth + 27 << "' y1='" << ly - 3 << "' y2='" << ly - 3
    << "' stroke='black' stroke-dasharray='5,3'/><text x='" << kWidth + 32 << "' y='" << ly + 1
    << "'>reserved</text>\n</svg>\n";
  return o.str();
}

}  // namespace memplan::cli
