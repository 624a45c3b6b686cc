// PhimoeForCausalLM (transformers 5.17 models/phimoe/modeling_phimoe.py), training forward + causal-LM loss, or
// one inference pass with the DynamicCache (generate() through causal_lm_tail's inference head).
//
// Stages of one forward:
//   the CausalLM skeleton (phi_parts.h build_causal_lm_skeleton): embed_tokens, create_causal_mask (or the
//     sliding-window one when config.sliding_window is set), the rotary embedding, the layers, the final
//     nn.LayerNorm (weight + bias), lm_head with its bias (config.lm_head_bias);
//   PhimoeDecoderLayer: nn.LayerNorm (weight + bias) -> PhimoeAttention (Llama's: separate q / k / v / o
//     projections, each with a bias under attention_bias, rotate_half rope over the whole head, SDPA or eager)
//     -> residual add -> nn.LayerNorm -> PhimoeSparseMoeBlock -> residual add;
//   PhimoeSparseMoeBlock: input jitter (training, input_jitter_noise > 0), the PhimoeTopKRouter (a bias-free
//     linear, then sparsemixer: two rounds of threshold mask, masked_fill, Gumbel sampling in training or the
//     arg-max, softmax and gather, each round's multiplier through the PhimoeMultiplier autograd function in
//     training), then PhimoeExperts through transformers 5.17's default experts implementation, grouped_mm
//     (qwen_parts.h qwen_moe_experts: the same integrations/moe.py grouped_mm_experts_forward; batched_mm in
//     generate()'s decode steps). The routing weights keep the router's dtype (bf16 in a bf16 model; fp32 under
//     amp, where autocast runs sparsemixer's softmax in fp32).
// Parameters in registration order: embed_tokens, per layer self_attn q, k, v, o (weight, bias each),
// mlp.router.weight [E, H], mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj [E, H, I], input_layernorm,
// post_attention_layernorm (weight, bias each); norm; lm_head weight, bias.
//
// The router's tensors are [T, E] or [T, 1] (T = batch * seq tokens): small-pool blocks next to the experts'
// [T * k, H] ones. What sparsemixer's autograd graph keeps until backward (each round: the masked_fill mask,
// the softmax output, the gathered and arg-max indices, PhimoeMultiplier's saved multiplier / selected experts /
// masked gates) is saved on the round's PhimoeMultiplier op; its backward writes the gradient of the router
// logits (masked_gates * -g, scatter_add_ of g), the only gradient sparsemixer passes on.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using Outs = std::vector<std::pair<Shape, DType>>;

// A kernel of sparsemixer's that autograd does not follow (torch.no_grad() blocks, or results whose gradient
// PhimoeMultiplier's backward drops): reads only non-grad tensors, so it has no backward node.
// The router logits it reads stay alive anyway (bound in the block), so only non-grad reads are listed.
std::vector<TensorId> nongrad(GraphBuilder& b, std::vector<TensorId> reads) {
  std::vector<TensorId> out;
  for (TensorId t : reads)
    if (!b.info(t).requires_grad) out.push_back(t);
  return out;
}
TensorId plain(GraphBuilder& b, std::string_view name, std::vector<TensorId> reads, Shape shape, DType dt) {
  return b.generic_one(name, nongrad(b, std::move(reads)), std::move(shape), dt);
}

// `x.max(dim=-1, keepdim)`: values [T, 1] in x's dtype and indices [T, 1] int64.
std::pair<TensorId, TensorId> row_max(GraphBuilder& b, TensorId x) {
  const int64_t T = b.shape(x)[0];
  auto o = b.generic({"max_dim", nongrad(b, {x}), Outs{{{T, 1}, b.dtype(x)}, {{T, 1}, DType::i64}}, {}, {}, {}, {}});
  return {o[0], o[1]};
}

// ((threshold - scores) / scores.abs().clamp(min=threshold)) > 2 * jitter_eps under torch.no_grad(): abs, then
// clamp (the abs temporary freed), the difference, the quotient (the difference freed), the bool mask (the
// quotient freed). Returns (factor, mask): factor stays bound in sparsemixer until the next round rebinds it.
std::pair<TensorId, TensorId> sparsity_mask(GraphBuilder& b, TensorId scores, TensorId threshold) {
  const Shape sh = b.shape(scores);  // a copy: new tensors may reallocate the graph's table
  const DType dt = b.dtype(scores);
  TensorId ab = plain(b, "abs", {}, sh, dt);
  TensorId factor = plain(b, "clamp_min", {ab, threshold}, sh, dt);
  b.hold(factor);
  TensorId diff = plain(b, "sub", {threshold}, sh, dt);
  TensorId quot = plain(b, "div", {diff, factor}, sh, dt);
  TensorId mask = plain(b, "gt_scalar", {quot}, sh, DType::boolean);
  b.hold(mask);
  return {factor, mask};
}

// Gumbel sampling `(gates - empty_like(gates).exponential_().log()).max(dim=-1)[1].unsqueeze(-1)`: the noise,
// its log (the noise freed), the difference (the log freed), the row max (values dropped with the tuple).
TensorId gumbel_pick(GraphBuilder& b, TensorId gates) {
  const Shape sh = b.shape(gates);  // a copy: new tensors may reallocate the graph's table
  const DType dt = b.dtype(gates);
  const int64_t T = sh[0];
  TensorId noise = plain(b, "exponential", {}, sh, dt);
  TensorId lg = plain(b, "log", {noise}, sh, dt);
  TensorId diff = plain(b, "sub", {gates, lg}, sh, dt);
  auto o = b.generic({"max_dim", {diff}, Outs{{{T, 1}, dt}, {{T, 1}, DType::i64}}, {}, {}, {}, {}});
  b.hold(o[1]);
  return o[1];
}

// torch.softmax(gates, dim=-1) of a masked_fill output; under autocast softmax runs in fp32 (its input cast
// first, the cast freed after the kernel).
TensorId gate_softmax(GraphBuilder& b, TensorId gates) {
  const Shape sh = b.shape(gates);  // a copy: new tensors may reallocate the graph's table
  if (b.autocast() && b.dtype(gates) != DType::f32) {
    TensorId x32 = plain(b, "to_copy", {gates}, sh, DType::f32);
    return plain(b, "softmax", {x32}, sh, DType::f32);
  }
  return plain(b, "softmax", {gates}, sh, b.dtype(gates));
}

struct Round {
  TensorId selected = kNoTensor;    // [T, 1] int64
  TensorId multiplier = kNoTensor;  // [T, 1], requires grad in training (through the router logits)
  std::vector<TensorId> locals;     // bound in sparsemixer until it returns
};

// One round of sparsemixer over `gates_src` (the router logits in the first round, the logits with the first
// pick scattered to -inf in the second): the no_grad threshold mask against `scores`, masked_fill, the pick
// (Gumbel in training, the arg-max otherwise), softmax, gather, and in training the midpoint mask and the
// PhimoeMultiplier op. `factor` / `max_ind`: sparsemixer's locals the round rebinds.
Round mixer_round(GraphBuilder& b, TensorId scores, TensorId gates_src, TensorId& factor, TensorId& max_ind,
                  std::vector<TensorId>& saved) {
  const int64_t T = b.shape(scores)[0];
  Round r;
  auto [threshold, ind] = row_max(b, gates_src);
  b.hold(ind);
  if (max_ind != kNoTensor) b.drop(max_ind);
  max_ind = ind;
  auto [f, mask] = sparsity_mask(b, scores, threshold);
  if (factor != kNoTensor) b.drop(factor);
  factor = f;
  saved.push_back(mask);  // MaskedFillBackward's mask, alive with the graph
  const TensorId masked = plain(b, "masked_fill", {gates_src, mask}, b.shape(scores), b.dtype(scores));
  b.hold(masked);
  r.selected = b.training() ? gumbel_pick(b, masked) : max_ind;
  const TensorId gates = gate_softmax(b, masked);  // masked_gates rebound: the masked_fill output goes
  b.hold(gates);
  b.drop(masked);
  saved.push_back(gates);
  r.locals.push_back(gates);
  const DType g = b.dtype(gates);
  const TensorId mult_o = plain(b, "gather", {gates, r.selected}, {T, 1}, g);
  b.hold(mult_o);
  r.locals.push_back(mult_o);
  if (!b.training()) {
    r.multiplier = mult_o;
    return r;
  }
  r.locals.push_back(r.selected);
  saved.push_back(r.selected);  // GatherBackward's / ScatterBackward's index, PhimoeMultiplier's selected_experts
  saved.push_back(mult_o);
  // max_scores, max_ind = masked_gates.max(dim=-1, keepdim=True) (MaxBackward keeps the indices).
  auto [max_scores, ind2] = row_max(b, gates);
  b.hold(max_scores);
  b.hold(ind2);
  b.drop(max_ind);
  max_ind = ind2;
  saved.push_back(ind2);
  r.locals.push_back(max_scores);
  // mask_for_one = logical_or(selected == max_ind, rand_like(max_scores) > 0.75), then
  // torch.add(0.3333, mask, alpha=0.6667).type_as(masked_gates): [T, 1] temporaries.
  TensorId eq = plain(b, "eq", {r.selected, max_ind}, {T, 1}, DType::boolean);
  TensorId rnd = plain(b, "rand_like", {max_scores}, {T, 1}, g);
  TensorId gt = plain(b, "gt_scalar", {rnd}, {T, 1}, DType::boolean);
  TensorId orm = plain(b, "logical_or", {eq, gt}, {T, 1}, DType::boolean);
  const TensorId for_one = plain(b, "add_scalar", {orm}, {T, 1}, g);
  b.hold(for_one);
  r.locals.push_back(for_one);
  // PhimoeMultiplier.apply(scores, multiplier_o, selected_experts, masked_gates, mask_for_one): the output
  // multiplier * mask_for_one; the backward's temporaries are [T, 1] (grad * multiplier, its negation) around the
  // fresh [T, E] gradient of scores.
  std::vector<TensorId> reads{scores, for_one};
  std::vector<int> keep;
  for (TensorId t : saved) {
    keep.push_back(static_cast<int>(reads.size()));
    reads.push_back(t);
  }
  const int64_t small = checked_mul(T, int64_t{dtype_bytes(g)});
  r.multiplier = b.generic({"phimoe_multiplier", std::move(reads), Outs{{{T, 1}, g}}, std::move(keep), {}, {},
                            {small, small}})[0];
  b.hold(r.multiplier);
  r.locals.push_back(r.multiplier);
  saved.clear();
  return r;
}

// PhimoeTopKRouter.forward after the linear: sparsemixer(router_logits). Returns (routing_weights [T, k],
// selected_experts [T, k] int64), both held (bound in PhimoeSparseMoeBlock.forward until it returns).
std::pair<TensorId, TensorId> sparsemixer(GraphBuilder& b, const TransformerSpec& s, TensorId scores) {
  const int64_t T = b.shape(scores)[0];
  if (s.num_experts_per_tok != 2)
    throw InputError("model.num_experts_per_tok", std::to_string(s.num_experts_per_tok),
                     "phimoe's sparsemixer always routes to 2 experts (PhimoeTopKRouter); only 2 is modelled");
  TensorId factor = kNoTensor, max_ind = kNoTensor;
  std::vector<TensorId> saved;
  Round first = mixer_round(b, scores, scores, factor, max_ind, saved);
  // masked_scores = torch.scatter(scores, -1, selected_experts, -inf): its gradient is dropped with the second
  // round's multiplier_o, so no backward node of its own is kept beyond the index saved above.
  const TensorId masked_scores = plain(b, "scatter", {first.selected}, b.shape(scores), b.dtype(scores));
  b.hold(masked_scores);
  Round second = mixer_round(b, scores, masked_scores, factor, max_ind, saved);
  const DType g = b.dtype(first.multiplier);
  const TensorId weights = b.cat("cat", {first.multiplier, second.multiplier}, -1);
  b.hold(weights);
  const TensorId selected = plain(b, "cat", {first.selected, second.selected}, {T, 2}, DType::i64);
  b.hold(selected);
  (void)g;
  // sparsemixer returns: its locals go.
  for (TensorId t : {factor, max_ind, masked_scores}) b.drop(t);
  for (const Round* r : {&first, &second})
    for (TensorId t : r->locals) b.drop(t);
  return {weights, selected};
}

// `hidden_states *= torch.empty_like(hidden_states).uniform_(1 - eps, 1 + eps)` (training, eps > 0): the noise
// tensor is what MulBackward keeps; the in-place product's gradient is a fresh grad * noise.
TensorId input_jitter(GraphBuilder& b, const TransformerSpec& s, TensorId x) {
  if (!b.training() || s.phimoe_input_jitter_noise <= 0.0) return x;
  const TensorId noise = plain(b, "uniform", {}, b.shape(x), b.dtype(x));
  return b.inplace_fresh_grad("mul_", x, {noise});
}

TensorId phimoe_moe_block(GraphBuilder& b, const TransformerSpec& s, const FfnParams& w, TensorId x) {
  const int64_t H = s.hidden_size;
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens;
  x = input_jitter(b, s, x);
  TensorId flat = b.view(x, {checked_mul(B, Sq), H});
  flat = input_jitter(b, s, flat);  // PhimoeTopKRouter.forward repeats the in-place jitter on the flat view
  // router_logits: returned by the router and bound to `_` in the block until it returns.
  const TensorId logits = b.linear(flat, w.gate);
  b.hold(logits);
  auto [weights, selected] = sparsemixer(b, s, logits);
  const QwenMoeRoute route{logits, weights, selected};
  TensorId out = b.view(qwen_moe_experts(b, s, w.up, w.down, flat, route), {B, Sq, H});
  release_route(b, route);
  return out;
}

// PhimoeAttention: Llama's q / k / v views and rotary, then eager_attention_forward with torch.matmul's reshapes
// seen per batch size (llama_parts.h eager_attention_o_proj). SDPA goes to llama_attention unchanged.
TensorId phimoe_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                          const SkeletonContext& c, TensorId& weights) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager) return llama_attention(b, s, w, x, c.cos, c.sin, c.mask, c.window, weights);
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;
  b.hold(q);
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, c.cos, c.sin);
  return eager_attention_o_proj(b, s, qe, ke, v, v_proj, c.mask, c.window, w.o, w.ob, weights);
}

TensorId phimoe_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const auto& cfg = b.config();
  const int64_t H = s.hidden_size, I = s.moe_intermediate_size, E = s.num_experts;
  const bool train = !layer_frozen(cfg, i);
  const std::string p = "model.layers." + std::to_string(i) + ".";
  LlamaLayerParams w;
  attention_projection_params(b, s, p, train, s.qkv_bias, s.o_bias, w);
  FfnParams f;
  f.gate = b.param(p + "mlp.router.weight", {E, H}, train);
  f.up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
  f.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
  const TensorId in_w = b.param(p + "input_layernorm.weight", {H}, train);
  const TensorId in_b = b.param(p + "input_layernorm.bias", {H}, train);
  const TensorId post_w = b.param(p + "post_attention_layernorm.weight", {H}, train);
  const TensorId post_b = b.param(p + "post_attention_layernorm.bias", {H}, train);

  TensorId n1 = b.layer_norm(h, in_w, in_b);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = phimoe_attention(b, s, w, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = b.layer_norm(h1, post_w, post_b);
  b.hold(n2);  // bound to hidden_states until the MoE block returns
  TensorId m = phimoe_moe_block(b, s, f, n2);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_phimoe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts <= 0 || s.moe_intermediate_size <= 0)
    throw InputError("model.num_local_experts", std::to_string(s.num_experts),
                     "phimoe needs routed experts (num_local_experts and intermediate_size)");
  const auto& cfg = b.config();
  const int64_t omp = s.phimoe_longrope_original_max;
  if (!b.training() && omp > 0 && cfg.generate_tokens > 1 && cfg.seq_len <= omp &&
      checked_add(cfg.seq_len, cfg.generate_tokens - 1) > omp)
    throw InputError("generate_tokens", std::to_string(cfg.generate_tokens),
                     "takes the sequence past the longrope original_max_position_embeddings (" + std::to_string(omp) +
                         "), where phimoe's generate() drops the cache and reruns the whole sequence: not modelled");
  build_causal_lm_skeleton(b, s, {"model.embed_tokens.weight", "model.norm", true, true, phimoe_layer});
}

}  // namespace memplan
