// StableLmForCausalLM (transformers 5.17 models/stablelm/modeling_stablelm.py; StableLM 2, StableLM 3B 4E1T,
// StableCode), training forward + causal-LM loss, or one inference pass with the DynamicCache. Skeleton:
// build_causal_lm_skeleton (phi_parts.h) without embedding dropout, create_causal_mask, a final nn.LayerNorm and
// lm_head.
//   StableLmAttention.forward: q/k/v projections (biased with use_qkv_bias) viewed and transposed; with
//     qk_layernorm, StableLmLayerNormPerHead: torch.split(x, 1, dim=1) into one [B, 1, S, D] view per head, each
//     through its own bias-free nn.LayerNorm (a non-contiguous input: the kernel and its backward work on
//     contiguous copies), torch.cat of the per-head outputs over dim 1 (the list dies after the cat); the partial
//     rotary embedding in gpt_neox's order (slice q and k, rotate both, cat each), the pass-through views keeping
//     query_states / key_states alive until the attention returns; attention; o_proj (no bias).
//   StableLmDecoderLayer: n = input_layernorm(x) stays bound until the layer returns, and so does the attention's
//     output. Parallel (use_parallel_residual): x + attn + dropout(mlp(n)); sequential: r = x + attn,
//     r + dropout(mlp(post_attention_layernorm(r))).
//   StableLmMLP: LlamaMLP without biases (silu).
// Parameters in registration order: self_attn q/k/v_proj (weight, bias with use_qkv_bias), o_proj,
// q_layernorm.norms.<h>, k_layernorm.norms.<h> (weights), mlp gate/up/down, input_layernorm,
// post_attention_layernorm (sequential only; weight and bias each).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

// StableLmLayerNormPerHead.forward on x [B, heads, S, D] with one LayerNorm weight per head.
TensorId norm_per_head(GraphBuilder& b, TensorId x, const std::vector<TensorId>& weights) {
  Shape one = b.shape(x);
  const auto heads = static_cast<size_t>(one[1]);
  one[1] = 1;
  const std::vector<TensorId> parts = b.split(x, static_cast<int>(heads), one);
  std::vector<TensorId> normed;
  normed.reserve(heads);
  for (size_t h = 0; h < heads; ++h) {
    normed.push_back(b.layer_norm(parts[h], weights[h], kNoTensor, /*contiguous_copy=*/true));
    b.hold(normed.back());  // the list comprehension's elements, until the cat has run
  }
  TensorId out = b.cat_list("cat", normed, 1);
  for (TensorId t : normed) b.drop(t);
  return out;
}

TensorId stablelm_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : hd;
  const bool train = !layer_frozen(cfg, i);
  const std::string p = "model.layers." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  auto opt_bias = [&](const std::string& n, int64_t size) { return s.qkv_bias ? param(n, {size}) : kNoTensor; };
  const TensorId wq = param("self_attn.q_proj.weight", {nh * hd, H}), bq = opt_bias("self_attn.q_proj.bias", nh * hd);
  const TensorId wk = param("self_attn.k_proj.weight", {nkv * hd, H}), bk = opt_bias("self_attn.k_proj.bias", nkv * hd);
  const TensorId wv = param("self_attn.v_proj.weight", {nkv * hd, H}), bv = opt_bias("self_attn.v_proj.bias", nkv * hd);
  const TensorId wo = param("self_attn.o_proj.weight", {H, H});
  std::vector<TensorId> q_norms, k_norms;
  if (s.qk_layernorm) {
    for (int64_t h2 = 0; h2 < nh; ++h2) q_norms.push_back(param("self_attn.q_layernorm.norms." + std::to_string(h2) + ".weight", {hd}));
    for (int64_t h2 = 0; h2 < nkv; ++h2) k_norms.push_back(param("self_attn.k_layernorm.norms." + std::to_string(h2) + ".weight", {hd}));
  }
  const TensorId wg = param("mlp.gate_proj.weight", {I, H}), wu = param("mlp.up_proj.weight", {I, H});
  const TensorId wdn = param("mlp.down_proj.weight", {H, I});
  const TensorId ln1w = param("input_layernorm.weight", {H}), ln1b = param("input_layernorm.bias", {H});
  TensorId ln2w = kNoTensor, ln2b = kNoTensor;
  if (!s.parallel_residual) {
    ln2w = param("post_attention_layernorm.weight", {H});
    ln2b = param("post_attention_layernorm.bias", {H});
  }

  TensorId n = b.layer_norm(h, ln1w, ln1b);
  b.hold(n);  // hidden_states, until the layer's last statement rebinds it
  // ---- attention
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor;  // as in llama.cpp attention
  TensorId q = b.view_copying_grad(b.linear(n, wq, bq), {B, nh, S, hd});
  TensorId k = b.view_copying_grad(b.linear(n, wk, bk), {B, nkv, S, hd});
  TensorId vp = b.linear(n, wv, bv);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);
  if (s.qk_layernorm) {
    q = norm_per_head(b, q, q_norms);
    k = norm_per_head(b, k, k_norms);
  }
  TensorId weights = kNoTensor;
  const SlicedRotaryAttention att = sliced_rotary_attention(b, s, q, k, v, v_proj, c, rot, weights);
  const TensorId ctx = att.ctx;
  TensorId a = b.linear(b.view(ctx, {B, S, H}), wo);
  release_attention_locals(b, att);
  b.hold(a);  // self_attn_output: bound until the layer returns
  TensorId out;
  if (s.parallel_residual) {
    TensorId m = b.dropout(swiglu_mlp(b, n, wg, wu, wdn), s.resid_dropout);
    b.hold(m);
    out = b.add(b.add(h, a), m);
    b.drop(m);
  } else {
    TensorId r = b.add(h, a);
    TensorId n2 = b.layer_norm(r, ln2w, ln2b);
    b.hold(n2);  // the MLP call's argument, referenced until the call returns
    TensorId m = swiglu_mlp(b, n2, wg, wu, wdn);
    b.drop(n2);
    out = b.add(r, b.dropout(m, s.resid_dropout));
  }
  b.drop(a);
  b.drop(n);
  if (weights != kNoTensor) b.drop(weights);  // `self_attn_output, _ = self.self_attn(...)`
  return out;
}

}  // namespace

void build_stablelm(GraphBuilder& b, const TransformerSpec& s) {
  build_causal_lm_skeleton(b, s, {"model.embed_tokens.weight", "model.norm", true, false, stablelm_layer});
}

}  // namespace memplan
