// PhiForCausalLM (transformers 5.17 models/phi/modeling_phi.py; phi-1, phi-1.5, phi-2), training forward +
// causal-LM loss, or one inference pass with the DynamicCache. Skeleton: build_causal_lm_skeleton (phi_parts.h)
// with embed_dropout (embd_pdrop), create_causal_mask, final_layernorm (nn.LayerNorm) and a biased lm_head.
//   PhiAttention.forward: q/k/v projections (biased) viewed [B, S, H, D] and transposed; with qk_layernorm an
//     nn.LayerNorm over head_dim on each transposed view (a non-contiguous input: the kernel works on a
//     contiguous copy, and so does its backward); the partial rotary embedding slices q[..., :rot] and q[..., rot:]
//     of q and k first, rotates both rotary parts, then cats each with its pass-through part (gpt_neox's order);
//     the pass-through views keep query_states / key_states alive until the attention returns; attention; dense.
//   PhiDecoderLayer: one input_layernorm feeds both branches (parallel):
//     attn_outputs = resid_dropout(self_attn(n)), ff = resid_dropout(mlp(n)), out = attn_outputs + ff + residual;
//     n, attn_outputs and ff stay bound until the layer returns.
//   PhiMLP: fc1 -> ACT2FN[hidden_act] (gelu_new by default: the Python tanh formula) -> fc2, biased.
// Parameters in registration order: self_attn q/k/v_proj, dense (weight, bias each), q_layernorm, k_layernorm
// (with qk_layernorm), mlp fc1, fc2, input_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

TensorId phi_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : hd;
  const bool train = !layer_frozen(cfg, i);
  const std::string p = "model.layers." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  const TensorId wq = param("self_attn.q_proj.weight", {nh * hd, H}), bq = param("self_attn.q_proj.bias", {nh * hd});
  const TensorId wk = param("self_attn.k_proj.weight", {nkv * hd, H}), bk = param("self_attn.k_proj.bias", {nkv * hd});
  const TensorId wv = param("self_attn.v_proj.weight", {nkv * hd, H}), bv = param("self_attn.v_proj.bias", {nkv * hd});
  const TensorId wd = param("self_attn.dense.weight", {H, nh * hd}), bd = param("self_attn.dense.bias", {H});
  TensorId qlw = kNoTensor, qlb = kNoTensor, klw = kNoTensor, klb = kNoTensor;
  if (s.qk_layernorm) {
    // nn.LayerNorm(hidden_size // num_attention_heads): head_dim unless the config sets head_dim apart.
    const int64_t ln = H / nh;
    qlw = param("self_attn.q_layernorm.weight", {ln});
    qlb = param("self_attn.q_layernorm.bias", {ln});
    klw = param("self_attn.k_layernorm.weight", {ln});
    klb = param("self_attn.k_layernorm.bias", {ln});
  }
  const TensorId w1 = param("mlp.fc1.weight", {I, H}), b1 = param("mlp.fc1.bias", {I});
  const TensorId w2 = param("mlp.fc2.weight", {H, I}), b2 = param("mlp.fc2.bias", {H});
  const TensorId lnw = param("input_layernorm.weight", {H}), lnb = param("input_layernorm.bias", {H});

  TensorId n = b.layer_norm(h, lnw, lnb);
  b.hold(n);  // hidden_states: the MLP's input too, bound until the layer returns
  // ---- attention
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor;  // as in llama.cpp attention
  TensorId q = b.view_copying_grad(b.linear(n, wq, bq), {B, nh, S, hd});
  TensorId k = b.view_copying_grad(b.linear(n, wk, bk), {B, nkv, S, hd});
  TensorId vp = b.linear(n, wv, bv);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);
  if (s.qk_layernorm) {
    q = b.layer_norm(q, qlw, qlb, /*contiguous_copy=*/true);
    k = b.layer_norm(k, klw, klb, /*contiguous_copy=*/true);
  }
  TensorId weights = kNoTensor;
  const SlicedRotaryAttention att = sliced_rotary_attention(b, s, q, k, v, v_proj, c, rot, weights);
  const TensorId ctx = att.ctx;
  TensorId a = b.linear(b.view(ctx, {B, S, nh * hd}), wd, bd);
  release_attention_locals(b, att);
  a = b.dropout(a, s.resid_dropout);
  // ---- MLP on the same normed input
  TensorId m = b.linear(activation_or_gelu_new(b, s.hidden_act, b.linear(n, w1, b1)), w2, b2);
  m = b.dropout(m, s.resid_dropout);
  b.hold(a);
  b.hold(m);
  TensorId out = b.add(b.add(a, m), h);
  b.drop(a);
  b.drop(m);
  b.drop(n);
  // `attn_outputs, _ = self.self_attn(...)`: eager attention's probabilities stay bound until the layer returns.
  if (weights != kNoTensor) b.drop(weights);
  return out;
}

}  // namespace

void build_phi(GraphBuilder& b, const TransformerSpec& s) {
  build_causal_lm_skeleton(b, s, {"model.embed_tokens.weight", "model.final_layernorm", true, false, phi_layer});
}

}  // namespace memplan
