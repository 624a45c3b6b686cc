// F.scaled_dot_product_attention with a float mask (engine/arch/sdpa_bias.h). Moved here from T5's builder, where
// each kernel's allocations were read off whole-run streams (data/validation/NOTES.md, T5 sections).
#include "engine/arch/sdpa_bias.h"

#include <utility>
#include <vector>

#include "engine/checked.h"

namespace memplan {

TensorId sdpa_float_mask(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId bias, double dropout_p) {
  (void)dropout_p;  // the fused kernels draw dropout from the philox state: no mask tensor
  bias = b.autocast_low(bias);
  v = b.autocast_low(v);
  k = b.autocast_low(k);
  q = b.autocast_low(q);
  const Shape qs = b.shape(q);
  const int64_t B = qs[0], H = qs[1], L = qs[2], D = qs[3], Lk = b.shape(k)[2];
  const DType dt = b.dtype(q);
  const bool low = dt == DType::bf16 || dt == DType::f16;
  const int64_t bhl = checked_mul(checked_mul(B, H), L);
  const int64_t q_f32 = checked_mul(checked_mul(bhl, D), 4);
  // The memory-efficient kernel's preprocess_mask pads a mask whose key length is not 8-aligned (pad_bias: a
  // [rows, H, q, k + 8 - k % 8] copy alive for the call); its bytes.
  auto pad_bias_bytes = [&](int64_t rows) {
    return checked_mul(checked_mul(checked_mul(checked_mul(rows, H), L), Lk + 8 - Lk % 8), dtype_bytes(b.dtype(bias)));
  };
  if (!b.training()) {
    // Inference: the fused kernels take the float mask and keep no row sums (as GraphBuilder::sdpa /
    // sdpa_masked_inference do); cuDNN for 16-bit with its philox seed / offset and 256 B workspace,
    // memory-efficient for fp32, which pads the mask when k % 8 != 0 (pad_bias_bytes). Not yet checked against an
    // inference stream.
    if (low) {
      return b.generic({"sdpa_cudnn", {q, k, v, bias}, {{{1}, DType::i64}, {{1}, DType::i64}, {{B, H, L, D}, dt}},
                        {}, {}, {256}, {}})[2];
    }
    std::vector<int64_t> temps;
    if (Lk % 8 != 0) temps.push_back(pad_bias_bytes(b.shape(bias)[0]));
    return b.generic({"sdpa_efficient", {q, k, v, bias}, {{{B, H, L, D}, dt}}, {}, {}, temps, {}})[0];
  }
  const bool bias_grad = b.info(bias).requires_grad;
  if (low && !bias_grad) {
    auto outs = b.generic({"sdpa_cudnn", {q, k, v, bias},
                           {{{1}, DType::i64}, {{1}, DType::i64}, {{B, H, L, D}, dt}, {{B, H, L}, DType::f32}},
                           {0, 1, 2, 3}, {0, 1, 2, 3}, {256},
                           // cuDNN's backward workspace (graph_builder_nn.cpp sdpa): fp32 dq, row sums, 256 B
                           {checked_add(checked_add(q_f32, checked_mul(bhl, 4)), 256)}});
    return outs[2];
  }
  // memory-efficient backward (graph_builder_nn.cpp sdpa): delta rows, a grad-output scratch. A mask that
  // requires grad (T5's checkpointed zero cross-attention bias, BEiT's relative position bias; cuDNN takes none, so 16-bit runs this kernel too)
  // gets its gradient at the batch-expanded size [B, H, q, k] from the kernel, one of its gradients (after dq, dk,
  // dv, before the scratch), and the expand's backward then sums it to the mask's shape (whole-run stream
  // f2-flanl-bf16 checkpointed: the [B, H, q, k] gradient, the q-sized scratch freed, then the summed gradient
  // allocated and the expanded one freed).
  // The scratch with a mask (T5's streams): the kernel's grad-q accumulator, whole tiles of 64 queries (workspace_elements_gq:
  // ceil(q / kBlockSizeI) blocks) in fp32, plus 32 B per (batch, head) (whole-run streams: mT5-base b6 x 128 q
  // 2,361,600 B, Flan-T5-base b4 x 128 q 1,574,400 B, t5-small's decoder q = 90 at b6: 1,574,400 B, 128 rows).
  const int64_t q_rows = (L + 63) / 64 * 64;
  const int64_t gq_f32 = checked_mul(checked_mul(checked_mul(checked_mul(B, H), q_rows), D), 4);
  std::vector<int64_t> bwd{checked_mul(bhl, 4), checked_add(gq_f32, checked_mul(checked_mul(B, H), 32))};
  TensorId mask = bias;
  if (bias_grad && b.shape(bias)[0] != B) mask = b.expand(bias, {B, H, L, Lk});
  // The kernel allocates the mask's gradient with its last dim padded to a multiple of 16 and slices it back
  // (the same t5-small stream: [6, 8, 90, 704] for 700 keys).
  const int64_t Lk16 = (Lk + 15) / 16 * 16;
  std::vector<std::pair<int, int64_t>> grad_bytes;
  if (bias_grad)
    grad_bytes.push_back({3, checked_mul(checked_mul(checked_mul(checked_mul(b.shape(mask)[0], H), L), Lk16),
                                         dtype_bytes(b.dtype(mask)))});
  // The forward pads the unexpanded mask as in inference (the t5-small stream's 0.97 MiB at 90 x 700).
  std::vector<int64_t> fwd;
  if (Lk % 8 != 0) fwd.push_back(pad_bias_bytes(b.shape(bias)[0]));
  auto outs = b.generic({"sdpa_efficient", {q, k, v, mask}, {{{B, H, L, D}, dt}, {{B, H, L}, DType::f32}},
                         {0, 1, 2, 3}, {0, 1}, fwd, bwd, {}, grad_bytes});
  return outs[0];
}


}  // namespace memplan
