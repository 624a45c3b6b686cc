// GlmForCausalLM (transformers 5.17 models/glm/modeling_glm.py; GLM-4 9B "-hf" checkpoints, model_type glm),
// training forward + causal-LM loss or one inference pass. The skeleton is build_causal_lm_skeleton (phi_parts.h):
// model.embed_tokens, create_causal_mask, GlmRotaryEmbedding (Llama's statements over rotary_dim = int(head_dim *
// partial_rotary_factor): cos / sin [P, S, rot]), the final GlmRMSNorm (LlamaRMSNorm's statements), lm_head.
//   GlmDecoderLayer: LlamaDecoderLayer's statements (two RMSNorms, two residual adds; no sandwich norms, unlike
//     Glm4DecoderLayer).
//   GlmAttention: q / k / v projections (bias with attention_bias, o_proj never), head views, then
//     apply_rotary_pos_emb, which is Glm4's statement for statement: cos[..., :rot / 2].repeat_interleave(2, -1)
//     and the same for sin (fresh [P, 1, S, rot] locals until it returns), the slices q[..., :rot] / q[..., rot:]
//     (SliceBackward: zero-filled gradients of q's size), q_embed = (q_rot * cos) + (rotate_half(q_rot) * sin)
//     with the interleaved rotate_half = stack((-x[..., 1::2], x[..., 0::2]), -1).flatten(-2), the same for k,
//     then `q_embed = torch.cat([q_embed, q_pass], -1)` (a rebinding) and the same for k. The attention sees cat
//     outputs (phi_parts.h cat_rotary_o_proj).
//   GlmMLP: gate_up_proj [2I] (no bias), `gate, up_states = up_states.chunk(2, -1)` (SplitBackward concatenates
//     the halves' gradients), up_states * act(gate), down_proj; `gate` bound until the MLP returns.
// The rotary helpers mirror engine/arch/decoders/dense/glm4.cpp's (the same Python in modeling_glm4.py), kept here
// so the glm4 builder stays untouched.
// Parameters in registration order: self_attn q / k / v (weight, bias), o_proj, mlp.gate_up_proj, mlp.down_proj,
// input_layernorm, post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/glm_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct GlmLayer {
  LlamaLayerParams attn;  // q, k, v, o (+ q / k / v biases), input_layernorm, post_attention_layernorm
  TensorId gate_up, down;
};

GlmLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  GlmLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, /*o_bias=*/false, w.attn);
  w.gate_up = b.param(p + "mlp.gate_up_proj.weight", {2 * I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.attn.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

TensorId glm_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, I = s.intermediate_size;
  const GlmLayer w = layer_params(b, s, "model.layers." + std::to_string(i) + ".", !layer_frozen(cfg, i));
  return llama_residual_blocks(
      b, h, w.attn.in_norm, w.attn.post_norm,
      [&](TensorId x, TensorId& weights) { return glm_interleaved_attention(b, s, w.attn, x, c, weights); },
      [&](TensorId n2) {
        // GlmMLP.forward
        const TensorId up_states = b.linear(n2, w.gate_up);
        const auto halves = b.split(up_states, 2, {B, S, I});
        const TensorId gate = halves[0];
        b.hold(gate);
        const TensorId m = b.linear(b.mul(halves[1], activation(b, s.hidden_act, gate)), w.down);
        b.drop(gate);
        return m;
      });
}

}  // namespace

void build_glm(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "glm has no sliding-window attention or experts");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError("model.hidden_act", s.hidden_act, "glm is modelled with silu, gelu or relu");
  build_causal_lm_skeleton(b, s, {"model.embed_tokens.weight", "model.norm", false, false, glm_layer});
}

}  // namespace memplan
