// Tests of EstimateWorkspace (engine/estimate.h): estimates run one after another through one workspace give
// exactly what each gives without one. The scenarios differ in what the lent buffers held before (a larger
// model before a smaller one and back, a capped replay, a distributed rank, an inference estimate, an estimate
// that throws), so that a buffer's old contents would show if anything read them.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "models/zoo.h"

using namespace memplan;

namespace {

struct Scenario {
  std::string name;
  std::string model;
  RunConfig cfg;
  EstimateOptions opt;
};

RunConfig lm(int64_t batch, int64_t seq, Precision p) {
  RunConfig c;
  c.batch_size = batch;
  c.seq_len = seq;
  c.precision = p;
  return c;
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> v;
  v.push_back({"llama-2-7b bf16", "llama-2-7b", lm(1, 1024, Precision::bf16), {}});
  v.push_back({"gpt2 amp", "gpt2", lm(4, 512, Precision::amp_bf16), {}});
  {
    Scenario s{"llama-2-7b checkpointed, capped", "llama-2-7b", lm(2, 2048, Precision::bf16), {}};
    s.cfg.grad_checkpointing = true;
    s.opt.allocator.capacity_bytes = int64_t{40} << 30;
    v.push_back(s);
  }
  {
    Scenario s{"gpt2 expandable segments, capped", "gpt2", lm(8, 1024, Precision::amp_bf16), {}};
    s.opt.allocator.capacity_bytes = int64_t{12} << 30;
    s.opt.allocator.expandable_segments = true;
    v.push_back(s);
  }
  {
    Scenario s{"llama-2-7b fsdp2 rank 1 of 8", "llama-2-7b", lm(1, 2048, Precision::bf16), {}};
    s.cfg.distributed.strategy = DistStrategy::fsdp2;
    s.cfg.distributed.world_size = 8;
    s.cfg.distributed.rank = 1;
    v.push_back(s);
  }
  {
    Scenario s{"gpt2 inference", "gpt2", lm(2, 256, Precision::bf16), {}};
    s.cfg.mode = Mode::inference;
    s.cfg.generate_tokens = 4;
    v.push_back(s);
  }
  v.push_back({"gpt2 without the allocator", "gpt2", lm(2, 256, Precision::fp32), {}});
  v.back().opt.simulate_allocator = false;
  v.push_back({"llama-2-7b again", "llama-2-7b", lm(1, 1024, Precision::bf16), {}});
  return v;
}

void require_same_allocator(const AllocatorStats& a, const AllocatorStats& b) {
  REQUIRE(a.peak_reserved_bytes == b.peak_reserved_bytes);
  REQUIRE(a.peak_allocated_bytes == b.peak_allocated_bytes);
  REQUIRE(a.reserved_at_end_bytes == b.reserved_at_end_bytes);
  REQUIRE(a.allocated_at_end_bytes == b.allocated_at_end_bytes);
  REQUIRE(a.allocated_at_peak_reserved_bytes == b.allocated_at_peak_reserved_bytes);
  REQUIRE(a.num_alloc_retries == b.num_alloc_retries);
  REQUIRE(a.num_segments == b.num_segments);
  REQUIRE(a.num_device_allocs == b.num_device_allocs);
  REQUIRE(a.window_peak_allocated_bytes == b.window_peak_allocated_bytes);
  REQUIRE(a.derived_steps == b.derived_steps);
  REQUIRE(a.oom == b.oom);
  REQUIRE(a.oom_event_index == b.oom_event_index);
  REQUIRE(a.allocated_after_events_bytes == b.allocated_after_events_bytes);
}

void require_same_events(const MemEventStream& a, const MemEventStream& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("event " << i);
    REQUIRE(a[i].action == b[i].action);
    REQUIRE(a[i].block == b[i].block);
    REQUIRE(a[i].size_bytes == b[i].size_bytes);
    REQUIRE(a[i].stream == b[i].stream);
    REQUIRE(a[i].optional == b[i].optional);
  }
}

void require_same(const Estimate& a, const Estimate& b) {
  REQUIRE(a.params == b.params);
  REQUIRE(a.weights_bytes == b.weights_bytes);
  REQUIRE(a.replay.peak.bytes == b.replay.peak.bytes);
  REQUIRE(a.replay.peak.ledger.bytes == b.replay.peak.ledger.bytes);
  REQUIRE(a.replay.steps.size() == b.replay.steps.size());
  for (size_t s = 0; s < a.replay.steps.size(); ++s) {
    REQUIRE(a.replay.steps[s].step_peak == b.replay.steps[s].step_peak);
    REQUIRE(a.replay.steps[s].event_begin == b.replay.steps[s].event_begin);
    REQUIRE(a.replay.steps[s].event_end == b.replay.steps[s].event_end);
  }
  REQUIRE(a.replay.repeated_steps == b.replay.repeated_steps);
  require_same_events(a.replay.events, b.replay.events);
  require_same_allocator(a.allocator, b.allocator);
  REQUIRE(a.capped.has_value() == b.capped.has_value());
  if (a.capped) require_same_allocator(*a.capped, *b.capped);
  REQUIRE(a.fits() == b.fits());
}

}  // namespace

TEST_CASE("estimates through one workspace equal estimates without one", "[estimate][workspace]") {
  EstimateWorkspace ws;
  for (int round = 0; round < 2; ++round) {  // the second round starts from buffers the whole table has grown
    for (const Scenario& s : scenarios()) {
      INFO(s.name << ", round " << round);
      const ModelSpec m = load_zoo_model(s.model);
      const Estimate fresh = estimate(m, s.cfg, s.opt);
      Estimate reused = estimate(m, s.cfg, s.opt, ws);
      require_same(fresh, reused);
      if (s.name != "gpt2 amp") ws.recycle(std::move(reused));  // one estimate kept: the next writes a fresh stream
    }
  }
  // The workspace does hold the storage it lends (else this test would compare fresh estimates only).
  CHECK(ws.tracker.events.capacity() > 0);
  CHECK(ws.tracker.blocks.capacity() > 0);
  CHECK(ws.allocator.live.capacity() > 0);
  CHECK(ws.allocator.traces.capacity() > 0);
}

TEST_CASE("an estimate that throws leaves the workspace usable", "[estimate][workspace]") {
  EstimateWorkspace ws;
  const ModelSpec m = load_zoo_model("gpt2");
  RunConfig c = lm(2, 256, Precision::bf16);
  ws.recycle(estimate(m, c, {}, ws));
  RunConfig bad = c;
  bad.grad_accum_steps = int64_t{1} << 40;  // refused before any replay
  CHECK_THROWS_AS(estimate(m, bad, {}, ws), InputError);
  require_same(estimate(m, c, {}), estimate(m, c, {}, ws));
}
