// NemotronForCausalLM (transformers 5.17 models/nemotron/modeling_nemotron.py; Nemotron-3, Minitron), training
// forward + causal-LM loss or one inference pass with the DynamicCache. The skeleton is build_causal_lm_skeleton
// (phi_parts.h): model.embed_tokens, create_causal_mask, NemotronRotaryEmbedding (LlamaRotaryEmbedding's statements
// over rotary_dim = int(head_dim * partial_rotary_factor)), the final norm, the untied lm_head. A layer differs
// from Llama's in:
//   NemotronLayerNorm1P.forward: F.layer_norm(input, shape, self.weight + 1.0, self.bias, eps) with autocast
//     disabled. `self.weight + 1.0` is a fresh [H] tensor at every call (the norm saves it for backward); under
//     autocast _cast_if_autocast_enabled first casts input, weight + 1 and bias to the autocast dtype with plain
//     .to() (no autocast cache), so the norm runs in bf16 / fp16 on a low-precision copy of the fp32 residual
//     stream, saves that copy, and returns a low-precision tensor (where nn.LayerNorm under autocast would run
//     in fp32). The fp32 weight + 1 dies when _cast_if_autocast_enabled returns, the casts when forward returns.
//   apply_rotary_pos_emb: q[..., :rot] / q[..., rot:] (SliceBackward: zero-filled gradients of q's size), the
//     Llama rotation of the first slice, the same for k, then `return torch.cat((q_embed, q_pass), -1),
//     torch.cat((k_embed, k_pass), -1)`: both rotated halves are locals until both cats exist. The attention
//     then sees cat outputs, as phi3's does (cat_rotary_attention, cudnn_output_copy); o_proj has a bias with
//     attention_bias like q / k / v.
//   NemotronMLP: down_proj(act_fn(up_proj(x))), no gate; relu2 (ReLUSquaredActivation) is relu (saves its
//     result) then torch.square = pow(x, 2) (saves its input; autocast's fp32 policy: under amp an fp32 copy of
//     the relu output and an fp32 square, which down_proj casts back). act_fn's argument (the up_proj output) and
//     its local relu_applied stay bound until it returns; the square until down_proj returns.
// Parameters in registration order: self_attn q / k / v / o (weight, bias with attention_bias), mlp.up_proj,
// mlp.down_proj (bias with mlp_bias), input_layernorm, post_attention_layernorm (weight, bias each).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/rotary_slices.h"

namespace memplan {

namespace {

struct NemotronLayer {
  LlamaLayerParams attn;
  TensorId up, up_b, down, down_b, in_norm_b, post_norm_b;
};

NemotronLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  NemotronLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w.attn);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.up_b = s.mlp_bias ? b.param(p + "mlp.up_proj.bias", {I}, train) : kNoTensor;
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.down_b = s.mlp_bias ? b.param(p + "mlp.down_proj.bias", {H}, train) : kNoTensor;
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.in_norm_b = b.param(p + "input_layernorm.bias", {H}, train);
  w.attn.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.post_norm_b = b.param(p + "post_attention_layernorm.bias", {H}, train);
  return w;
}

// NemotronLayerNorm1P.forward on x with the module's weight w and bias.
TensorId layer_norm_1p(GraphBuilder& b, TensorId x, TensorId w, TensorId bias) {
  const TensorId w1 = b.add_scalar(w);  // self.weight + 1.0
  TensorId xc = x, wc = w1, bc = bias;
  if (b.autocast()) {
    b.hold(w1);  // the argument tuple of _cast_if_autocast_enabled holds it until the casts are made
    xc = b.to(x, b.low_dtype());
    wc = b.to(w1, b.low_dtype());
    bc = b.to(bias, b.low_dtype());
    b.drop(w1);
  }
  // F.layer_norm with autocast disabled: native_layer_norm in the inputs' dtype, fp32 mean / rstd [.., 1];
  // backward needs input, weight, mean and rstd.
  Shape stat = b.shape(xc);
  stat.back() = 1;
  const auto outs = b.generic({"layer_norm", {xc, wc, bc},
                               {{b.shape(xc), b.dtype(xc)}, {stat, DType::f32}, {stat, DType::f32}},
                               {0, 1}, {1, 2}, {}, {}});
  return outs[0];
}

TensorId nemotron_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                            const SkeletonContext& c, TensorId& weights) {
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : s.head_dim;
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);  // query_states / key_states: rebound once apply_rotary_pos_emb has returned both
  b.hold(k);
  // `q, q_pass = q[..., :rot], q[..., rot:]` and the same for k, all four slices before either rotation (the
  // backward reaches k's slices after q's rotation: autograd runs the later-created node first).
  const auto slices = rotary_slices(b, q, k, rot);
  const TensorId qr = rope(b, slices.q_rot, c.cos, c.sin);
  b.hold(qr);  // q_embed / k_embed: locals until the return statement has made both cats
  const TensorId kr = rope(b, slices.k_rot, c.cos, c.sin);
  b.hold(kr);
  TensorId qe = b.cat("cat", {qr, slices.q_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(qe);
  TensorId ke = b.cat("cat", {kr, slices.k_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(ke);
  b.drop(qr);
  b.drop(kr);
  b.drop(q);
  b.drop(k);
  TensorId out = cat_rotary_o_proj(b, s, qe, ke, v, v_proj, c, w.o, w.ob, weights);
  return out;
}

// ACT2FN[hidden_act](x): relu2 written out (ReLUSquaredActivation), else the single-kernel activations.
TensorId nemotron_activation(GraphBuilder& b, const std::string& name, TensorId x) {
  return name == "relu2" ? relu_squared(b, x) : activation(b, name, x);
}

TensorId nemotron_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const NemotronLayer w = layer_params(b, s, "model.layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  TensorId n1 = layer_norm_1p(b, h, w.attn.in_norm, w.in_norm_b);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = nemotron_attention(b, s, w.attn, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = layer_norm_1p(b, h1, w.attn.post_norm, w.post_norm_b);
  b.hold(n2);  // the MLP's argument until it returns
  const TensorId act = nemotron_activation(b, s.hidden_act, b.linear(n2, w.up, w.up_b));
  b.hold(act);  // down_proj's argument until it returns
  TensorId m = b.linear(act, w.down, w.down_b);
  b.drop(act);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);  // `hidden_states, _ = self.self_attn(...)`
  return out;
}

// The final NemotronLayerNorm1P (model.norm): the skeleton registers its weight, the bias follows it.
TensorId final_norm(GraphBuilder& b, TensorId x, TensorId w) {
  const TensorId bias = b.param("model.norm.bias", b.shape(w), !b.config().freeze_embeddings);
  return layer_norm_1p(b, x, w, bias);
}

}  // namespace

void build_nemotron(GraphBuilder& b, const TransformerSpec& s) {
  SkeletonSpec k{"model.embed_tokens.weight", "model.norm", false, false, nemotron_layer};
  k.final_norm = final_norm;
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
