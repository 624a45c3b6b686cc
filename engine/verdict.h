// The fit verdict with an honest margin: FITS, DOES NOT FIT or BORDERLINE.
//
// Stages: (1) a configuration is reduced to the features that decide how wrong memplan has been on it
// (VerdictFeatures: training or inference, transformer or vision, precision group, one distinguishing feature);
// (2) the features name comparable-case classes, finest first (band_class_keys); (3) the error-band table,
// generated from the measured validation corpus (`memplan validate --error-bands`, scripts/make-error-bands.sh,
// data/validation/error-bands.tsv, embedded at build time), gives for the finest class holding enough measured
// cases the largest under- and over-prediction of peak reserved memory seen there; (4) judge() turns the
// predicted device total, the budget and the band into the margin and the verdict.
//
// Contract: a verdict is BORDERLINE when the margin lies inside the band on its side: a predicted fit whose
// margin is at most the under-prediction band (the real run may need that much more), or a predicted OOM whose
// shortfall is at most the over-prediction band (the real run may need that much less). Otherwise it is the
// allocator replay's own answer. `fits` (the replay's bool) is never changed by the band.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/spec.h"
#include "engine/run_config.h"

namespace memplan {

enum class VerdictKind : uint8_t { fits, does_not_fit, borderline };
std::string_view verdict_name(VerdictKind v);  // "fits" | "does_not_fit" | "borderline" (the JSON values)
std::string_view verdict_title(VerdictKind v);  // "FITS" | "DOES NOT FIT" | "BORDERLINE" (the text reports)

// What separates configurations memplan has mispredicted by different amounts (data/validation/NOTES.md: fp32
// math-backend attention, T5 checkpointing, cuDNN workspaces in vision, generate()'s caching history ...).
struct VerdictFeatures {
  Mode mode = Mode::training;
  bool vision = false;        // torchvision (cuDNN convolution workspaces) vs language models / native graphs
  Precision precision = Precision::fp32;
  // At most one feature names the finest class, in this priority: one rank of a distributed step (engine/dist/),
  // LoRA / QLoRA, checkpointing, gradient accumulation, expandable segments, generation (inference with
  // generate_tokens > 0); none: "plain".
  bool distributed = false;
  bool lora = false, checkpointing = false, accumulation = false, expandable_segments = false, generation = false;
  // The model's family (model_family, engine/arch/builders.h) and whether it has no measured case yet. A family
  // nobody has measured is replayed by a builder written from its modeling file alone, and such first predictions
  // have erred far more than any measured family's (data/validation/NOTES.md, "verdict bands"): its band comes
  // from the "new/" classes, built from the first predictions of families that were later measured.
  std::string family;
  bool new_family = false;
};
// The features of a configuration; new_family from the built-in table's family rows (family_measured).
VerdictFeatures verdict_features(const ModelSpec& m, const RunConfig& c, bool expandable_segments);

// Class keys from the finest to the coarsest, e.g. {"training/transformer/amp/ckpt", "training/transformer/any/ckpt",
// "training/transformer/amp", "training/transformer", "training", "all"} (no "any" level for "plain"). Precision groups: fp32, amp (amp_bf16, amp_fp16), half (bf16,
// fp16); features: dist, lora, ckpt, accum, expseg, gen, plain. A new family's keys are {"new/<mode>/<kind>/<precision>",
// "new/<mode>/<kind>", "new/<mode>", "new", "all"}: what separates its errors is the builder's first reading of
// the modeling file, not the run's features.
std::vector<std::string> band_class_keys(const VerdictFeatures& f);

// One class of the table: over its measured cases, the largest under-prediction and the largest
// over-prediction of peak reserved, each as a fraction of the predicted figure (>= 0; 0 when no case erred
// that way), and the case that showed it.
struct ErrorBand {
  std::string key;
  int64_t cases = 0;
  double under_fraction = 0, over_fraction = 0;
  std::string worst_under_case, worst_over_case;
  // The central 90 % of the class's errors (informative: the verdict reads the largest ones above): 5 % of its
  // cases erred by more than under90_fraction on the under side, 5 % by more than over90_fraction on the over
  // side (0 where that end of the interval is on the other side). A legacy 6-column table gives the largest ones.
  double under90_fraction = 0, over90_fraction = 0;
};
// Sets b's central 90 % from its cases' errors, each the fraction by which the run needed more than predicted
// (negative: less): the 95th percentile on the under side, the 5th on the over side (nearest rank).
void set_central90(ErrorBand& b, std::vector<double> run_excess);


struct ErrorBandTable {
  std::vector<ErrorBand> classes;
  const ErrorBand* find(std::string_view key) const;
};
// Besides the classes band_class_keys names, a table holds one row "family/<model_family>" per family with
// measured cases (their current errors; informative, never a band). A family is measured when its row has cases;
// a table without any family row (hand-made, or older than these rows) counts every family as measured.
bool family_measured(const ErrorBandTable& t, std::string_view family);
// One measured case's error as one class sees it: the fraction by which the run needed more than predicted
// (negative: less). The memory bands (build_error_bands) and the step-time bands (engine/time/time_band.h) both
// reduce their samples to these.
struct ClassError {
  std::string key, id;
  double run_excess = 0;
};
// Per class: its case count, largest under- and over-prediction with the case that showed each (the first such
// case in input order), and its central 90 % (set_central90); classes sorted by key.
ErrorBandTable tabulate_errors(const std::vector<ClassError>& errors);

// The table's text format (tab-separated; '#' lines are comments): one header line
// `class cases under_ppm over_ppm worst_under worst_over under90_ppm over90_ppm`, then one line per class with the
// fractions in parts per million (a table with the first six columns only is read too, its central 90 % the
// largest errors). Throws InputError naming the line for anything else.
// `what` names the table in errors (the step-time bands share the format: engine/time/time_band.h).
ErrorBandTable parse_error_bands(std::string_view text, std::string_view what = "error-bands");
std::string error_bands_text(const ErrorBandTable& t);  // the inverse (the generator writes with it)
// The table compiled in from data/validation/error-bands.tsv.
const ErrorBandTable& builtin_error_bands();

// A class answers for a configuration when it holds at least this many measured cases: fewer, and its largest
// error says too little, so the next coarser class answers (the "all" class always does).
inline constexpr int64_t kMinBandCases = 8;
// Floors under every band. The table's errors are those of the current model on cases it was partly tuned on,
// and a class's largest error is a sample maximum, so no band is narrower than 0.5 % of the predicted reserved
// memory plus one 20 MiB large-pool segment (the caching allocator's reserved figure moves in whole segments:
// one block placed differently costs a segment; MECHANICS §1).
inline constexpr double kMinBandFraction = 0.005;
inline constexpr int64_t kBandFloorBytes = int64_t{20} << 20;

// One measured case for the table: its features, the predicted and the measured peak reserved (MiB, as the
// validation format writes them; the predicted figure under the case's cap when it has one and fits).
struct BandSample {
  std::string id;
  VerdictFeatures features;
  double predicted_mib = 0, measured_mib = 0;
};
// Every class key of every sample (band_class_keys) with its case count and largest errors, sorted by key, and
// the row "family/<family>" of every sample that is not a new family's. Samples with a non-positive predicted or
// measured figure are skipped.
ErrorBandTable build_error_bands(const std::vector<BandSample>& samples);

// The class answering for `f`: the finest key of band_class_keys(f) with at least kMinBandCases cases. A table
// without any answering class (an empty or hand-made one) gives a class "none" of zero fractions: the floors.
ErrorBand band_for(const ErrorBandTable& t, const VerdictFeatures& f);

struct VerdictInput {
  int64_t budget_bytes = 0;        // the device's memory or the cap (> 0)
  int64_t device_total_bytes = 0;  // predicted: peak reserved at the run's peak (under the cap when it fits) +
                                   // non-PyTorch memory counted against the budget
  int64_t reserved_bytes = 0;      // the predicted peak reserved the band's fractions scale (the uncapped one)
  bool allocator_fits = true;      // the caching allocator replayed under the budget did not OOM
};

struct Verdict {
  VerdictKind kind = VerdictKind::fits;
  bool fits = true;               // the allocator's answer (what `fits` reports), untouched by the band
  int64_t margin_bytes = 0;       // budget - predicted device total; negative: over
  int64_t band_bytes = 0;         // the band on the margin's side: under-prediction when margin >= 0, else over
  int64_t band_under_bytes = 0;   // how much more the run may need than predicted
  int64_t band_over_bytes = 0;    // how much less
  ErrorBand cls;                  // the class the band came from
};

// fits && margin > band_under: FITS; !fits && -margin > band_over: DOES NOT FIT; otherwise BORDERLINE (also a
// replay that fits with a negative margin, which the CLI's device totals never produce). Bands: each side's
// fraction (at least kMinBandFraction) times reserved_bytes, rounded up, plus kBandFloorBytes.
Verdict judge(const VerdictInput& in, const ErrorBand& band);

}  // namespace memplan
