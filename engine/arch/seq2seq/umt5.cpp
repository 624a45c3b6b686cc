// UMT5ForConditionalGeneration (transformers 5.17 models/umt5/modeling_umt5.py), training forward + seq2seq loss
// and generate(). The layer norm, the feed-forward sub-layer, the fp16 clamps, compute_bias and the biased SDPA
// are T5's (engine/arch/seq2seq/t5_parts.h); what differs from T5ForConditionalGeneration:
//   - every self-attention owns a relative_attention_bias [buckets, H] (registered after its o) and computes its
//     own bias [1, H, q, k] inside UMT5Attention.forward: a local that dies when the attention returns (T5 computes
//     it once per stack and the stack keeps it). The bucket indices are saved by each embedding lookup's backward.
//   - every cross-attention makes its own zero bias [1, H, T, S] (T5: one per stack), never a leaf that requires
//     grad (T5 sets requires_grad under gradient checkpointing; UMT5 does not), so 16-bit cross-attention keeps
//     cuDNN, which saves that block's zeros for backward.
//   - UMT5Attention is built with is_causal False and the decoder's create_causal_mask returns None for sdpa
//     (no padding), so sdpa_attention_forward passes the permuted relative bias itself as the float mask: no
//     torch.where over a causal [q, k] (the self-attention is not causal under sdpa; eager adds the causal mask).
//   - sequence_output * d_model**-0.5 always (UMT5Config forces tie_word_embeddings True); lm_head is tied.
// Layer indices (grad_checkpointing_layers, frozen_layers): encoder blocks 0..N-1, decoder blocks N..N+M-1.
// The stacks, the loss and the generate passes are T5's drivers (t5parts::build_t5_family) with this training
// attention; a generate step's attention is T5's with a bias per attention (t5.cpp step_attention).
#include <string>

#include "engine/arch/seq2seq/t5_parts.h"

namespace memplan {

namespace {

using namespace t5parts;

// UMT5Attention.forward + UMT5LayerSelfAttention / UMT5LayerCrossAttention (training, the whole sequence):
// h + dropout(o(attn(layer_norm(h)))). `kv_src`: the encoder output for cross-attention, kNoTensor for
// self-attention. `table`: the self-attention's relative_attention_bias (kNoTensor for cross-attention).
// `decoder`: the bucket function's is_decoder (unidirectional buckets). `mask`: the eager decoder's causal float
// mask (kNoTensor otherwise). The stack's bias slot stays kNoTensor: this attention makes and frees its own.
// `weights` receives eager attention's probabilities (held: UMT5Block binds them to `_`), kNoTensor for SDPA.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId norm_w, TensorId h,
                   TensorId kv_src, TensorId table, bool decoder, TensorId mask, TensorId& /*stack_bias*/,
                   TensorId& weights) {
  const auto& cfg = b.config();
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], Lq = hs[1], nh = s.num_heads, hd = s.head_dim;
  const bool cross = kv_src != kNoTensor;
  weights = kNoTensor;
  const AttnInputs in = attn_inputs(b, s, w, norm_w, h, kv_src);
  const TensorId x = in.x, q = in.q, k = in.k, v = in.v;
  const int64_t Lk = b.shape(k)[2];
  // position_bias: this attention's own, a local until it returns (torch.zeros in the query's dtype for
  // cross-attention, no requires_grad whatever the checkpointing)
  const TensorId bias = table != kNoTensor ? compute_bias(b, table, Lq, Lk, nh, /*bidirectional=*/!decoder,
                                                                         /*log_ratio_local=*/true)
                                           : b.generic_one("zeros", {}, {1, nh, Lq, Lk}, b.dtype(q));
  b.hold(bias);
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    // attention_mask None and is_causal False: create_position_bias_mask returns position_bias as it is
    bool heads_contiguous = false;
    TensorId m = bias;
    if (b.training() && cross && !low_precision(b.autocast() ? b.low_dtype() : b.dtype(q)) && Lk % 8 != 0) {
      // fp32 cross-attention runs the memory-efficient kernel, whose preprocess_mask pads a mask whose rows are
      // not 8-aligned (pad_bias: a [1, H, q, k + 8 - k % 8] copy, sliced back); the kernel saves that padded
      // mask for backward, one per decoder block (T5's shared zero bias goes through the same padding).
      m = b.generic_one("pad_bias", {bias}, {1, nh, Lq, Lk + 8 - Lk % 8}, b.dtype(bias));
    }
    // the permuted relative bias (self-attention) runs the math backend (biased_sdpa)
    ctx = biased_sdpa(b, q, k, v, m, /*bias_permuted=*/!cross, s.attn_dropout, heads_contiguous);
    if (heads_contiguous)
      ctx = b.contiguous_copy(ctx, {B, Lq, nh, hd}, /*grad_copied=*/!low_precision(b.dtype(ctx)));  // biased_sdpa
  } else {
    ctx = eager_context(b, s, q, k, v, bias, mask, weights);
  }
  return attention_output_residual(b, s, ctx, w.o, h, x, {q, k, v, bias});
}

}  // namespace

void build_umt5(GraphBuilder& b, const TransformerSpec& s) {
  build_t5_family(b, s, {"umt5", /*bias_per_attention=*/true, attention});
}

}  // namespace memplan
