// How wrong the step-time model has been on comparable measured cases (issue 17 part 3): the step-time analogue of
// the memory verdict's error band (engine/verdict.h).
//
// A measured timing row (data/validation/h200-timing.jsonl, tuning and held out alike) is reduced to its class:
// what was timed (step | prefill | decode_token), the model family (vision: torchvision; transformer: the rest) and
// which side of the flow shop the model puts the critical path on (host | gpu: host-bound steps moved by up to 1.9x
// between H200 machines, GPU-bound ones by 1 %: data/validation/NOTES-time.md, fourth round). The table
// (data/calibration/h200-time-bands.tsv, written by `memplan calibrate --fit-time` at the coefficients it fits,
// embedded) gives per class the largest under- and over-prediction, as fractions of the predicted time, and the row
// that showed it. The finest class holding kMinTimeBandRows rows answers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplan::timing {

struct TimeBand {
  std::string key;
  int64_t rows = 0;
  double under_fraction = 0;  // the run took up to this much longer than predicted (x the predicted time; >= 0)
  double over_fraction = 0;   // ... or up to this much less
  std::string worst_under_row, worst_over_row;
};

struct TimeBandTable {
  std::vector<TimeBand> classes;
  const TimeBand* find(std::string_view key) const;
};

// Class keys from the finest: {"step/vision/host", "step/vision", "step", "all"}.
std::vector<std::string> time_band_keys(std::string_view what, bool vision, bool host_bound);

struct TimeBandSample {
  std::string id, what;
  bool vision = false, host_bound = false;
  double predicted_s = 0, measured_s = 0;
};
// Every key of every sample with its row count and largest errors, sorted by key; samples with a non-positive
// predicted or measured time are skipped.
TimeBandTable build_time_bands(const std::vector<TimeBandSample>& samples);

// Text format (tab-separated, '#' comments): a header `class rows under_ppm over_ppm worst_under worst_over`, then
// one line per class, fractions in parts per million. InputError naming the line for anything else.
TimeBandTable parse_time_bands(std::string_view text);
std::string time_bands_text(const TimeBandTable& t);
const TimeBandTable& h200_time_bands();  // data/calibration/h200-time-bands.tsv

inline constexpr int64_t kMinTimeBandRows = 8;
// The finest class of time_band_keys with at least kMinTimeBandRows rows; none: a class "none" of zero fractions.
TimeBand time_band_for(const TimeBandTable& t, std::string_view what, bool vision, bool host_bound);

}  // namespace memplan::timing
