// Step replay on graphs small enough to follow by hand, and invariants on the bundled models.
#include <catch2/catch.hpp>

#include "engine/arch/builders.h"
#include "engine/estimate.h"
#include "engine/graph_builder.h"
#include "models/zoo.h"

using namespace memplan;

namespace {

// x [64,128] f32 -> Linear(128->256) -> relu_ -> Linear(256->128) -> cross_entropy, plain SGD, fp32.
Graph tiny_mlp(const RunConfig& cfg) {
  GraphBuilder b(cfg);
  TensorId w1 = b.param("fc1.weight", {256, 128});
  TensorId b1 = b.param("fc1.bias", {256});
  TensorId w2 = b.param("fc2.weight", {128, 256});
  TensorId b2 = b.param("fc2.bias", {128});
  TensorId x = b.input({64, 128}, DType::f32);
  TensorId y = b.input({64}, DType::i64);
  TensorId h = b.inplace("relu_", b.linear(x, w1, b1), true);
  TensorId logits = b.linear(h, w2, b2);
  b.mark_model_end();
  b.hold(logits);
  TensorId loss = b.cross_entropy(logits, y);
  b.drop(logits);
  b.set_loss(loss);
  return b.finish();
}

}  // namespace

TEST_CASE("tiny MLP step 1 follows the hand derivation byte for byte", "[replay]") {
  RunConfig cfg;
  cfg.optimizer = OptimizerKind::sgd;
  const Graph g = tiny_mlp(cfg);
  EstimateOptions opt;
  opt.simulate_allocator = false;
  const Estimate e = estimate_graph(g, cfg, opt);
  const auto& s1 = e.replay.steps[0];
  // weights: W1 131072 + b1 1024 + W2 131072 + b2 512 = 263680
  CHECK(e.weights_bytes == 263680);
  // batch: x 64*128*4 = 32768, y 64*8 = 512 -> 296960
  CHECK(s1.batch == 296960);
  // forward: cuBLAS 32 MiB + cuBLASLt 1 MiB workspaces (34603008) at the first GEMM, h 65536, logits 32768,
  // log-probs 32768, loss 512 + total_weight 512 -> 35032064 at nll_loss.
  CHECK(s1.fwd_peak == 35032064);
  // after forward the logits (held by the output until forward returned) are gone: -32768.
  CHECK(s1.after_fwd == 34999296);
  // backward, from 34999296: loss grad +512, nll_loss grad +32768, then -512 (loss grad) -512 (total_weight)
  // -> 35031552; log_softmax grad +32768, -32768 (its incoming grad), -32768 (saved log-probs) -> 34998784;
  // fc2: dh +65536, then the autograd thread's cuBLAS workspace +33554432 (its first GEMM has run; backward's
  // GEMMs are plain mm, so no cuBLASLt workspace), dW2 +131072, db2 +512, -32768 (dlogits) -> 68717568;
  // relu_: +65536 (threshold_backward), -65536 (dr), -65536 (h, no longer saved) -> 68652032;
  // fc1 (x needs no grad): dW1 +131072, db1 +1024 -> 68784128, the peak.
  CHECK(s1.bwd_peak == 68784128);
  // after backward: weights + their grads (263680) + the forward thread's and the autograd thread's workspaces;
  // the batch and the loss are freed.
  CHECK(s1.after_bwd == 263680 + 263680 + 34603008 + 33554432);
  // SGD without momentum holds no state and allocates no temporaries; zero_grad frees the grads.
  CHECK(s1.opt_peak == s1.after_bwd);
  CHECK(s1.end == 263680 + 34603008 + 33554432);
}

TEST_CASE("ledger rows add up to the peak, and steps chain", "[replay]") {
  struct Scenario {
    const char* model;
    Precision precision;
    bool ckpt;
    int64_t batch, seq, accum;
  };
  const Scenario table[] = {
      {"gpt2", Precision::fp32, false, 2, 256, 1},
      {"gpt2", Precision::amp_bf16, true, 2, 256, 2},
      {"tinyllama-1.1b", Precision::bf16, false, 1, 256, 1},
      {"bert-base", Precision::amp_fp16, false, 4, 128, 1},
      {"resnet18", Precision::amp_bf16, false, 8, 0, 1},
  };
  for (const auto& sc : table) {
    DYNAMIC_SECTION(sc.model << " " << precision_name(sc.precision)) {
      const ModelSpec m = load_zoo_model(sc.model);
      RunConfig c;
      c.batch_size = sc.batch;
      c.seq_len = sc.seq;
      c.image_size = 64;
      c.precision = sc.precision;
      c.grad_checkpointing = sc.ckpt;
      c.grad_accum_steps = sc.accum;
      const Estimate e = estimate(m, c);
      CHECK(e.replay.peak.ledger.total() == e.replay.peak.bytes);
      for (const auto& s : e.replay.steps) CHECK(s.peak.ledger.total() == s.peak.bytes);
      REQUIRE(e.replay.steps.size() == 3);
      CHECK(e.replay.steps[1].start == e.replay.steps[0].end);
      CHECK(e.replay.steps[1].end == e.replay.steps[1].start);  // steady state returns to where it began
      CHECK(e.allocator.peak_reserved_bytes >= e.replay.peak.bytes);
      // Deterministic: the same input gives the same numbers.
      const Estimate again = estimate(m, c);
      CHECK(again.replay.peak.bytes == e.replay.peak.bytes);
      CHECK(again.allocator.peak_reserved_bytes == e.allocator.peak_reserved_bytes);
    }
  }
}

TEST_CASE("checkpointing, accumulation and frozen layers move memory the way the mechanisms say", "[replay]") {
  const ModelSpec m = load_zoo_model("gpt2");
  RunConfig c;
  c.batch_size = 4;
  c.seq_len = 512;
  auto saved = [&](const RunConfig& rc) {  // what the forward leaves behind for backward
    const Estimate e = estimate(m, rc);
    const auto& s = e.replay.steps[1];
    return s.after_fwd - s.start;
  };
  const int64_t base = saved(c);
  RunConfig ck = c;
  ck.grad_checkpointing = true;
  // Checkpointing every layer keeps only layer inputs (plus the loss's log-probs, outside the layers).
  const int64_t all = saved(ck);
  CHECK(all < base / 3);
  RunConfig some = c;
  some.grad_checkpointing = true;
  some.checkpoint_layers = {0, 1, 2};
  const int64_t partial = saved(some);
  CHECK(partial < base);
  CHECK(partial > all);
  RunConfig frozen = c;
  frozen.frozen_layers = {0, 1, 2, 3, 4, 5};
  const Estimate ef = estimate(m, frozen);
  CHECK(ef.trainable_params < ef.params);
  CHECK(ef.replay.steps[1].start < estimate(m, c).replay.steps[1].start);  // no optimizer state for them
}
