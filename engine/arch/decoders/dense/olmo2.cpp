// Olmo2ForCausalLM (transformers 5.17 models/olmo2/modeling_olmo2.py), training forward + causal-LM loss or one
// inference pass.
//   embed_tokens -> causal mask -> rotary cos/sin, *kept in fp32* (Olmo2RotaryEmbedding.forward returns them
//   without the cast to x.dtype) -> N x DecoderLayer -> norm -> lm_head.
//   DecoderLayer (post-norm, no input_layernorm): h + post_attention_layernorm(attn(h)), then
//   h + post_feedforward_layernorm(mlp(h)).
//   Olmo2RMSNorm: x.to(f32); pow(2).mean(-1); x * rsqrt(var + eps); (weight * x).to(input dtype) - the product is
//   taken in fp32, unlike Llama's weight * x.to(input dtype), so rms_norm (builders.h) is not reused.
//   Attention: q_norm(q_proj(x)) over the full projected width [B, S, H * D] (k_norm likewise over Hkv * D),
//   then the head view and transpose; apply_rotary_pos_emb computes in fp32 (fp32 cos / sin) and casts q and k
//   back to their dtypes; the attention from the cache update on is Llama's (llama_parts.h attention_core).
// The norm, the attention and the layer live in olmo2_parts.{h,cpp}, shared with olmo3.cpp.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/olmo2_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_olmo2(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.sliding_window > 0) throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                                             "olmo2 has no sliding-window attention");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // create_causal_mask (held), before the rotary embedding: the full mask of full_and_sliding_masks.
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, DType::f32);
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const Olmo2Layer w = olmo2_layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    h = olmo2_decoder_layer(b, s, w, h, inputs_embeds, cos, sin, mask, 0);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = olmo2_rms_norm(b, h, b.param("norm.weight", {H}, emb_train), false);  // h: held above
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
