// Per-rank distributed replay (engine/dist/): FSDP2 sharded sizes derived by hand, ledger balance per strategy.
#include <catch2/catch.hpp>

#include "engine/estimate.h"
#include "engine/errors.h"
#include "models/load_model.h"

using namespace memplan;

namespace {
// A small Llama: hidden 64, intermediate 176, 2 layers, 4 heads (head_dim 16), 2 kv heads, vocab 1000, untied.
ModelSpec tiny_llama() {
  return load_model_text(R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 176,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
      "max_position_embeddings": 512, "tie_word_embeddings": false})", "tiny-llama");
}
RunConfig run(DistStrategy s, int64_t world, Precision p = Precision::bf16) {
  RunConfig c;
  c.batch_size = 2;
  c.seq_len = 128;
  c.precision = p;
  c.distributed.strategy = s;
  c.distributed.world_size = world;
  return c;
}
}  // namespace

TEST_CASE("FSDP2 shards pad dim 0 to a multiple of the world size", "[dist]") {
  // W = 8, rows per shard c = ceil(dim0 / 8), every rank's storage c x row elements (bf16, 2 B):
  //   embed / lm_head [1000, 64]: c 125 -> 8000 each
  //   per layer: q [64, 64] c 8 -> 512, k / v [32, 64] c 4 -> 256 each, o 512, gate / up [176, 64] c 22 -> 1408
  //   each, down [64, 176] c 8 -> 1408, two norms [64] c 8 -> 8 each: 5776
  //   final norm 8
  //   total 8000 + 2 x 5776 + 8 + 8000 = 27560 elements = 55120 bytes; unsharded 2 B x (2 x 64000 + 2 x
  //   (4096 + 2048 + 2048 + 4096 + 3 x 11264 + 128) + 64) = 2 x (128000 + 92416 + 64) = 440960 bytes.
  const Estimate e = estimate(tiny_llama(), run(DistStrategy::fsdp2, 8));
  REQUIRE(e.distributed);
  CHECK(e.distributed->sharded_param_bytes == 55120);
  CHECK(e.distributed->full_param_bytes == 440960);
  CHECK(e.distributed->units == 3);  // two layers and the root
  // The largest unit all-gathered: the root, embed + final norm + lm_head = W x (8000 + 8 + 8000) x 2 B.
  CHECK(e.distributed->largest_unit_unsharded_bytes == 8 * 16008 * 2);
  // Rank 0's optimizer state: its rows, all c of them.
  CHECK(e.distributed->optimizer_param_numel == 27560);
}

TEST_CASE("per-rank ledgers balance for every strategy", "[dist]") {
  struct Row1 {
    const char* name;
    DistStrategy s;
    int64_t world, tp;
    Precision p;
  };
  const Row1 rows[] = {
      {"fsdp2 w2", DistStrategy::fsdp2, 2, 1, Precision::bf16},
      {"fsdp2 w8 amp", DistStrategy::fsdp2, 8, 1, Precision::amp_bf16},
      {"ddp w4", DistStrategy::ddp, 4, 1, Precision::fp32},
      {"tp2", DistStrategy::none, 2, 2, Precision::bf16},
      {"fsdp2 + tp2", DistStrategy::fsdp2, 8, 2, Precision::bf16},
      {"zero1 w4", DistStrategy::zero1, 4, 1, Precision::bf16},
      {"zero2 w4", DistStrategy::zero2, 4, 1, Precision::bf16},
      {"zero3 w4", DistStrategy::zero3, 4, 1, Precision::bf16},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      RunConfig c = run(r.s, r.world, r.p);
      c.distributed.tp = r.tp;
      const Estimate e = estimate(tiny_llama(), c);
      CHECK(e.replay.peak.ledger.total() == e.replay.peak.bytes);
      CHECK(e.allocator.peak_reserved_bytes >= e.replay.peak.bytes);
    }
  }
}

TEST_CASE("distributed configurations the replay does not model are refused naming the field", "[dist]") {
  RunConfig c = run(DistStrategy::fsdp2, 6);
  c.distributed.tp = 4;
  CHECK_THROWS_WITH(estimate(tiny_llama(), c), Catch::Contains("distributed.world_size"));
  c = run(DistStrategy::none, 4);
  CHECK_THROWS_WITH(estimate(tiny_llama(), c), Catch::Contains("distributed.strategy"));
  c = run(DistStrategy::fsdp2, 4);
  c.distributed.rank = 4;
  CHECK_THROWS_WITH(estimate(tiny_llama(), c), Catch::Contains("distributed.rank"));
  c = run(DistStrategy::fsdp2, 4);
  c.distributed.param_dtype = "int4";
  CHECK_THROWS_WITH(estimate(tiny_llama(), c), Catch::Contains("distributed.param_dtype"));
}

TEST_CASE("ZeRO-2 / ZeRO-3 model states per rank, derived from DeepSpeed's layout", "[dist]") {
  // tiny Llama, 220480 parameters, all trainable, bf16, dp 4 (sizes from the FSDP2 case above).
  // ZeRO-2: the flat bf16 buffer padded to 2 x dp = 8 elements: 220480 (divisible) -> 440960 B; the fp32
  // partition 220480 / 4 = 55120 elements = 220480 B. Weights after construction (block sizes rounded to 512 B
  // by the tracker): round512(440960) = 441344, round512(220480) = 220672 (this graph has no buffer; the
  // construction scalar, one 512 B block when the builder records it, is allowed for).
  RunConfig c = run(DistStrategy::zero2, 4);
  Estimate e = estimate(tiny_llama(), c);
  REQUIRE(e.distributed);
  CHECK(e.distributed->optimizer_param_numel == 55120);
  CHECK(e.weights_bytes >= 441344 + 220672);
  CHECK(e.weights_bytes <= 441344 + 220672 + 512);
  // ZeRO-3: parameters below 1e5 elements stay whole: every tensor here (the largest is 64000) is persistent, so
  // nothing is gathered; the fp32 master and the gradient partitions cover ceil(numel / 4) of each parameter:
  // embed / head 16000 each, per layer 1024 + 512 + 512 + 1024 + 3 x 2816 + 2 x 16 = 11552, norm 16:
  // 2 x 16000 + 2 x 11552 + 16 = 55120 elements.
  c = run(DistStrategy::zero3, 4);
  e = estimate(tiny_llama(), c);
  REQUIRE(e.distributed);
  CHECK(e.distributed->units == 3);
  CHECK(e.replay.peak.ledger[Row::comm_buffers] == 0);  // all persistent: no all-gather staging
}
