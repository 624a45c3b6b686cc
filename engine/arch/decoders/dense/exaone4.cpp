// Exaone4ForCausalLM (transformers 5.17 models/exaone4/modeling_exaone4.py), training forward + causal-LM loss or
// one inference pass.
//   embed_tokens -> masks: create_causal_mask always, create_sliding_window_causal_mask when layer_types has a
//   sliding layer -> rotary cos / sin in the hidden dtype (Llama's) -> N x DecoderLayer -> norm -> lm_head.
//   DecoderLayer (post-norm, no input_layernorm):
//     h = residual + post_attention_layernorm(self_attn(h)); h = residual + post_feedforward_layernorm(mlp(h))
//     (each block's output stays bound to hidden_states until its norm returns).
//   Exaone4Attention (parts/exaone_parts.h qk_normed_head_attention): q = q_proj(x).view(B, S, H, D)
//   .transpose(1, 2), bound to query_states until `query_states = self.q_norm(query_states)` rebinds it (an
//   RMSNorm over head_dim on the transposed view), k likewise with k_norm, v as in Llama. The rotary embedding
//   runs only when config.sliding_window is None or the layer is a sliding one: with a window set (default 4096)
//   the global (full_attention) layers take no positional rotation at all. The attention from the cache update on
//   is Llama's (llama_parts.h attention_core); sliding layers use the sliding mask and a DynamicSlidingWindowLayer
//   in the cache.
//   Exaone4RMSNorm is LlamaRMSNorm (weight * x.to(input dtype)).
//   Layer types: config.layer_types, else sliding unless (i + 1) % sliding_window_pattern == 0 (importer).
#include "engine/arch/builders.h"

#include <algorithm>
#include <tuple>

#include "engine/arch/decoders/parts/exaone_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Exaone4Layer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, gate, up, down, post_attn_norm, post_ffn_norm;
};

// Registration order: self_attn.{q,k,v,o}_proj (no biases), self_attn.{q,k}_norm, mlp gate / up / down,
// post_attention_layernorm, post_feedforward_layernorm.
Exaone4Layer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, hd = s.head_dim;
  Exaone4Layer w;
  attention_projection_params(b, s, p, train, false, false, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.post_attn_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.post_ffn_norm = b.param(p + "post_feedforward_layernorm.weight", {H}, train);
  return w;
}

}  // namespace

void build_exaone4(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.num_experts > 0) throw InputError("model.num_experts", std::to_string(s.num_experts), "exaone4 has no experts");
  if (!s.sliding_layers.empty() && static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  bool any_sliding = false;
  for (int64_t i = 0; i < s.num_layers; ++i) any_sliding = any_sliding || layer_is_sliding(s, i);
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // causal_mask_mapping: the full mask always, the sliding one when a layer slides; before the rotary embedding.
  const auto [mask, sliding_mask] = full_and_sliding_masks(b, s, true, any_sliding, b.dtype(h));

  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const Exaone4Layer w = layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
    const bool sliding = layer_is_sliding(s, i);
    const bool rotary = s.sliding_window <= 0 || sliding;  // `if self.sliding_window is None or self.is_sliding`
    TensorId attn_weights = kNoTensor;
    TensorId a = qk_normed_head_attention(b, s, w, h, cos, sin, sliding ? sliding_mask : mask,
                                          sliding ? s.sliding_window : 0, rotary, attn_weights);
    a = rms_norm(b, a, w.post_attn_norm, true);
    TensorId h1 = b.add(h, a);
    b.hold(h1);  // residual of the MLP half
    TensorId m = rms_norm(b, swiglu_mlp(b, h1, w.gate, w.up, w.down), w.post_ffn_norm, true);
    h = b.add(h1, m);
    b.drop(h1);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train), false);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, sliding_mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
