// Qwen2MoeForCausalLM (transformers 5.17 models/qwen2_moe/modeling_qwen2_moe.py), training forward + loss or one
// inference pass, on the shared CausalLM skeleton (phi_parts.h).
//
// The decoder layer is Llama's (RMSNorm, Qwen2's attention with q/k/v biases and no o bias: llama_attention),
// with Qwen2MoeSparseMoeBlock on the layers spec.moe_layers marks and Qwen2MoeMLP (intermediate_size) on the
// others. Qwen2MoeSparseMoeBlock.forward:
//   flat = x.view(-1, H);
//   shared_expert_output = shared_expert(flat)            SwiGLU of shared_expert_intermediate_size, bound
//   _, routing_weights, selected = gate(flat)             Qwen3's TopK router (qwen_parts.h), bound
//   expert_output = experts(flat, selected, weights)      grouped_mm (batched_mm in generate()'s decode steps)
//   shared_expert_output = sigmoid(shared_expert_gate(flat)) * shared_expert_output   gate [T, 1]
//   expert_output = expert_output + shared_expert_output, reshaped to [B, S, H].
// Registration order per layer: self_attn (q, q bias, k, k bias, v, v bias, o), mlp (gate, experts.gate_up_proj,
// experts.down_proj, shared_expert gate/up/down, shared_expert_gate; or gate/up/down), input_layernorm,
// post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Qwen2MoeLayerParams {
  LlamaLayerParams attn;
  FfnParams dense;                     // Qwen2MoeMLP on a dense layer
  TensorId router = kNoTensor, gate_up = kNoTensor, down = kNoTensor;  // sparse layer
  TensorId shared_gate = kNoTensor, shared_up = kNoTensor, shared_down = kNoTensor, shared_expert_gate = kNoTensor;
};

Qwen2MoeLayerParams layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size;
  Qwen2MoeLayerParams w;
  LlamaLayerParams& a = w.attn;
  attention_projection_params(b, s, p, train, s.qkv_bias, /*o_bias=*/false, a);  // Qwen2MoeAttention: o_proj bias=False
  const bool sparse = !s.moe_layers.empty() && s.moe_layers[static_cast<size_t>(i)] != 0;
  if (sparse) {
    const int64_t E = s.num_experts, I = s.moe_intermediate_size, Is = s.shared_expert_intermediate_size;
    w.router = b.param(p + "mlp.gate.weight", {E, H}, train);
    w.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
    w.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
    w.shared_gate = b.param(p + "mlp.shared_expert.gate_proj.weight", {Is, H}, train);
    w.shared_up = b.param(p + "mlp.shared_expert.up_proj.weight", {Is, H}, train);
    w.shared_down = b.param(p + "mlp.shared_expert.down_proj.weight", {H, Is}, train);
    w.shared_expert_gate = b.param(p + "mlp.shared_expert_gate.weight", {1, H}, train);
  } else {
    const int64_t I = s.intermediate_size;
    w.dense.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
    w.dense.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
    w.dense.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  }
  a.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  a.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

TensorId sparse_moe_block(GraphBuilder& b, const TransformerSpec& s, const Qwen2MoeLayerParams& w, TensorId x) {
  const int64_t H = s.hidden_size;
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens;
  TensorId flat = b.view(x, {checked_mul(B, Sq), H});
  TensorId shared = swiglu_mlp(b, flat, w.shared_gate, w.shared_up, w.shared_down);
  b.hold(shared);  // shared_expert_output, bound until it is rebound to the gated product
  const QwenMoeRoute route = qwen_moe_router(b, s, w.router, flat);
  TensorId experts = qwen_moe_experts(b, s, w.gate_up, w.down, flat, route);
  b.hold(experts);  // expert_output, bound until rebound to the sum
  TensorId gate = b.unary("sigmoid", b.linear(flat, w.shared_expert_gate), false, /*save_out=*/true);
  TensorId gated = b.mul(gate, shared);
  b.drop(shared);
  TensorId sum = b.add(experts, gated);
  b.drop(experts);
  TensorId out = b.view(sum, {B, Sq, H});
  release_route(b, route);
  return out;
}

TensorId qwen2_moe_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const Qwen2MoeLayerParams w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  TensorId n1 = rms_norm(b, h, w.attn.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = llama_attention(b, s, w.attn, n1, c.cos, c.sin, c.mask, 0, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = rms_norm(b, h1, w.attn.post_norm);
  b.hold(n2);  // bound to hidden_states until the MLP returns
  TensorId m = w.router != kNoTensor ? sparse_moe_block(b, s, w, n2)
                                     : swiglu_mlp(b, n2, w.dense.gate, w.dense.up, w.dense.down);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_qwen2_moe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "qwen2_moe's sliding-window layers are not modelled");
  if (s.num_experts > 0 && (s.moe_intermediate_size <= 0 || s.num_experts_per_tok <= 0 ||
                            s.shared_expert_intermediate_size <= 0))
    throw InputError("model.moe_intermediate_size", std::to_string(s.moe_intermediate_size),
                     "qwen2_moe experts need moe_intermediate_size, shared_expert_intermediate_size and "
                     "num_experts_per_tok");
  SkeletonSpec k{"embed_tokens.weight", "norm", false, false, qwen2_moe_layer};
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
