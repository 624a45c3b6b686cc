// Phi3ForCausalLM (transformers 5.17 models/phi3/modeling_phi3.py), training forward + causal-LM loss, or one
// inference pass with the DynamicCache. The skeleton (embedding, mask, rotary, final RMSNorm, head) is
// build_causal_lm_skeleton (phi_parts.h); a layer differs from Llama's in:
//   Phi3Attention.forward: one qkv_proj linear, then three slices qkv[..., a:b] (SliceBackward: each gradient
//     zero-filled at qkv's size and summed into qkv's), each .view(B, S, -1, D).transpose(1, 2); the local `qkv`
//     is bound until the attention returns.
//   apply_rotary_pos_emb: q[..., :rot] / q[..., rot:] (also when rot == head_dim: the pass-through slice is
//     empty, the cat still copies), cat([(q_rot * cos) + (rotate_half(q_rot) * sin), q_pass]), then k.
//   Phi3DecoderLayer: residual + resid_attn_dropout(attn), residual + resid_mlp_dropout(mlp) (resid_pdrop).
//   Phi3MLP: gate_up_proj [2I], chunk(2) (SplitBackward concatenates the halves' gradients), up * act(gate),
//     down_proj; the local `gate` (a view of the gate_up output) is bound until the MLP returns.
// Parameters in registration order: self_attn.o_proj before self_attn.qkv_proj (Phi3Attention.__init__), then
// mlp.gate_up_proj, mlp.down_proj, input_layernorm, post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

TensorId phi3_attention(GraphBuilder& b, const TransformerSpec& s, TensorId wqkv, TensorId wo, TensorId x,
                        const SkeletonContext& c, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : hd;
  TensorId qkv = b.linear(x, wqkv);
  b.hold(qkv);
  // The slices: a view each whose backward writes a zero-filled gradient of qkv's whole size.
  const TensorId qs = b.view_copying_grad(qkv, {B, S, nh * hd});
  const TensorId ks = b.view_copying_grad(qkv, {B, S, nkv * hd});
  const TensorId vs = b.view_copying_grad(qkv, {B, S, nkv * hd});
  // .view(hidden_shape).transpose(1, 2): q and k get contiguous [B, H, S, D] gradients from the rotary backward,
  // which the reshape back to [B, S, H * D] copies (split with one part: a view with a fresh gradient of its
  // input's shape); v's only when it comes from a bmm or repeat_kv's sum (as in llama.cpp's attention).
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor;
  TensorId q = b.split(qs, 1, {B, nh, S, hd})[0];
  TensorId k = b.split(ks, 1, {B, nkv, S, hd})[0];
  TensorId v = v_grad_in_layout ? b.view(vs, {B, nkv, S, hd}) : b.split(vs, 1, {B, nkv, S, hd})[0];
  const TensorId v_proj = v;
  b.hold(v_proj);
  b.hold(q);
  b.hold(k);
  TensorId qe = partial_rope(b, q, c.cos, c.sin, rot, true);
  b.hold(qe);
  TensorId ke = partial_rope(b, k, c.cos, c.sin, rot, true);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  TensorId out = cat_rotary_o_proj(b, s, qe, ke, v, v_proj, c, wo, kNoTensor, weights);
  b.drop(qkv);
  return out;
}

TensorId phi3_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const bool train = !layer_frozen(cfg, i);
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const TensorId wo = b.param(p + "self_attn.o_proj.weight", {H, nh * hd}, train);
  const TensorId wqkv = b.param(p + "self_attn.qkv_proj.weight", {nh * hd + 2 * nkv * hd, H}, train);
  const TensorId wgu = b.param(p + "mlp.gate_up_proj.weight", {2 * I, H}, train);
  const TensorId wdown = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  const TensorId in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  const TensorId post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);

  TensorId n1 = rms_norm(b, h, in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = phi3_attention(b, s, wqkv, wo, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, b.dropout(a, s.resid_dropout));
  TensorId n2 = rms_norm(b, h1, post_norm);
  b.hold(n2);
  // Phi3MLP.forward
  TensorId up_states = b.linear(n2, wgu);
  const auto halves = b.split(up_states, 2, {B, S, I});
  const TensorId gate = halves[0];
  b.hold(gate);
  TensorId prod = b.mul(halves[1], activation(b, s.hidden_act, gate));
  TensorId m = b.linear(prod, wdown);
  b.drop(gate);
  b.drop(n2);
  h = b.add(h1, b.dropout(m, s.resid_dropout));
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return h;
}

}  // namespace

void build_phi3(GraphBuilder& b, const TransformerSpec& s) {
  build_causal_lm_skeleton(b, s, {"model.embed_tokens.weight", "model.norm", false, true, phi3_layer});
}

}  // namespace memplan
