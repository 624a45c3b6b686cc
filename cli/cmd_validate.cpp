// `memplan validate FILE.jsonl [--json]`: predicted vs measured for every case of the validation format.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/report.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/arch/builders.h"
#include "engine/estimate.h"
#include "engine/memory_tracker.h"
#include "models/json_input.h"
#include "models/validation_case.h"

namespace memplan::cli {

namespace {

struct CaseResult {
  ValidationCase c;
  Estimate e;
  std::string error;  // a case the engine cannot model yet
};


double pct(double predicted, double measured) { return measured != 0 ? 100.0 * (predicted - measured) / measured : 0.0; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<CaseResult> run_cases(const std::string& path, const std::string& only) {
  // Whole file, size-capped: a FIFO or device path (/dev/zero) must not stream forever.
  std::istringstream in(read_input_file(path, "FILE"));
  std::vector<CaseResult> out;
  std::string line;
  int64_t lineno = 0, cases = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++cases;
    const nlohmann::json j = parse_json_input(line, path + ":" + std::to_string(lineno));
    CaseResult r{parse_validation_case(j), {}, {}};
    if (!only.empty() && r.c.id.find(only) == std::string::npos) continue;
    try {
      r.e = estimate(r.c.model, r.c.run, estimate_options_for(r.c));
    } catch (const InputError& e) {
      if (r.c.run.mode != Mode::inference) throw;
      r.error = e.what();  // e.g. an encoder model in inference mode
    }
    out.push_back(std::move(r));
  }
  if (cases == 0) throw InputError("FILE", path, "holds no cases (one JSON object per line)");
  // An exact id selects that case alone, also when it is a prefix of other ids (its capped variants).
  const auto exact = std::find_if(out.begin(), out.end(), [&](const CaseResult& r) { return r.c.id == only; });
  if (exact != out.end() && out.size() > 1) {
    CaseResult keep = std::move(*exact);
    out.clear();
    out.push_back(std::move(keep));
  }
  return out;
}

// One case's replayed allocator events, one per line: `a|f <bytes> <block> <phase>:<op name>@<layer>`
// (`R` marks a checkpoint recompute). For diffing against a recorded run (calibrate/diff_events.py).
void write_events(const CaseResult& r, const std::string& path) {
  EstimateOptions opt = estimate_options_for(r.c);
  opt.replay.record_timeline = true;
  const Estimate e = estimate(r.c.model, r.c.run, opt);
  std::optional<Graph> g;
  if (r.c.run.mode == Mode::training) g = build_graph(r.c.model, r.c.run);
  std::ofstream f(path);
  if (!f) throw InputError("--events-out", path, "cannot be written");
  const auto& ev = e.replay.events;
  const auto& where = e.replay.timeline_where;
  for (size_t i = 0; i < ev.size(); ++i) {
    f << (ev[i].action == MemEvent::Action::alloc ? "a " : "f ") << ev[i].size_bytes << ' ' << ev[i].block << ' ';
    if (g && i < where.size()) {
      const Location& w = where[i];
      const bool in_op = w.op >= 0 && static_cast<size_t>(w.op) < g->ops.size();
      f << phase_name(w.phase) << ':' << (in_op ? g->name_of(g->ops[static_cast<size_t>(w.op)].name) : "-") << '@'
        << (in_op ? g->ops[static_cast<size_t>(w.op)].layer : -1) << (w.recompute ? "R" : "");
    } else {
      f << (r.c.run.mode == Mode::inference ? "inference" : "-");
    }
    f << '\n';
  }
}

}  // namespace

void register_validate(CLI::App& app, std::ostream& out) {
  auto* cmd = app.add_subcommand("validate", "predicted vs measured for each case of a validation JSONL file");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto phases = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  auto events_out = std::make_shared<std::string>();
  cmd->add_option("FILE", *path, "cases in the format of data/validation/CASE-FORMAT.md")->required();
  cmd->add_flag("--json", *json, "machine-readable predictions");
  cmd->add_flag("--phases", *phases, "also compare the steady-state step's phase values");
  cmd->add_option("--only", *only, "only cases whose id contains this text (an exact id: that case alone)");
  cmd->add_option("--events-out", *events_out,
                  "write the replayed allocator events of the one case --only selects (calibrate/diff_events.py)");
  cmd->callback([path, json, phases, only, events_out, &out] {
    auto results = run_cases(*path, *only);
    if (!events_out->empty()) {
      if (results.size() != 1)
        throw InputError("--only", *only, "must select exactly one case for --events-out (it selects " +
                                              std::to_string(results.size()) + ")");
      write_events(results[0], *events_out);
    }
    if (*json) {
      nlohmann::json cases = nlohmann::json::array();
      for (const auto& r : results) {
        nlohmann::json p;
        if (r.error.empty()) {
          p["params"] = r.e.params;
          p["weights_mib"] = mib1(r.e.weights_bytes);
          p["peak_allocated_mib"] = mib1(r.e.torch_peak_allocated_bytes());  // as max_memory_allocated counts
          p["tensor_peak_mib"] = mib1(r.e.replay.peak.bytes);
          p["peak_reserved_mib"] = mib1(r.e.allocator.peak_reserved_bytes);
          if (r.c.memory_cap_gib) {
            p["fits"] = r.e.fits();
            if (r.e.capped) {
              const auto& c = *r.e.capped;
              p["capped"] = {{"oom", c.oom},
                             {"peak_reserved_mib", mib1(c.peak_reserved_bytes)},
                             {"alloc_retries", c.num_alloc_retries},
                             {"skipped_workspaces", c.num_skipped_workspaces}};
            }
          }
          if (r.c.run.mode == Mode::inference) {
            const auto& inf = r.e.inference;
            p["prefill_peak_mib"] = mib1(inf.prefill_peak_bytes);
            p["kv_cache_mib"] = mib1(r.e.torch_kv_cache_bytes());
            if (r.c.run.generate_tokens > 0) p["generate_peak_mib"] = mib1(inf.generate_peak_bytes);
          } else {
            const auto& s = r.e.replay.steps.back();
            p["after_fwd_mib"] = mib1(s.after_fwd);
            p["opt_peak_mib"] = mib1(s.opt_peak);
          }
        } else {
          p["error"] = r.error;
        }
        cases.push_back({{"id", r.c.id}, {"predicted", p}});
      }
      out << nlohmann::json{{"cases", cases}}.dump(2) << "\n";
      return;
    }
    std::vector<double> alloc_err, reserved_err;
    char line[320];
    std::snprintf(line, sizeof line, "%-42s %10s %10s %7s %10s %10s %7s %5s\n", "case", "peak_pred", "peak_meas",
                  "err%", "rsv_pred", "rsv_meas", "err%", "fit");
    out << line;
    for (const auto& r : results) {
      if (!r.error.empty()) {
        std::snprintf(line, sizeof line, "%-42s  (%s)\n", r.c.id.c_str(), r.error.c_str());
        out << line;
        continue;
      }
      const double pa = mib1(r.e.torch_peak_allocated_bytes()), pr = mib1(r.e.run_peak_reserved_bytes());
      std::string ma = "-", mr = "-", ea = "", er = "", fit = "";
      if (r.c.measured) {
        const auto& m = *r.c.measured;
        if (m.peak_allocated_mib && !(m.oom && *m.oom)) {
          ma = mib(static_cast<int64_t>(*m.peak_allocated_mib * kMiB));
          const double e = pct(pa, *m.peak_allocated_mib);
          alloc_err.push_back(std::fabs(e));
          char b[32]; std::snprintf(b, sizeof b, "%+.2f", e); ea = b;
        }
        if (m.peak_reserved_mib && !(m.oom && *m.oom)) {
          mr = mib(static_cast<int64_t>(*m.peak_reserved_mib * kMiB));
          const double e = pct(pr, *m.peak_reserved_mib);
          reserved_err.push_back(std::fabs(e));
          char b[32]; std::snprintf(b, sizeof b, "%+.2f", e); er = b;
        }
        if (r.c.memory_cap_gib && m.oom) fit = (r.e.fits() == !*m.oom) ? "ok" : "WRONG";
      }
      if (r.c.memory_cap_gib && fit.empty()) fit = !r.e.fits() ? "oom" : "fits";
      std::snprintf(line, sizeof line, "%-42s %10.1f %10s %7s %10.1f %10s %7s %5s\n", r.c.id.c_str(), pa, ma.c_str(),
                    ea.c_str(), pr, mr.c_str(), er.c_str(), fit.c_str());
      out << line;
      if (r.c.run.mode == Mode::inference && r.c.measured && !(r.c.measured->oom && *r.c.measured->oom)) {
        const auto& m = *r.c.measured;
        const auto& p = r.e.inference;
        const std::tuple<const char*, int64_t, std::optional<double>> rows[] = {
            {"prefill_peak", p.prefill_peak_bytes, m.prefill_peak_mib},
            {"kv_cache", r.e.torch_kv_cache_bytes(), m.kv_cache_mib},
            {"generate_peak", p.generate_peak_bytes, m.generate_peak_mib}};
        for (const auto& [name, v, meas] : rows) {
          if (!meas) continue;
          std::snprintf(line, sizeof line, "    %-14s %10.1f %10.1f %+7.2f\n", name, mib1(v), *meas, pct(mib1(v), *meas));
          out << line;
        }
      }
      if (*phases && r.c.measured && r.c.measured->steps.size() >= 2) {
        const auto& m = r.c.measured->steps[1];
        const auto& p = r.e.replay.steps.back();
        const std::pair<const char*, std::pair<int64_t, double>> rows[] = {
            {"start", {p.start, m.start_mib}}, {"fwd_peak", {p.fwd_peak, m.fwd_peak_mib}},
            {"after_fwd", {p.after_fwd, m.after_fwd_mib}}, {"bwd_peak", {p.bwd_peak, m.bwd_peak_mib}},
            {"micro_rest", {p.micro_rest_peak, m.micro_rest_peak_mib}}, {"after_bwd", {p.after_bwd, m.after_bwd_mib}},
            {"opt_peak", {p.opt_peak, m.opt_peak_mib}}, {"end", {p.end, m.end_mib}}};
        for (const auto& [name, v] : rows) {
          std::snprintf(line, sizeof line, "    %-12s %10.1f %10.1f %+7.2f\n", name, mib1(v.first), v.second,
                        pct(mib1(v.first), v.second));
          out << line;
        }
      }
    }
    auto mx = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
    std::snprintf(line, sizeof line, "peak allocated: %zu cases, median |error| %.2f%%, max |error| %.2f%%\n",
                  alloc_err.size(), median(alloc_err), mx(alloc_err));
    out << line;
    std::snprintf(line, sizeof line, "peak reserved:  %zu cases, median |error| %.2f%%, max |error| %.2f%%\n",
                  reserved_err.size(), median(reserved_err), mx(reserved_err));
    out << line;
  });
}

}  // namespace memplan::cli
