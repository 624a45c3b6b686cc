// Planner speed with fixed inputs; each benchmark checks its answer (a fast wrong result aborts).
//   BM_PlanSearch      closed-form evaluations per second (fits cached, no confirmation replays), after
//                      checking on a small space that the search's best equals the brute-force best;
//   BM_Plan70B_1024    a full cold plan (fits, search, top-3 confirmation replays): llama-2-70b, 1024 x H100;
//   BM_Estimate70B     one estimate() of the 80-layer llama-2-70b zoo entry (b 1 x 4096, bf16, AdamW).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/estimate.h"
#include "engine/plan/search.h"
#include "models/zoo.h"

using namespace memplan;
using namespace memplan::plan;

namespace {
PlanSpace space(int64_t gpus, int64_t global_batch, int64_t capacity_gib) {
  PlanSpace s;
  s.gpus = gpus;
  s.global_batch = global_batch;
  s.capacity_bytes = capacity_gib << 30;
  s.non_pytorch_bytes = int64_t{830} << 20;
  s.rates.matmul_flops_per_s = 0.7 * 989e12;  // H100 SXM bf16 dense, 70 % achieved
  s.rates.fp32_matmul_flops_per_s = 0.7 * 67e12;
  s.rates.hbm_bytes_per_s = 0.8 * 3.35e12;
  s.rates.intra_node_bytes_per_s = 450e9;
  s.rates.host_link_bytes_per_s = 64e9;
  return s;
}
RunConfig lm(int64_t seq) {
  RunConfig c;
  c.seq_len = seq;
  return c;
}

void check_against_brute_force() {
  Planner p(load_zoo_model("gpt2-medium"), lm(1024));
  PlanSpace s = space(4, 16, 12);
  s.max_micro_batch = 16;
  s.dp_kinds = {DataParallel::ddp, DataParallel::zero2, DataParallel::fsdp2};
  s.offloads = {Offload::none, Offload::optimizer};
  const PlanResult r = p.search(s, 1);
  const PlanCandidate bf = p.brute_force_best(s);
  if (r.pareto.empty() || std::abs(r.pareto.back().time.total_s - bf.time.total_s) > 1e-12 * bf.time.total_s) {
    std::fprintf(stderr, "BM_PlanSearch: search best differs from brute force\n");
    std::abort();
  }
}
}  // namespace

static void BM_PlanSearch(benchmark::State& state) {
  check_against_brute_force();
  Planner p(load_zoo_model("llama-2-70b"), lm(4096));
  const PlanSpace s = space(1024, 1024, 80);
  p.search(s, 0);  // fit the shards once; iterations measure evaluation only
  int64_t evaluated = 0;
  for (auto _ : state) {
    const PlanResult r = p.search(s, 0);
    if (r.configs_feasible == 0) std::abort();
    evaluated += r.configs_evaluated;
    benchmark::DoNotOptimize(r.pareto.size());
  }
  state.counters["configs_per_second"] = benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlanSearch)->Unit(benchmark::kMillisecond);

static void BM_Plan70B_1024(benchmark::State& state) {
  const ModelSpec m = load_zoo_model("llama-2-70b");
  const PlanSpace s = space(1024, 1024, 80);
  int64_t evaluated = 0, replays = 0;
  for (auto _ : state) {
    Planner p(m, lm(4096));
    const PlanResult r = p.search(s, 3);
    if (r.top.empty() || r.top[0].confirmed_device_bytes > s.capacity_bytes) std::abort();
    evaluated = r.configs_evaluated;
    replays = r.replays;
  }
  state.counters["configs"] = static_cast<double>(evaluated);
  state.counters["replays"] = static_cast<double>(replays);
}
BENCHMARK(BM_Plan70B_1024)->Unit(benchmark::kMillisecond);

// BM_Estimate70B lives in bench_estimate.cpp (with and without the allocator model).

BENCHMARK_MAIN();  // the one main() of memplan_bench
