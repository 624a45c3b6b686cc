// `memplan dynamic`: steps whose sequence length varies (a list or a sampled distribution), replayed through the
// caching allocator; how reserved memory grows, and what bucketing lengths and expandable segments buy.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/run_flags.h"
#include "engine/checked.h"
#include "engine/dynamic_shapes.h"
#include "engine/errors.h"
#include "engine/limits.h"

namespace memplan::cli {

namespace {
std::vector<int64_t> parse_lengths(const std::string& list, const std::string& sample) {
  if (!list.empty() && !sample.empty())
    throw InputError("--seq-lens", list, "give either --seq-lens or --seq-len-sample, not both");
  std::vector<int64_t> out;
  if (!list.empty()) {
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
      size_t pos = 0;
      long long v = 0;
      try { v = std::stoll(item, &pos); } catch (...) { pos = 0; }
      if (pos != item.size() || v <= 0) throw InputError("--seq-lens", item, "expects comma-separated positive lengths");
      out.push_back(v);
      if (static_cast<int64_t>(out.size()) > kMaxDynamicSteps)
        throw InputError("--seq-lens", std::to_string(out.size()) + " lengths", "exceeds the limit of " +
                                                                          std::to_string(kMaxDynamicSteps) + " steps");
    }
    return out;
  }
  if (sample.empty()) throw InputError("--seq-lens", "missing", "give --seq-lens or --seq-len-sample MIN:MAX:STEPS[:SEED]");
  long long mn = 0, mx = 0, n = 0;
  unsigned long long seed = 0;
  const int got = std::sscanf(sample.c_str(), "%lld:%lld:%lld:%llu", &mn, &mx, &n, &seed);
  if (got < 3) throw InputError("--seq-len-sample", sample, "expects MIN:MAX:STEPS[:SEED]");
  // Every step is a replay of the whole graph: bound the count (and the lengths, as --seq-len is bounded).
  if (n <= 0 || n > kMaxDynamicSteps)
    throw InputError("--seq-len-sample", sample, "STEPS must be in [1, " + std::to_string(kMaxDynamicSteps) + "]");
  if (mn <= 0 || mx < mn || mx > kMaxSeqLen)
    throw InputError("--seq-len-sample", sample, "needs 0 < MIN <= MAX <= " + std::to_string(kMaxSeqLen));
  return sample_lengths(mn, mx, n, seed);
}

nlohmann::json run_json(const DynamicRun& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"seq_len", s.seq_len}, {"peak_allocated_bytes", s.peak_allocated_bytes},
                     {"peak_reserved_bytes", s.peak_reserved_bytes}, {"reserved_at_end_bytes", s.reserved_at_end_bytes}});
  return {{"peak_allocated_bytes", r.peak_allocated_bytes}, {"peak_reserved_bytes", r.peak_reserved_bytes},
          {"num_alloc_retries", r.num_alloc_retries}, {"oom", r.oom}, {"steps", steps}};
}
}  // namespace

void register_dynamic(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("dynamic", "steps of varying sequence length: reserved-memory growth, bucketing, expandable segments");
  auto flags = std::make_shared<RunFlags>();
  auto lens = std::make_shared<std::string>();
  auto sample = std::make_shared<std::string>();
  auto bucket = std::make_shared<int64_t>(256);
  add_run_flags(*cmd, *flags);
  cmd->add_option("--seq-lens", *lens, "comma-separated sequence length of each step");
  cmd->add_option("--seq-len-sample", *sample, "MIN:MAX:STEPS[:SEED]: lengths drawn uniformly");
  cmd->add_option("--bucket", *bucket, "bucket size for the padded comparison");
  cmd->callback([flags, lens, sample, bucket, &ctx] {
    std::ostream& os = ctx.out;
    const ModelSpec m = load_model_for(*flags, ctx.in);
    const RunConfig c = run_config_from(*flags, m);
    if (m.kind != ModelSpec::Kind::transformer && m.kind != ModelSpec::Kind::graph)
      throw InputError("--model", flags->model, "dynamic sequence lengths apply to language models");
    const std::vector<int64_t> raw = parse_lengths(*lens, *sample);
    const DeviceBudget d = device_budget(*flags);
    AllocatorOptions base;
    if (d.capacity_bytes > 0) base.capacity_bytes = std::max<int64_t>(0, d.capacity_bytes - d.non_pytorch_bytes);
    AllocatorOptions expandable = base;
    expandable.expandable_segments = true;
    if (*bucket <= 0 || *bucket > kMaxSeqLen)
      throw InputError("--bucket", std::to_string(*bucket), "must be in [1, " + std::to_string(kMaxSeqLen) + "]");
    // Three replays of the whole run: as given, bucketed, with expandable segments.
    Progress bar(ctx.progress, !flags->json && !flags->quiet, "replaying");
    auto part = [&bar](int k) { return [&bar, k](double f) { bar.update((k + f) / 3.0); }; };
    const DynamicRun r_raw = replay_dynamic(m, c, raw, base, part(0));
    const DynamicRun r_bucket = replay_dynamic(m, c, bucketed(raw, *bucket), base, part(1));
    const DynamicRun r_exp = replay_dynamic(m, c, raw, expandable, part(2));
    bar.done();
    if (flags->json) {
      os << nlohmann::json{{"model", m.name}, {"seq_lens", raw}, {"bucket", *bucket},
                                  {"raw", run_json(r_raw)}, {"bucketed", run_json(r_bucket)},
                                  {"expandable_segments", run_json(r_exp)}}
                       .dump(2)
                << "\n";
      return;
    }
    char line[200];
    std::snprintf(line, sizeof line, "%-6s %8s %14s %16s %16s\n", "step", "seq_len", "peak alloc MiB",
                  "reserved MiB", "frag. MiB");
    os << line;
    for (size_t i = 0; i < r_raw.steps.size(); ++i) {
      const auto& s = r_raw.steps[i];
      std::snprintf(line, sizeof line, "%-6zu %8lld %14s %16s %16s\n", i + 1, static_cast<long long>(s.seq_len),
                    mib(s.peak_allocated_bytes).c_str(), mib(s.peak_reserved_bytes).c_str(),
                    mib(s.peak_reserved_bytes - s.peak_allocated_bytes).c_str());
      os << line;
    }
    auto summary = [&](const char* name, const DynamicRun& r) {
      std::snprintf(line, sizeof line, "%-34s peak allocated %10s MiB, peak reserved %10s MiB%s\n", name,
                    mib(r.peak_allocated_bytes).c_str(), mib(r.peak_reserved_bytes).c_str(), r.oom ? "  (OOM)" : "");
      os << line;
    };
    os << "\n";
    summary("as given:", r_raw);
    summary(("bucketed to multiples of " + std::to_string(*bucket) + ":").c_str(), r_bucket);
    summary("expandable_segments:True:", r_exp);
  });
}

}  // namespace memplan::cli
