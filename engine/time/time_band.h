// How wrong the step-time model has been on comparable measured cases (issue 17 part 3): the step-time analogue of
// the memory verdict's error band (engine/verdict.h), in the same table type and text format.
//
// A measured timing row (data/validation/h200-timing.jsonl, tuning and held out alike) is reduced to its class:
// what was timed (step | prefill | decode_token), the model family (vision: torchvision; transformer: the rest) and
// which side of the flow shop the model puts the critical path on (host | gpu: host-bound steps moved by up to 1.9x
// between H200 machines, GPU-bound ones by 1 %: data/validation/NOTES-time.md, fourth round). The table
// (data/calibration/h200-time-bands.tsv, written by `memplan calibrate --fit-time` at the coefficients it fits,
// embedded) gives per class the largest under- and over-prediction, as fractions of the predicted time
// (ErrorBand::under_fraction: the run took that much longer; over_fraction: that much less), and the row that
// showed it. The finest class holding kMinTimeBandRows rows answers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/verdict.h"

namespace memplan::timing {

using TimeBand = ErrorBand;          // cases: timed rows of the class
using TimeBandTable = ErrorBandTable;

// Class keys from the finest: {"step/vision/host", "step/vision", "step", "all"}.
std::vector<std::string> time_band_keys(std::string_view what, bool vision, bool host_bound);

struct TimeBandSample {
  std::string id, what;
  bool vision = false, host_bound = false;
  double predicted_s = 0, measured_s = 0;
};
// Every key of every sample with its row count and largest errors (at most 1000x the prediction: the text
// format's ppm bound), sorted by key; samples with a non-positive predicted or measured time are skipped.
TimeBandTable build_time_bands(const std::vector<TimeBandSample>& samples);

// The error-band text format (parse_error_bands, error_bands_text), and a class must hold a row.
TimeBandTable parse_time_bands(std::string_view text);
const TimeBandTable& h200_time_bands();  // data/calibration/h200-time-bands.tsv

inline constexpr int64_t kMinTimeBandRows = 8;
// The finest class of time_band_keys with at least kMinTimeBandRows rows; none: a class "none" of zero fractions.
TimeBand time_band_for(const TimeBandTable& t, std::string_view what, bool vision, bool host_bound);

}  // namespace memplan::timing
