#include "engine/arch/topk.h"

#include <algorithm>

#include "engine/checked.h"
#include "engine/dtype.h"

namespace memplan {

namespace {
constexpr int64_t kSms = 132;
constexpr int64_t kBlocksPerSm = 6;
constexpr int64_t kBlockThreads = 256;
constexpr int64_t kRadixDigits = 256;
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

bool topk_uses_multiblock(int64_t n, int64_t size) {
  return (n <= 20 && size >= 20000) || (n > 20 && n <= 40 && size >= 10000) || (n > 40 && n <= 80 && size >= 8000) ||
         (n > 80 && n < 200 && size >= 5000) || (n >= 200 && n < 800 && size >= 3000) ||
         (n >= 800 && n <= 4000 && size >= 800) || (n > 4000 && size >= 400);
}

std::vector<int64_t> topk_scratch_bytes(int64_t slices, int64_t size, int64_t elem) {
  if (slices <= 0 || size <= 0 || !topk_uses_multiblock(slices, size)) return {};
  const int64_t radix = elem == 8 ? 8 : 4;
  const int64_t per_thread =
      std::clamp<int64_t>(ceil_div(checked_mul(slices, size), kSms * kBlocksPerSm * kBlockThreads), 4, 64);
  const int64_t blocks = checked_mul(slices, ceil_div(size, per_thread * kBlockThreads));
  return {checked_mul(slices, elem),
          checked_mul(slices, 8),
          checked_mul(slices, 2 * radix),
          checked_mul(blocks, kRadixDigits * 2),
          checked_mul(slices, kRadixDigits * 4),
          checked_mul(blocks, 4),
          checked_mul(blocks, 4)};
}

std::pair<TensorId, TensorId> topk_last(GraphBuilder& b, TensorId x, int64_t k, std::vector<int> saved_outs) {
  Shape out = b.shape(x);
  const int64_t size = out.back();
  const int64_t slices = size > 0 ? b.numel(x) / size : 0;
  out.back() = k;
  const DType dt = b.dtype(x);
  auto o = b.generic({"topk", {x}, {{out, dt}, {out, DType::i64}}, {}, std::move(saved_outs),
                      topk_scratch_bytes(slices, size, dtype_bytes(dt)), {}});
  return {o[0], o[1]};
}

}  // namespace memplan
