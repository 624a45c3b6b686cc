// One estimate of an 80-layer 70B model (issue 2: under 5 ms on the 2-core CI machine). Each benchmark checks
// its answer against an independent figure so a fast wrong result cannot pass.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <utility>

#include "engine/alloc/caching_allocator.h"
#include "engine/arch/builders.h"
#include "engine/estimate.h"
#include "models/zoo.h"

namespace {

memplan::RunConfig config_70b() {
  memplan::RunConfig c;
  c.batch_size = 1;
  c.seq_len = 4096;
  c.precision = memplan::Precision::bf16;
  c.grad_checkpointing = true;
  return c;
}

void check_70b(const memplan::Estimate& e) {
  // Llama-2-70B has 68,976,648,192 parameters (published; models/param_count tests it independently).
  // bf16 AdamW (foreach) steady state holds weights + grads + 2 states = 8 bytes/param at the optimizer step,
  // plus the 1x-parameter foreach temporary: peak >= 10 bytes/param.
  if (e.params != 68976648192LL || e.replay.peak.bytes < 10 * e.params) {
    std::cerr << "BM_Estimate70B: wrong answer (params " << e.params << ", peak " << e.replay.peak.bytes << ")\n";
    std::abort();
  }
}

// Estimates one after another, as the planner runs them: one EstimateWorkspace across the iterations, each
// estimate handed back to it when checked, so that an estimate writes its tables into memory the previous one
// wrote (engine/estimate.h). The first iteration pays what BM_Estimate70BNoWorkspace pays.
void BM_Estimate70B(benchmark::State& state) {
  const memplan::ModelSpec m = memplan::load_zoo_model("llama-2-70b");
  const memplan::RunConfig c = config_70b();
  memplan::EstimateOptions opt;
  opt.simulate_allocator = state.range(0) != 0;
  memplan::EstimateWorkspace ws;
  for (auto _ : state) {
    memplan::Estimate e = memplan::estimate(m, c, opt, ws);
    benchmark::DoNotOptimize(e.replay.peak.bytes);
    state.PauseTiming();
    check_70b(e);
    state.ResumeTiming();
    ws.recycle(std::move(e));
  }
}
BENCHMARK(BM_Estimate70B)->Arg(0)->Arg(1)->ArgNames({"allocator"})->Unit(benchmark::kMillisecond);

// The same estimate without a workspace (a caller making one estimate): every table in fresh memory. After the
// first iteration glibc returns the estimate's freed footprint to the kernel at its end (trim), so each
// iteration page-faults it in again, as the first estimate of a process does.
void BM_Estimate70BNoWorkspace(benchmark::State& state) {
  const memplan::ModelSpec m = memplan::load_zoo_model("llama-2-70b");
  const memplan::RunConfig c = config_70b();
  const memplan::EstimateOptions opt;
  for (auto _ : state) {
    memplan::Estimate e = memplan::estimate(m, c, opt);
    benchmark::DoNotOptimize(e.replay.peak.bytes);
    state.PauseTiming();
    check_70b(e);
    state.ResumeTiming();
  }
}
BENCHMARK(BM_Estimate70BNoWorkspace)->Unit(benchmark::kMillisecond);

// The estimate's two replays alone, on the graph / event stream of one estimate, so each phase can be timed
// (and profiled) apart from the others. Each checks its answer against the whole estimate's.
void BM_StepReplay70B(benchmark::State& state) {
  const memplan::ModelSpec m = memplan::load_zoo_model("llama-2-70b");
  const memplan::RunConfig c = config_70b();
  const memplan::Graph g = memplan::build_graph(m, c);
  const memplan::EstimateOptions opt;
  const memplan::Estimate whole = memplan::estimate(m, c, opt);
  for (auto _ : state) {
    memplan::ReplayResult r = memplan::replay_training(g, c, opt.replay);
    benchmark::DoNotOptimize(r.peak.bytes);
    state.PauseTiming();
    if (r.peak.bytes != whole.replay.peak.bytes || r.events.size() != whole.replay.events.size()) {
      std::cerr << "BM_StepReplay70B: wrong answer\n";
      std::abort();
    }
    state.ResumeTiming();
  }
}
BENCHMARK(BM_StepReplay70B)->Unit(benchmark::kMillisecond);

void BM_AllocatorReplay70B(benchmark::State& state) {
  const memplan::ModelSpec m = memplan::load_zoo_model("llama-2-70b");
  const memplan::RunConfig c = config_70b();
  const memplan::EstimateOptions opt;
  const memplan::Estimate whole = memplan::estimate(m, c, opt);
  memplan::AllocatorReplayOptions ro{.window_begin_event = whole.replay.steps.front().event_begin};
  for (const memplan::StepStats& st : whole.replay.steps) ro.step_begin_events.push_back(st.event_begin);
  for (auto _ : state) {
    memplan::CachingAllocator a(opt.allocator);
    const memplan::AllocatorStats s = memplan::replay_allocator(a, whole.replay.events, ro);
    benchmark::DoNotOptimize(s.peak_reserved_bytes);
    state.PauseTiming();
    if (s.peak_reserved_bytes != whole.allocator.peak_reserved_bytes ||
        s.window_peak_allocated_bytes != whole.allocator.window_peak_allocated_bytes) {
      std::cerr << "BM_AllocatorReplay70B: wrong answer\n";
      std::abort();
    }
    state.ResumeTiming();
  }
}
BENCHMARK(BM_AllocatorReplay70B)->Unit(benchmark::kMillisecond);

void BM_BuildGraph70B(benchmark::State& state) {
  const memplan::ModelSpec m = memplan::load_zoo_model("llama-2-70b");
  const memplan::RunConfig c = config_70b();
  for (auto _ : state) {
    memplan::Graph g = memplan::build_graph(m, c);
    benchmark::DoNotOptimize(g.ops.size());
  }
}
BENCHMARK(BM_BuildGraph70B)->Unit(benchmark::kMillisecond);

}  // namespace

