// Mistral4ForCausalLM (transformers 5.17 models/mistral4/modeling_mistral4.py; Mistral-Small-4-119B-2603's text
// model): DeepSeek-V3's multi-head latent attention and shared-expert MoE, built by deepseek_parts.h
// build_mla_decoder with three variations (MlaVariant):
//   - Mistral4Attention scales query_states by get_llama_4_attn_scale(position_ids) (a [P, 1, S, 1] factor, cast to
//     the query's dtype) after the q cat, a rebinding product: the cat's output dies there;
//   - under autocast the q cat promotes and its backward casts q_pass's gradient part back to 16 bits;
//   - Mistral4TopkRouter (below): F.linear in the model's dtype (no fp32 upcast), softmax scores (fp32 only under
//     autocast), group top-2 sums, group mask, masked_fill(0.0), top-k, weights gathered from the scores,
//     norm_topk_prob, * routed_scaling_factor.
// Everything else is DeepSeek-V3's: the layer parameters (deepseek_layer_params), rotary_cos_sin over
// qk_rope_head_dim dims, the routed experts (experts_grouped_mm; batched_mm in generate()'s decode steps), the
// shared experts' SwiGLU, the masks, the cache update and the causal-LM heads.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"

namespace memplan {

namespace {

// A tensor computed without autograd history (routing bookkeeping used only for indices).
TensorId no_grad(GraphBuilder& b, std::string_view name, Shape shape, DType t, std::vector<TensorId> reads = {}) {
  return b.generic({name, std::move(reads), {{std::move(shape), t}}, {}, {}, {}, {}})[0];
}

// Mistral4RMSNorm.forward: x.to(f32), variance = pow(2).mean(-1) (bound until forward returns), x * rsqrt(var +
// eps) (bound until return), weight * x.to(input dtype).
// Mistral4TopkRouter.forward over flat [T, H]: returns (router_logits, topk_weights, topk_indices), all three held
// (the MoE binds them until it returns); every other local lives until the router returns.
DeepseekRoute m4_route(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w) {
  const int64_t T = b.shape(flat)[0], E = s.num_experts, K = s.num_experts_per_tok, G = s.moe_n_group,
                TG = s.moe_topk_group;
  DeepseekRoute r;
  r.logits = b.linear(flat, router_w);  // F.linear(hidden_states, weight): the model's (or autocast's) dtype
  b.hold(r.logits);
  std::vector<TensorId> locals;
  auto local = [&](TensorId x) {
    b.hold(x);
    locals.push_back(x);
    return x;
  };
  const TensorId scores = local(b.softmax_last(r.logits));  // softmax(-1): fp32 under autocast only
  const DType sdt = b.dtype(scores);
  // group_scores = scores.view(-1, G, E / G).topk(2)[0].sum(-1): the top-2 values, then their sum (a local). In
  // training the sum's graph reaches the topk node, which keeps its indices while group_scores lives.
  auto g2 = b.generic({"topk", {}, {{{T, G, 2}, sdt}, {{T, G, 2}, DType::i64}}, {}, {}, {}, {}});
  b.hold(g2[0]);
  if (b.training()) local(g2[1]);
  const TensorId group_scores = local(no_grad(b, "sum", {T, G}, sdt, {g2[0]}));
  b.drop(g2[0]);
  // group_idx = topk(group_scores, topk_group)[1]
  auto gi = b.generic({"topk", {group_scores}, {{{T, TG}, sdt}, {{T, TG}, DType::i64}}, {}, {}, {}, {}});
  local(gi[1]);
  // group_mask = zeros_like(group_scores).scatter_(1, group_idx, 1); score_mask = the expanded mask reshaped to
  // [T, E] (a view when G == 1: the size-1 dim merges; else a copy); ~score_mask.bool() (the .bool() a
  // temporary) feeds masked_fill, which keeps it for its backward while scores_for_choice lives.
  local(no_grad(b, "zeros_like_scatter", {T, G}, sdt, {gi[1]}));
  if (G > 1) local(no_grad(b, "reshape", {T, E}, sdt));
  const TensorId bmask = no_grad(b, "bool", {T, E}, DType::boolean);
  b.hold(bmask);
  const TensorId inv = no_grad(b, "logical_not", {T, E}, DType::boolean, {bmask});
  b.drop(bmask);
  if (b.training()) local(inv);
  // scores_for_choice only picks indices: no gradient reaches it (its autograd node dies with it).
  const TensorId choice = local(no_grad(b, "masked_fill", {T, E}, sdt, {inv}));
  auto top = b.generic({"topk", {choice}, {{{T, K}, sdt}, {{T, K}, DType::i64}}, {}, {}, {}, {}});
  r.indices = top[1];
  b.hold(r.indices);
  TensorId w = b.generic_one("gather", {scores, r.indices}, {T, K}, sdt, {1});
  if (s.moe_norm_topk_prob) {
    const TensorId den = local(b.add_scalar(b.reduce_last("sum", w, false)));
    w = b.inplace("div_", w, true, {den});
  }
  b.hold(w);
  r.weights = b.scalar_op("mul_scalar", w, false);  // * routed_scaling_factor (rebinds topk_weights)
  b.hold(r.weights);
  b.drop(w);
  for (TensorId x : locals) b.drop(x);
  return r;
}

}  // namespace

void build_mistral4(GraphBuilder& b, const TransformerSpec& s) {
  MlaVariant v;
  v.llama4_query_scale = true;
  v.cast_q_cat_grads = true;
  v.route = m4_route;
  build_mla_decoder(b, s, v);
}

}  // namespace memplan
