// Pieces of Olmo2ForCausalLM (engine/arch/decoders/dense/olmo2.cpp) that Olmo3ForCausalLM (engine/arch/decoders/dense/olmo3.cpp)
// runs statement for statement in transformers 5.17: the RMSNorm with the weight product in fp32, the layer's
// parameters, the attention with q / k norms over the whole projection, and the post-norm decoder layer.
#pragma once
#include <string>

#include "engine/arch/builders.h"

namespace memplan {

// Olmo2RMSNorm / Olmo3RMSNorm: x.to(f32); pow(2).mean(-1); x * rsqrt(var + eps); (weight * x).to(input dtype) -
// the product is taken in fp32, unlike Llama's weight * x.to(input dtype), so builders.h rms_norm is not reused.
// `held_input`: the caller's frame binds x (the call's argument) until the norm returns, for an input nothing
// else holds (a projection's or the MLP's output).
TensorId olmo2_rms_norm(GraphBuilder& b, TensorId x, TensorId w, bool held_input);

// One decoder layer's parameters. Registration order: self_attn.{q,k,v,o}_proj (bias with attention_bias),
// self_attn.{q,k}_norm ([H * D] and [Hkv * D]), mlp gate / up / down, post_attention_layernorm,
// post_feedforward_layernorm.
struct Olmo2Layer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, gate, up, down, post_attn_norm, post_ffn_norm;
};
Olmo2Layer olmo2_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);

// Olmo2Attention / Olmo3Attention.forward: q_norm(q_proj(x)) over the full projected width, k likewise, v; the
// head views; apply_rotary_pos_emb in fp32 with fp32 cos / sin, cast back (llama_parts.h rope_cast_back); then the
// attention from the cache update on (llama_parts.h attention_o_proj with `mask` and the cache's sliding
// `window`, 0 for full attention). `weights`: eager attention's probabilities, held.
// `unbatched_eager_views` (olmo3): at batch size 1, eager attention's torch.matmul reshapes the [1, H, S, D]
// transposed views of q, k and v without a copy (a size-1 dim merges with any stride), so bmm saves the views
// themselves (llama_parts.h eager_attention_o_proj); olmo2 keeps llama_parts' attention_core, which copies them.
TensorId olmo2_attention(GraphBuilder& b, const TransformerSpec& s, const Olmo2Layer& w, TensorId x, TensorId cos,
                         TensorId sin, TensorId mask, int64_t window, TensorId& weights,
                         bool unbatched_eager_views = false);

// Olmo2DecoderLayer / Olmo3DecoderLayer.forward (post-norm, no input_layernorm) between the layer's bookkeeping:
// h + post_attention_layernorm(attn(h)), then h1 + post_feedforward_layernorm(mlp(h1)). The layer input stays
// held (the residual and the model's loop variable) until the layer returns, unless it is `inputs_embeds`, which
// the model holds itself; eager attention's weights die as the layer returns.
TensorId olmo2_decoder_layer(GraphBuilder& b, const TransformerSpec& s, const Olmo2Layer& w, TensorId h,
                             TensorId inputs_embeds, TensorId cos, TensorId sin, TensorId mask, int64_t window,
                             bool unbatched_eager_views = false);

// Olmo3Model's / AfmoeModel's causal_mask_mapping: create_causal_mask and create_sliding_window_causal_mask, both on
// every forward whatever the layer types (builders.h full_and_sliding_masks in SDPA training); eager builds the
// sliding float mask from masking_utils' nested and_masks (whole-run olmo3 eager stream), and an inference pass's
// sliding SDPA mask nests once more where generate() passes its attention mask (rows B). Both held (the model binds
// the mapping until its forward returns); either may be kNoTensor (SDPA's is_causal).
CausalMasks causal_mask_mapping(GraphBuilder& b, const TransformerSpec& s, DType model_dtype);

}  // namespace memplan
