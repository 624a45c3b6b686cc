#include "engine/dynamic_shapes.h"

#include <algorithm>
#include <map>
#include <memory>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/step_replay.h"

namespace memplan {

DynamicRun replay_dynamic(const ModelSpec& spec, const RunConfig& cfg, const std::vector<int64_t>& seq_lens,
                          const AllocatorOptions& allocator, const std::function<void(double)>& progress) {
  if (seq_lens.empty()) throw InputError("seq_lens", "[]", "needs at least one step");
  std::map<int64_t, std::unique_ptr<Graph>> graphs;  // one graph per distinct length
  std::vector<const Graph*> steps;
  for (int64_t len : seq_lens) {
    if (len <= 0) throw InputError("seq_lens", std::to_string(len), "lengths must be positive");
    auto& g = graphs[len];
    if (!g) {
      RunConfig c = cfg;
      c.seq_len = len;
      g = std::make_unique<Graph>(build_graph(spec, c));
    }
    steps.push_back(g.get());
    // Building a graph per distinct length is most of the work when lengths vary; the replay is the rest.
    if (progress) progress(0.8 * static_cast<double>(steps.size()) / static_cast<double>(seq_lens.size()));
  }
  ReplayOptions ro;
  const ReplayResult r = replay_training_sequence(steps, cfg, ro);
  CachingAllocator alloc(allocator);
  const AllocatorStats a = replay_allocator(alloc, r.events, AllocatorReplayOptions{.record_reserved_curve = true});
  DynamicRun out;
  out.peak_reserved_bytes = a.peak_reserved_bytes;
  out.num_alloc_retries = a.num_alloc_retries;
  out.oom = a.oom;
  int64_t running = 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const auto& s = r.steps[i];
    DynamicStep d;
    d.seq_len = seq_lens[i];
    d.peak_allocated_bytes = s.step_peak;
    const auto& curve = a.reserved_curve_bytes;
    const auto b = static_cast<size_t>(std::min<int64_t>(s.event_begin, static_cast<int64_t>(curve.size())));
    const auto e = static_cast<size_t>(std::min<int64_t>(s.event_end, static_cast<int64_t>(curve.size())));
    for (size_t k = b; k < e; ++k) running = std::max(running, curve[k]);
    d.peak_reserved_bytes = running;
    d.reserved_at_end_bytes = e > 0 ? curve[e - 1] : 0;
    out.peak_allocated_bytes = std::max(out.peak_allocated_bytes, d.peak_allocated_bytes);
    out.steps.push_back(d);
    if (a.oom && s.event_end > a.oom_event_index) break;  // the run died in this step
  }
  if (progress) progress(1.0);
  return out;
}

std::vector<int64_t> bucketed(const std::vector<int64_t>& seq_lens, int64_t bucket) {
  if (bucket <= 0) throw InputError("bucket", std::to_string(bucket), "must be a positive integer");
  std::vector<int64_t> out;
  out.reserve(seq_lens.size());
  for (int64_t l : seq_lens) out.push_back(round_up(l, bucket, "bucketed length"));
  return out;
}

std::vector<int64_t> sample_lengths(int64_t min, int64_t max, int64_t count, uint64_t seed) {
  if (min <= 0 || max < min) throw InputError("seq_len_sample", std::to_string(min) + ":" + std::to_string(max), "needs 0 < MIN <= MAX");
  if (count <= 0 || count > 100000) throw InputError("seq_len_sample", std::to_string(count), "step count must be in 1..100000");
  std::vector<int64_t> out;
  uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  const auto span = static_cast<uint64_t>(max - min + 1);
  for (int64_t i = 0; i < count; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    out.push_back(min + static_cast<int64_t>((x >> 33) % span));
  }
  return out;
}

}  // namespace memplan
