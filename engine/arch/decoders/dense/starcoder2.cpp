// Starcoder2ForCausalLM (transformers 5.17 models/starcoder2/modeling_starcoder2.py), training forward +
// causal-LM loss, or one inference pass with the DynamicCache. Skeleton: build_causal_lm_skeleton
// (phi_parts.h) with the embedding dropout (embedding_dropout), create_sliding_window_causal_mask when
// sliding_window is set, a final nn.LayerNorm and lm_head (tied by default).
//   Starcoder2Attention.forward: LlamaAttention's statements (separate q/k/v projections, full rotary) with
//     use_bias on every projection and F.dropout(o_proj(...), residual_dropout) at the end. llama.cpp's
//     attention() is private to that file, so its q/k/v part is repeated here with the biases and the dropout.
//   Starcoder2DecoderLayer: LayerNorms (weight + bias) in place of RMSNorm.
//   Starcoder2MLP: c_fc -> act (gelu_pytorch_tanh) -> c_proj -> F.dropout(residual_dropout), no gate.
// Parameters in registration order: self_attn q/k/v/o (weight, bias each), mlp c_fc, c_proj, input_layernorm,
// post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

TensorId sc2_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const bool train = !layer_frozen(cfg, i);
  const std::string p = "model.layers." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  auto opt_bias = [&](const std::string& n, int64_t size, bool has) { return has ? param(n, {size}) : kNoTensor; };
  const TensorId wq = param("self_attn.q_proj.weight", {nh * hd, H});
  const TensorId bq = opt_bias("self_attn.q_proj.bias", nh * hd, s.qkv_bias);
  const TensorId wk = param("self_attn.k_proj.weight", {nkv * hd, H});
  const TensorId bk = opt_bias("self_attn.k_proj.bias", nkv * hd, s.qkv_bias);
  const TensorId wv = param("self_attn.v_proj.weight", {nkv * hd, H});
  const TensorId bv = opt_bias("self_attn.v_proj.bias", nkv * hd, s.qkv_bias);
  const TensorId wo = param("self_attn.o_proj.weight", {H, nh * hd});
  const TensorId bo = opt_bias("self_attn.o_proj.bias", H, s.o_bias);
  const TensorId wfc = param("mlp.c_fc.weight", {I, H});
  const TensorId bfc = opt_bias("mlp.c_fc.bias", I, s.mlp_bias);
  const TensorId wproj = param("mlp.c_proj.weight", {H, I});
  const TensorId bproj = opt_bias("mlp.c_proj.bias", H, s.mlp_bias);
  const TensorId ln1w = param("input_layernorm.weight", {H}), ln1b = param("input_layernorm.bias", {H});
  const TensorId ln2w = param("post_attention_layernorm.weight", {H}), ln2b = param("post_attention_layernorm.bias", {H});

  TensorId n1 = b.layer_norm(h, ln1w, ln1b);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  // ---- attention (as llama.cpp's attention(): gradient copies of the transposed head views)
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor;
  TensorId q = b.view_copying_grad(b.linear(n1, wq, bq), {B, nh, S, hd});
  TensorId k = b.view_copying_grad(b.linear(n1, wk, bk), {B, nkv, S, hd});
  TensorId vp = b.linear(n1, wv, bv);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);
  b.hold(q);
  b.hold(k);
  TensorId qe = rope(b, q, c.cos, c.sin);
  b.hold(qe);
  TensorId ke = rope(b, k, c.cos, c.sin);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  TensorId weights = kNoTensor;
  TensorId a = attention_o_proj(b, s, qe, ke, v, v_proj, c.mask, c.window, wo, bo, weights);
  a = b.dropout(a, s.resid_dropout);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  // ---- MLP
  TensorId n2 = b.layer_norm(h1, ln2w, ln2b);
  b.hold(n2);
  TensorId fc = b.linear(n2, wfc, bfc);
  TensorId m = b.linear(activation(b, s.hidden_act, fc), wproj, bproj);
  m = b.dropout(m, s.resid_dropout);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (weights != kNoTensor) b.drop(weights);  // `hidden_states, _ = self.self_attn(...)`
  return out;
}

}  // namespace

void build_starcoder2(GraphBuilder& b, const TransformerSpec& s) {
  build_causal_lm_skeleton(b, s, {"model.embed_tokens.weight", "model.norm", true, true, sc2_layer});
}

}  // namespace memplan
