// CohereForCausalLM (transformers 5.17 models/cohere/modeling_cohere.py; Command-R, Aya), training forward +
// causal-LM loss or one inference pass.
//   CohereModel.forward: embed_tokens -> create_causal_mask -> CohereRotaryEmbedding (fp32; repeat_interleave of
//   the frequencies where Llama cats them: the same [P, S, D] tensor) -> N x CohereDecoderLayer -> norm.
//   CohereLayerNorm (Python, no bias): x.to(f32); mean = x.mean(-1); variance = (x - mean).pow(2).mean(-1);
//     x = (x - mean) * rsqrt(variance + eps); x = weight.to(f32) * x; x.to(input dtype). `x - mean` is computed
//     twice (two statements, the second before the rsqrt); mean and variance stay bound until forward returns, the fp32 input until its
//     rebinding. With use_qk_norm the same over (heads, head_dim) on the [B, S, H, D] projection views.
//   CohereAttention: q/k/v views [B, S, H, D] (q/k normed there), transposed; apply_rotary_pos_emb in fp32:
//     q.float(), k.float() (locals until it returns), q * cos + rotate_half(q) * sin with rotate_half =
//     stack([-x[..., 1::2], x[..., ::2]], -1).flatten(-2) (two strided slices: SliceBackward zero-fills each
//     gradient at the full head size), then both cast back in the return statement; the attention from the cache
//     update on is Llama's (llama_parts.h attention_core: the rotated q keeps the projection's memory order).
//   CohereDecoderLayer (parallel): n = input_layernorm(x); out = x + self_attn(n) + mlp(n); n and both branch
//     outputs stay bound until the layer returns.
//   CohereForCausalLM: logits = lm_head(h) * logit_scale (a fresh [B, S, V] tensor the loss reads).
// Parameters in registration order: self_attn q/k/v/o (weight, bias with attention_bias), q_norm, k_norm
// (use_qk_norm), mlp gate/up/down, input_layernorm (weight only). The norm, attention and layer statements live in
// cohere_parts.h (cohere2 runs the same ones).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/cohere_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// CohereDecoderLayer.forward (the skeleton holds its input until it returns); the pieces are cohere_parts.h's.
TensorId cohere_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const CohereLayer w = cohere_layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  return cohere_parallel_layer(b, s, w, h, c.cos, c.sin, c.mask, 0, true);
}

TensorId final_norm(GraphBuilder& b, TensorId x, TensorId w) { return cohere_layer_norm(b, x, w); }

}  // namespace

void build_cohere(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0) throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                                             "cohere has no sliding-window attention");
  SkeletonSpec k{"embed_tokens.weight", "norm", false, false, cohere_layer};
  k.final_norm = final_norm;
  k.logits_op = cohere_logit_scale;
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
