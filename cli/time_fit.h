// The step-time fit (`memplan calibrate --fit-time CASES.jsonl... [--fit-out DIR]`): feature rows of the measured
// timing cases (engine/time/case_features), NNLS coefficients (engine/time/step_time.h fit), residuals per case.
// Writes DIR/time-fit-inputs.json (the rows: what the fit sees), DIR/time-fit.json (coefficients, residuals) and
// DIR/h200-time-coefficients.tsv and DIR/h200-time-bands.tsv (what the engine embeds), and DIR/time-fit-ops.json (per case, the columns by op name:
// for people). Every case is fitted (a held-out case once its blind prediction is on record); each is also
// predicted by the fit without its set (leave-one-set-out), the out-of-sample error the bands and tests read.
#pragma once
#include <ostream>
#include <string>
#include <string_view>
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

// A profiled step's kernel time in one class (calibrate/profile_classes.py -> data/calibration/
// h200-profile-classes.tsv) as a fit row of its own: the case's columns of that class, summed over its whole
// timeline (every other column zero), should cost what the profile's kernels of the class took. Step times alone
// let a too-slow GEMM rate and too-fast elementwise and attention rates cancel (the committed fit of the fourth
// round had gemm 1.14, attn 0.56 where the profiles said 0.87 and 1.1: NOTES-time.md, fifth round).
struct ClassAnchor {
  std::string id, cls;  // cls: the profile's class (matmul, attn, elementwise) or idle
  bool holdout = false;
  timing::Features features{};
  double kernel_s = 0;
};
// Anchors of the rows' cases found in the table (profile CASE_ID CLASS KERNEL_MS lines): matmul -> gemm where the
// model has no convolutions, attn -> attn, elementwise -> mem + mem_bwd for transformers, and the GPU's idle time
// (wall - busy) -> kernels where the profiled step was GPU-bound.
std::vector<ClassAnchor> class_anchors(const std::vector<TimeRow>& rows, std::string_view profile_tsv);

// Rows of every measured case of the files (cases with an error or no timing are skipped).
std::vector<TimeRow> time_rows(const std::vector<std::string>& files);
// Every measured case's first graph costed per op name (timing::case_op_breakdown): time-fit-ops.json, for
// calibrate/profile_compare.py (where a profiled step's kernels and the model's columns part).
nlohmann::json op_breakdown_json(const std::vector<std::string>& files);
nlohmann::json rows_to_json(const std::vector<TimeRow>& rows, const std::vector<ClassAnchor>& anchors);
std::vector<TimeRow> rows_from_json(const nlohmann::json& j);  // time-fit-inputs.json
std::vector<ClassAnchor> anchors_from_json(const nlohmann::json& j);

// The noise model studied for the fit's weights (step_time.h NoiseModel; its derivation in cli/time_fit.cpp; not
// adopted: fit_rows weighs rows 1 / measured, NOTES-time.md).
timing::NoiseModel fit_noise();
// A timing row's set: its id up to the first '-' ("t", "hv4", "ht24", "f28" ...), the rows written and timed
// together (calibrate/cases/make_timing*.py, the family sets' timing rows).
std::string time_set_key(std::string_view id);
// The fit over every row and anchor (held-out rows too, once their blind predictions are on record in
// data/validation/predictions/), or over all but one set's (`leave_out_set`), from fixed start values
// (reproducible: the same rows give the same result).
timing::FitResult fit_rows(const std::vector<TimeRow>& rows, const std::vector<ClassAnchor>& anchors,
                           std::string_view leave_out_set = "");
// Leave-one-set-out: each row predicted (seconds) by the fit over every other set's rows and anchors: the model's
// error on a set it was not fitted to, as a new set of cases will see it.
std::vector<double> cross_validated_s(const std::vector<TimeRow>& rows, const std::vector<ClassAnchor>& anchors);
// time-fit.json: coefficients, each row's fitted and cross-validated prediction and residual, summaries (fitted,
// cross-validated, cross-validated over the rows that were held out when measured).
nlohmann::json fit_report(const std::vector<TimeRow>& rows, const timing::Coefficients& c,
                          const std::vector<double>& cv_s);
std::string coefficients_tsv(const timing::Coefficients& c, const std::string& source);
// h200-time-bands.tsv (engine/time/time_band.h): every row's cross-validated error (`cv_s`, cross_validated_s),
// classed host- or GPU-bound at coefficients `c`.
std::string time_bands_tsv(const std::vector<TimeRow>& rows, const timing::Coefficients& c,
                           const std::vector<double>& cv_s, const std::string& source);

// profiles_path: the class table the fit is anchored to ("": no anchors).
void run_time_fit(const std::vector<std::string>& files, const std::string& out_dir, const std::string& profiles_path,
                  std::ostream& out);

}  // namespace memplan::cli
