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
#include "engine/arch/builders.h"

#include "engine/arch/decoders/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// Python lifetimes: `variance` is a local until forward returns, and the module's input stays referenced by
// the caller's frame (the call's argument) until the call returns: `held_input` for an input nothing else
// holds (a projection's or the MLP's output; whole-run inference stream: the 16 MiB q_proj output and the
// [B, S, 1] variance are freed after the norm's output exists, not after their last reads).
TensorId olmo2_rms_norm(GraphBuilder& b, TensorId x, TensorId w, bool held_input) {
  const DType in_dt = b.dtype(x);
  if (held_input) b.hold(x);
  TensorId x32 = b.to(x, DType::f32);
  TensorId sq = b.pow_scalar(x32);
  TensorId var = b.reduce_last("mean", sq, false);
  b.hold(var);
  TensorId ve = b.add_scalar(var);
  TensorId r = b.unary("rsqrt", ve, false, true, true);
  TensorId n = b.mul(x32, r);
  b.hold(n);  // `hidden_states` stays bound until forward returns, after the product's cast
  TensorId y = b.to(b.mul(w, n), in_dt);
  b.drop(n);
  b.drop(var);
  if (held_input) b.drop(x);
  return y;
}

struct Olmo2Layer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, gate, up, down, post_attn_norm, post_ffn_norm;
};

// Registration order: self_attn.{q,k,v,o}_proj (bias with attention_bias), self_attn.{q,k}_norm, mlp
// gate/up/down, post_attention_layernorm, post_feedforward_layernorm.
Olmo2Layer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads,
                hd = s.head_dim;
  Olmo2Layer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {nh * hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {nkv * hd}, train);
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.post_attn_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.post_ffn_norm = b.param(p + "post_feedforward_layernorm.weight", {H}, train);
  return w;
}

// Olmo2Attention.forward. `weights`: eager attention's probabilities, held (see attention_core).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const Olmo2Layer& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // query_states / key_states / value_states are bound at once and rebound to their head views; the head views
  // of the norm outputs get the rotary backward's contiguous [B, H, S, D] gradients and copy them back.
  TensorId q = b.view_copying_grad(olmo2_rms_norm(b, b.linear(x, w.q, w.qb), w.q_norm, true), {B, nh, S, hd});
  b.hold(q);
  TensorId k = b.view_copying_grad(olmo2_rms_norm(b, b.linear(x, w.k, w.kb), w.k_norm, true), {B, nkv, S, hd});
  b.hold(k);
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;  // as in llama.cpp attention
  TensorId vp = b.linear(x, w.v, w.vb);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);
  const auto [qe, ke] = rope_cast_back(b, q, k, cos, sin);  // apply_rotary_pos_emb (fp32 cos / sin)
  TensorId out = attention_o_proj(b, s, qe, ke, v, v_proj, mask, 0, w.o, w.ob, weights);
  return out;
}

}  // namespace

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
    const Olmo2Layer w = layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
    TensorId attn_weights = kNoTensor;
    TensorId a = attention(b, s, w, h, cos, sin, mask, attn_weights);
    a = olmo2_rms_norm(b, a, w.post_attn_norm, true);
    TensorId h1 = b.add(h, a);
    b.hold(h1);  // residual of the MLP half
    TensorId m = olmo2_rms_norm(b, swiglu_mlp(b, h1, w.gate, w.up, w.down), w.post_ffn_norm, true);
    h = b.add(h1, m);
    b.drop(h1);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = olmo2_rms_norm(b, h, b.param("norm.weight", {H}, emb_train), false);  // h: held above
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
