// Qwen3ForCausalLM (transformers 5.17 models/qwen3/modeling_qwen3.py), and the model body Qwen3MoeForCausalLM
// shares with it (models/qwen3_moe/modeling_qwen3_moe.py is generated from it).
//   embed_tokens -> masks (full, and sliding when layer_types has sliding layers) -> rotary cos/sin in the hidden
//   dtype -> N x DecoderLayer -> norm -> lm_head -> loss (training) or the last logits (inference).
//   DecoderLayer: h + o_proj(attn(...)) over input_layernorm(h), then h + mlp(post_attention_layernorm(h)); the
//   mlp is Qwen3MLP, or Qwen3MoeSparseMoeBlock on the MoE layers of qwen3_moe (qwen3_moe.cpp).
//   Attention (Qwen3Attention.forward): q_norm(q_proj(x).view(B, S, H, D)).transpose(1, 2), the same for k with
//   k_norm - an RMSNorm over head_dim, *before* the rotary embedding, which is why this file writes its own
//   attention instead of llama.cpp's (that one rotates the projections' views directly) -, v_proj as in Llama,
//   then rope and the attention from the cache update on (llama_parts.h attention_core, the same statements).
#include "engine/arch/decoders/parts/qwen_parts.h"

#include <algorithm>

#include "engine/errors.h"

namespace memplan {

// The registration order: qwen_parts.h.
Qwen3Layer qwen3_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train, bool moe) {
  const int64_t H = s.hidden_size, hd = s.head_dim;
  Qwen3Layer w;
  w.moe = moe;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  if (moe) {
    const int64_t E = s.num_experts, I = s.moe_intermediate_size;
    w.ffn.up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
    w.ffn.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
    w.ffn.gate = b.param(p + "mlp.gate.weight", {E, H}, train);
  } else {
    const int64_t I = s.intermediate_size;
    w.ffn.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
    w.ffn.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
    w.ffn.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  }
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

void build_qwen3_model(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  // Per-layer vectors come from the importer with one entry per layer; a spec made in code must match too.
  if (!s.moe_layers.empty() && static_cast<int64_t>(s.moe_layers.size()) != s.num_layers)
    throw InputError("model.moe_layers", std::to_string(s.moe_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (!s.sliding_layers.empty() && static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  bool any_sliding = false;
  for (int64_t i = 0; i < s.num_layers; ++i) any_sliding = any_sliding || layer_is_sliding(s, i);
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // Masks before the rotary embedding. Qwen3Model.forward always builds the full-attention mask and adds the
  // sliding one when layer_types has sliding layers; Qwen3MoeModel.forward builds one mask, sliding when
  // config.sliding_window is set (then every layer slides: the importer marks them all).
  const bool want_full = s.model_type != "qwen3_moe" || !any_sliding;
  const auto [mask, sliding_mask] = full_and_sliding_masks(b, s, want_full, any_sliding, b.dtype(h));

  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const bool moe = !s.moe_layers.empty() && s.moe_layers[static_cast<size_t>(i)] != 0;
    const Qwen3Layer w = qwen3_layer_params(b, s, p, !layer_frozen(cfg, i), moe);

    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    TensorId n1 = rms_norm(b, h, w.in_norm, false);  // h: the layer input, held
    b.hold(n1);  // bound to hidden_states until self_attn returns
    const bool sliding = layer_is_sliding(s, i);
    TensorId attn_weights = kNoTensor;
    TensorId a = qwen3_attention(b, s, w, n1, cos, sin, sliding ? sliding_mask : mask,
                                 sliding ? s.sliding_window : 0, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = rms_norm(b, h1, w.post_norm, false);  // h1: the residual, read again below
    b.hold(n2);
    TensorId m = moe ? qwen3_moe_block(b, s, w.ffn, n2) : swiglu_mlp(b, n2, w.ffn.gate, w.ffn.up, w.ffn.down);
    b.drop(n2);
    h = b.add(h1, m);
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

void build_qwen3(GraphBuilder& b, const TransformerSpec& s) {
  if (!s.moe_layers.empty()) throw InputError("model.moe_layers", "set", "qwen3 has no MoE layers (use qwen3_moe)");
  build_qwen3_model(b, s);
}

}  // namespace memplan
