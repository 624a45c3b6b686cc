// Workspace of a CUDA column reduction (ATen's Reduce.cuh), e.g. a bias gradient grad.sum(0) over a contiguous
// [rows, cols] tensor. When every thread would sum >= 256 values and the grid is small, Reduce.cuh splits the
// reduction across CTAs and allocates, through the caching allocator, a global staging buffer and semaphores.
//
// setReduceConfig for this shape (reduction not on the fastest dimension, outputs vectorised by 4 when aligned):
//   max_threads = 512 / vec; block_width = min(pow2(cols/vec), 32); block_height = min(pow2(rows), max/width);
//   grid_x = ceil(cols/vec / block_width); values_per_thread = ceil(rows / block_height);
//   target = num_sms * (max_threads_per_sm / (width*height)); if values_per_thread >= 256 and grid_x <= target:
//   ctas = max(min(ceil(target/grid_x), ceil(vpt/16)), ceil(vpt/256)) and, when ctas > 1,
//   buffer = 4 (float accumulator) * cols * ctas * block_width * vec, semaphores = 4 * grid_x.
// Checked against the H200 traces: 768 columns x 8192 rows -> 48 MiB + 24 B; 2304 -> 132.75 MiB + 72 B;
// 3072 -> 132 MiB + 96 B.
#pragma once
#include <cstdint>

namespace memplan {

struct ReduceWorkspace {
  int64_t buffer_bytes = 0;
  int64_t semaphore_bytes = 0;
};

ReduceWorkspace column_sum_workspace(int64_t rows, int64_t cols, int32_t num_sms, int32_t max_threads_per_sm);

}  // namespace memplan
