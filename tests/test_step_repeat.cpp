// Tests of engine/alloc/step_repeat.h: a training step derived from the previous one (not replayed) must give
// exactly what replaying it gives. Every test replays the same stream twice, with and without the step starts,
// and compares every figure and the layout each replay ends in (block ids included); the hand-made scenarios
// also state whether the shortcut may be taken, from the derivations written next to them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/alloc/allocator_model.h"
#include "engine/alloc/caching_allocator.h"
#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/estimate.h"
#include "engine/step_replay.h"
#include "models/zoo.h"

using namespace memplan;

namespace {

constexpr int64_t MiB = kMiB;

void require_same_stats(const AllocatorStats& a, const AllocatorStats& b) {
  REQUIRE(a.peak_reserved_bytes == b.peak_reserved_bytes);
  REQUIRE(a.peak_allocated_bytes == b.peak_allocated_bytes);
  REQUIRE(a.reserved_at_end_bytes == b.reserved_at_end_bytes);
  REQUIRE(a.allocated_at_end_bytes == b.allocated_at_end_bytes);
  REQUIRE(a.allocated_at_peak_reserved_bytes == b.allocated_at_peak_reserved_bytes);
  REQUIRE(a.reserved_at_peak_reserved_bytes == b.reserved_at_peak_reserved_bytes);
  REQUIRE(a.num_alloc_retries == b.num_alloc_retries);
  REQUIRE(a.num_segments == b.num_segments);
  REQUIRE(a.num_skipped_workspaces == b.num_skipped_workspaces);
  REQUIRE(a.num_device_allocs == b.num_device_allocs);
  REQUIRE(a.window_peak_allocated_bytes == b.window_peak_allocated_bytes);
  REQUIRE(a.oom == b.oom);
  REQUIRE(a.oom_event_index == b.oom_event_index);
  REQUIRE(a.oom_requested_bytes == b.oom_requested_bytes);
  REQUIRE(a.oom_allocated_bytes == b.oom_allocated_bytes);
  REQUIRE(a.oom_reserved_bytes == b.oom_reserved_bytes);
  REQUIRE(a.reserved_curve_bytes == b.reserved_curve_bytes);
  REQUIRE(a.allocated_after_events_bytes == b.allocated_after_events_bytes);
}

void require_same_layout(const CachingAllocator& a, const CachingAllocator& b) {
  const auto sa = a.segments(), sb = b.segments();
  REQUIRE(sa.size() == sb.size());
  for (size_t s = 0; s < sa.size(); ++s) {
    REQUIRE(sa[s].address == sb[s].address);
    REQUIRE(sa[s].address_space_bytes == sb[s].address_space_bytes);
    REQUIRE(sa[s].mapped_bytes == sb[s].mapped_bytes);
    REQUIRE(sa[s].allocated_bytes == sb[s].allocated_bytes);
    REQUIRE(sa[s].small == sb[s].small);
    REQUIRE(sa[s].expandable == sb[s].expandable);
    REQUIRE(sa[s].stream == sb[s].stream);
    REQUIRE(sa[s].blocks.size() == sb[s].blocks.size());
    for (size_t i = 0; i < sa[s].blocks.size(); ++i) {
      const auto &x = sa[s].blocks[i], &y = sb[s].blocks[i];
      REQUIRE(x.address == y.address);
      REQUIRE(x.size_bytes == y.size_bytes);
      REQUIRE(x.allocated == y.allocated);
      REQUIRE(x.mapped == y.mapped);
      REQUIRE(x.block == y.block);
    }
  }
  REQUIRE(a.num_alloc_retries() == b.num_alloc_retries());
  REQUIRE(a.num_device_allocs() == b.num_device_allocs());
  REQUIRE(a.num_cached_free_blocks() == b.num_cached_free_blocks());
}

// Replays `events` with and without `steps`; requires the same figures and end layout. Returns the derived
// replay's figures (derived_steps says whether the shortcut was taken).
AllocatorStats replay_both(const MemEventStream& events, const std::vector<int64_t>& steps, const AllocatorOptions& opt,
                           AllocatorReplayOptions ro = {}) {
  CachingAllocator full(opt), derived(opt);
  const AllocatorStats f = replay_allocator(full, events, ro);
  ro.step_begin_events = steps;
  const AllocatorStats d = replay_allocator(derived, events, ro);
  REQUIRE(f.derived_steps == 0);
  require_same_stats(f, d);
  require_same_layout(full, derived);
  // The derived replay's model goes on exactly as the replayed one: free what is live, allocate again.
  for (const auto& s : full.segments())
    for (const auto& b : s.blocks)
      if (b.allocated) {
        full.free(b.block);
        derived.free(b.block);
      }
  int32_t fresh = 0;
  for (const MemEvent& e : events) fresh = std::max(fresh, e.block + 1);
  REQUIRE(full.alloc(fresh, 3 * MiB, 0) == derived.alloc(fresh, 3 * MiB, 0));
  require_same_layout(full, derived);
  return d;
}

// A training run written by hand: `build` events, then `steps` steps of the pattern `step` (ids relative to the
// step: each step's blocks get fresh ids), step 1 followed by `first_step_extra` (optimizer state created in
// step 1). Pattern ids >= 1000 name persistent blocks (not renamed).
struct Run {
  MemEventStream events;
  std::vector<int64_t> step_begins;
};
MemEvent A(int32_t id, int64_t bytes, int32_t stream = 0, bool optional = false) {
  return {MemEvent::Action::alloc, id, bytes, stream, optional};
}
MemEvent F(int32_t id) { return {MemEvent::Action::free, id, 0, 0}; }
Run make_run(const std::vector<MemEvent>& build, const std::vector<MemEvent>& step,
             const std::vector<MemEvent>& first_step_extra, int steps) {
  Run r;
  r.events = build;
  int32_t base = 10000;
  for (int s = 0; s < steps; ++s) {
    r.step_begins.push_back(static_cast<int64_t>(r.events.size()));
    for (MemEvent e : step) {
      if (e.block < 1000) e.block += base;
      r.events.push_back(e);
    }
    if (s == 0) r.events.insert(r.events.end(), first_step_extra.begin(), first_step_extra.end());
    base += 1000;
  }
  return r;
}

}  // namespace

TEST_CASE("repeated steps: hand-made runs, shortcut taken exactly when provable", "[alloc][repeat]") {
  struct Row {
    const char* name;
    std::vector<MemEvent> build, step, extra;
    int steps;
    int64_t derived;  // expected AllocatorStats::derived_steps
  };
  const std::vector<Row> rows = {
      // Step 1 cudaMallocs a 20 MiB segment for the 8 MiB block, then the optimizer state P (5 MiB) splits
      // it. Steps 2 and 3 start from the same layout (30 MiB weights, P + 15 MiB free): `same`, step 3 derived.
      {"same layout at steps 2 and 3", {A(1000, 30 * MiB)}, {A(0, 8 * MiB), F(0)}, {A(1001, 5 * MiB)}, 3, 1},
      {"same layout: steps 3 to 5 derived", {A(1000, 30 * MiB)}, {A(0, 8 * MiB), A(1, 700 * 1024), F(0), F(1)},
       {A(1001, 5 * MiB)}, 5, 3},
      // No optimizer state: step 1 makes the 20 MiB (large pool) and 2 MiB (small pool) segments, step 2
      // starts with both cached and finds each where step 1 made it (`grown`); steps 3 on are `same`.
      {"grown from step 2 on", {A(1000, 30 * MiB)}, {A(0, 8 * MiB), A(1, 700 * 1024), F(0), F(1)}, {}, 4, 3},
      // Step 1: a -> new 30 MiB segment S1, b -> new 50 MiB S2, both cached; then P (45 MiB, kept) takes S2,
      // split (5 MiB remainder). Step 2: a -> S1, b finds nothing -> new S3 (50 MiB). Step 3 starts with S3
      // cached in addition: `grown`; a's best fit stays S1 (30 < 50), b finds S3 where step 2 made it: derived.
      {"grown: the new segment is only taken where it was made", {},
       {A(0, 30 * MiB), A(1, 50 * MiB), F(0), F(1)}, {A(1001, 45 * MiB)}, 3, 1},
      // Build leaves C (60 MiB) cached. Step 1: a (49.5 MiB) splits C, b (50) -> new S, both freed; P (50,
      // kept) takes S. Step 2: a splits C, b finds no fit (10.5 MiB left) -> new G (50). Step 3 starts with G
      // cached as well: a's best fit is now G (50 < 60), whose 0.5 MiB remainder stays an unsplit tail, and b
      // splits C: 100 MiB allocated where step 2 had 99.5. Not derived.
      {"grown: the new segment would serve an earlier request, not derived", {A(1000, 60 * MiB), F(1000)},
       {A(0, 49 * MiB + 512 * 1024), A(1, 50 * MiB), F(0), F(1)}, {A(1001, 50 * MiB)}, 3, 0},
      // The grown case on two streams (per-stream pools): a segment per stream, found again in step 2.
      {"grown on two streams", {A(1000, 30 * MiB, 1)}, {A(0, 8 * MiB, 1), A(1, 8 * MiB), F(0), F(1)}, {}, 3, 2},
  };
  for (const Row& r : rows) {
    SECTION(r.name) {
      Run run = make_run(r.build, r.step, r.extra, r.steps);
      const AllocatorStats s = replay_both(run.events, run.step_begins, {});
      CHECK(s.derived_steps == r.derived);
    }
  }
}

TEST_CASE("repeated steps: a block carried from one step into the next is renamed", "[alloc][repeat]") {
  // Each step frees the block the previous step left live and allocates one for the next (a carried buffer).
  // Step 1 frees block 999 (from the build); step s frees step s-1's block 5.
  Run run;
  run.events = {A(1000, 30 * MiB), A(999, 12 * MiB)};
  int32_t prev_carried = 999;
  for (int s = 0; s < 4; ++s) {
    run.step_begins.push_back(static_cast<int64_t>(run.events.size()));
    const int32_t base = 10000 + 1000 * s;
    run.events.push_back(A(base + 1, 4 * MiB));
    run.events.push_back(F(prev_carried));
    run.events.push_back(A(base + 5, 12 * MiB));
    run.events.push_back(F(base + 1));
    prev_carried = base + 5;
  }
  // Step 2 starts as step 1 did plus the 20 MiB segment step 1 made for the 4 MiB block (grown), the 12 MiB
  // block now held by step 1's carried buffer instead of block 999: steps 2 to 4 derived.
  const AllocatorStats s = replay_both(run.events, run.step_begins, {});
  CHECK(s.derived_steps == 3);
}

TEST_CASE("repeated steps: options that keep the shortcut away", "[alloc][repeat]") {
  // Step 3 repeats step 2 from the same layout (the first scenario above): derived unless an option forbids.
  Run run = make_run({A(1000, 30 * MiB)}, {A(0, 8 * MiB), F(0)}, {A(1001, 5 * MiB)}, 3);
  SECTION("a sample inside the derived step") {
    AllocatorReplayOptions ro;
    ro.allocated_after_events = {run.step_begins[2] + 1};
    CHECK(replay_both(run.events, run.step_begins, {}, ro).derived_steps == 0);
  }
  SECTION("samples at the step start and past the end are fine") {
    AllocatorReplayOptions ro;
    ro.allocated_after_events = {run.step_begins[2], static_cast<int64_t>(run.events.size())};
    CHECK(replay_both(run.events, run.step_begins, {}, ro).derived_steps == 1);
  }
  SECTION("the peak window starting inside the previous step") {
    AllocatorReplayOptions ro;
    ro.window_begin_event = run.step_begins[1] + 1;
    CHECK(replay_both(run.events, run.step_begins, {}, ro).derived_steps == 0);
  }
  SECTION("the reserved curve is repeated") {
    AllocatorReplayOptions ro;
    ro.record_reserved_curve = true;
    CHECK(replay_both(run.events, run.step_begins, {}, ro).derived_steps == 1);
  }
  SECTION("a step that differs in one size") {
    run.events.back().block = run.events[run.events.size() - 2].block;
    run.events[run.events.size() - 2].size_bytes = 9 * MiB;
    CHECK(replay_both(run.events, run.step_begins, {}).derived_steps == 0);
  }
  SECTION("steps of different lengths") {
    run.events.push_back(A(50000, MiB));
    CHECK(replay_both(run.events, run.step_begins, {}).derived_steps == 0);
  }
  SECTION("an oversize new segment get_free_block would refuse") {
    // max_split_size 41 MiB: a 40.5 MiB request is below it, its cudaMalloc (42 MiB) above. Each step's
    // request refuses the 42 MiB block cached by the step before and cudaMallocs another: step 3 does so again,
    // although it starts as step 2 did plus step 2's new segment (which it would refuse too).
    AllocatorOptions split;
    split.max_split_size_bytes = 41 * MiB;
    const Run r = make_run({}, {A(0, 40 * MiB + 512 * 1024), F(0)}, {}, 3);
    const AllocatorStats st = replay_both(r.events, r.step_begins, split);
    CHECK(st.derived_steps == 0);
    CHECK(st.num_segments == 3);
  }
  SECTION("bad step starts are an InputError") {
    CachingAllocator a;
    AllocatorReplayOptions ro;
    ro.step_begin_events = {3, 2};
    CHECK_THROWS_AS(replay_allocator(a, run.events, ro), InputError);
    ro.step_begin_events = {static_cast<int64_t>(run.events.size()) + 1};
    CHECK_THROWS_AS(replay_allocator(a, run.events, ro), InputError);
  }
}

// Random runs: a build, step 1 with extra persistent blocks (optimizer state), then identical steps; random
// sizes from a small set (so blocks are reused and ties happen), some on a side stream, some optional. Under
// every option set, the derived replay must equal the full one; the shortcut must be taken in some runs.
TEST_CASE("repeated steps: random runs under every allocator option", "[alloc][repeat]") {
  struct Opt {
    const char* name;
    AllocatorOptions opt;
    double cap_fraction;  // of the uncapped peak reserved; 0: no cap
  };
  AllocatorOptions frac;
  frac.capacity_is_memory_fraction = true;
  AllocatorOptions exp;
  exp.expandable_segments = true;
  AllocatorOptions exp_frac = exp;
  exp_frac.capacity_is_memory_fraction = true;
  AllocatorOptions split;
  split.max_split_size_bytes = 40 * MiB;
  AllocatorOptions pow2;
  pow2.roundup_power2_divisions = 4;
  const std::vector<Opt> opts = {
      {"default", {}, 0},          {"cap 95 %", {}, 0.95},        {"cap 80 %", {}, 0.8},
      {"fraction cap", frac, 0.9}, {"expandable", exp, 0},        {"expandable, fraction cap", exp_frac, 0.9},
      {"max_split_size", split, 0}, {"max_split_size, cap", split, 0.9}, {"roundup_power2_divisions", pow2, 0},
  };
  const int64_t sizes[] = {300 * 1024, 900 * 1024, 3 * MiB, 8 * MiB, 12 * MiB, 25 * MiB, 44 * MiB, 64 * MiB};
  for (const Opt& o : opts) {
    SECTION(o.name) {
      int derived = 0;
      for (uint64_t seed = 0; seed < 60; ++seed) {
        std::mt19937_64 rng(seed);
        auto size = [&] { return sizes[rng() % 8] - static_cast<int64_t>(rng() % 3) * 512; };
        std::vector<MemEvent> build, step, extra;
        for (int i = 0; i < 1 + static_cast<int>(rng() % 4); ++i) build.push_back(A(1000 + i, size()));
        std::vector<int32_t> live;
        const int n = 6 + static_cast<int>(rng() % 30);
        for (int32_t id = 0; id < n; ++id) {
          while (!live.empty() && rng() % 3 == 0) {
            const size_t k = rng() % live.size();
            step.push_back(F(live[k]));
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
          }
          step.push_back(A(id, size(), rng() % 5 == 0 ? 1 : 0, rng() % 7 == 0));
          live.push_back(id);
        }
        for (int32_t id : live) step.push_back(F(id));
        for (int i = 0; i < static_cast<int>(rng() % 3); ++i) extra.push_back(A(2000 + i, size()));
        const Run run = make_run(build, step, extra, 3 + static_cast<int>(rng() % 2));
        AllocatorOptions ao = o.opt;
        if (o.cap_fraction > 0) {
          CachingAllocator probe(o.opt);
          const int64_t peak = replay_allocator(probe, run.events).peak_reserved_bytes;
          ao.capacity_bytes = static_cast<int64_t>(static_cast<double>(peak) * o.cap_fraction);
        }
        AllocatorReplayOptions ro;
        ro.record_reserved_curve = seed % 2 == 0;
        ro.window_begin_event = run.step_begins[0];
        const AllocatorStats s = replay_both(run.events, run.step_begins, ao, ro);
        derived += s.derived_steps > 0;
      }
      INFO("runs with derived steps: " << derived << " of 60");
      CHECK(derived > 0);
    }
  }
}

// Real training runs: the figures an estimate reports with the step starts (as estimate() passes them) equal a
// full replay's, uncapped, capped and with expandable segments; the runs are chosen so that some take the
// shortcut (checked) and the Llama-2-70B benchmark run, whose step 2 cudaMallocs segments that step 3 would take
// earlier than step 2 made them, does not.
TEST_CASE("repeated steps: real training runs, derived figures equal the full replay's", "[alloc][repeat]") {
  struct Row {
    const char* model;
    int64_t batch, seq;
    Precision precision;
    bool ckpt;
    bool expandable;
    int64_t derived;  // uncapped derived_steps, as found (the equality is what is checked)
  };
  const std::vector<Row> rows = {
      {"tinyllama-1.1b", 1, 512, Precision::bf16, false, false, 1},
      {"vit_b_16", 1, 0, Precision::fp32, false, false, 1},
      {"gpt2-medium", 1, 512, Precision::bf16, false, true, 1},
      {"gpt2", 4, 512, Precision::amp_bf16, false, false, 0},
      {"llama-2-70b", 1, 4096, Precision::bf16, true, false, 0},
  };
  for (const Row& r : rows) {
    SECTION(r.model) {
      const ModelSpec m = load_zoo_model(r.model);
      RunConfig c;
      c.batch_size = r.batch;
      c.seq_len = r.seq > 0 ? r.seq : 512;
      c.image_size = 224;
      c.precision = r.precision;
      c.grad_checkpointing = r.ckpt;
      const Graph g = build_graph(m, c);
      const ReplayResult rr = replay_training(g, c);
      std::vector<int64_t> steps;
      for (const StepStats& st : rr.steps) steps.push_back(st.event_begin);
      AllocatorOptions ao;
      ao.expandable_segments = r.expandable;
      AllocatorReplayOptions ro;
      ro.window_begin_event = steps.front();
      ro.record_reserved_curve = true;
      const AllocatorStats s = replay_both(rr.events, steps, ao, ro);
      CHECK(s.derived_steps == r.derived);
      ao.capacity_bytes = s.peak_reserved_bytes - 64 * MiB;  // the cap matters: retries or an OOM
      replay_both(rr.events, steps, ao, ro);
    }
  }
}

// ---------------------------------------------------------------- the step replay (engine/step_replay.h)

namespace {

void require_same_replay(const ReplayResult& a, const ReplayResult& b) {
  REQUIRE(a.weights_bytes == b.weights_bytes);
  REQUIRE(a.events.size() == b.events.size());
  int64_t first_diff = -1;
  for (size_t i = 0; i < a.events.size() && first_diff < 0; ++i) {
    const MemEvent &x = a.events[i], &y = b.events[i];
    if (x.action != y.action || x.block != y.block || x.size_bytes != y.size_bytes || x.stream != y.stream ||
        x.optional != y.optional)
      first_diff = static_cast<int64_t>(i);
  }
  REQUIRE(first_diff == -1);
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t s = 0; s < a.steps.size(); ++s) {
    const StepStats &x = a.steps[s], &y = b.steps[s];
    REQUIRE(x.start == y.start);
    REQUIRE(x.batch == y.batch);
    REQUIRE(x.fwd_peak == y.fwd_peak);
    REQUIRE(x.after_fwd == y.after_fwd);
    REQUIRE(x.bwd_peak == y.bwd_peak);
    REQUIRE(x.micro_rest_peak == y.micro_rest_peak);
    REQUIRE(x.after_bwd == y.after_bwd);
    REQUIRE(x.opt_peak == y.opt_peak);
    REQUIRE(x.end == y.end);
    REQUIRE(x.step_peak == y.step_peak);
    REQUIRE(x.event_begin == y.event_begin);
    REQUIRE(x.event_end == y.event_end);
    REQUIRE(x.peak.bytes == y.peak.bytes);
    REQUIRE(x.peak.where.step == y.peak.where.step);
    REQUIRE(x.peak.where.micro_batch == y.peak.where.micro_batch);
    REQUIRE(x.peak.where.phase == y.peak.where.phase);
    REQUIRE(x.peak.where.op == y.peak.where.op);
    REQUIRE(x.peak.where.recompute == y.peak.where.recompute);
    REQUIRE(x.peak.ledger.bytes == y.peak.ledger.bytes);
  }
  REQUIRE(a.peak.bytes == b.peak.bytes);
  REQUIRE(a.peak.where.step == b.peak.where.step);
  REQUIRE(a.peak.ledger.bytes == b.peak.ledger.bytes);
  REQUIRE(a.layers.size() == b.layers.size());
  for (size_t l = 0; l < a.layers.size(); ++l) {
    REQUIRE(a.layers[l].name == b.layers[l].name);
    REQUIRE(a.layers[l].param_count == b.layers[l].param_count);
    REQUIRE(a.layers[l].param_bytes == b.layers[l].param_bytes);
    REQUIRE(a.layers[l].saved_bytes == b.layers[l].saved_bytes);
    REQUIRE(a.layers[l].transient_peak_bytes == b.layers[l].transient_peak_bytes);
  }
}

}  // namespace

TEST_CASE("repeated steps in the step replay: a repeated step equals its replay", "[replay][repeat]") {
  struct Row {
    const char* name;
    const char* model;
    int64_t batch, seq;
    Precision precision;
    int steps;
    void (*tweak)(RunConfig&);
    int32_t repeated;  // expected ReplayResult::repeated_steps
  };
  const std::vector<Row> rows = {
      {"gpt2 fp32, 3 steps", "gpt2", 2, 128, Precision::fp32, 3, [](RunConfig&) {}, 1},
      {"gpt2 amp bf16, 5 steps", "gpt2", 2, 128, Precision::amp_bf16, 5, [](RunConfig&) {}, 3},
      {"gpt2 checkpointing, accumulation", "gpt2", 2, 128, Precision::amp_fp16, 4,
       [](RunConfig& c) { c.grad_checkpointing = true; c.grad_accum_steps = 2; }, 2},
      {"gpt2 LoRA", "gpt2", 2, 128, Precision::fp32, 3, [](RunConfig& c) { c.lora.r = 8; c.lora.all_linear = true; }, 1},
      {"gpt2 frozen layers, sgd momentum", "gpt2", 2, 128, Precision::bf16, 3,
       [](RunConfig& c) { c.frozen_layers = {0, 1, 2}; c.optimizer = OptimizerKind::sgd_momentum; }, 1},
      {"qwen2.5-0.5b adafactor", "qwen2.5-0.5b", 1, 256, Precision::bf16, 3,
       [](RunConfig& c) { c.optimizer = OptimizerKind::adafactor; }, 1},
      {"bert-base fused adamw", "bert-base", 2, 128, Precision::amp_bf16, 3,
       [](RunConfig& c) { c.optimizer_impl = OptimizerImpl::fused; }, 1},
      {"resnet18 (optional cuDNN workspaces)", "resnet18", 8, 0, Precision::amp_bf16, 3, [](RunConfig&) {}, 1},
      {"one step", "gpt2", 2, 128, Precision::fp32, 1, [](RunConfig&) {}, 0},
      {"two steps", "gpt2", 2, 128, Precision::fp32, 2, [](RunConfig&) {}, 0},
  };
  for (const Row& r : rows) {
    SECTION(r.name) {
      const ModelSpec m = load_zoo_model(r.model);
      RunConfig c;
      c.batch_size = r.batch;
      c.seq_len = r.seq > 0 ? r.seq : 128;
      c.image_size = 64;
      c.precision = r.precision;
      r.tweak(c);
      const Graph g = build_graph(m, c);
      ReplayOptions all;
      all.steps = r.steps;
      all.repeat_steps = false;
      ReplayOptions repeat = all;
      repeat.repeat_steps = true;
      const ReplayResult full = replay_training(g, c, all);
      const ReplayResult fast = replay_training(g, c, repeat);
      CHECK(full.repeated_steps == 0);
      CHECK(fast.repeated_steps == r.repeated);
      require_same_replay(full, fast);
      // A timeline needs every event's location: never repeated.
      repeat.record_timeline = true;
      CHECK(replay_training(g, c, repeat).repeated_steps == 0);
    }
  }
}

TEST_CASE("repeated steps in the step replay: dynamic shapes repeat only a step of the previous step's graph",
          "[replay][repeat]") {
  const ModelSpec m = load_zoo_model("gpt2");
  RunConfig c;
  c.batch_size = 2;
  c.precision = Precision::amp_bf16;
  c.seq_len = 128;
  const Graph g128 = build_graph(m, c);
  c.seq_len = 256;
  const Graph g256 = build_graph(m, c);
  const std::vector<const Graph*> seq = {&g128, &g256, &g128, &g256, &g256, &g256, &g128};
  ReplayOptions all;
  all.repeat_steps = false;
  const ReplayResult full = replay_training_sequence(seq, c, all);
  const ReplayResult fast = replay_training_sequence(seq, c, {});
  // The fifth and sixth steps (g256 after g256): the replay state at a step's start does not depend on the
  // shape of the step before (the allocator's layout does, but that is the allocator's business).
  CHECK(fast.repeated_steps == 2);
  require_same_replay(full, fast);
}
