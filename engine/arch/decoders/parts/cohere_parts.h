// Pieces of CohereForCausalLM (engine/arch/decoders/dense/cohere.cpp) that Cohere2ForCausalLM
// (engine/arch/decoders/dense/cohere2.cpp) runs statement for statement in transformers 5.17: the Python LayerNorm without
// bias, the attention (cohere2's has no q / k norm and rotates only on its sliding layers), the parallel
// decoder layer and the two masks (also Cohere2MoeForCausalLM's, engine/arch/decoders/moe/cohere2_moe.cpp, and
// MinistralForCausalLM's, engine/arch/decoders/dense/ministral.cpp: the same masking_utils calls).
#pragma once
#include <string>

#include "engine/arch/builders.h"

namespace memplan {

// CohereLayerNorm / Cohere2LayerNorm.forward on x (weight `w`, no bias): x.to(f32); mean = x.mean(-1);
// variance = (x - mean).pow(2).mean(-1); x = (x - mean) * rsqrt(variance + eps); x = weight.to(f32) * x;
// x.to(input dtype). mean and variance stay bound until forward returns, the fp32 input until its rebinding.
// `held_input`: x is referenced by the caller only as this call's argument (cohere's q / k norms), so it lives
// until the norm returns.
TensorId cohere_layer_norm(GraphBuilder& b, TensorId x, TensorId w, bool held_input = false);

// One decoder layer's parameters in registration order: self_attn q/k/v/o (weight, bias with attention_bias),
// q_norm, k_norm (s.qk_layernorm; kNoTensor otherwise), mlp gate/up/down, input_layernorm (weight only).
struct CohereLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, gate, up, down, in_norm;
};
CohereLayer cohere_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);

// CohereAttention / Cohere2Attention.forward on the normed input x: the q / k / v projections and their
// [B, S, H, D] views (q / k normed there with s.qk_layernorm), transposed to [B, H, S, D]; when `rotary`,
// apply_rotary_pos_emb in fp32 (q.float(), k.float(), x * cos + rotate_half(x) * sin with cohere's interleaved
// rotate_half, cast back in the return statement); then the attention from the cache update on
// (llama_parts.h attention_o_proj, `mask` and the cache's sliding `window`, 0 for full attention). Without
// `rotary` (cohere2's full-attention layers) the transposed views go to the attention as they are, bound as
// query_states / key_states until the module returns. `weights`: eager attention's probabilities, held.
TensorId cohere_attention(GraphBuilder& b, const TransformerSpec& s, const CohereLayer& w, TensorId x, TensorId cos,
                          TensorId sin, TensorId mask, int64_t window, bool rotary, TensorId& weights);

// CohereDecoderLayer / Cohere2DecoderLayer.forward (parallel): n = input_layernorm(h); out = h + self_attn(n) +
// mlp(n); n and both branch outputs stay bound until the layer returns (the caller holds h). Arguments after
// `h` as cohere_attention's.
TensorId cohere_parallel_layer(GraphBuilder& b, const TransformerSpec& s, const CohereLayer& w, TensorId h,
                               TensorId cos, TensorId sin, TensorId mask, int64_t window, bool rotary);

// Cohere2Model.forward's causal_mask_mapping (and Cohere2MoeModel's and MinistralModel's, the same statements): builders.h
// full_and_sliding_masks (both masks always), but for the sliding SDPA mask of an inference pass inside generate(),
// whose padding mask nests one more `and` (cohere_parts.cpp sliding_mask_in_generate). Both held.
CausalMasks cohere2_masks(GraphBuilder& b, const TransformerSpec& s, DType model_dtype);

// `logits = logits * self.logit_scale` (a Python float): a fresh tensor of the logits' size.
TensorId cohere_logit_scale(GraphBuilder& b, TensorId x);

}  // namespace memplan
