// The step-time fit (`memplan calibrate --fit-time CASES.jsonl... [--fit-out DIR]`): feature rows of the measured
// timing cases (engine/time/case_features), NNLS coefficients (engine/time/step_time.h fit), residuals per case.
// Writes DIR/time-fit-inputs.json (the rows: what the fit sees), DIR/time-fit.json (coefficients, residuals) and
// DIR/h200-time-coefficients.tsv and DIR/h200-time-bands.tsv (what the engine embeds), and DIR/time-fit-ops.json (per case, the columns by op name:
// for people). Cases marked "holdout" are predicted, never fitted.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/time/step_time.h"

namespace memplan::cli {

struct TimeRow {
  std::string id, what;  // what: step | prefill | decode_token
  bool holdout = false;
  timing::Features x{};     // the critical path under the embedded coefficients
  timing::Timeline timeline;  // what the fit re-costs (engine/time/step_time.h)
  double measured_s = 0;
  // |a - b| / (a + b) of the two runs where the case was measured twice (observed.runs_step_time_ms: measured_s is
  // their mean); -1 with one run. Kept for the weighted fit (engine/time/step_time.h NoiseModel), studied, not adopted.
  double spread = -1;
  bool vision = false;  // a torchvision model (the step-time band's family: engine/time/time_band.h)
};

// Rows of every measured case of the files (cases with an error or no timing are skipped).
std::vector<TimeRow> time_rows(const std::vector<std::string>& files);
// Every measured case's first graph costed per op name (timing::case_op_breakdown): time-fit-ops.json, for
// calibrate/profile_compare.py (where a profiled step's kernels and the model's columns part).
nlohmann::json op_breakdown_json(const std::vector<std::string>& files);
nlohmann::json rows_to_json(const std::vector<TimeRow>& rows);
std::vector<TimeRow> rows_from_json(const nlohmann::json& j);  // time-fit-inputs.json

// The noise model studied for the fit's weights (step_time.h NoiseModel; its derivation in cli/time_fit.cpp; not
// adopted: fit_rows weighs rows 1 / measured, NOTES-time.md).
timing::NoiseModel fit_noise();
// The fit over the non-holdout rows, from fixed start values (reproducible: the same rows give the same result).
// A profiled step's kernel time in one class (calibrate/profile_classes.py: data/calibration/h200-profile-classes.tsv)
// as a fit row: the case's timeline summed over the class's columns (every other column zero) should cost it.
struct ClassAnchor {
  std::string id, cls;
  bool holdout = false;
  timing::Features features{};
  double kernel_s = 0;
};
std::vector<ClassAnchor> class_anchors(const std::vector<TimeRow>& rows, std::string_view profile_tsv);
timing::FitResult fit_rows(const std::vector<TimeRow>& rows, const std::vector<ClassAnchor>& anchors = {});
// time-fit.json: coefficients, each row's prediction and residual, summary per set (tuning / holdout).
nlohmann::json fit_report(const std::vector<TimeRow>& rows, const timing::Coefficients& c);
std::string coefficients_tsv(const timing::Coefficients& c, const std::string& source);
// h200-time-bands.tsv (engine/time/time_band.h): every row, tuning and held out, at coefficients `c`.
std::string time_bands_tsv(const std::vector<TimeRow>& rows, const timing::Coefficients& c, const std::string& source);

void run_time_fit(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out);

}  // namespace memplan::cli
