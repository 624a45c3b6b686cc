#include "cli/validate_bands.h"

#include <map>
#include <set>
#include <sstream>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "models/json_input.h"

namespace memplan::cli {

namespace {
int64_t cap_bytes(const ValidationCase& c) { return static_cast<int64_t>(*c.memory_cap_gib * static_cast<double>(kGiB)); }

std::string stem(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (const size_t dot = s.rfind('.'); dot != std::string::npos && dot > 0) s.erase(dot);
  return s;
}
// A measured run the bands may count: it ran (no OOM), has a reserved figure, and reached the steady state memplan
// predicts (a run whose optimizer GradScaler never let step before its last step had no optimizer state in any
// forward or backward: CASE-FORMAT.md measured.scaler_skipped_steps; its error is the data's, not the model's).
bool counts_for_bands(const ValidationCase& c) {
  if (!c.measured || !c.measured->peak_reserved_mib || (c.measured->oom && *c.measured->oom)) return false;
  return !case_short_of_steady_state(c);
}
}  // namespace

Verdict case_verdict(const ValidationCase& c, const Estimate& e) {
  VerdictInput in;
  in.budget_bytes = cap_bytes(c);
  in.device_total_bytes = e.run_peak_reserved_bytes();
  in.reserved_bytes = e.allocator.peak_reserved_bytes;
  in.allocator_fits = e.fits();
  return judge(in, band_for(builtin_error_bands(), verdict_features(c.model, c.run, c.expandable_segments)));
}

bool band_sample(const ValidationCase& c, const Estimate& e, BandSample& out) {
  if (!counts_for_bands(c)) return false;
  out.id = c.id;
  out.features = verdict_features(c.model, c.run, c.expandable_segments);
  out.features.new_family = false;  // a measured case's family is measured: its current errors are the family's
  out.predicted_mib = static_cast<double>(e.run_peak_reserved_bytes()) / static_cast<double>(kMiB);
  out.measured_mib = *c.measured->peak_reserved_mib;
  return true;
}

std::string error_bands_document(const std::vector<BandSample>& samples, const std::vector<const ValidationCase*>& cases,
                                 const std::vector<std::string>& prior_paths, const std::string& sources) {
  std::vector<BandSample> all = samples;
  std::map<std::string, const ValidationCase*> by_id;
  for (const ValidationCase* c : cases) by_id.emplace(c->id, c);
  size_t prior_n = 0;
  for (const std::string& path : prior_paths) {
    const nlohmann::json doc = parse_json_input(read_input_file(path, "--prior"), "--prior", path);
    if (!doc.is_object() || !doc.contains("cases") || !doc["cases"].is_array())
      throw InputError("--prior", path, "must be a `memplan validate --json` document (an object with cases[])");
    // `new_families`: the families this file predicted before any case of theirs was measured (their builders
    // written from the modeling file alone): its rows of those families are samples of the "new/" classes.
    std::set<std::string> new_families;
    if (doc.contains("new_families")) {
      const nlohmann::json& nf = doc["new_families"];
      if (!nf.is_array()) throw InputError("--prior " + path + " new_families", dump_short(nf, 40), "must be an array of family names");
      for (const auto& n : nf) {
        if (!n.is_string() || n.get<std::string>().empty())
          throw InputError("--prior " + path + " new_families", dump_short(n, 40), "must be a family name (memplan's model_family)");
        new_families.insert(n.get<std::string>());
      }
    }
    std::set<std::string> file_families;  // the families of the file's rows that are in the corpus
    for (const auto& row : doc["cases"]) {
      if (!row.is_object() || !row.contains("id") || !row["id"].is_string() || !row.contains("predicted")) continue;
      const auto it = by_id.find(row["id"].get<std::string>());
      if (it == by_id.end()) continue;
      const ValidationCase& c = *it->second;
      file_families.insert(model_family(c.model));
      if (!counts_for_bands(c)) continue;
      const nlohmann::json& p = row["predicted"];
      // Under a cap the measured figure is the capped one: compare it with the earlier capped prediction only.
      const nlohmann::json* v = nullptr;
      if (c.memory_cap_gib) {
        if (p.contains("capped") && p["capped"].is_object() && p["capped"].value("oom", true) == false)
          v = &p["capped"]["peak_reserved_mib"];
      } else if (p.contains("peak_reserved_mib")) {
        v = &p["peak_reserved_mib"];
      }
      if (!v || !v->is_number()) continue;
      BandSample s;
      s.id = c.id + "@" + stem(path);
      s.features = verdict_features(c.model, c.run, c.expandable_segments);
      s.features.new_family = new_families.count(s.features.family) > 0;
      s.predicted_mib = v->get<double>();
      s.measured_mib = *c.measured->peak_reserved_mib;
      all.push_back(std::move(s));
      ++prior_n;
    }
    // A name no row of the file resolves to is a typo, unless none of the file's rows is measured yet.
    for (const std::string& n : new_families)
      if (!file_families.empty() && !file_families.count(n))
        throw InputError("--prior " + path + " new_families", n, "names no family of the file's measured rows");
  }
  std::ostringstream o;
  o << "# Error bands of memplan's fit verdict (engine/verdict.h): per class of comparable configurations, the\n"
    << "# largest under- and over-prediction of peak reserved memory over the measured cases that ran (no OOM),\n"
    << "# as parts per million of the predicted figure, and the case that showed it.\n"
    << "# Generated by scripts/make-error-bands.sh (memplan validate --error-bands); do not edit by hand.\n"
    << "# Sources: " << sources << "\n"
    << "# " << samples.size() << " current predictions";
  if (!prior_paths.empty()) o << " + " << prior_n << " earlier predictions made before measuring (id@file)";
  o << ".\n" << error_bands_text(build_error_bands(all));
  return o.str();
}

}  // namespace memplan::cli
