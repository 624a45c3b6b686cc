#include "cli/time_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/run_cli.h"
#include "engine/errors.h"
#include "engine/time/case_time.h"
#include "models/validation_case.h"

namespace memplan::cli {

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
// The fit's start: the rate columns at face value (efficiency 1), 2 us per kernel, 10 us of CPU per op (the
// measured dispatch of a tiny op with autograd is 8.5 us), no constants. Only the alternation's first split uses it.
timing::Coefficients start_values() {
  timing::Coefficients c;
  // gemm attn conv conv_dw bn mem mem_bwd opt kernels | cpu_ops cpu_host cpu_infer | step micro pass token
  // (the host side starts at twice the chain-measured host costs: real models' Python per module is heavier than
  // calibrate/host_overhead.py's chains, and rows start on the side of the max these values put them)
  c.c = {1, 1, 1, 1, 1, 1, 1, 1, 2e-6, 0, 2, 1e-5, 0, 0, 0, 0};
  return c;
}
}  // namespace

std::vector<TimeRow> time_rows(const std::vector<std::string>& files) {
  std::vector<TimeRow> rows;
  for (const std::string& path : files) {
    std::ifstream f(path);
    if (!f) throw InputError("--fit-time", path, "cannot be read");
    std::string line;
    while (std::getline(f, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j.contains("error") || !j.contains("measured")) continue;
      const ValidationCase c = parse_validation_case(j);
      const auto& m = j.at("measured");
      const auto feats = timing::case_timelines(c.model, c.run);
      auto push = [&](const char* what, const timing::Timeline& t, const char* key) {
        if (!m.contains(key) || !m.at(key).is_number()) return;
        rows.push_back({c.id, what, c.holdout, timing::critical_path(t, timing::h200_coefficients()), t,
                        m.at(key).get<double>() * 1e-3});
      };
      if (c.run.mode == Mode::training) {
        push("step", feats[0], "step_time_ms");
      } else {
        push("prefill", feats[0], "prefill_ms");
        if (feats.size() > 1) push("decode_token", feats[1], "decode_ms_per_token");
      }
    }
  }
  return rows;
}

nlohmann::json rows_to_json(const std::vector<TimeRow>& rows) {
  nlohmann::json cols = nlohmann::json::array();
  for (auto n : timing::kColNames) cols.push_back(std::string(n));
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    // the timeline's chunks, each the columns' values; sparse: [column, value] pairs (most chunks touch few columns)
    nlohmann::json tl = nlohmann::json::array();
    for (const auto& ch : r.timeline) {
      nlohmann::json c = nlohmann::json::array();
      for (size_t j = 0; j < ch.size(); ++j)
        if (ch[j] != 0) c.push_back({j, ch[j]});
      tl.push_back(c);
    }
    out.push_back({{"id", r.id}, {"what", r.what}, {"holdout", r.holdout}, {"measured_s", r.measured_s},
                   {"features", std::vector<double>(r.x.begin(), r.x.end())}, {"timeline", tl}});
  }
  return {{"schema", "memplan-time-fit-inputs/2"},
          {"columns", cols},
          {"note", "timeline: the step's chunks in issue order, each [column index, value] pairs: seconds at the measured "
                   "rates and tables (gemm attn conv conv_dw bn mem mem_bwd opt cpu_host), counts (kernels cpu_ops cpu_infer), "
                   "indicators (step micro pass token); features: its critical path under the embedded coefficients; "
                   "engine/time/step_time.h"},
          {"rows", out}};
}

std::vector<TimeRow> rows_from_json(const nlohmann::json& j) {
  std::vector<TimeRow> rows;
  for (const auto& r : j.at("rows")) {
    TimeRow t;
    t.id = r.at("id").get<std::string>();
    t.what = r.at("what").get<std::string>();
    t.holdout = r.at("holdout").get<bool>();
    t.measured_s = r.at("measured_s").get<double>();
    const auto v = r.at("features").get<std::vector<double>>();
    if (v.size() != t.x.size()) throw InputError("time-fit-inputs.features", std::to_string(v.size()), "wrong length");
    std::copy(v.begin(), v.end(), t.x.begin());
    for (const auto& ch : r.at("timeline")) {
      timing::Features f{};
      for (const auto& p : ch) {
        const size_t j = p.at(0).get<size_t>();
        if (j >= f.size()) throw InputError("time-fit-inputs.timeline", std::to_string(j), "names no column");
        f[j] = p.at(1).get<double>();
      }
      t.timeline.push_back(f);
    }
    rows.push_back(t);
  }
  return rows;
}

timing::FitResult fit_rows(const std::vector<TimeRow>& rows) {
  std::vector<timing::Timeline> x;
  std::vector<double> y;
  for (const auto& r : rows)
    if (!r.holdout) x.push_back(r.timeline), y.push_back(r.measured_s);
  // Convolutions and batch norm are timed per shape (engine/time/kernel_tables.h): measured directly, not fitted
  // (their columns are nearly collinear in the conv nets, where a free fit trades one against the other).
  std::array<bool, timing::kCols> fixed{};
  fixed[timing::kConv] = fixed[timing::kConvDw] = fixed[timing::kBn] = true;
  return timing::fit(x, y, start_values(), fixed);
}

nlohmann::json fit_report(const std::vector<TimeRow>& rows, const timing::Coefficients& c) {
  nlohmann::json coef = nlohmann::json::object();
  for (size_t j = 0; j < timing::kColNames.size(); ++j) coef[std::string(timing::kColNames[j])] = c.c[j];
  nlohmann::json out = nlohmann::json::array();
  std::vector<double> tune, hold;
  for (const auto& r : rows) {
    const timing::TimeSplit s = timing::predict(timing::critical_path(r.timeline, c), c);
    const double err = 100.0 * (s.total_s - r.measured_s) / r.measured_s;
    (r.holdout ? hold : tune).push_back(std::fabs(err));
    out.push_back({{"id", r.id}, {"what", r.what}, {"holdout", r.holdout}, {"measured_ms", r.measured_s * 1e3},
                   {"predicted_ms", s.total_s * 1e3}, {"error_pct", err}, {"cpu_bound", s.cpu_bound}});
  }
  auto summ = [](const std::vector<double>& v) {
    return nlohmann::json{{"rows", v.size()}, {"median_abs_error_pct", median(v)},
                          {"max_abs_error_pct", v.empty() ? 0.0 : *std::max_element(v.begin(), v.end())}};
  };
  return {{"schema", "memplan-time-fit/1"}, {"coefficients", coef}, {"rows", out},
          {"summary", {{"tuning", summ(tune)}, {"holdout", summ(hold)}}}};
}

std::string coefficients_tsv(const timing::Coefficients& c, const std::string& source) {
  std::ostringstream o;
  o << "# memplan step-time coefficients (engine/time/step_time.h), fitted by memplan calibrate --fit-time to "
    << source << "\n# units: gemm .. opt dimensionless (x the measured-rate seconds), kernels and cpu_ops seconds per "
       "kernel / op, step micro pass token seconds\n";
  char buf[96];
  for (size_t j = 0; j < timing::kColNames.size(); ++j) {
    std::snprintf(buf, sizeof buf, "coef %s %.9g\n", std::string(timing::kColNames[j]).c_str(), c.c[j]);
    o << buf;
  }
  return o.str();
}

void run_time_fit(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out) {
  const std::vector<TimeRow> rows = time_rows(files);
  if (rows.empty()) throw InputError("--fit-time", files.empty() ? "" : files[0], "holds no timed cases");
  const nlohmann::json inputs = rows_to_json(rows);
  // the fit reads the rows back from their JSON text, as the reproducibility test does
  const std::vector<TimeRow> again = rows_from_json(nlohmann::json::parse(inputs.dump()));
  const timing::FitResult f = fit_rows(again);
  const nlohmann::json rep = fit_report(again, f.coef);
  std::string src;
  for (const auto& p : files) src += (src.empty() ? "" : " ") + p.substr(p.find_last_of('/') + 1);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream o(out_dir + "/" + name);
    if (!o) throw InputError("--fit-out", out_dir, "cannot be written");
    o << text;
  };
  write("time-fit-inputs.json", inputs.dump(1) + "\n");
  write("time-fit.json", rep.dump(1) + "\n");
  write("h200-time-coefficients.tsv", coefficients_tsv(f.coef, src));
  char line[200];
  for (const auto& r : rep.at("rows")) {
    std::snprintf(line, sizeof line, "%-44s %-13s %10.2f %10.2f %+7.2f%s%s\n", r.at("id").get<std::string>().c_str(),
                  r.at("what").get<std::string>().c_str(), r.at("predicted_ms").get<double>(),
                  r.at("measured_ms").get<double>(), r.at("error_pct").get<double>(),
                  r.at("holdout").get<bool>() ? "  holdout" : "", r.at("cpu_bound").get<bool>() ? "  cpu" : "");
    out << line;
  }
  for (size_t j = 0; j < timing::kColNames.size(); ++j) out << "coef " << timing::kColNames[j] << " " << f.coef.c[j] << "\n";
  out << "tuning: " << rep["summary"]["tuning"].dump() << "\nholdout: " << rep["summary"]["holdout"].dump() << "\n";
}

}  // namespace memplan::cli
