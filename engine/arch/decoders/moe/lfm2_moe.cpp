// Lfm2MoeForCausalLM (transformers 5.17 models/lfm2_moe/modeling_lfm2_moe.py; LFM2-8B-A1B), training forward +
// causal-LM loss or one inference pass (prefill / decode step of generate()).
//
// Everything but the feed-forward is Lfm2's (the modular file takes Lfm2ShortConv, Lfm2Attention, the decoder
// layer and the model's forward from modeling_lfm2.py): build_lfm2_model (lfm2_parts.h, lfm2.cpp's header
// gives the statements: the short convolutions' torch path, the conv states of generate()'s cache, the q / k
// layernorms, embedding_norm, the tied lm_head). The feed-forward of layer i:
//   i < num_dense_layers: Lfm2MoeMLP, w2(silu(w1(x)) * w3(x)) at config.intermediate_size (no
//     block_auto_adjust_ff_dim, unlike Lfm2MLP).
//   else Lfm2MoeSparseMoeBlock.forward(x [B, S, H]):
//     hidden_states_reshaped = x.view(-1, H)                                  bound until forward returns
//     _, routing_weights, selected_experts = self.gate(hidden_states_reshaped, expert_bias): Lfm2MoeTopKRouter
//       router_logits = F.linear(hidden_states, weight)                       [T, E], `_` until forward returns
//       routing_weights = router_logits.sigmoid()                            [T, E] (saved output)
//       with use_expert_bias: scores_for_routing = routing_weights + expert_bias (an fp32 buffer: fp32 [T, E]),
//         _, selected_experts = topk(scores_for_routing, k)                   both locals until the router returns
//         routing_weights = gather(routing_weights, 1, selected).type_as(router_logits)   [T, K]
//       else: routing_weights, selected_experts = topk(routing_weights, k)
//       with norm_topk_prob: routing_weights / (routing_weights.sum(-1, keepdim=True) + 1e-6)
//       routing_weights * routed_scaling_factor
//     experts(hidden_states_reshaped, selected_experts, routing_weights): Lfm2MoeExperts through transformers'
//       default experts implementation grouped_mm (deepseek_parts.h experts_grouped_mm; generate()'s decode
//       steps batched_mm); the routing weights are in the router logits' dtype.
//     .reshape(B, S, H)
// Parameters per layer, registration order: the operator's (lfm2_parts.h), then feed_forward.w1 / w3 / w2 or
// feed_forward.experts.gate_up_proj [E, 2I, H], feed_forward.experts.down_proj [E, H, I], feed_forward.gate.weight
// [E, H] (Lfm2MoeSparseMoeBlock.__init__ creates the experts before the router), then the fp32 expert_bias buffer
// [E], operator_norm, ffn_norm.
#include "engine/arch/decoders/parts/lfm2_parts.h"

#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Lfm2MoeBlock {
  TensorId gate = kNoTensor, bias = kNoTensor;
  ExpertsParams experts;
};

// Lfm2MoeSparseMoeBlock.forward on x [B, S, H] (the file header's statements).
TensorId sparse_moe(GraphBuilder& b, const TransformerSpec& s, const Lfm2MoeBlock& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size, K = s.num_experts_per_tok;
  const TensorId flat = b.view(x, {T, H});
  const TensorId logits = b.linear(flat, w.gate);
  b.hold(logits);
  const DType ldt = b.dtype(logits);
  TensorId rw = b.unary("sigmoid", logits, false, true);
  b.hold(rw);
  std::vector<TensorId> locals;  // route_tokens_to_experts' locals, released when it returns
  TensorId selected;
  if (w.bias != kNoTensor) {
    const TensorId scores = b.add(rw, w.bias);
    b.hold(scores);
    locals.push_back(scores);
    auto top = b.generic({"topk", {scores}, {{{T, K}, b.dtype(scores)}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
    b.hold(top[0]);  // `_`
    locals.push_back(top[0]);
    selected = top[1];
    const TensorId g = b.to(b.generic_one("gather", {rw, selected}, {T, K}, ldt, {1}), ldt);
    b.drop(rw);  // routing_weights rebinds
    rw = g;
    b.hold(rw);
  } else {
    auto top = b.generic({"topk", {rw}, {{{T, K}, ldt}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
    selected = top[1];
    b.drop(rw);
    rw = top[0];
    b.hold(rw);
  }
  b.hold(selected);
  if (s.norm_topk_prob) {
    const TensorId den = b.add_scalar(b.reduce_last("sum", rw, false));
    const TensorId n = b.binary("div", rw, den, true, true);
    b.drop(rw);
    rw = n;
    b.hold(rw);
  }
  const TensorId scaled = b.scalar_op("mul_scalar", rw, false);  // * routed_scaling_factor
  b.drop(rw);
  b.hold(scaled);
  for (TensorId t : locals) b.drop(t);
  const TensorId out = b.view(experts_grouped_mm(b, w.experts, flat, scaled, selected), xs);
  for (TensorId t : {scaled, selected, logits}) b.drop(t);
  return out;
}

}  // namespace

void build_lfm2_moe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window), "lfm2_moe has no sliding window");
  if (s.first_dense_layers < s.num_layers &&
      (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts ||
       s.moe_intermediate_size <= 0))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "lfm2_moe's MoE layers need experts, num_experts_per_tok <= num_experts and "
                     "moe_intermediate_size");
  const int64_t H = s.hidden_size;
  build_lfm2_model(b, s, [&b, &s, H](int64_t i, const std::string& p, bool train) -> LlamaMlpFn {
    const std::string f = p + "feed_forward.";
    if (i < s.first_dense_layers) {
      const int64_t I = s.intermediate_size;
      const TensorId w1 = b.param(f + "w1.weight", {I, H}, train);
      const TensorId w3 = b.param(f + "w3.weight", {I, H}, train);
      const TensorId w2 = b.param(f + "w2.weight", {H, I}, train);
      return [&b, w1, w3, w2](TensorId n2) { return swiglu_mlp(b, n2, w1, w3, w2); };
    }
    const int64_t E = s.num_experts, I = s.moe_intermediate_size;
    Lfm2MoeBlock w;
    w.experts.experts = E;
    w.experts.top_k = s.num_experts_per_tok;
    w.experts.inter = I;
    w.experts.gate_up = b.param(f + "experts.gate_up_proj", {E, checked_mul(2, I), H}, train);
    w.experts.down = b.param(f + "experts.down_proj", {E, H, I}, train);
    w.gate = b.param(f + "gate.weight", {E, H}, train);  // Lfm2MoeTopKRouter.weight, created after the experts
    // register_buffer("expert_bias", torch.zeros(E, dtype=torch.float32)): fp32 whatever the model's dtype.
    if (s.lfm2_moe_expert_bias) w.bias = b.buffer(f + "expert_bias", {E}, DType::f32);
    return [&b, &s, w](TensorId n2) { return sparse_moe(b, s, w, n2); };
  });
}

}  // namespace memplan
