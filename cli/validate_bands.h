// `memplan validate`'s side of the verdict (engine/verdict.h): a capped case's verdict against its cap, and the
// error-band table (`--error-bands`) built from the measured cases' peak reserved errors.
#pragma once
#include <string>
#include <vector>

#include "engine/estimate.h"
#include "engine/verdict.h"
#include "models/validation_case.h"

namespace memplan::cli {

// A capped case's verdict: the budget is the cap (set_per_process_memory_fraction limits what PyTorch reserves,
// so no non-PyTorch memory counts against it), the device total the run's peak reserved under the cap.
Verdict case_verdict(const ValidationCase& c, const Estimate& e);

// A measured case that ran (no OOM) with a peak reserved figure and reached the steady state (a training run
// GradScaler let step before its last step: models/validation_case.h measured_steady_state): its sample for the
// table (the prediction under its cap when it has one). False otherwise.
bool band_sample(const ValidationCase& c, const Estimate& e, BandSample& out);

// The table over `samples` plus, for each file of `prior_paths` (a `validate --json` document written before the
// cases were measured: data/validation/predictions/), the errors those earlier predictions had on the cases of
// `cases` they name (id "<case>@<file stem>"): how wrong memplan was on configurations it had not seen.
// The text: comment lines saying how it was produced, then error_bands_text().
std::string error_bands_document(const std::vector<BandSample>& samples, const std::vector<const ValidationCase*>& cases,
                                 const std::vector<std::string>& prior_paths, const std::string& sources);

}  // namespace memplan::cli
