// The planner: bilinear fits reproduce replays, the search agrees with brute force, confirmation replays
// match the closed form, a published point (Megatron-LM PR #482), and the compute term is the step-time model's.
#include <catch2/catch.hpp>

#include "engine/estimate.h"
#include "engine/plan/search.h"
#include "engine/plan/shard_fit.h"
#include "engine/arch/builders.h"
#include "engine/time/case_time.h"
#include "models/zoo.h"

using namespace memplan;
using namespace memplan::plan;

namespace {
RunConfig lm_base(int64_t seq) {
  RunConfig c;
  c.seq_len = seq;
  return c;
}
PlanSpace small_space(int64_t gpus, int64_t capacity_gib) {
  PlanSpace s;
  s.gpus = gpus;
  s.global_batch = 16;
  s.max_micro_batch = 16;
  s.capacity_bytes = capacity_gib << 30;
  s.non_pytorch_bytes = int64_t{830} << 20;
  s.rates.matmul_flops_per_s = 700e12;
  s.rates.fp32_matmul_flops_per_s = 50e12;
  s.rates.hbm_bytes_per_s = 4e12;
  s.rates.intra_node_bytes_per_s = 400e9;
  s.rates.host_link_bytes_per_s = 50e9;
  return s;
}
}  // namespace

TEST_CASE("bilinear fit is exact on its four points and predicts a deeper, larger replay", "[plan]") {
  const Bilinear f = fit_bilinear(10, 14, 30, 40);
  CHECK(f.at(1, 1) == Approx(10));
  CHECK(f.at(2, 1) == Approx(14));
  CHECK(f.at(1, 2) == Approx(30));
  CHECK(f.at(2, 2) == Approx(40));
  // Affinity in b and L on the replay itself: GPT-2 small shards of 1-2 layers predict 12 layers at b 4.
  const ModelSpec m = load_zoo_model("gpt2");
  const ShardFit fit = fit_shard(m, lm_base(512), Precision::amp_bf16, 1, false);
  RunConfig c = lm_base(512);
  c.precision = Precision::amp_bf16;
  c.optimizer = OptimizerKind::sgd;
  c.batch_size = 4;
  EstimateOptions o;
  o.replay.steps = 1;
  o.simulate_allocator = false;
  const Estimate e = estimate(m, c, o);
  const Ledger& led = e.replay.peak.ledger;
  const double act = static_cast<double>(e.replay.peak.bytes - led[Row::weights] - led[Row::gradients]);
  CHECK(fit.act_peak.at(4, 12) == Approx(act).epsilon(0.01));
  CHECK(fit.params.at(12) == Approx(static_cast<double>(e.trainable_params)));
}

TEST_CASE("tensor-parallel shard divides heads, kv heads, MLP and vocabulary", "[plan]") {
  const ModelSpec m = load_zoo_model("llama-2-70b");
  REQUIRE(tp_supported(m, 8));
  CHECK_FALSE(tp_supported(m, 3));
  const ModelSpec s = local_shard(m, 8, 10);
  CHECK(s.transformer.num_heads == 8);
  CHECK(s.transformer.num_kv_heads == 1);
  CHECK(s.transformer.intermediate_size == 28672 / 8);
  CHECK(s.transformer.vocab_size == 4000);
  CHECK(s.transformer.num_layers == 10);
  CHECK(s.transformer.head_dim == 128);
}

TEST_CASE("search best equals brute force on a small space", "[plan]") {
  const ModelSpec m = load_zoo_model("gpt2-medium");
  Planner p(m, lm_base(1024));
  PlanSpace s = small_space(4, 12);
  s.dp_kinds = {DataParallel::ddp, DataParallel::zero2, DataParallel::fsdp2};
  s.offloads = {Offload::none, Offload::optimizer};
  s.precisions = {Precision::amp_bf16, Precision::bf16};
  const PlanResult r = p.search(s, 3);
  int64_t n = 0;
  const PlanCandidate bf = p.brute_force_best(s, &n);
  REQUIRE_FALSE(r.top.empty());
  CHECK(n > r.configs_evaluated);  // pruning did skip work
  // The fastest closed-form point (the frontier's last) is the brute-force optimum; the confirmed top list
  // may drop it when the replay's allocator slack pushes it over the capacity.
  REQUIRE_FALSE(r.pareto.empty());
  CHECK(r.pareto.back().time.total_s == Approx(bf.time.total_s));
  CHECK(r.top[0].time.total_s >= bf.time.total_s * (1 - 1e-12));
  CHECK(r.top[0].confirmed_device_bytes <= s.capacity_bytes);
  // Pareto frontier: memory ascending, time strictly descending, nothing dominates a frontier point.
  for (size_t i = 1; i < r.pareto.size(); ++i) {
    CHECK(r.pareto[i].device_bytes >= r.pareto[i - 1].device_bytes);
    CHECK(r.pareto[i].time.total_s < r.pareto[i - 1].time.total_s);
  }
}

TEST_CASE("confirmation replay agrees with the closed form", "[plan]") {
  const ModelSpec m = load_zoo_model("llama-3.2-1b");
  Planner p(m, lm_base(2048));
  const PlanSpace s = small_space(8, 80);
  for (int64_t k : {0, 8, 16}) {
    ParallelConfig par;
    par.dp = 4;
    par.tp = 2;
    par.dp_kind = DataParallel::zero1;
    PlanCandidate c = p.evaluate(s, par, 2, Precision::amp_bf16, OptimizerKind::adamw, k);
    p.confirm(c, s);
    // The confirmation adds allocator slack (reserved - allocated); the allocated parts agree closely.
    // Tolerance: the search's closed form may be conservative (shallow fits, see search.cpp regime B) and
    // the confirmation adds allocator slack: within -25 % / +25 %.
    CHECK(static_cast<double>(c.confirmed_device_bytes) >= static_cast<double>(c.device_bytes) * 0.75);
    CHECK(static_cast<double>(c.confirmed_device_bytes) <= static_cast<double>(c.device_bytes) * 1.25);
  }
}

TEST_CASE("Megatron-LM PR #482: Llama-2-7B bf16 TP1 PP2 DP8, MBS 2, GBS 2048 measured 69.1 GB on rank 0", "[plan]") {
  // Setting assumed: seq 4096 (Llama-2 default), flash attention (SDPA), distributed optimizer (our
  // `megatron`: bf16 params, fp32 main grads, fp32 master + Adam / DP), no recompute, 128 micro-batches
  // (1F1B: 2 in flight on stage 0). Our replay is the HF Llama code (python RMSNorm keeps fp32 copies, SiLU
  // and SwiGLU save separately), which saves more per layer than Megatron's fused kernels, so we over-predict;
  // the check brackets the published figure within 30 % and records the number.
  const ModelSpec m = load_zoo_model("llama-2-7b");
  Planner p(m, lm_base(4096));
  PlanSpace s = small_space(16, 0);
  ParallelConfig par;
  par.dp = 8;
  par.pp = 2;
  par.dp_kind = DataParallel::megatron;
  s.global_batch = 2048;
  const PlanCandidate c = p.evaluate(s, par, 2, Precision::bf16, OptimizerKind::adam, 0);
  CHECK(c.par.micro_batches == 128);
  const double gb = static_cast<double>(c.device_bytes) / 1e9;
  WARN("Megatron PR #482 point: predicted " << gb << " GB vs 69.1 GB measured");
  CHECK(gb > 69.1 * 0.7);
  CHECK(gb < 69.1 * 1.3);
}

TEST_CASE("plan: a candidate's compute + recompute is the step-time model of its local shard", "[plan][time]") {
  // Derivation: the step-time model's features are sums over the graph's ops, so affine in the stacked layers
  // (identical layers) and in the micro-batch count; the planner fits them at the shard fit's depths (4 and 8
  // layers of GPT-2's 12) and extrapolates. Its compute + recompute must therefore equal the model applied
  // directly to the candidate's own run (12 layers, G micro-batches, k checkpointed layers), optimizer column
  // excluded (the optimizer stays in the closed form), to rounding. The H200's scales are 1 (DeviceRates).
  const ModelSpec m = load_zoo_model("gpt2");
  const int64_t L = stack_layers(m);
  REQUIRE(L == 12);
  Planner p(m, lm_base(256));
  PlanSpace s = small_space(2, 80);
  struct Row { int64_t tp, b, G, k; Precision prec; };
  const Row rows[] = {{1, 2, 4, 0, Precision::amp_bf16}, {1, 4, 2, 12, Precision::bf16},
                      {2, 2, 4, 5, Precision::amp_bf16}, {1, 1, 8, 3, Precision::fp32}};
  for (const Row& r : rows) {
    INFO("tp " << r.tp << " b " << r.b << " G " << r.G << " k " << r.k);
    ParallelConfig par;
    par.tp = r.tp;
    par.dp = 2 / r.tp;
    par.dp_kind = par.dp > 1 ? DataParallel::ddp : DataParallel::none;
    s.global_batch = par.dp * r.b * r.G;
    const PlanCandidate c = p.evaluate(s, par, r.b, r.prec, OptimizerKind::adamw, r.k);
    REQUIRE(c.par.micro_batches == r.G);
    const ModelSpec shard = local_shard(m, r.tp, L);
    RunConfig cfg = lm_base(256);
    cfg.precision = r.prec;
    cfg.optimizer = OptimizerKind::sgd;
    cfg.batch_size = r.b;
    cfg.grad_accum_steps = r.G;
    cfg.grad_checkpointing = r.k > 0;
    for (int64_t i = L - r.k; r.k > 0 && r.k < L && i < L; ++i) cfg.checkpoint_layers.push_back(i);
    const Graph g = build_graph(shard, cfg);
    timing::Features f = timing::training_features(g, cfg, timing::h200_op_rates());
    f[timing::kOpt] = 0;
    const double direct_s = timing::predict(f, timing::h200_coefficients()).total_s;
    CHECK(c.time.compute_s + c.time.recompute_s == Approx(direct_s).epsilon(1e-9));
    if (r.k == 0) CHECK(c.time.recompute_s == Approx(0).margin(1e-12));
    else CHECK(c.time.recompute_s > 0);
  }
}

TEST_CASE("plan: a closed form optimistic over the whole fastest stretch still yields a confirmed plan", "[plan]") {
  // Llama-2-70B, s4096, on 1,024 GPUs capped at 74 GiB (bench_plan.cpp's BM_Plan70B_1024 rates): the closed form
  // puts the fastest candidates near 66 GiB, their confirmation replays near 75, so the first 12 confirmed are all
  // rejected (measured on this tree, k = 2; 15 before the step-time fit took in every timed row, 17 for k = 3
  // before checkpointing's host cost moved the ranking) and the next fits. The old budget of 4k + 4 = 12
  // confirmations for k = 2 would end before any fits (derived: 12 rejected >= 12); while none has fitted the search
  // goes on, up to 16k + 16.
  PlanSpace s;
  s.gpus = 1024;
  s.global_batch = 1024;
  s.capacity_bytes = int64_t{74} << 30;
  s.non_pytorch_bytes = int64_t{830} << 20;
  s.rates.matmul_flops_per_s = 0.7 * 989e12;
  s.rates.fp32_matmul_flops_per_s = 0.7 * 67e12;
  s.rates.hbm_bytes_per_s = 0.8 * 3.35e12;
  s.rates.intra_node_bytes_per_s = 450e9;
  s.rates.host_link_bytes_per_s = 64e9;
  Planner p(load_zoo_model("llama-2-70b"), lm_base(4096));
  const PlanResult r = p.search(s, 2);
  CHECK(r.rejected_on_confirmation >= 12);  // the stretch this case is about
  REQUIRE(!r.top.empty());
  CHECK(r.top[0].confirmed);
  CHECK(r.top[0].confirmed_device_bytes <= s.capacity_bytes);
}
