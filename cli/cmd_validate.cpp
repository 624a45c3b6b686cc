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
#include "cli/report_dist.h"
#include "cli/run_cli.h"
#include "cli/run_flags.h"
#include "cli/validate_bands.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/arch/builders.h"
#include "engine/estimate.h"
#include "engine/memory_tracker.h"
#include "engine/time/case_time.h"
#include "models/json_input.h"
#include "models/validation_case.h"

namespace memplan::cli {

namespace {

// One line of the file: a case and its prediction, or the reason it was refused (the line is not a case memplan
// can read, or the engine cannot model it). A refused line is a row too: one bad case never hides the others.
struct CaseResult {
  std::string id;                  // the case's id, or "line N" when the line has none
  std::optional<ValidationCase> c;  // absent when the line did not parse
  Estimate e;
  std::string error;               // non-empty: refused
};

double pct(double predicted, double measured) { return measured != 0 ? 100.0 * (predicted - measured) / measured : 0.0; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One line: parsed with the input limits (depth cap), then read as a case and estimated. The row is named by
// the case's id when the line has a string one (also when the case fails further on), else "line N".
CaseResult run_line(const std::string& line, int64_t lineno, const std::string& label) {
  CaseResult r;
  r.id = "line " + std::to_string(lineno);
  try {
    const nlohmann::json doc = parse_json_input(line, label);
    if (doc.is_object())
      if (auto id = doc.find("id"); id != doc.end() && id->is_string() && !id->get<std::string>().empty())
        r.id = id->get<std::string>();
    r.c = parse_validation_case(doc);
    r.e = estimate(r.c->model, r.c->run, estimate_options_for(*r.c));
  } catch (const InputError& e) {
    // e.g. an unknown key, a model_type not modelled yet, an encoder in inference mode. The row names the
    // case, so the error goes without the "<id>: " prefix that parse errors carry.
    r.c.reset();
    r.error = e.what();
    const std::string prefix = r.id + ": ";
    if (r.error.compare(0, prefix.size(), prefix) == 0) r.error.erase(0, prefix.size());
  }
  return r;
}

std::vector<CaseResult> run_cases(const std::string& text, const std::string& path, const std::string& only) {
  std::istringstream in(text);
  std::vector<CaseResult> out;
  std::string line;
  int64_t lineno = 0, cases = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++cases;
    CaseResult r = run_line(line, lineno, path + ":" + std::to_string(lineno));
    if (!only.empty() && r.id.find(only) == std::string::npos) continue;
    out.push_back(std::move(r));
  }
  if (cases == 0) throw InputError("FILE", path, "holds no cases (one JSON object per line)");
  // An exact id selects that case alone, also when it is a prefix of other ids (its capped variants).
  const auto exact = std::find_if(out.begin(), out.end(), [&](const CaseResult& r) { return r.id == only; });
  if (exact != out.end() && out.size() > 1) {
    CaseResult keep = std::move(*exact);
    out.clear();
    out.push_back(std::move(keep));
  }
  return out;
}

// Predicted against measured over the answered cases; refused ones are only counted.
struct Summary {
  size_t cases = 0, refused = 0, verdicts_right = 0, verdicts_wrong = 0;
  size_t distributed = 0;  // answered cases that are one rank of a distributed step
  std::vector<double> alloc_err, reserved_err;  // |error| in percent
};

struct Row {  // one answered case's comparison
  double pa = 0, pr = 0;                  // predicted peak allocated / run peak reserved, MiB
  std::optional<double> ma, mr, ea, er;   // measured and signed error in percent
  std::string fit;                        // capped cases: ok | WRONG | fits | oom
};

Row compare(const CaseResult& r) {
  Row w;
  const ValidationCase& c = *r.c;
  w.pa = mib1(r.e.torch_peak_allocated_bytes());
  w.pr = mib1(r.e.run_peak_reserved_bytes());
  if (c.measured) {
    const auto& m = *c.measured;
    const bool oom = m.oom && *m.oom;
    if (m.peak_allocated_mib && !oom) w.ma = *m.peak_allocated_mib, w.ea = pct(w.pa, *m.peak_allocated_mib);
    if (m.peak_reserved_mib && !oom) w.mr = *m.peak_reserved_mib, w.er = pct(w.pr, *m.peak_reserved_mib);
    if (c.memory_cap_gib && m.oom) w.fit = (r.e.fits() == !*m.oom) ? "ok" : "WRONG";
  }
  if (c.memory_cap_gib && w.fit.empty()) w.fit = !r.e.fits() ? "oom" : "fits";
  return w;
}

Summary summarize(const std::vector<CaseResult>& results) {
  Summary s;
  s.cases = results.size();
  for (const auto& r : results) {
    if (!r.error.empty()) {
      ++s.refused;
      continue;
    }
    const Row w = compare(r);
    if (r.c->run.distributed.enabled()) ++s.distributed;
    if (w.ea) s.alloc_err.push_back(std::fabs(*w.ea));
    if (w.er) s.reserved_err.push_back(std::fabs(*w.er));
    if (w.fit == "ok") ++s.verdicts_right;
    if (w.fit == "WRONG") ++s.verdicts_wrong;
  }
  return s;
}

double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

// Errors in JSON are integers of parts per million (the --json number rule: integers, or MiB with one decimal).
int64_t ppm(double percent) { return static_cast<int64_t>(std::llround(percent * 1e4)); }

nlohmann::json error_json(const std::vector<double>& v) {
  return {{"cases", v.size()}, {"median_abs_error_ppm", ppm(median(v))}, {"max_abs_error_ppm", ppm(max_of(v))}};
}

nlohmann::json predicted_json(const CaseResult& r) {
  nlohmann::json p;
  if (!r.error.empty()) return {{"error", r.error}};
  const ValidationCase& c = *r.c;
  p["params"] = r.e.params;
  p["weights_mib"] = mib1(r.e.weights_bytes);
  p["peak_allocated_mib"] = mib1(r.e.torch_peak_allocated_bytes());  // as max_memory_allocated counts
  p["tensor_peak_mib"] = mib1(r.e.replay.peak.bytes);
  p["peak_reserved_mib"] = mib1(r.e.allocator.peak_reserved_bytes);
  if (c.memory_cap_gib) {
    p["fits"] = r.e.fits();
    add_verdict_json(p, case_verdict(c, r.e));  // margin to the cap, error band, verdict (cli/validate_bands.h)
    if (r.e.capped) {
      const auto& cp = *r.e.capped;
      p["capped"] = {{"oom", cp.oom},
                     {"peak_reserved_mib", mib1(cp.peak_reserved_bytes)},
                     {"alloc_retries", cp.num_alloc_retries},
                     {"skipped_workspaces", cp.num_skipped_workspaces}};
    }
  }
  // A distributed case: the figures above are its rank's (rank 0 unless the case names another).
  if (c.run.distributed.enabled()) p["distributed"] = dist_json(c.run, r.e);
  // Step time (engine/time/step_time.h: the op rates of the GPU the case ran on, the H200's unless its `gpu` says
  // otherwise, and the fitted coefficients), milliseconds with one decimal
  // (the --json number rule).
  // One GPU only (a distributed case's step adds communication the time model does not cost per op).
  if (!c.run.distributed.enabled()) {
    const timing::CaseTime t = timing::case_time(c.model, c.run, timing::measured_gpu(c.timing_gpu)->rates());
    if (c.run.mode == Mode::inference) {
      p["prefill_ms"] = round1(t.prefill_ms);
      if (c.run.generate_tokens > 1) p["decode_ms_per_token"] = round1(t.decode_ms_per_token);
    } else {
      p["step_time_ms"] = round1(t.step_ms);
    }
  }
  if (c.run.mode == Mode::inference) {
    const auto& inf = r.e.inference;
    // A forward-only run's measured forward is its peak: torch.cuda.max_memory_allocated's figure, as measured.
    p["prefill_peak_mib"] = mib1(inf.forward_only ? r.e.torch_peak_allocated_bytes() : inf.prefill_peak_bytes);
    if (!inf.forward_only) p["kv_cache_mib"] = mib1(r.e.torch_kv_cache_bytes());
    if (c.run.generate_tokens > 0) p["generate_peak_mib"] = mib1(inf.generate_peak_bytes);
  } else {
    const auto& st = r.e.replay.steps.back();
    p["after_fwd_mib"] = mib1(st.after_fwd);
    p["opt_peak_mib"] = mib1(st.opt_peak);
  }
  return p;
}

// The measured figures the table compares, rounded like the predictions (MiB, one decimal).
nlohmann::json measured_json(const Measured& m) {
  nlohmann::json j = nlohmann::json::object();
  if (m.peak_allocated_mib) j["peak_allocated_mib"] = round1(*m.peak_allocated_mib);
  if (m.peak_reserved_mib) j["peak_reserved_mib"] = round1(*m.peak_reserved_mib);
  if (m.oom) j["oom"] = *m.oom;
  if (!m.scaler_skipped_steps.empty()) j["scaler_skipped_steps"] = m.scaler_skipped_steps;
  return j;
}

void print_json(const std::vector<CaseResult>& results, const Summary& s, std::ostream& out) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json row = {{"id", r.id}, {"predicted", predicted_json(r)}};
    if (r.error.empty() && r.c->measured) {
      row["measured"] = measured_json(*r.c->measured);
      const std::string fit = compare(r).fit;
      if (fit == "ok" || fit == "WRONG") row["fit_verdict_right"] = fit == "ok";
      if (case_short_of_steady_state(*r.c)) row["measured"]["steady_state"] = false;
    }
    cases.push_back(std::move(row));
  }
  const nlohmann::json summary = {{"cases", s.cases},
                                  {"predicted", s.cases - s.refused},
                                  {"refused", s.refused},
                                  {"distributed", s.distributed},
                                  {"peak_allocated", error_json(s.alloc_err)},
                                  {"peak_reserved", error_json(s.reserved_err)},
                                  {"fit_verdicts", {{"right", s.verdicts_right}, {"wrong", s.verdicts_wrong}}}};
  out << nlohmann::json{{"cases", cases}, {"summary", summary}}.dump(2) << "\n";
}

void print_table(const std::vector<CaseResult>& results, const Summary& s, bool phases, std::ostream& out) {
  char line[320];
  std::snprintf(line, sizeof line, "%-42s %10s %10s %7s %10s %10s %7s %5s\n", "case", "peak_pred", "peak_meas",
                "err%", "rsv_pred", "rsv_meas", "err%", "fit");
  out << line;
  // A measured value or its error, or `none` when the case has no such figure.
  auto opt = [](const std::optional<double>& v, const char* fmt, const char* none) {
    if (!v) return std::string(none);
    char b[32];
    std::snprintf(b, sizeof b, fmt, *v);
    return std::string(b);
  };
  for (const auto& r : results) {
    if (!r.error.empty()) {
      out << r.id << std::string(r.id.size() < 42 ? 42 - r.id.size() : 0, ' ') << "  REFUSED: " << r.error << "\n";
      continue;
    }
    const ValidationCase& c = *r.c;
    const Row w = compare(r);
    std::snprintf(line, sizeof line, "%-42s %10.1f %10s %7s %10.1f %10s %7s %5s\n", r.id.c_str(), w.pa,
                  opt(w.ma, "%.1f", "-").c_str(), opt(w.ea, "%+.2f", "").c_str(), w.pr, opt(w.mr, "%.1f", "-").c_str(),
                  opt(w.er, "%+.2f", "").c_str(), w.fit.c_str());
    out << line;
    if (case_short_of_steady_state(c))
      out << "    GradScaler skipped every optimizer step before the last (measured.scaler_skipped_steps): the run had "
             "no optimizer state in a forward or backward, memplan predicts the run that trains; no error band counts "
             "this row\n";
    if (c.run.distributed.enabled()) out << "    " << dist_heading(c.run.distributed) << "\n";  // whose figures
    if (c.run.mode == Mode::inference && c.measured && !(c.measured->oom && *c.measured->oom)) {
      const auto& m = *c.measured;
      const auto& p = r.e.inference;
      const std::tuple<const char*, int64_t, std::optional<double>> rows[] = {
          {"prefill_peak", p.forward_only ? r.e.torch_peak_allocated_bytes() : p.prefill_peak_bytes, m.prefill_peak_mib},
          {"kv_cache", r.e.torch_kv_cache_bytes(), m.kv_cache_mib},
          {"generate_peak", p.generate_peak_bytes, m.generate_peak_mib}};
      for (const auto& [name, v, meas] : rows) {
        if (!meas) continue;
        std::snprintf(line, sizeof line, "    %-14s %10.1f %10.1f %+7.2f\n", name, mib1(v), *meas, pct(mib1(v), *meas));
        out << line;
      }
    }
    if (phases && c.measured && c.measured->steps.size() >= 2) {
      const auto& m = c.measured->steps[1];
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
  std::snprintf(line, sizeof line, "peak allocated: %zu cases, median |error| %.2f%%, max |error| %.2f%%\n",
                s.alloc_err.size(), median(s.alloc_err), max_of(s.alloc_err));
  out << line;
  std::snprintf(line, sizeof line, "peak reserved:  %zu cases, median |error| %.2f%%, max |error| %.2f%%\n",
                s.reserved_err.size(), median(s.reserved_err), max_of(s.reserved_err));
  out << line;
  if (s.verdicts_right + s.verdicts_wrong > 0) {
    std::snprintf(line, sizeof line, "fit verdicts:   %zu right, %zu wrong (capped cases)\n", s.verdicts_right,
                  s.verdicts_wrong);
    out << line;
  }
  if (s.distributed > 0) {
    std::snprintf(line, sizeof line, "distributed:    %zu cases, each one rank's figures (the rank named under its row)\n",
                  s.distributed);
    out << line;
  }
  std::snprintf(line, sizeof line, "refused:        %zu of %zu cases%s\n", s.refused, s.cases,
                s.refused ? " (REFUSED rows above: what memplan cannot model or read)" : "");
  out << line;
}

// One case's replayed allocator events, one per line: `a|f <bytes> <block> <phase>:<op name>@<layer>`
// (`R` marks a checkpoint recompute). For diffing against a recorded run (calibrate/diff_events.py).
void write_events(const CaseResult& cr, const std::string& path) {
  if (!cr.error.empty()) throw InputError("--only", cr.id, "selects a refused case: " + cr.error);
  const ValidationCase& r = *cr.c;
  EstimateOptions opt = estimate_options_for(r);
  opt.replay.record_timeline = true;
  const Estimate e = estimate(r.model, r.run, opt);
  std::optional<Graph> g;
  if (r.run.mode == Mode::training)
    g = r.run.distributed.enabled() ? rank_graph(r.model, r.run).graph : build_graph(r.model, r.run);
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
      f << (r.run.mode == Mode::inference ? "inference" : "-");
    }
    f << '\n';
  }
}

}  // namespace

void register_validate(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "validate",
      "predicted vs measured for each case of a validation JSONL file. Every case is a row: one memplan cannot "
      "read or model (an unknown key, a model_type not modelled yet) is REFUSED with its error and counted in the "
      "summary. Exit code 0: every case predicted; 4: some refused (one line on stderr); 2: the file itself is "
      "unusable");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto phases = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  auto events_out = std::make_shared<std::string>();
  cmd->add_option("FILE", *path, "cases in the format of data/validation/CASE-FORMAT.md ('-': stdin)")->required();
  cmd->add_flag("--json", *json, "one JSON document: {cases: [{id, predicted (or predicted.error), measured}], summary}");
  cmd->add_flag("--phases", *phases, "also compare the steady-state step's phase values");
  cmd->add_option("--only", *only, "only cases whose id contains this text (an exact id: that case alone)");
  cmd->add_option("--events-out", *events_out,
                  "write the replayed allocator events of the one case --only selects (calibrate/diff_events.py)");
  auto bands = std::make_shared<bool>(false);
  auto priors = std::make_shared<std::vector<std::string>>();
  cmd->add_flag("--error-bands", *bands,
                "print the verdict's error-band table over these cases instead (scripts/make-error-bands.sh)");
  cmd->add_option("--prior", *priors, "with --error-bands: earlier `validate --json` predictions to count as well");
  cmd->callback([path, json, phases, only, events_out, bands, priors, &ctx] {
    // Whole file, size-capped: a FIFO or device path (/dev/zero) must not stream forever.
    const std::string text = *path == "-" ? read_all(ctx.in, "FILE") : read_input_file(*path, "FILE");
    const auto results = run_cases(text, *path == "-" ? "stdin" : *path, *only);
    if (!events_out->empty()) {
      if (results.size() != 1)
        throw InputError("--only", *only, "must select exactly one case for --events-out (it selects " +
                                              std::to_string(results.size()) + ")");
      write_events(results[0], *events_out);
    }
    if (*bands) {
      std::vector<BandSample> samples;
      std::vector<const ValidationCase*> cases;
      for (const auto& r : results)
        if (r.error.empty()) {
          cases.push_back(&*r.c);
          if (BandSample b; band_sample(*r.c, r.e, b)) samples.push_back(std::move(b));
        }
      ctx.out << error_bands_document(samples, cases, *priors, *path);
      return;
    }
    const Summary s = summarize(results);
    if (*json) print_json(results, s, ctx.out);
    else print_table(results, s, *phases, ctx.out);
    if (s.refused > 0) {
      const auto first = std::find_if(results.begin(), results.end(), [](const CaseResult& r) { return !r.error.empty(); });
      ctx.err << "memplan: validate: " << s.refused << " of " << s.cases << " cases refused; first: "
              << one_line(first->id + ": " + first->error) << "\n";
      ctx.exit_code = kExitCasesRefused;
    }
  });
}

}  // namespace memplan::cli
