#include "engine/time/time_band.h"

#include <algorithm>

#include "engine/errors.h"

namespace memplan::time_embedded {
std::string_view h200_bands();
}  // namespace memplan::time_embedded

namespace memplan::timing {

std::vector<std::string> time_band_keys(std::string_view what, bool vision, bool host_bound) {
  const std::string w(what), fam = w + (vision ? "/vision" : "/transformer");
  return {fam + (host_bound ? "/host" : "/gpu"), fam, w, "all"};
}

TimeBandTable build_time_bands(const std::vector<TimeBandSample>& samples) {
  std::vector<ClassError> errors;
  for (const auto& s : samples) {
    if (!(s.predicted_s > 0) || !(s.measured_s > 0)) continue;
    // > 0: the run took longer; capped at 1000x so the table's ppm stay within parse_error_bands' bound
    const double err = std::min((s.measured_s - s.predicted_s) / s.predicted_s, 1000.0);
    for (const auto& k : time_band_keys(s.what, s.vision, s.host_bound)) errors.push_back({k, s.id, err});
  }
  return tabulate_errors(errors);
}

TimeBandTable parse_time_bands(std::string_view text) {
  TimeBandTable t = parse_error_bands(text, "time-bands");
  for (const auto& b : t.classes)
    if (b.cases < 1) throw InputError("time-bands class " + b.key, "0", "holds no timed row");
  return t;
}

const TimeBandTable& h200_time_bands() {
  static const TimeBandTable t = parse_time_bands(time_embedded::h200_bands());
  return t;
}

TimeBand time_band_for(const TimeBandTable& t, std::string_view what, bool vision, bool host_bound) {
  for (const auto& k : time_band_keys(what, vision, host_bound))
    if (const TimeBand* b = t.find(k); b && b->cases >= kMinTimeBandRows) return *b;
  TimeBand none;
  none.key = "none";
  return none;
}

}  // namespace memplan::timing
