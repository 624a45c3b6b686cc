#include "engine/verdict.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/text_rows.h"

namespace memplan {

namespace error_bands_embedded {
std::string_view table();  // generated from data/validation/error-bands.tsv (engine/CMakeLists.txt)
}

std::string_view verdict_name(VerdictKind v) {
  switch (v) {
    case VerdictKind::fits: return "fits";
    case VerdictKind::does_not_fit: return "does_not_fit";
    case VerdictKind::borderline: return "borderline";
  }
  return "borderline";
}

std::string_view verdict_title(VerdictKind v) {
  switch (v) {
    case VerdictKind::fits: return "FITS";
    case VerdictKind::does_not_fit: return "DOES NOT FIT";
    case VerdictKind::borderline: return "BORDERLINE";
  }
  return "BORDERLINE";
}

VerdictFeatures verdict_features(const ModelSpec& m, const RunConfig& c, bool expandable_segments) {
  VerdictFeatures f;
  f.mode = c.mode;
  f.vision = m.kind == ModelSpec::Kind::vision;
  f.precision = c.precision;
  f.distributed = c.distributed.enabled();
  f.lora = c.lora.enabled() || c.quant.enabled();
  f.checkpointing = c.mode == Mode::training && c.grad_checkpointing;
  f.accumulation = c.mode == Mode::training && c.grad_accum_steps > 1;
  f.expandable_segments = expandable_segments;
  f.generation = c.mode == Mode::inference && c.generate_tokens > 0;
  f.family = model_family(m);
  f.new_family = !family_measured(builtin_error_bands(), f.family);
  return f;
}

std::vector<std::string> band_class_keys(const VerdictFeatures& f) {
  const std::string mode = f.mode == Mode::training ? "training" : "inference";
  const std::string kind = f.vision ? "vision" : "transformer";
  std::string prec = "fp32";
  if (f.precision == Precision::amp_bf16 || f.precision == Precision::amp_fp16) prec = "amp";
  if (f.precision == Precision::bf16 || f.precision == Precision::fp16) prec = "half";
  std::string feat = "plain";
  if (f.distributed) feat = "dist";
  else if (f.lora) feat = "lora";
  else if (f.checkpointing) feat = "ckpt";
  else if (f.accumulation) feat = "accum";
  else if (f.expandable_segments) feat = "expseg";
  else if (f.generation) feat = "gen";
  const std::string l1 = mode + "/" + kind, l2 = l1 + "/" + prec;
  if (f.new_family) return {"new/" + l2, "new/" + l1, "new/" + mode, "new", "all"};
  // A feature measured in few cases of this precision falls back to the same feature over all precisions
  // before the precision's mix of features (whose worst case may be another feature's miss).
  if (feat == "plain") return {l2 + "/" + feat, l2, l1, mode, "all"};
  // A distributed run's errors (tensor parallelism's collective outputs) are not a single-GPU run's: its cases
  // answer for distributed runs only, falling back to all distributed runs of the mode, never to the single-GPU
  // classes (which they would widen: TP's -10 % would become every amp run's band).
  if (feat == "dist") return {l2 + "/dist", l1 + "/any/dist", mode + "/dist", "all"};
  return {l2 + "/" + feat, l1 + "/any/" + feat, l2, l1, mode, "all"};
}

const ErrorBand* ErrorBandTable::find(std::string_view key) const {
  const auto it = std::find_if(classes.begin(), classes.end(), [&](const ErrorBand& b) { return b.key == key; });
  return it == classes.end() ? nullptr : &*it;
}

bool family_measured(const ErrorBandTable& t, std::string_view family) {
  constexpr std::string_view kPrefix = "family/";
  bool any_family_row = false;
  for (const ErrorBand& b : t.classes) {
    if (b.key.size() < kPrefix.size() || std::string_view(b.key).substr(0, kPrefix.size()) != kPrefix) continue;
    any_family_row = true;
    if (std::string_view(b.key).substr(kPrefix.size()) == family) return b.cases > 0;
  }
  return !any_family_row;
}

namespace {
constexpr std::string_view kHeader6 = "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over";
constexpr std::string_view kHeader = "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\tunder90_ppm\tover90_ppm";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == '\t') {
      out.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

int64_t parse_count(const std::string& s, const std::string& field) {
  int64_t v = -1;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // ppm fractions above 10^6 (100 %) are possible in principle; 10^9 bounds them far from overflow.
  if (ec != std::errc() || p != s.data() + s.size() || v < 0 || v > 1'000'000'000)
    throw InputError(field, s, "must be a non-negative integer up to 10^9");
  return v;
}
}  // namespace

ErrorBandTable parse_error_bands(std::string_view text, std::string_view what) {
  ErrorBandTable t;
  bool header = false;
  size_t ncols = 0;
  for_each_row(text, [&](int64_t lineno, const std::string& line) {
    const std::string where = std::string(what) + " line " + std::to_string(lineno);
    if (!header) {
      if (line != kHeader && line != kHeader6)
        throw InputError(where, line, "must be the header: " + std::string(kHeader));
      header = true;
      ncols = line == kHeader ? 8 : 6;
      return;
    }
    const auto cols = split_tabs(line);
    if (cols.size() != ncols)
      throw InputError(where, line, "must have " + std::to_string(ncols) + " tab-separated columns");
    ErrorBand b;
    b.key = cols[0];
    if (b.key.empty()) throw InputError(where + " class", b.key, "must not be empty");
    if (t.find(b.key)) throw InputError(where + " class", b.key, "appears twice");
    b.cases = parse_count(cols[1], where + " cases");
    b.under_fraction = static_cast<double>(parse_count(cols[2], where + " under_ppm")) * 1e-6;
    b.over_fraction = static_cast<double>(parse_count(cols[3], where + " over_ppm")) * 1e-6;
    b.worst_under_case = cols[4] == "-" ? "" : cols[4];
    b.worst_over_case = cols[5] == "-" ? "" : cols[5];
    b.under90_fraction = ncols == 8 ? static_cast<double>(parse_count(cols[6], where + " under90_ppm")) * 1e-6 : b.under_fraction;
    b.over90_fraction = ncols == 8 ? static_cast<double>(parse_count(cols[7], where + " over90_ppm")) * 1e-6 : b.over_fraction;
    t.classes.push_back(std::move(b));
  });
  if (!header) throw InputError(std::string(what), "(no header)", "holds no table");
  return t;
}

std::string error_bands_text(const ErrorBandTable& t) {
  std::ostringstream o;
  o << kHeader << "\n";
  for (const ErrorBand& b : t.classes)
    o << b.key << '\t' << b.cases << '\t' << std::llround(b.under_fraction * 1e6) << '\t'
      << std::llround(b.over_fraction * 1e6) << '\t' << (b.worst_under_case.empty() ? "-" : b.worst_under_case)
      << '\t' << (b.worst_over_case.empty() ? "-" : b.worst_over_case) << '\t' << std::llround(b.under90_fraction * 1e6)
      << '\t' << std::llround(b.over90_fraction * 1e6) << "\n";
  return o.str();
}

const ErrorBandTable& builtin_error_bands() {
  static const ErrorBandTable t = parse_error_bands(error_bands_embedded::table());
  return t;
}

ErrorBand band_for(const ErrorBandTable& t, const VerdictFeatures& f) {
  for (const std::string& key : band_class_keys(f))
    if (const ErrorBand* b = t.find(key); b && b->cases >= kMinBandCases) return *b;
  ErrorBand none;
  none.key = "none";
  return none;
}

void set_central90(ErrorBand& b, std::vector<double> run_excess) {
  b.under90_fraction = b.over90_fraction = 0;
  if (run_excess.empty()) return;
  std::sort(run_excess.begin(), run_excess.end());
  const auto rank = [&](double q) {  // nearest rank: the smallest value with at least q of the cases at or below it
    const size_t n = run_excess.size();
    const size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return run_excess[std::min(n, std::max<size_t>(k, 1)) - 1];
  };
  b.under90_fraction = std::max(0.0, rank(0.95));
  b.over90_fraction = std::max(0.0, -rank(0.05));
}

ErrorBandTable tabulate_errors(const std::vector<ClassError>& errors) {
  ErrorBandTable t;
  std::vector<std::vector<double>> excess;  // per class, in t.classes' order
  for (const ClassError& e : errors) {
    size_t i = 0;
    while (i < t.classes.size() && t.classes[i].key != e.key) ++i;
    if (i == t.classes.size()) t.classes.push_back(ErrorBand{e.key, 0, 0, 0, "", "", 0, 0}), excess.emplace_back();
    ErrorBand& b = t.classes[i];
    ++b.cases;
    excess[i].push_back(e.run_excess);
    if (e.run_excess > b.under_fraction) b.under_fraction = e.run_excess, b.worst_under_case = e.id;
    if (-e.run_excess > b.over_fraction) b.over_fraction = -e.run_excess, b.worst_over_case = e.id;
  }
  for (size_t i = 0; i < t.classes.size(); ++i) set_central90(t.classes[i], std::move(excess[i]));
  std::sort(t.classes.begin(), t.classes.end(), [](const ErrorBand& a, const ErrorBand& b) { return a.key < b.key; });
  return t;
}

ErrorBandTable build_error_bands(const std::vector<BandSample>& samples) {
  std::vector<ClassError> errors;
  for (const BandSample& s : samples) {
    if (!(s.predicted_mib > 0) || !(s.measured_mib > 0)) continue;
    // Relative to the prediction: the band multiplies predicted figures.
    const double excess = (s.measured_mib - s.predicted_mib) / s.predicted_mib;  // > 0: under-predicted
    for (const std::string& key : band_class_keys(s.features)) errors.push_back({key, s.id, excess});
    if (!s.features.new_family && !s.features.family.empty()) errors.push_back({"family/" + s.features.family, s.id, excess});
  }
  return tabulate_errors(errors);
}

namespace {
int64_t side_band(double fraction, int64_t reserved_bytes) {
  const double f = std::max(fraction, kMinBandFraction);
  const double bytes = std::ceil(f * static_cast<double>(std::max<int64_t>(0, reserved_bytes)));
  // reserved_bytes is bounded by the engine's limits (engine/limits.h), so f * reserved is far below 2^62.
  return checked_add(static_cast<int64_t>(bytes), kBandFloorBytes, "error band bytes");
}
}  // namespace

Verdict judge(const VerdictInput& in, const ErrorBand& band) {
  Verdict v;
  v.cls = band;
  v.fits = in.allocator_fits && in.device_total_bytes <= in.budget_bytes;
  v.margin_bytes = checked_sub(in.budget_bytes, in.device_total_bytes, "margin bytes");
  v.band_under_bytes = side_band(band.under_fraction, in.reserved_bytes);
  v.band_over_bytes = side_band(band.over_fraction, in.reserved_bytes);
  v.band_bytes = v.margin_bytes >= 0 ? v.band_under_bytes : v.band_over_bytes;
  if (v.fits && v.margin_bytes > v.band_under_bytes) v.kind = VerdictKind::fits;
  else if (!v.fits && -v.margin_bytes > v.band_over_bytes) v.kind = VerdictKind::does_not_fit;
  else v.kind = VerdictKind::borderline;
  return v;
}

}  // namespace memplan
