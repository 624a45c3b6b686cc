// GPTNeoXForCausalLM (transformers 5.17 models/gpt_neox/modeling_gpt_neox.py), training forward + causal-LM
// loss, or one inference pass with the DynamicCache. Skeleton: build_causal_lm_skeleton (phi_parts.h) with
// embed_in, emb_dropout (hidden_dropout), create_causal_mask, final_layer_norm (nn.LayerNorm) and lm_head.
//   GPTNeoXAttention.forward: query_key_value(x).view(B, S, H, 3D).transpose(1, 2) [B, H, S, 3D], chunk(3, -1)
//     (SplitBackward cats the three gradients into [B, H, S, 3D]; the transposed view's reshape back to
//     [B, S, 3HD] copies it); apply_rotary_pos_emb rotates q[..., :rot] and k[..., :rot] first and cats both
//     with their pass-through parts afterwards; attention (MHA: no repeat_kv); dense.
//   GPTNeoXLayer: attn = post_attention_dropout(attention(input_layernorm(x))); parallel residual:
//     post_mlp_dropout(mlp(post_attention_layernorm(x))) + attn + x; sequential: a = attn + x, then
//     post_mlp_dropout(mlp(post_attention_layernorm(a))) + a.
//   GPTNeoXMLP: dense_h_to_4h -> act -> dense_4h_to_h, all with biases.
// Parameters in registration order: input_layernorm, post_attention_layernorm (weight, bias each), attention
// query_key_value, dense (with attention_bias), mlp dense_h_to_4h, dense_4h_to_h.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

TensorId neox_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                I = s.intermediate_size, nh = s.num_heads, hd = s.head_dim;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : hd;
  const bool train = !layer_frozen(cfg, i);
  const std::string p = "gpt_neox.layers." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  auto opt_bias = [&](const std::string& n, int64_t size, bool has) { return has ? param(n, {size}) : kNoTensor; };
  const TensorId ln1w = param("input_layernorm.weight", {H}), ln1b = param("input_layernorm.bias", {H});
  const TensorId ln2w = param("post_attention_layernorm.weight", {H}), ln2b = param("post_attention_layernorm.bias", {H});
  const TensorId wqkv = param("attention.query_key_value.weight", {3 * H, H});
  const TensorId bqkv = opt_bias("attention.query_key_value.bias", 3 * H, s.qkv_bias);
  const TensorId wd = param("attention.dense.weight", {H, H});
  const TensorId bd = opt_bias("attention.dense.bias", H, s.o_bias);
  const TensorId w1 = param("mlp.dense_h_to_4h.weight", {I, H}), b1 = param("mlp.dense_h_to_4h.bias", {I});
  const TensorId w2 = param("mlp.dense_4h_to_h.weight", {H, I}), b2 = param("mlp.dense_4h_to_h.bias", {H});

  // ---- attention
  TensorId n1 = b.layer_norm(h, ln1w, ln1b);
  b.hold(n1);  // the module call's argument: bound until the attention returns
  TensorId qkv = b.view_copying_grad(b.linear(n1, wqkv, bqkv), {B, nh, S, 3 * hd});
  b.hold(qkv);  // the local `qkv` until the attention returns
  const auto parts = b.split(qkv, 3, {B, nh, S, hd});
  TensorId q = parts[0], k = parts[1], v = parts[2];
  const TensorId v_proj = v;
  for (TensorId t : parts) b.hold(t);
  TensorId q_pass = kNoTensor, k_pass = kNoTensor;
  TensorId qr = partial_rope(b, q, c.cos, c.sin, rot, false, &q_pass);
  TensorId kr = partial_rope(b, k, c.cos, c.sin, rot, false, &k_pass);
  TensorId qe = cat_rotary(b, qr, q_pass);
  b.hold(qe);
  TensorId ke = cat_rotary(b, kr, k_pass);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  TensorId weights = kNoTensor;
  TensorId ctx = cudnn_output_copy(b, cat_rotary_attention(b, s, qe, ke, v, v_proj, c.mask, c.window, weights), c.mask);
  TensorId a = b.linear(b.view(ctx, {B, S, H}), wd, bd);
  b.drop(qe);
  b.drop(ke);
  if (!b.kv_cached()) b.drop(v_proj);  // the cache's update rebound (and so dropped) it
  b.drop(qkv);
  b.drop(n1);
  a = b.dropout(a, s.resid_dropout);

  // ---- MLP
  auto mlp = [&](TensorId x) {
    b.hold(x);  // the module call's argument
    TensorId fc = b.linear(x, w1, b1);
    TensorId act = activation(b, s.hidden_act, fc);
    TensorId out = b.linear(act, w2, b2);
    b.drop(x);
    return b.dropout(out, s.resid_dropout);
  };
  TensorId out;
  if (s.parallel_residual) {
    TensorId m = mlp(b.layer_norm(h, ln2w, ln2b));
    // `hidden_states = mlp_output + attn_output + hidden_states`: both locals stay bound until the layer
    // returns, so they outlive the first sum (whole-run stream, neox bf16: three [B, S, H] frees at the end).
    b.hold(m);
    b.hold(a);
    out = b.add(b.add(m, a), h);
    b.drop(m);
    b.drop(a);
  } else {
    TensorId a2 = b.add(a, h);
    TensorId m = mlp(b.layer_norm(a2, ln2w, ln2b));
    out = b.add(m, a2);
  }
  // `attn_output, _ = self.attention(...)`: eager attention's probabilities stay bound until the layer returns.
  if (weights != kNoTensor) b.drop(weights);
  return out;
}

}  // namespace

void build_gpt_neox(GraphBuilder& b, const TransformerSpec& s) {
  build_causal_lm_skeleton(b, s, {"gpt_neox.embed_in.weight", "gpt_neox.final_layer_norm", true, false, neox_layer});
}

}  // namespace memplan
