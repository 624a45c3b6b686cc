// engine/arch/topk.h: which topk calls take ATen's multi-block radix select and the scratch it allocates.
// Measured rows: the DeepSeek-V3.2 indexer's topk in two whole-run streams on an H100 (data/validation/recordings/
// families35s): [1, 2400, 2400] fp32 scores showed 1228800- and 2457600-byte blocks (1.17 / 2.34 MiB) allocated
// after the values and indices and freed before the op returned, [3, 1000, 1000] bf16 scores 1536000 and 3072000
// (1.46 / 2.93 MiB); the smaller buffers go to the small pool, which the recordings' >= 1 MiB filter drops.
// Derived rows: the same rule (TensorTopK.cu, torch 2.11) worked by hand, written next to each.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "engine/arch/topk.h"

using memplan::topk_scratch_bytes;
using memplan::topk_uses_multiblock;

TEST_CASE("topk: the multi-block select's choice of slices and slice sizes", "[topk]") {
  struct Row {
    int64_t slices, size;
    bool multiblock;
  };
  const std::vector<Row> rows = {
      {2400, 2400, true},    // the fp32 indexer row (measured: its scratch appears)
      {3000, 1000, true},    // the eager bf16 row (measured)
      {3000, 256, false},    // a router's [tokens, 256 experts]: single block
      {5000, 400, true},     // > 4000 slices from 400 elements
      {5000, 399, false},
      {800, 800, true},      // 800 .. 4000 slices from 800
      {799, 800, false},     // 200 .. 799 slices need 3000
      {10, 20000, true},     // <= 20 slices need 20000
      {10, 19999, false},
  };
  for (const Row& r : rows) {
    INFO(r.slices << " x " << r.size);
    CHECK(topk_uses_multiblock(r.slices, r.size) == r.multiblock);
    CHECK(topk_scratch_bytes(r.slices, r.size, 4).empty() == !r.multiblock);
  }
}

TEST_CASE("topk: the multi-block select's scratch sizes", "[topk]") {
  // [1, 2400, 2400] fp32: items_per_thread = ceil(5760000 / (132 x 6 x 256)) = 29, 7424 a block, so one block a
  // slice: kthValues 2400 x 4, ks_to_find 2400 x 8, desired 2400 x 8, counts 2400 x 512 (measured 1228800),
  // digit_cum_sum 2400 x 1024 (measured 2457600), withinKCounts and kthCounts 2400 x 4.
  CHECK(topk_scratch_bytes(2400, 2400, 4) == std::vector<int64_t>{9600, 19200, 19200, 1228800, 2457600, 9600, 9600});
  // [3, 1000, 1000] bf16: ceil(3000000 / 202752) = 15 items a thread, 3840 a block: one block a slice (measured
  // 1536000 and 3072000); the values are 2 bytes, the radix type 4.
  CHECK(topk_scratch_bytes(3000, 1000, 2) == std::vector<int64_t>{6000, 24000, 24000, 1536000, 3072000, 12000, 12000});
  // 10 slices of 30000 fp64: ceil(300000 / 202752) = 2, clamped to 4 items a thread, 1024 a block: 30 blocks a
  // slice, 300 blocks; the radix type is 8 bytes. Derived, not measured.
  CHECK(topk_scratch_bytes(10, 30000, 8) == std::vector<int64_t>{80, 80, 160, 153600, 10240, 1200, 1200});
}
