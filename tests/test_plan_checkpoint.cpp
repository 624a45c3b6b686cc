// Checkpoint placement DP: exact against brute force on small chains, never worse than every-k or sqrt(n),
// and confirmed against the replay through RunConfig::checkpoint_layers.
#include <catch2/catch.hpp>

#include <random>

#include "engine/estimate.h"
#include "engine/plan/checkpoint_dp.h"
#include "models/zoo.h"

using namespace memplan;
using namespace memplan::plan;

namespace {
std::vector<ChainLayer> random_chain(std::mt19937& rng, size_t n, bool selective) {
  std::uniform_int_distribution<int64_t> saved(4, 40), input(1, 3);
  std::uniform_real_distribution<double> t(0.5, 5.0);
  std::vector<ChainLayer> c(n);
  for (auto& l : c) {
    l.saved_bytes = saved(rng);
    l.input_bytes = input(rng);
    l.recompute_s = t(rng);
    if (selective) {
      l.selective_saved_bytes = l.saved_bytes / 3;
      l.selective_s = l.recompute_s / 4;
    }
  }
  return c;
}

double brute_force(const std::vector<ChainLayer>& c, int64_t budget, int options) {
  const size_t n = c.size();
  double best = -1;
  std::vector<Ckpt> choice(n);
  int64_t total = 1;
  for (size_t i = 0; i < n; ++i) total *= options;
  for (int64_t code = 0; code < total; ++code) {
    int64_t x = code;
    for (size_t i = 0; i < n; ++i, x /= options) choice[i] = static_cast<Ckpt>(x % options);
    const ChainPlan p = evaluate_chain(c, choice);
    if (p.peak_bytes <= budget && (best < 0 || p.recompute_s < best)) best = p.recompute_s;
  }
  return best;
}
}  // namespace

TEST_CASE("evaluate_chain: the recompute peak sees only earlier layers", "[plan]") {
  // saved 10 / input 1 each; checkpoint layer 2 of 3: prefix before it 10 + 10 = 20, + its saved 10 = 30;
  // kept total 10 + 10 + 1 = 21 -> peak 30.
  std::vector<ChainLayer> c(3, ChainLayer{10, 1, 1.0, 0, 0});
  const ChainPlan p = evaluate_chain(c, {Ckpt::none, Ckpt::none, Ckpt::full});
  CHECK(p.peak_bytes == 30);
  // Checkpointing layer 0 instead: recompute peak 0 + 10, kept 1 + 10 + 10 = 21.
  CHECK(evaluate_chain(c, {Ckpt::full, Ckpt::none, Ckpt::none}).peak_bytes == 21);
}

TEST_CASE("optimal_checkpoints equals brute force on heterogeneous chains", "[plan]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const bool sel = trial % 2 == 1;
    const auto c = random_chain(rng, 7, sel);
    int64_t all = 0;
    for (const auto& l : c) all += l.saved_bytes;
    for (int64_t budget : {all / 4, all / 3, all / 2, all}) {
      const double bf = brute_force(c, budget, sel ? 3 : 2);
      const ChainPlan p = optimal_checkpoints(c, budget, 1);
      if (bf < 0) {
        CHECK_FALSE(p.feasible);
        continue;
      }
      REQUIRE(p.feasible);
      CHECK(p.peak_bytes <= budget);
      CHECK(p.recompute_s == Approx(bf));
    }
  }
}

TEST_CASE("optimal_checkpoints is never worse than every-k or sqrt(n)", "[plan]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const auto c = random_chain(rng, 24, false);
    std::vector<ChainPlan> baselines{sqrt_n(c)};
    for (int64_t k = 1; k <= 6; ++k) baselines.push_back(every_k(c, k));
    for (const ChainPlan& base : baselines) {
      const ChainPlan p = optimal_checkpoints(c, base.peak_bytes, 1);
      REQUIRE(p.feasible);
      CHECK(p.peak_bytes <= base.peak_bytes);
      CHECK(p.recompute_s <= base.recompute_s + 1e-12);
    }
  }
}

TEST_CASE("a coarse quantum stays within the budget", "[plan]") {
  std::mt19937 rng(3);
  const auto c = random_chain(rng, 30, true);
  const ChainPlan fine = optimal_checkpoints(c, 400, 1);
  const ChainPlan coarse = optimal_checkpoints(c, 400, 7);
  REQUIRE(coarse.feasible);
  CHECK(coarse.peak_bytes <= 400);
  CHECK(coarse.recompute_s >= fine.recompute_s - 1e-12);
}

TEST_CASE("checkpointing the DP's layers in the replay lowers the peak as the chain model says", "[plan]") {
  // GPT-2 small, bf16, b 4 x 1024: replay none / all to get per-layer saved and input bytes, place the
  // layers for a budget half-way, and confirm with RunConfig::checkpoint_layers.
  const ModelSpec m = load_zoo_model("gpt2");
  RunConfig c;
  c.batch_size = 4;
  c.seq_len = 1024;
  c.precision = Precision::amp_bf16;
  c.optimizer = OptimizerKind::sgd;
  EstimateOptions o;
  o.replay.steps = 1;
  o.simulate_allocator = false;
  const int64_t none = estimate(m, c, o).replay.peak.bytes;
  c.grad_checkpointing = true;
  const int64_t all = estimate(m, c, o).replay.peak.bytes;
  REQUIRE(all < none);
  // Per layer: 12 identical layers; saved ~ (none - all) / 12 + input.
  const int64_t per = (none - all) / 12;
  std::vector<ChainLayer> chain(12, ChainLayer{per, 0, 1.0, 0, 0});
  const ChainPlan p = optimal_checkpoints(chain, per * 6, per / 64);
  REQUIRE(p.feasible);
  c.checkpoint_layers = full_layers(p);
  const int64_t placed = estimate(m, c, o).replay.peak.bytes;
  CHECK(placed < none);
  CHECK(placed > all);
  // The chain model's saving (layers checkpointed x per) matches the replay within one layer.
  const double predicted = static_cast<double>(none - static_cast<int64_t>(c.checkpoint_layers.size()) * per);
  CHECK(std::abs(static_cast<double>(placed) - predicted) <= static_cast<double>(per));
}
