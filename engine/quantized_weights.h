// Sizes of bitsandbytes-quantised base weights (QLoRA) and of bitsandbytes' optimizer states, each derived from
// bitsandbytes' own source (github.com/bitsandbytes-foundation/bitsandbytes, tag 0.50.1, commit
// 37d2a9387f7146ccb85517ff45c665d345bfda79). bitsandbytes is not installed on the H200 this project measures on:
// these figures are derived, not measured.
//
//  4-bit (Linear4bit / Params4bit, nf4 or fp4): backends/cuda/ops.py "bitsandbytes::quantize_4bit" allocates the
//    packed weight as uint8 [(n + 1) / 2, 1] and absmax as fp32 [ceil(n / blocksize)]; functional.py
//    quantize_4bit adds `code = get_4bit_type(...)` (16 fp32 values) to the QuantState. With
//    compress_statistics (bnb_4bit_use_double_quant) the absmax is itself quantised:
//    `offset = absmax.mean()` (one fp32), `quantize_blockwise(absmax - offset, blocksize=256)`: uint8 [blocks]
//    plus a second-level fp32 absmax [ceil(blocks / 256)] and its 256-entry fp32 code (functional.py
//    quantize_blockwise, create_dynamic_map). Each of these is its own CUDA allocation (rounded to 512 B).
//  Forward (autograd/_functions.py MatMul4Bit.forward -> ops.py gemm_4bit): for M = rows > 1536 (training,
//    prefill) the fallback `_dequant_linear_fallback` dequantises the nested absmax to fp32 [blocks]
//    (empty_like + the `+ offset` result), then the whole weight into B_dq [out, in] of the input's dtype, runs
//    F.linear and frees them on return. MatMul4Bit saves only the packed weight (ctx.tensors = (None, B)), not
//    the input. Backward: `torch.matmul(grad_output, F.dequantize_4bit(B, ctx.state).to(grad_output.dtype))`:
//    the dequantised weight again, alive while the input gradient is computed.
//  Linear4bit.forward: x.to(compute_dtype) before, result.to(input dtype) after.
//  8-bit (Linear8bitLt / Int8Params, LLM.int8): int8 [out, in] weight plus fp32 row scales SCB [out]
//    (functional.py int8_vectorwise_quant). Forward (MatMul8bitLt) quantises the input per row (int8 [rows, in]
//    plus fp32 [rows] scales) and, with threshold 6.0, keeps outlier columns; its output is [rows, out] in the
//    input dtype; it saves the int8 input for a weight gradient only when the weight trains (frozen here).
//  Optimizers (optim/optimizer.py Optimizer2State.init_state): 8-bit Adam keeps state1 / state2 as uint8 of the
//    parameter's shape plus absmax1 / absmax2 fp32 [ceil(n / 256)] (blocksize 256), shared qmaps of 256 fp32;
//    a parameter under min_8bit_size = 4096 elements keeps fp32 states. Paged optimizers (is_paged) allocate
//    each state of >= 1e5 elements with F.get_paged (cudaMallocManaged), outside PyTorch's caching allocator:
//    it takes device memory when resident but is not in memory_allocated / memory_reserved.
#pragma once
#include <cstdint>

#include "engine/run_config.h"

namespace memplan {

// The CUDA allocations one quantised [out, in] weight keeps (in request order, bytes before 512-rounding).
struct QuantizedWeight {
  int64_t packed_bytes = 0;        // uint8 packed 4-bit pairs, or the int8 weight
  int64_t absmax_bytes = 0;        // fp32 absmax per block (4-bit), or uint8 per block (double quant); SCB (int8)
  int64_t code_bytes = 0;          // the 4-bit type's 16 fp32 values
  int64_t absmax2_bytes = 0;       // double quant: fp32 second-level absmax per 256 blocks
  int64_t code2_bytes = 0;         // double quant: the 256-entry fp32 blockwise code
  int64_t offset_bytes = 0;        // double quant: the fp32 offset (absmax.mean())
  int64_t blocks = 0;              // 4-bit: ceil(n / blocksize)
  int64_t total() const { return packed_bytes + absmax_bytes + code_bytes + absmax2_bytes + code2_bytes + offset_bytes; }
};

QuantizedWeight quantized_weight(const QuantConfig& q, int64_t out_features, int64_t in_features);

// 8-bit Adam state of one parameter of n elements (bytes before rounding): two uint8 states and two fp32 absmax
// vectors, or two fp32 states under min_8bit_size.
int64_t adam8bit_state_bytes(int64_t n);

}  // namespace memplan
