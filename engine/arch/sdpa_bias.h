// F.scaled_dot_product_attention with a float mask (an additive bias), as torch 2.11 runs it on the H200: shared
// by T5's contiguous zero bias (engine/arch/seq2seq/t5.cpp; its relative bias runs the math backend there) and
// BEiT's relative position bias (engine/arch/vision/hf_beit.cpp).
#pragma once
#include "engine/graph_builder.h"

namespace memplan {

// q [B, H, q, D], k / v [B, H, k, D] and `bias` [1 or B, H, q, k], cast under autocast in the order the autocast
// wrapper evaluates its arguments (GCC: last to first: the mask, v, k, q). The kernel the dispatcher picks:
//   - inference (no autograd): cuDNN for 16-bit (philox seed / offset, 256 B workspace), memory-efficient for
//     fp32, which pads a mask whose key length is not 8-aligned (a [rows, H, q, k + 8 - k % 8] copy alive for the
//     call); neither keeps row sums;
//   - training with a mask that needs no gradient, 16-bit: cuDNN (row sums saved; backward: fp32 dq, row sums,
//     256 B);
//   - otherwise memory-efficient (cuDNN takes no mask that requires grad): the forward pads as in inference; the
//     backward allocates delta rows, the grad-q accumulator in whole tiles of 64 queries (fp32) plus 32 B per
//     (batch, head), and a mask that requires grad gets its gradient at the batch-expanded size with the key dim
//     padded to a multiple of 16, which the expand's backward sums to the mask's shape.
// Returns the output [B, H, q, D], whose memory is [B, q, H, D] (the caller's transpose(1, 2).contiguous() is
// free).
TensorId sdpa_float_mask(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId bias, double dropout_p);

}  // namespace memplan
