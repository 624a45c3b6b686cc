// HunYuanDenseV1ForCausalLM (transformers 5.17 models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py), training
// forward + causal-LM loss or one inference pass. LlamaForCausalLM's skeleton (embedding, causal mask, rotary
// cos / sin, layer loop, final RMSNorm, lm_head, loss: phi_parts.h build_causal_lm_skeleton) and decoder layer;
// what differs is the attention:
//   HunYuanDenseV1Attention.forward: q / k / v projections and their [B, H, S, D] head views (llama_parts.h
//   llama_qkv_views), apply_rotary_pos_emb(q, k) as Llama's (rope_qk), and only then
//     query_states = self.query_layernorm(query_states)   RMSNorm over head_dim of the *rotated* q
//     key_states = self.key_layernorm(key_states)
//   so the rotated q / k (bound to query_states / key_states) live until their norm returns and rebinds them;
//   the normed k is what the DynamicCache stores in inference. Then the attention from the cache update on
//   (attention_o_proj, the same statements as Llama's).
//   The rotated q keeps the projection's [B, S, H, D] memory order and so does the norm's output (elementwise
//   ops and .to() preserve strides), so eager attention's matmul copies q as it does for Llama (attention_core).
//   HunYuanDenseV1MLP: down(act(gate(x)) * up(x)), act = ACT2FN[hidden_act] (silu by default), no biases.
//   Parameters per layer, registration order: self_attn.{q,k,v,o}_proj (bias with attention_bias),
//   self_attn.query_layernorm, self_attn.key_layernorm, mlp.{gate,up,down}_proj, input_layernorm,
//   post_attention_layernorm.
// The rotary embedding's dynamic NTK-alpha variant (rope_parameters rope_type "dynamic" with "alpha") changes
// inv_freq only (a [head_dim / 2] buffer): memory as the default rotary.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct HunyuanLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, gate, up, down, in_norm, post_norm;
};

HunyuanLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, hd = s.head_dim;
  HunyuanLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.query_layernorm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.key_layernorm.weight", {hd}, train);
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// HunYuanDenseV1Attention.forward on the normed input x. `weights`: eager attention's probabilities, held.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const HunyuanLayer& w, TensorId x,
                   const SkeletonContext& c, TensorId& weights) {
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);  // apply_rotary_pos_emb(q, k, ...): q and k are rebound only once both are rotated
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, c.cos, c.sin);  // both held (bound to query_states / key_states)
  const TensorId qn = rms_norm(b, qe, w.q_norm);
  b.hold(qn);
  b.drop(qe);  // query_states rebinds to the norm's output
  const TensorId kn = rms_norm(b, ke, w.k_norm);
  b.hold(kn);
  b.drop(ke);
  return attention_o_proj(b, s, qn, kn, v, v_proj, c.mask, c.window, w.o, w.ob, weights);
}

// HunYuanDenseV1DecoderLayer.forward (LlamaDecoderLayer's statements; the skeleton holds its input until it
// returns).
TensorId hunyuan_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const HunyuanLayer w = layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm,
      [&](TensorId x, TensorId& weights) { return attention(b, s, w, x, c, weights); },
      [&](TensorId n2) {
        TensorId act = activation(b, s.hidden_act, b.linear(n2, w.gate));
        return b.linear(b.mul(act, b.linear(n2, w.up)), w.down);
      });
}

}  // namespace

void build_hunyuan_v1_dense(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "hunyuan_v1_dense has no sliding-window attention or experts");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError("model.hidden_act", s.hidden_act, "hunyuan_v1_dense is modelled with silu, gelu or relu");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"embed_tokens.weight", "norm", false, false, hunyuan_layer});
}

}  // namespace memplan
