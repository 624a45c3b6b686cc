#include "engine/reduce_workspace.h"

#include <algorithm>

#include "engine/checked.h"

namespace memplan {

namespace {
int64_t last_pow2(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

ReduceWorkspace column_sum_workspace(int64_t rows, int64_t cols, int32_t num_sms, int32_t max_threads_per_sm) {
  ReduceWorkspace w;
  if (rows <= 0 || cols <= 0 || num_sms <= 0 || max_threads_per_sm <= 0) return w;
  int64_t vec = 4;
  while (cols % vec != 0) vec /= 2;
  const int64_t max_threads = 512 / vec;
  const int64_t dim0 = cols / vec;
  const int64_t dim0_pow2 = dim0 < max_threads ? last_pow2(dim0) : max_threads;
  const int64_t dim1_pow2 = rows < max_threads ? last_pow2(rows) : max_threads;
  int64_t width = std::min<int64_t>(dim0_pow2, 32);
  const int64_t height = std::min<int64_t>(dim1_pow2, max_threads / width);
  width = std::min<int64_t>(dim0_pow2, max_threads / height);
  const int64_t grid_x = div_up(dim0, width);
  int64_t step_input = 1;
  if (rows >= height * 16 || rows >= 256) step_input = height;  // split the input across warps
  else return w;                                                  // each warp owns outputs: no global reduce
  const int64_t vpt = div_up(rows, step_input);
  const int64_t target = static_cast<int64_t>(num_sms) * (max_threads_per_sm / (width * height));
  if (vpt < 256 || grid_x > target) return w;
  const int64_t ctas = std::max(std::min(div_up(target, grid_x), div_up(vpt, 16)), div_up(vpt, 256));
  if (ctas <= 1) return w;
  w.buffer_bytes = checked_mul(checked_mul(checked_mul(checked_mul(4, cols), ctas), width), vec, "reduce workspace");
  w.semaphore_bytes = 4 * grid_x;
  return w;
}

}  // namespace memplan
