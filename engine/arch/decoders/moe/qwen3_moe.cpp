// Qwen3MoeForCausalLM (transformers 5.17 models/qwen3_moe/modeling_qwen3_moe.py): the Qwen3 model body
// (qwen3.cpp build_qwen3_model) with Qwen3MoeSparseMoeBlock on the layers spec.moe_layers marks.
//
// The experts run transformers' default experts implementation, grouped_mm (integrations/moe.py
// grouped_mm_experts_forward, chosen by use_experts_implementation), the same code path as Mixtral's; the router
// differs from MixtralTopKRouter, so llama.cpp's moe_grouped_mm cannot be reused as it is:
//  - Qwen3MoeTopKRouter renormalises the top-k weights only when config.norm_topk_prob is set;
//  - it casts them back to the router logits' dtype (`router_top_value.to(router_logits.dtype)`): in a 16-bit
//    model the routing weights, and so `proj_out * sample_weights_g` [R, H], are 16-bit where Mixtral's are fp32.
// The grouped_mm part below follows moe_grouped_mm statement for statement (llama.cpp; its comment and
// data/validation/NOTES.md give the mechanisms and the whole-run stream they were matched on).
#include "engine/arch/decoders/parts/qwen_parts.h"

#include "engine/arch/decoders/parts/deepseek_parts.h"

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

QwenMoeRoute qwen_moe_router(GraphBuilder& b, const TransformerSpec& s, TensorId router, TensorId flat) {
  const int64_t T = b.shape(flat)[0], K = s.num_experts_per_tok;
  // Qwen3MoeTopKRouter.forward: F.linear, softmax(dtype=float), topk, optional renormalisation, cast back.
  // router_logits is returned and bound to `_` in Qwen3MoeSparseMoeBlock.forward until the block returns;
  // router_probs is a local until the router returns (whole-run inference stream: the [T, E] logits and fp32
  // probabilities outlive their last reads).
  TensorId logits = b.linear(flat, router);
  b.hold(logits);
  const DType logits_dt = b.dtype(logits);
  TensorId probs = b.softmax_last(b.to(logits, DType::f32));
  b.hold(probs);
  auto top = b.generic({"topk", {probs}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  TensorId top_w = top[0];
  if (s.norm_topk_prob) {
    // `router_top_value /= sum`: in place without autograd (inference stream: no [T, K] result block); under
    // autograd the out-of-place form moe_grouped_mm uses for Mixtral's identical statement (matched there on
    // the whole-run training stream).
    TensorId sum = b.reduce_last("sum", top_w, false);
    top_w = b.training() ? b.binary("div", top_w, sum, true, true) : b.inplace("div_", top_w, false, {sum});
  }
  TensorId weights = b.to(top_w, logits_dt);
  b.drop(probs);
  // routing_weights and selected_experts are bound in the block's forward until it returns.
  b.hold(weights);
  b.hold(top[1]);
  return {logits, weights, top[1]};
}

void release_route(GraphBuilder& b, const QwenMoeRoute& r) {
  for (TensorId t : {r.logits, r.weights, r.selected}) b.drop(t);
}

TensorId qwen_moe_experts(GraphBuilder& b, const TransformerSpec& s, TensorId gate_up, TensorId down, TensorId flat,
                          const QwenMoeRoute& route) {
  const int64_t H = s.hidden_size, I = s.moe_intermediate_size, E = s.num_experts, K = s.num_experts_per_tok;
  const int64_t T = b.shape(flat)[0], R = checked_mul(T, K);
  const DType dt = b.dtype(flat), logits_dt = b.dtype(route.weights);
  const TensorId weights = route.weights, selected_experts = route.selected;
  if (!b.training() && b.pass().from_generate && b.pass().past_len > 0) {
    // generate()'s decode steps run batched_mm_experts_forward (GenerationMixin._optimize_model_for_decode swaps
    // grouped_mm for batched_mm on CUDA after the prefill): per-row copies of the routed experts' weights,
    // deepseek_parts.cpp experts_batched_mm (reached through experts_grouped_mm's decode dispatch).
    ExpertsParams e;
    e.experts = E;
    e.top_k = K;
    e.inter = I;
    e.gate_up = gate_up;
    e.down = down;
    return experts_grouped_mm(b, e, flat, weights, selected_experts);
  }
  // grouped_mm_experts_forward, as in moe_grouped_mm.
  auto sorted = b.generic({"sort", {selected_experts}, {{{R}, DType::i64}, {{R}, DType::i64}}, {}, {}, {}, {}});
  TensorId perm = sorted[1];
  b.hold(perm);
  b.hold(sorted[0]);
  TensorId rows = b.generic_one("floor_divide", {perm}, {R}, DType::i64);
  const TensorId selected_g = b.generic_one("index", {flat, rows}, {R, H}, dt, {1});
  b.hold(selected_g);
  TensorId sample_w = b.generic_one("index", {b.view(weights, {R}), perm}, {R}, logits_dt, {1});
  b.hold(sample_w);
  // histc_input = expert_ids_g.int() on CUDA: a local int32 copy until the function returns.
  TensorId histc_input = b.generic_one("to_int", {sorted[0]}, {R}, DType::i32);
  b.hold(histc_input);
  TensorId offsets = b.generic_one("cumsum", {b.generic_one("histc", {histc_input}, {E}, DType::i32)}, {E}, DType::i32);
  b.hold(offsets);
  TensorId sentinel = b.generic_one("sentinel_mask", {sorted[0]}, {R, 1}, DType::boolean);
  b.hold(sentinel);
  const TensorId selected = b.inplace_fresh_grad("masked_fill_", selected_g, {sentinel});
  TensorId proj = b.generic_one("grouped_mm", {gate_up, selected, offsets}, {R, 2 * I}, dt, {0, 1});
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, 2 * I}, dt);
  const auto halves = b.split(proj, 2, {R, I});
  proj = b.mul(b.unary("silu", halves[0], true, false), halves[1]);
  proj = b.generic_one("grouped_mm", {down, proj, offsets}, {R, H}, dt, {0, 1});
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, H}, dt);
  b.hold(proj);
  TensorId weighted = b.mul(proj, b.view(sample_w, {R, 1}));
  // inv_perm = empty_like(perm); inv_perm[perm] = arange(R): the arange is a temporary of R int64.
  TensorId inv_perm =
      b.generic({"inv_perm", {perm}, {{{R}, DType::i64}}, {}, {}, {checked_mul(R, int64_t{8})}, {}})[0];
  weighted = b.generic_one("index", {weighted, inv_perm}, {R, H}, b.dtype(weighted), {1});
  b.hold(weighted);
  TensorId summed = b.generic_one("sum_topk", {weighted}, {T, H}, b.dtype(weighted));
  TensorId out = b.to(summed, dt);
  for (TensorId t : {weighted, proj, selected_g, sample_w, offsets, sentinel, perm, sorted[0], histc_input}) b.drop(t);
  return out;
}

TensorId qwen3_moe_block(GraphBuilder& b, const TransformerSpec& s, const FfnParams& w, TensorId x) {
  const int64_t H = s.hidden_size;
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens;
  TensorId flat = b.view(x, {checked_mul(B, Sq), H});
  const QwenMoeRoute route = qwen_moe_router(b, s, w.gate, flat);
  TensorId result = b.view(qwen_moe_experts(b, s, w.up, w.down, flat, route), {B, Sq, H});
  release_route(b, route);
  return result;
}


void build_qwen3_moe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts > 0 && (s.moe_intermediate_size <= 0 || s.num_experts_per_tok <= 0))
    throw InputError("model.moe_intermediate_size", std::to_string(s.moe_intermediate_size),
                     "qwen3_moe experts need moe_intermediate_size and num_experts_per_tok");
  build_qwen3_model(b, s);
}

}  // namespace memplan
