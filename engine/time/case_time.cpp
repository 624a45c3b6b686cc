#include "engine/time/case_time.h"

#include "engine/arch/builders.h"
#include "engine/graph_builder.h"

namespace memplan::timing {


std::vector<Timeline> case_timelines(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r) {
  std::vector<Timeline> rows;
  if (cfg.mode == Mode::training) {
    rows.push_back(training_timeline(build_graph(spec, cfg), cfg, r));
    return rows;
  }
  rows.push_back(forward_timeline(build_inference_graph(spec, cfg, InferencePass{0, cfg.seq_len, false}), r, false));
  if (cfg.generate_tokens > 1) {
    // the mean decode step of generate(N) beyond the first token: the cache holds S + N / 2 tokens
    const int64_t past = cfg.seq_len + cfg.generate_tokens / 2;
    rows.push_back(forward_timeline(build_inference_graph(spec, cfg, InferencePass{past, 1, true}), r, true));
  }
  return rows;
}

std::vector<OpNameCost> case_op_breakdown(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r) {
  if (cfg.mode == Mode::training) return op_breakdown(build_graph(spec, cfg), cfg, r, true);
  return op_breakdown(build_inference_graph(spec, cfg, InferencePass{0, cfg.seq_len, false}), cfg, r, false);
}

std::vector<Features> case_features(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r) {
  std::vector<Features> rows;
  for (const Timeline& t : case_timelines(spec, cfg, r)) rows.push_back(critical_path(t, h200_coefficients()));
  return rows;
}

CaseTime case_time(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r, const Coefficients& c) {
  CaseTime t;
  const auto rows = case_features(spec, cfg, r);
  t.split = predict(rows[0], c);
  if (cfg.mode == Mode::training) {
    t.step_ms = t.split.total_s * 1e3;
  } else {
    t.prefill_ms = t.split.total_s * 1e3;
    if (rows.size() > 1) t.decode_ms_per_token = predict(rows[1], c).total_s * 1e3;
  }
  return t;
}

}  // namespace memplan::timing
