// JetMoeForCausalLM (transformers 5.17 models/jetmoe/modeling_jetmoe.py; JetMoE-8B), training forward + causal-LM
// loss or one inference pass, on the shared CausalLM skeleton (phi_parts.h): embed_tokens, create_causal_mask, the
// rotary embedding over kv_channels (Llama's), the layers, the final RMSNorm (LlamaRMSNorm's statements), lm_head
// (tied by default). JetMoePreTrainedModel.supports_gradient_checkpointing is False: checkpointing is refused.
//   JetMoeDecoderLayer: LlamaDecoderLayer's statements around self_attention (a mixture of attention heads, MoA) and
//     mlp (JetMoeMoE); `hidden_states, _, _ = self.self_attention(...)`.
//   JetMoeTopKGating.forward(flat [T, H]) (both routers):
//     logits = self.layer(flat).float()               [T, E] (a copy unless the linear's output is fp32)
//     top_k_logits, top_k_indices = logits.topk(K)    [T, K]
//     top_k_gates = softmax(top_k_logits, 1).type_as(flat)
//     gates = zeros([T, E]).scatter(1, idx, 1); expert_size = gates.long().sum(0).tolist()   (no gradient)
//     _, index_sorted_experts = top_k_indices.flatten().sort(0); batch_index = index_sorted_experts.div(K)
//     batch_gates = top_k_gates.flatten()[index_sorted_experts]                              [R = T K]
//     returns (index_sorted_experts, batch_index, batch_gates, expert_size, logits): bound by the caller (the MoE
//     until it returns, the MoA through topo_info until the attention returns).
//   JetMoeParallelExperts.forward(inputs [R, in], expert_size): inputs.split(expert_size) (views; backward writes
//     one fresh [R, in] gradient), per expert F.linear(part_i, self.weight[i]) (weight[i] a select view of the
//     [E, out, in] parameter: SelectBackward hands AccumulateGrad a zero-filled gradient of the whole parameter per
//     expert; under autocast each slice is cast anew, uncached, and the cast is what the GEMM saves), then
//     torch.cat(output_list) [R, out]; output_list keeps the per-expert outputs until forward returns. Routing is
//     data dependent: the rows are spread evenly (R / E each, the remainder on the first experts).
//   JetMoeMoE.forward(x): flat = x.reshape(-1, H); route; expert_inputs = flat[batch_index] [R, H];
//     h = input_linear(expert_inputs) [R, 2I]; chunked = h.chunk(2) (the tuple keeps h to the end);
//     h = act(chunked[0]) * chunked[1]; out = output_linear(h) [R, H]; out = out * batch_gates[:, None];
//     zeros = zeros(T, H) (bound to the end); y = zeros.index_add(0, batch_index, out) (out of place: a fresh
//     [T, H]); y = y.view(B, S, H) + self.bias.
//   JetMoeAttention.forward(x): q, router_logits, topo = experts.map(x) (MoA.map: route, flat[batch_index],
//     input_linear -> [R, hs], zeros(R, hs).index_add(0, index_sorted_experts, .) (fresh), viewed [B, S, K, hs]);
//     k, v = kv_proj(x).chunk(2) ([B, S, 2 hs] views); q viewed [B, S, K nkv, hd] and transposed, k / v
//     [B, nkv, S, hd]; Llama's apply_rotary_pos_emb; the cache update (inference); then
//     `key_states = key_states.repeat(1, K, 1, 1)` and the same for v (fresh [B, K nkv, S, hd]; RepeatBackward's
//     sum writes a fresh k-sized gradient), the attention with num_key_value_groups 1 (no repeat_kv), o =
//     attn_output.view(B, S, K, hs), experts.reduce(o, topo) (flat[index_sorted_experts] [R, hs],
//     output_linear -> [R, H], * batch_gates[:, None], zeros(T, H).index_add(0, batch_index, .), + bias).
// Spec: head_dim = kv_channels, num_kv_heads = num_key_value_heads, num_heads = nkv * K (JetMoeConfig.__post_init__),
// intermediate_size = the MoE experts' width, num_experts = num_local_experts (both MoE and MoA).
// Registration order per layer: mlp (bias [H], input_linear.weight [E, 2I, H], output_linear.weight [E, H, I],
// router.layer.weight [E, H]), input_layernorm, post_attention_layernorm, self_attention (experts.bias [H],
// experts.input_linear.weight [E, hs, H], experts.output_linear.weight [E, H, hs], experts.router.layer.weight
// [E, H], kv_proj.weight [2 hs, H]).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct JetLayer {
  TensorId moe_bias, moe_in, moe_out, moe_router, in_norm, post_norm, moa_bias, moa_in, moa_out, moa_router, kv;
};

JetLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, E = s.num_experts, I = s.intermediate_size,
                hs = checked_mul(s.num_kv_heads, s.head_dim);
  JetLayer w;
  w.moe_bias = b.param(p + "mlp.bias", {H}, train);
  w.moe_in = b.param(p + "mlp.input_linear.weight", {E, 2 * I, H}, train);
  w.moe_out = b.param(p + "mlp.output_linear.weight", {E, H, I}, train);
  w.moe_router = b.param(p + "mlp.router.layer.weight", {E, H}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.moa_bias = b.param(p + "self_attention.experts.bias", {H}, train);
  w.moa_in = b.param(p + "self_attention.experts.input_linear.weight", {E, hs, H}, train);
  w.moa_out = b.param(p + "self_attention.experts.output_linear.weight", {E, H, hs}, train);
  w.moa_router = b.param(p + "self_attention.experts.router.layer.weight", {E, H}, train);
  w.kv = b.param(p + "self_attention.kv_proj.weight", {2 * hs, H}, train);
  return w;
}

// What JetMoeTopKGating returns, bound by its caller.
struct Route {
  TensorId sorted_idx, batch_index, batch_gates, logits;
};

// JetMoeTopKGating.forward (the header's statements).
Route route(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w) {
  const int64_t T = b.shape(flat)[0], E = s.num_experts, K = s.num_experts_per_tok, R = checked_mul(T, K);
  auto nograd = [&](std::string_view name, Shape shape, DType dt) {
    return b.generic({name, {}, {{std::move(shape), dt}}, {}, {}, {}, {}})[0];
  };
  Route r;
  r.logits = b.to(b.linear(flat, router_w), DType::f32);
  b.hold(r.logits);
  auto top = b.generic({"topk", {r.logits}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  std::vector<TensorId> locals;
  auto local = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  local(top[1]);
  const TensorId gates = local(b.to(b.softmax_last(top[0]), b.dtype(flat)));
  const TensorId zeros = local(nograd("zeros", {T, E}, b.dtype(gates)));
  local(nograd("scatter", {T, E}, b.dtype(zeros)));
  nograd("long_sum", {E}, DType::i64);  // gates.long() [T, E] int64 then .sum(0): the long copy is a temporary
  auto sorted = b.generic({"sort", {}, {{{R}, DType::i64}, {{R}, DType::i64}}, {}, {}, {}, {}});
  local(sorted[0]);
  r.sorted_idx = sorted[1];
  b.hold(r.sorted_idx);
  r.batch_index = nograd("div_trunc", {R}, DType::i64);
  b.hold(r.batch_index);
  r.batch_gates = b.generic_one("index", {b.view(gates, {R}), r.sorted_idx}, {R}, b.dtype(gates), {1});
  b.hold(r.batch_gates);
  (void)zeros;
  for (TensorId t : locals) b.drop(t);
  return r;
}

void release(GraphBuilder& b, const Route& r) {
  for (TensorId t : {r.sorted_idx, r.batch_index, r.batch_gates, r.logits}) b.drop(t);
}

// JetMoeParallelExperts.forward over inputs [R, in] with weight [E, out, in]: returns [R, out].
TensorId parallel_experts(GraphBuilder& b, TensorId inputs, TensorId weight) {
  const Shape ws = b.shape(weight), is = b.shape(inputs);
  const int64_t E = ws[0], out = ws[1], in = ws[2], R = is[0];
  std::vector<Shape> sizes;
  for (int64_t e = 0; e < E; ++e) sizes.push_back({R / E + (e < R % E ? 1 : 0), in});
  const std::vector<TensorId> parts = b.split(inputs, sizes);
  std::vector<TensorId> outs;
  for (int64_t e = 0; e < E; ++e) {
    const TensorId o = b.linear(parts[static_cast<size_t>(e)], b.select_param(weight, {out, in}));
    b.hold(o);  // output_list
    outs.push_back(o);
  }
  const TensorId y = b.cat_list("cat", outs, 0);
  for (TensorId o : outs) b.drop(o);
  return y;
}

// JetMoeMoE.forward (the header's statements).
TensorId moe(GraphBuilder& b, const TransformerSpec& s, const JetLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], S = xs[1], H = s.hidden_size, I = s.intermediate_size, T = checked_mul(B, S),
                R = checked_mul(T, s.num_experts_per_tok);
  const TensorId flat = b.view(x, {T, H});
  const Route r = route(b, s, flat, w.moe_router);
  const TensorId expert_inputs = b.generic_one("index", {flat, r.batch_index}, {R, H}, b.dtype(flat), {1});
  b.hold(expert_inputs);
  const TensorId h = parallel_experts(b, expert_inputs, w.moe_in);
  b.hold(h);  // `chunked_hidden_states` keeps it to the end
  const auto halves = b.split(h, 2, {R, I});
  TensorId a = b.mul(activation(b, s.hidden_act, halves[0]), halves[1]);
  TensorId eo = parallel_experts(b, a, w.moe_out);
  eo = b.mul(eo, b.view(r.batch_gates, {R, 1}));
  const TensorId zeros = b.generic_one("zeros", {}, {T, H}, b.dtype(eo));
  b.hold(zeros);
  TensorId y = b.generic_one("index_add", {zeros, eo, r.batch_index}, {T, H}, b.dtype(eo), {1, 2});
  y = b.add(b.view(y, {B, S, H}), w.moe_bias);
  for (TensorId t : {expert_inputs, h, zeros}) b.drop(t);
  release(b, r);
  return y;
}

// JetMoeAttention.forward on the normed input x (the header's statements).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const JetLayer& w, TensorId x, const SkeletonContext& c,
                   TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                K = s.num_experts_per_tok, nkv = s.num_kv_heads, hd = s.head_dim, nh = s.num_heads,
                hs = checked_mul(nkv, hd), T = checked_mul(B, S), R = checked_mul(T, K);
  weights = kNoTensor;
  const TensorId flat = b.view(x, {T, H});
  // JetMoeMoA.map
  const Route r = route(b, s, flat, w.moa_router);
  TensorId qin = b.generic_one("index", {flat, r.batch_index}, {R, H}, b.dtype(flat), {1});
  b.hold(qin);  // expert_inputs: a local of map() until it returns
  const TensorId qo = parallel_experts(b, qin, w.moa_in);
  const TensorId zq = b.generic_one("zeros", {}, {R, hs}, b.dtype(qo));
  b.hold(zq);
  const TensorId qmap = b.generic_one("index_add", {zq, qo, r.sorted_idx}, {R, hs}, b.dtype(qo), {1, 2});
  b.drop(zq);
  b.drop(qin);
  // kv_proj(x).chunk(2): views of one [B, S, 2 hs] output; SplitBackward writes one fresh gradient.
  const TensorId kvp = b.linear(x, w.kv);
  const auto kvh = b.split(kvp, 2, {B, S, hs});
  const int64_t es = dtype_bytes(b.dtype(kvp));
  const TensorId q = b.view_copying_grad(qmap, {B, nh, S, hd});
  const TensorId k = b.view_copying_grad(kvh[0], {B, nkv, S, hd}, checked_mul(T, hs) * es);
  TensorId v = b.view_copying_grad(kvh[1], {B, nkv, S, hd}, checked_mul(T, hs) * es);
  const TensorId v_proj = v;
  b.hold(v_proj);
  b.hold(q);
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, c.cos, c.sin);
  TensorId kf = ke, vf = v;
  if (inf) {
    std::tie(kf, vf) = kv_update(b, ke, v, 0);
    b.drop(ke);
    b.drop(v_proj);
  }
  // `key_states = key_states.repeat(...)`, then value_states: each rebinding releases the old binding (the rotated
  // k; in training the kv_proj output once v's view goes), the repeats stay bound until the module returns.
  // key_states.repeat(1, K, 1, 1): fresh tensors of the attention's head count (the cached length in inference).
  const Shape ks = b.shape(kf);
  const Shape rep{ks[0], checked_mul(ks[1], K), ks[2], ks[3]};
  const TensorId kr = b.generic_one("repeat", {kf}, rep, b.dtype(kf));
  b.hold(kr);
  if (!inf) b.drop(ke);
  const TensorId vr = b.generic_one("repeat", {vf}, rep, b.dtype(vf));
  b.hold(vr);
  if (!inf) b.drop(v_proj);
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    ctx = inf && c.mask != kNoTensor ? b.sdpa_masked_inference(qe, kr, vr, c.mask)
                                     : b.sdpa(qe, kr, vr, s.attn_dropout, c.mask == kNoTensor, c.mask);
    // The fused kernels lay the output out as [B, S, H, D] (q keeps that memory order: the rotary's elementwise
    // ops preserve MoA.map's layout, and k / v repeat to as many heads, so no math backend): sdpa_attention_forward's
    // transpose(1, 2).contiguous() copies nothing (whole-run amp stream).
  } else {
    // eager_attention_forward: q @ k^T (q copied for B > 1: its heads are a strided view), * scaling, + mask, fp32 softmax,
    // back to q's dtype, dropout, @ v, transpose(1, 2).contiguous().
    const int64_t L = rep[2];
    TensorId sc = b.matmul(qe, kr, {B, nh, S, L}, B > 1, false);  // at B = 1 q's dims merge as a view
    sc = b.scalar_op("mul_scalar", sc, false);
    if (c.mask != kNoTensor) sc = b.add(sc, c.mask);
    TensorId probs = b.to(b.softmax_last(b.to(sc, DType::f32)), b.dtype(qe));
    probs = b.dropout(probs, s.attn_dropout);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}), {B, S, nh, hd}, true);
  }
  // JetMoeMoA.reduce(attn_output.view(B, S, K, hs), topo_info): the argument stays bound until reduce returns.
  b.hold(ctx);
  const TensorId o = b.view(ctx, {R, hs});
  const TensorId oin = b.generic_one("index", {o, r.sorted_idx}, {R, hs}, b.dtype(o), {1});
  b.hold(oin);
  TensorId eo = parallel_experts(b, oin, w.moa_out);
  eo = b.mul(eo, b.view(r.batch_gates, {R, 1}));
  const TensorId zo = b.generic_one("zeros", {}, {T, H}, b.dtype(eo));
  b.hold(zo);
  // index_add(dim, index, source): IndexAddBackward keeps source itself (the formula's expand_as(source)).
  TensorId y = b.generic_one("index_add", {zo, eo, r.batch_index}, {T, H}, b.dtype(eo), {1, 2});
  y = b.add(b.view(y, {B, S, H}), w.moa_bias);
  for (TensorId t : {zo, oin, ctx}) b.drop(t);
  // JetMoeAttention returns: query_states and the repeated key / value states go.
  for (TensorId t : {qe, kr, vr}) b.drop(t);
  release(b, r);
  return y;
}

TensorId jet_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const JetLayer w = layer_params(b, s, "model.layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm, [&](TensorId x, TensorId& weights) { return attention(b, s, w, x, c, weights); },
      [&](TensorId n2) { return moe(b, s, w, n2); });
}

}  // namespace

void build_jetmoe(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (b.training() && (cfg.grad_checkpointing || !cfg.checkpoint_layers.empty()))
    throw InputError("grad_checkpointing", "true",
                     "JetMoePreTrainedModel.supports_gradient_checkpointing is False: "
                     "gradient_checkpointing_enable() raises");
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts)
    throw InputError("model.num_local_experts", std::to_string(s.num_experts),
                     "jetmoe needs num_local_experts >= num_experts_per_tok >= 1");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError("model.activation_function", s.hidden_act, "jetmoe is modelled with silu, gelu or relu");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"model.embed_tokens.weight", "model.norm", false, false, jet_layer});
}

}  // namespace memplan
