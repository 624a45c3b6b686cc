// OlmoForCausalLM (transformers 5.17 models/olmo/modeling_olmo.py), training forward + causal-LM loss or one
// inference pass.
//   embed_tokens -> causal mask -> rotary cos/sin, *kept in fp32* (OlmoRotaryEmbedding.forward returns them
//   without the cast to x.dtype, as Olmo2's does) -> N x DecoderLayer -> norm -> lm_head.
//   DecoderLayer: Llama's pre-norm order, h + attn(input_layernorm(h)), then h + mlp(post_attention_layernorm(h)).
//   OlmoLayerNorm has no parameters: F.layer_norm(x.to(f32), (H,), None, None).to(x.dtype) - the fp32 copy (a
//   no-op for fp32 tensors) is what layer_norm saves with its fp32 mean / rstd, the fp32 output a temporary of the
//   statement, cast back to a 16-bit input's dtype.
//   OlmoAttention: q / k / v projections, each clamp_(-clip_qkv, clip_qkv) in place when config.clip_qkv is set
//   (all three after the three projections), the head views, apply_rotary_pos_emb in fp32 with the fp32 cos / sin
//   and cast back to q's / k's dtype (Olmo2's statements), the attention from the cache update on as Llama's
//   (llama_parts.h attention_core), o_proj. MLP: Llama's SwiGLU, no biases.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// OlmoLayerNorm.forward.
TensorId olmo_layer_norm(GraphBuilder& b, TensorId x) {
  const DType in_dt = b.dtype(x);
  return b.to(b.layer_norm(b.to(x, DType::f32), kNoTensor, kNoTensor), in_dt);
}

struct OlmoLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, gate, up, down;
};

// Registration order: self_attn.{q,k,v,o}_proj (bias with attention_bias), mlp gate / up / down. The two
// OlmoLayerNorms own no parameters.
OlmoLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  OlmoLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  return w;
}

// OlmoAttention.forward. `weights`: eager attention's probabilities, held (see attention_core).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const OlmoLayer& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  TensorId qp = b.linear(x, w.q, w.qb);
  b.hold(qp);  // query_states / key_states / value_states are bound at once, before the clamps
  TensorId kp = b.linear(x, w.k, w.kb);
  b.hold(kp);
  TensorId vp = b.linear(x, w.v, w.vb);
  b.hold(vp);
  if (s.clip_qkv > 0.0) {
    const TensorId qc = clamp_qkv_inplace(b, qp), kc = clamp_qkv_inplace(b, kp), vc = clamp_qkv_inplace(b, vp);
    for (TensorId t : {qc, kc, vc}) b.hold(t);
    for (TensorId t : {qp, kp, vp}) b.drop(t);
    qp = qc;
    kp = kc;
    vp = vc;
  }
  // The head views: q and k get the rotary backward's contiguous [B, H, S, D] gradients and copy them back; v
  // as in llama_attention.
  // After clamp_ the projections are aliases of their outputs: the copies are the outputs' size.
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;
  const auto full_bytes = [&](TensorId t) { return checked_mul(b.numel(t), dtype_bytes(b.dtype(t))); };
  TensorId q = b.view_copying_grad(qp, {B, nh, S, hd}, full_bytes(qp));
  b.hold(q);
  TensorId k = b.view_copying_grad(kp, {B, nkv, S, hd}, full_bytes(kp));
  b.hold(k);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd})
                                : b.view_copying_grad(vp, {B, nkv, S, hd}, full_bytes(vp));
  const TensorId v_proj = v;
  b.hold(v_proj);
  for (TensorId t : {qp, kp, vp}) b.drop(t);
  const auto [qe, ke] = rope_cast_back(b, q, k, cos, sin);  // apply_rotary_pos_emb (fp32 cos / sin)
  TensorId out = attention_o_proj(b, s, qe, ke, v, v_proj, mask, 0, w.o, w.ob, weights);
  return out;
}

}  // namespace

// `t.clamp_(min=-c, max=c)` on a projection's output: the result aliases t. The in-place clamp's autograd
// node needs the unclamped input for clamp_backward, so autograd clones t before the kernel overwrites it and
// saves the clone; clamp_backward evaluates where((x >= min).logical_and_(x <= max), grad, 0): two bool masks of
// x's size alive while the fresh gradient is written (whole-run stream, OLMo clip_qkv amp: 8 + 8 MiB, then the
// 16 MiB gradient, per projection).
TensorId clamp_qkv_inplace(GraphBuilder& b, TensorId t) {
  if (!b.training() || !b.info(t).requires_grad) return b.inplace("clamp_", t, false);
  const TensorId original = b.generic_one("clone", {t}, b.shape(t), b.dtype(t));
  const int64_t mask_bytes = b.numel(t);  // torch.bool: one byte per element
  return b.inplace_fresh_grad("clamp_", t, {original}, {mask_bytes, mask_bytes});
}


void build_olmo(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, hd = s.head_dim;
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "olmo has no sliding-window attention or experts");
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
    const OlmoLayer w = layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
    TensorId n1 = olmo_layer_norm(b, h);
    b.hold(n1);  // bound to hidden_states until self_attn returns
    TensorId attn_weights = kNoTensor;
    TensorId a = attention(b, s, w, n1, cos, sin, mask, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = olmo_layer_norm(b, h1);
    b.hold(n2);  // bound to hidden_states until the MLP returns
    TensorId m = swiglu_mlp(b, n2, w.gate, w.up, w.down);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = olmo_layer_norm(b, h);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
