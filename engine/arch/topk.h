// torch.topk on CUDA as ATen runs it (aten/src/ATen/native/cuda/TensorTopK.cu, torch 2.11): the values and the
// int64 indices, and, when the multi-block radix select is chosen, its scratch buffers.
//
// The multi-block path (mbtopk) is taken when should_use_multiblock(slices, slice_size) holds: many slices of a
// few hundred or thousand elements (a sparse-attention indexer's [B, S, T] scores over T keys), never a router's
// [tokens, experts]. It then allocates, in this order, and frees in reverse before the op returns:
//   kthValues      slices x sizeof(value)
//   ks_to_find     2 x slices x 4
//   desired        2 x slices x sizeof(radix type)   (uint32 for 16- and 32-bit floats, uint64 for 64-bit)
//   counts         blocks x 256 x 2                  (short per radix digit per block)
//   digit_cum_sum  slices x 256 x 4
//   withinKCounts  blocks x 4
//   kthCounts      blocks x 4
// with blocks = slices x ceil(slice_size / (items_per_thread x 256)), items_per_thread =
// ceil(slices x slice_size / (SMs x 6 x 256)) clamped to [4, 64] (6 blocks of 256 threads at 40 registers a thread
// fit an SM's 64 Ki registers). SMs: 132 (H100 / H200 SXM; the DeepSeek-V3.2 rows' whole-run streams show counts
// and digit_cum_sum as slices x 512 and slices x 1024 bytes). cub's scan-by-key temporary storage is a few hundred
// bytes and is left out.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/graph_builder.h"

namespace memplan {

// Whether ATen's topk takes the multi-block radix select for `slices` slices of `slice_size` elements.
bool topk_uses_multiblock(int64_t slices, int64_t slice_size);
// The multi-block select's scratch in allocation order (the table above), empty when it does not apply.
std::vector<int64_t> topk_scratch_bytes(int64_t slices, int64_t slice_size, int64_t elem_bytes);
// x.topk(k, dim=-1): (values [..., k] in x's dtype, indices [..., k] int64), with the multi-block scratch as the
// op's forward temporaries when it applies. `saved_outs`: the outputs the backward keeps (indices for a
// differentiable topk; none under no_grad).
std::pair<TensorId, TensorId> topk_last(GraphBuilder& b, TensorId x, int64_t k, std::vector<int> saved_outs = {});

}  // namespace memplan
