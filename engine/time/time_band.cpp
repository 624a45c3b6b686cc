#include "engine/time/time_band.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "engine/errors.h"
#include "engine/text_rows.h"

namespace memplan::time_embedded {
std::string_view h200_bands();
}  // namespace memplan::time_embedded

namespace memplan::timing {

const TimeBand* TimeBandTable::find(std::string_view key) const {
  for (const auto& c : classes)
    if (c.key == key) return &c;
  return nullptr;
}

std::vector<std::string> time_band_keys(std::string_view what, bool vision, bool host_bound) {
  const std::string w(what), fam = w + (vision ? "/vision" : "/transformer");
  return {fam + (host_bound ? "/host" : "/gpu"), fam, w, "all"};
}

TimeBandTable build_time_bands(const std::vector<TimeBandSample>& samples) {
  std::map<std::string, TimeBand> by_key;
  for (const auto& s : samples) {
    if (!(s.predicted_s > 0) || !(s.measured_s > 0)) continue;
    const double err = (s.measured_s - s.predicted_s) / s.predicted_s;  // > 0: the run took longer
    for (const auto& k : time_band_keys(s.what, s.vision, s.host_bound)) {
      TimeBand& b = by_key[k];
      b.key = k;
      ++b.rows;
      if (err > b.under_fraction) b.under_fraction = err, b.worst_under_row = s.id;
      if (-err > b.over_fraction) b.over_fraction = -err, b.worst_over_row = s.id;
    }
  }
  TimeBandTable t;
  for (auto& [k, b] : by_key) t.classes.push_back(std::move(b));
  return t;
}

namespace {
constexpr const char* kHeader = "class\trows\tunder_ppm\tover_ppm\tworst_under\tworst_over";
}

TimeBandTable parse_time_bands(std::string_view text) {
  TimeBandTable t;
  bool header = false;
  for_each_row(text, [&](int64_t, const std::string& line) {
    const auto f = split_ws(line);
    if (!header) {
      if (line != kHeader) throw InputError("time bands", line, "is not the header");
      header = true;
      return;
    }
    if (f.size() != 6) throw InputError("time bands", line, "needs 6 fields");
    TimeBand b;
    b.key = f[0];
    long long rows = 0, under = 0, over = 0;
    std::istringstream in(f[1] + " " + f[2] + " " + f[3]);
    if (!(in >> rows >> under >> over) || rows < 1 || under < 0 || over < 0 || under > 100000000 || over > 100000000)
      throw InputError("time bands", line, "needs a positive row count and ppm in [0, 1e8]");
    b.rows = rows;
    b.under_fraction = static_cast<double>(under) * 1e-6;
    b.over_fraction = static_cast<double>(over) * 1e-6;
    b.worst_under_row = f[4] == "-" ? "" : f[4];
    b.worst_over_row = f[5] == "-" ? "" : f[5];
    t.classes.push_back(std::move(b));
  });
  return t;
}

std::string time_bands_text(const TimeBandTable& t) {
  // ppm, clamped to the parser's range (a fraction of 100: a run 100x its prediction), so any table round-trips
  const auto ppm = [](double f) { return std::llround(std::clamp(f, 0.0, 100.0) * 1e6); };
  std::ostringstream o;
  o << kHeader << "\n";
  for (const auto& b : t.classes)
    o << b.key << "\t" << b.rows << "\t" << ppm(b.under_fraction) << "\t" << ppm(b.over_fraction) << "\t"
      << (b.worst_under_row.empty() ? "-" : b.worst_under_row) << "\t"
      << (b.worst_over_row.empty() ? "-" : b.worst_over_row) << "\n";
  return o.str();
}

const TimeBandTable& h200_time_bands() {
  static const TimeBandTable t = parse_time_bands(time_embedded::h200_bands());
  return t;
}

TimeBand time_band_for(const TimeBandTable& t, std::string_view what, bool vision, bool host_bound) {
  for (const auto& k : time_band_keys(what, vision, host_bound))
    if (const TimeBand* b = t.find(k); b && b->rows >= kMinTimeBandRows) return *b;
  TimeBand none;
  none.key = "none";
  return none;
}

}  // namespace memplan::timing
