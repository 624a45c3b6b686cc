// Overflow-checked byte arithmetic (engine/checked.h) at the int64 boundaries, and the engine paths that use
// it: a product of sizes that overflows 64-bit bytes is an InputError naming the quantity, never a wrap.
#include <catch2/catch.hpp>

#include <limits>

#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "models/zoo.h"

using namespace memplan;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}  // namespace

TEST_CASE("checked_add at the boundaries", "[checked]") {
  CHECK(checked_add(kMax - 1, 1) == kMax);
  CHECK(checked_add(kMin + 1, -1) == kMin);
  CHECK(checked_add(kMax, kMin) == -1);
  CHECK_THROWS_AS(checked_add(kMax, 1), InputError);
  CHECK_THROWS_AS(checked_add(kMin, -1), InputError);
  CHECK_THROWS_WITH(checked_add(kMax, 1, "live bytes"), Catch::StartsWith("live bytes: byte count overflows 64 bits"));
}

TEST_CASE("checked_mul at the boundaries", "[checked]") {
  CHECK(checked_mul(int64_t{1} << 31, int64_t{1} << 31) == int64_t{1} << 62);
  CHECK(checked_mul(kMax, 1) == kMax);
  CHECK(checked_mul(kMax, 0) == 0);
  CHECK(checked_mul(kMin, 1) == kMin);
  CHECK(checked_mul(-1, kMax) == -kMax);
  CHECK_THROWS_AS(checked_mul(int64_t{1} << 32, int64_t{1} << 31), InputError);
  CHECK_THROWS_AS(checked_mul(kMin, -1), InputError);
  CHECK_THROWS_AS(checked_mul(kMax / 2 + 1, 2), InputError);
  CHECK(checked_mul(kMax / 2, 2) == kMax - 1);
  CHECK_THROWS_WITH(checked_mul(kMax, 2, "tensor bytes"), Catch::Contains("tensor bytes"));
}

TEST_CASE("checked_sub at the boundaries", "[checked]") {
  CHECK(checked_sub(kMin + 1, 1) == kMin);
  CHECK(checked_sub(0, kMax) == -kMax);
  CHECK_THROWS_AS(checked_sub(kMin, 1), InputError);
  CHECK_THROWS_AS(checked_sub(0, kMin), InputError);
  CHECK_THROWS_AS(checked_sub(kMax, -1), InputError);
}

TEST_CASE("round_up at the boundaries", "[checked]") {
  CHECK(round_up(0, 512) == 0);
  CHECK(round_up(1, 512) == 512);
  CHECK(round_up(512, 512) == 512);
  const int64_t top = kMax - kMax % 512;  // largest multiple of 512
  CHECK(round_up(top, 512) == top);
  CHECK(round_up(top - 511, 512) == top);
  CHECK_THROWS_AS(round_up(top + 1, 512), InputError);
  CHECK_THROWS_AS(round_up(kMax, 2 * kMiB), InputError);
}

TEST_CASE("sizes whose byte products overflow are InputErrors, just below they are answers", "[checked]") {
  ModelSpec m = load_zoo_model("llama-3.2-1b");
  RunConfig c;
  c.precision = Precision::bf16;
  c.batch_size = 1;
  c.seq_len = 16;
  c.optimizer = OptimizerKind::sgd;
  EstimateOptions opt;
  opt.simulate_allocator = false;
  SECTION("vocab x hidden x layers of weights overflow the live byte count") {
    m.transformer.vocab_size = int64_t{1} << 26;
    m.transformer.hidden_size = int64_t{1} << 26;
    m.transformer.num_heads = 1;
    m.transformer.num_kv_heads = 1;
    m.transformer.head_dim = int64_t{1} << 26;
    m.transformer.intermediate_size = int64_t{1} << 26;
    m.transformer.num_layers = 1000;
    // Each 2^26 x 2^26 bf16 projection is 2^53 bytes, seven per layer: 2^63 is passed within ~150 layers.
    CHECK_THROWS_WITH(estimate(m, c, opt), Catch::Contains("overflows 64 bits"));
  }
  SECTION("batch x seq x vocab logits overflow tensor bytes") {
    m.transformer.vocab_size = int64_t{1} << 26;
    c.batch_size = int64_t{1} << 24;
    c.seq_len = 1 << 16;
    c.checkpoint_layers = {};
    CHECK_THROWS_WITH(estimate(m, c, opt), Catch::Contains("overflows 64 bits"));
  }
  SECTION("a large but representable run is an answer") {
    c.batch_size = 1 << 10;
    c.seq_len = 1 << 14;
    const Estimate e = estimate(m, c, opt);
    CHECK(e.replay.peak.bytes > (int64_t{1} << 40));
  }
}
