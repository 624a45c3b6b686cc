// Glm4ForCausalLM (transformers 5.17 models/glm4/modeling_glm4.py; GLM-4-0414), training forward + causal-LM loss
// or one inference pass with the DynamicCache. The skeleton is build_causal_lm_skeleton (phi_parts.h):
// model.embed_tokens, create_causal_mask, Glm4RotaryEmbedding (LlamaRotaryEmbedding's statements over
// rotary_dim = int(head_dim * partial_rotary_factor): cos / sin [P, S, rot]), the final Glm4RMSNorm (LlamaRMSNorm's
// statements), lm_head (untied by default). A layer differs from Llama's in:
//   Glm4DecoderLayer (sandwich norms): h = input_layernorm(x); h = self_attn(h); h = post_self_attn_layernorm(h);
//     h = x + h; then r = h; h = post_attention_layernorm(h); h = mlp(h); h = post_mlp_layernorm(h); h = r + h.
//     Each rebinding statement keeps its argument (the attention output, the MLP output) bound until the norm
//     returns.
//   apply_rotary_pos_emb (GLM's interleaved rotation): cos[..., :rot / 2].repeat_interleave(2, -1) and the same
//     for sin (fresh [P, 1, S, rot] tensors, locals until it returns; in training the products save them), the
//     slices q[..., :rot] / q[..., rot:] (SliceBackward: zero-filled gradients of q's size), q_embed =
//     (q_rot * cos) + (rotate_half(q_rot) * sin) with rotate_half = stack((-x[..., 1::2], x[..., 0::2]),
//     -1).flatten(-2) (two strided slices), the same for k, then `q_embed = torch.cat([q_embed, q_pass], -1)`
//     (a rebinding: the rotated half dies once its cat exists) and the same for k. The attention then sees cat
//     outputs, as phi3's does (cat_rotary_attention, cudnn_output_copy).
//   Glm4MLP: gate_up_proj [2I] (no bias), chunk(2) (SplitBackward concatenates the halves' gradients),
//     up * act(gate), down_proj; the local `gate` is bound until the MLP returns (Phi3MLP's statements).
// Parameters in registration order: self_attn q / k / v (weight, bias with attention_bias), o_proj (no bias),
// mlp.gate_up_proj, mlp.down_proj, input_layernorm, post_attention_layernorm, post_self_attn_layernorm,
// post_mlp_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/glm_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

struct Glm4Layer {
  LlamaLayerParams attn;  // q, k, v, o (+ q / k / v biases), input_layernorm, post_attention_layernorm
  TensorId gate_up, down, post_attn_norm, post_mlp_norm;
};

Glm4Layer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  Glm4Layer w;
  attention_projection_params(b, s, p, train, s.attention_bias, /*o_bias=*/false, w.attn);
  w.gate_up = b.param(p + "mlp.gate_up_proj.weight", {2 * I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.attn.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.post_attn_norm = b.param(p + "post_self_attn_layernorm.weight", {H}, train);
  w.post_mlp_norm = b.param(p + "post_mlp_layernorm.weight", {H}, train);
  return w;
}

TensorId glm4_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, I = s.intermediate_size;
  const Glm4Layer w = layer_params(b, s, "model.layers." + std::to_string(i) + ".", !layer_frozen(cfg, i));

  TensorId n1 = rms_norm(b, h, w.attn.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = glm_interleaved_attention(b, s, w.attn, n1, c, attn_weights);
  b.drop(n1);
  b.hold(a);  // `hidden_states = self.post_self_attn_layernorm(hidden_states)`: rebound once the norm returns
  TensorId an = rms_norm(b, a, w.post_attn_norm);
  b.drop(a);
  TensorId h1 = b.add(h, an);

  TensorId n2 = rms_norm(b, h1, w.attn.post_norm);
  b.hold(n2);  // the MLP's argument until it returns
  // Glm4MLP.forward
  TensorId up_states = b.linear(n2, w.gate_up);
  const auto halves = b.split(up_states, 2, {B, S, I});
  const TensorId gate = halves[0];
  b.hold(gate);
  TensorId m = b.linear(b.mul(halves[1], activation(b, s.hidden_act, gate)), w.down);
  b.drop(gate);
  b.drop(n2);
  b.hold(m);  // `hidden_states = self.post_mlp_layernorm(hidden_states)`
  TensorId mn = rms_norm(b, m, w.post_mlp_norm);
  b.drop(m);
  TensorId out = b.add(h1, mn);
  if (attn_weights != kNoTensor) b.drop(attn_weights);  // `hidden_states, _ = self.self_attn(...)`
  return out;
}

}  // namespace

void build_glm4(GraphBuilder& b, const TransformerSpec& s) {
  build_causal_lm_skeleton(b, s, {"model.embed_tokens.weight", "model.norm", false, false, glm4_layer});
}

}  // namespace memplan
