// The feed-forward half of Glm4MoeDecoderLayer (transformers 5.17 models/glm4_moe/modeling_glm4_moe.py), which
// SolarOpenDecoderLayer reuses as SolarOpenMoE / SolarOpenMLP (models/solar_open: modular from glm4_moe): the dense
// Glm4MoeMLP, or Glm4MoeMoE, whose router, experts and MoE forward are DeepseekV3's statement for statement
// (deepseek_parts.h): Glm4MoeTopkRouter (deepseek_route, noaux_tc: fp32 logits, sigmoid scores,
// e_score_correction_bias, group top-2 sums, group mask, top-k, gathered weights, norm_topk_prob,
// routed_scaling_factor), the routed experts through transformers' default experts implementation
// (experts_grouped_mm: grouped_mm; generate()'s decode steps batched_mm), the shared experts' MLP
// (moe_intermediate_size * n_shared_experts wide) over the block's input, added.
// Used by engine/arch/decoders/moe/glm4_moe.cpp and solar_open.cpp.
#pragma once
#include <string>

#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"

namespace memplan {

struct Glm4MoeFfn {
  bool moe = false;
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor;  // the dense MLP, or the shared experts
  ExpertsParams experts;
  TensorId router = kNoTensor;
};

// The layer's "<p>mlp." parameters in module order: dense gate / up / down [I, H] / [I, H] / [H, I]; MoE
// experts.gate_up_proj [E, 2I, H], experts.down_proj [E, H, I], gate.weight [E, H] (+ the fp32
// e_score_correction_bias buffer [E]), shared_experts gate / up / down.
inline Glm4MoeFfn glm4_moe_ffn_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool moe,
                                      bool train) {
  const int64_t H = s.hidden_size;
  Glm4MoeFfn w;
  w.moe = moe;
  auto mlp = [&](const std::string& m, int64_t I) {
    w.gate = b.param(m + "gate_proj.weight", {I, H}, train);
    w.up = b.param(m + "up_proj.weight", {I, H}, train);
    w.down = b.param(m + "down_proj.weight", {H, I}, train);
  };
  if (moe) {
    ExpertsParams& e = w.experts;
    e.experts = s.num_experts;
    e.top_k = s.num_experts_per_tok;
    e.inter = s.moe_intermediate_size;
    e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {s.num_experts, checked_mul(2, e.inter), H}, train);
    e.down = b.param(p + "mlp.experts.down_proj", {s.num_experts, H, e.inter}, train);
    w.router = b.param(p + "mlp.gate.weight", {s.num_experts, H}, train);
    // torch.zeros(E, dtype=torch.float32): fp32 whatever the default dtype
    b.buffer(p + "mlp.gate.e_score_correction_bias", {s.num_experts}, DType::f32);
    mlp(p + "mlp.shared_experts.", checked_mul(s.moe_intermediate_size, s.num_shared_experts));
  } else {
    mlp(p + "mlp.", s.intermediate_size);
  }
  return w;
}

// Glm4MoeMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)).
inline TensorId glm4_moe_mlp(GraphBuilder& b, const TransformerSpec& s, const Glm4MoeFfn& w, TensorId x) {
  TensorId act = activation(b, s.hidden_act, b.linear(x, w.gate));
  return b.linear(b.mul(act, b.linear(x, w.up)), w.down);
}

// Glm4MoeMoE.forward on x [B, S, H] (bound by the decoder layer until it returns).
inline TensorId glm4_moe_block(GraphBuilder& b, const TransformerSpec& s, const Glm4MoeFfn& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size;
  // The router and the MoE forward each take their own view(-1, H) of x: in backward each view hands its
  // gradient on to x's buffer as soon as it arrives (the experts' gather gradient is summed into it, and freed,
  // before the router's linear runs its backward; whole-run fp32 stream).
  const DeepseekRoute r = deepseek_route(b, s, b.view(x, {T, H}), w.router);
  b.hold(r.weights);  // topk_weights / topk_indices / `_` (the router logits): bound until the MoE returns
  b.hold(r.indices);
  const TensorId flat = b.view(x, {T, H});
  const TensorId routed = b.view(experts_grouped_mm(b, w.experts, flat, r.weights, r.indices), xs);
  const TensorId out = b.add(routed, glm4_moe_mlp(b, s, w, x));
  for (TensorId t : {r.weights, r.indices, r.logits}) b.drop(t);
  return out;
}

// The layer's feed-forward on the post-attention norm's output.
inline TensorId glm4_moe_ffn(GraphBuilder& b, const TransformerSpec& s, const Glm4MoeFfn& w, TensorId x) {
  return w.moe ? glm4_moe_block(b, s, w, x) : glm4_moe_mlp(b, s, w, x);
}

}  // namespace memplan
