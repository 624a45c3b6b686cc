// DbrxForCausalLM (transformers 5.17 models/dbrx/modeling_dbrx.py; databricks DBRX), training forward + causal-LM
// loss or one inference pass, on the shared CausalLM skeleton (phi_parts.h): transformer.wte, create_causal_mask,
// DbrxRotaryEmbedding (Llama's), the blocks, norm_f (nn.LayerNorm without bias), lm_head. emb_pdrop is stored but
// never applied.
//   DbrxBlock.forward(h) = DbrxNormAttentionNorm then DbrxFFN:
//     n1 = norm_1(h).to(h.dtype)                       LayerNorm(bias=False); the .to() returns its input (fp32
//                                                      under autocast: the residual stream is fp32 then)
//     a, _ = attn(n1)                                  n1 bound until the attention returns
//     h1 = dropout(a, resid_pdrop) + h                 (no kernel at p = 0)
//     n2 = norm_2(h1).to(h1.dtype)                     returned with h1; bound until the FFN returns
//     out = h1 + dropout(ffn(n2), resid_pdrop)
//   DbrxAttention: qkv = Wqkv(n1) [B, S, H + 2 kv hd]; qkv = qkv.clamp(min=-clip_qkv, max=clip_qkv): out of place,
//     ClampBackward1 keeps the unclamped projection (its backward builds two bool masks of its size), the clamp's
//     output is fresh; split([H, kv hd, kv hd], dim=2) views of it (SplitWithSizesBackward writes the three
//     gradients into one fresh buffer), each .view(B, S, -1, hd).transpose(1, 2) (the transposed view's reshape
//     copies a contiguous gradient back, as Llama's head views), apply_rotary_pos_emb as Llama's, the cache update,
//     SDPA / eager attention, out_proj (no bias). clip_qkv None: torch.clamp(min=None, max=None) raises, so the
//     importer refuses it.
//   DbrxFFN.forward(x):
//     training with moe_jitter_eps not None: x *= empty_like(x).uniform_(1 - eps, 1 + eps), in place
//     router_logits = router.layer(x.view(-1, H))      [T, E], bound until the FFN returns
//     probs = softmax(router_logits, dim=1, dtype=router_logits.dtype)
//     top_v, top_i = topk(probs, K)
//     top_v = top_v / torch.norm(top_v, p=moe_normalize_expert_weights, dim=-1, keepdim=True)   (when not None)
//     out = experts(x, top_i, top_v)
//   DbrxExperts.forward (no @use_experts_implementation: the Python loop runs in every mode):
//     next_states = zeros_like(x.view(T, H)); under no_grad expert_mask = one_hot(top_i, E) [T, K, E] int64
//     (permuted view), expert_hit = (expert_mask.sum((-1, -2)) > 0).nonzero(); then per hit expert e:
//       idx, token_idx = torch.where(expert_mask[e])   one [n_e, 2] int64 (no_grad)
//       v1 / w1 / w2 = mlp.<w>.view(E, F, H)[e]        SelectBackward: a zero-filled gradient of the whole [E F, H]
//                                                      parameter per expert, summed in AccumulateGrad's buffer
//       states = mlp(x[token_idx], w1, v1, w2)         x[token_idx] [n_e, H] (IndexBackward: a [T, H] gradient);
//                                                      gate = x @ w1.T, up = x @ v1.T [n_e, F], act(gate) * up,
//                                                      @ w2 -> [n_e, H]
//       states = states * top_v[token_idx, idx, None]  [n_e, 1] gathered weights
//       next_states.index_add_(0, token_idx, states)   in place
//     The loop's variables (token_idx, states, the weight views) are rebound by the next iteration. Routing is
//     data dependent: the tokens are spread evenly over the experts (T K / E rows each, the remainder on the
//     first experts), as a freshly initialised router does to within a few rows.
// Parameters, registration order: transformer.wte, then per block norm_attn_norm.norm_1, attn.Wqkv, attn.out_proj,
// norm_attn_norm.norm_2, ffn.router.layer [E, H], ffn.experts.mlp.w1 / v1 / w2 [E F, H]; transformer.norm_f,
// lm_head (never tied: DbrxConfig refuses tie_word_embeddings).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct DbrxLayer {
  TensorId norm_1, wqkv, out_proj, norm_2, router, w1, v1, w2;
};

DbrxLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, kvd = checked_mul(s.num_kv_heads, s.head_dim);
  const int64_t EF = checked_mul(s.num_experts, s.moe_intermediate_size);
  DbrxLayer w;
  w.norm_1 = b.param(p + "norm_attn_norm.norm_1.weight", {H}, train);
  w.wqkv = b.param(p + "norm_attn_norm.attn.Wqkv.weight", {H + 2 * kvd, H}, train);
  w.out_proj = b.param(p + "norm_attn_norm.attn.out_proj.weight", {H, H}, train);
  w.norm_2 = b.param(p + "norm_attn_norm.norm_2.weight", {H}, train);
  w.router = b.param(p + "ffn.router.layer.weight", {s.num_experts, H}, train);
  w.w1 = b.param(p + "ffn.experts.mlp.w1", {EF, H}, train);
  w.v1 = b.param(p + "ffn.experts.mlp.v1", {EF, H}, train);
  w.w2 = b.param(p + "ffn.experts.mlp.w2", {EF, H}, train);
  return w;
}

TensorId layer_norm_no_bias(GraphBuilder& b, TensorId x, TensorId w) { return b.layer_norm(x, w, kNoTensor); }

// DbrxAttention.forward on the normed input x (the header's statements).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const DbrxLayer& w, TensorId x, const SkeletonContext& c,
                   TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, H = s.hidden_size,
                nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim, kvd = checked_mul(nkv, hd);
  const TensorId qkv = b.linear(x, w.wqkv);
  const Shape qs = b.shape(qkv);
  int64_t n = 1;
  for (int64_t d : qs) n = checked_mul(n, d);
  // qkv.clamp(min, max): saves its input; clamp_backward's where((self >= min).logical_and_(self <= max), grad, 0)
  // holds two bool masks of the input's size while it writes the fresh gradient.
  const TensorId clamped =
      b.generic({"clamp", {qkv}, {{qs, b.dtype(qkv)}}, {0}, {}, {}, {}, {n, n}})[0];
  const auto parts = b.split(clamped, {{B, S, H}, {B, S, kvd}, {B, S, kvd}});
  const int64_t es = dtype_bytes(b.dtype(clamped));
  const TensorId q = b.view_copying_grad(parts[0], {B, nh, S, hd}, checked_mul(checked_mul(B, S), H) * es);
  const TensorId k = b.view_copying_grad(parts[1], {B, nkv, S, hd}, checked_mul(checked_mul(B, S), kvd) * es);
  const bool math_sdpa = b.dtype(clamped) == DType::f32 && nkv != nh;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor && !math_sdpa;
  const Shape vs{B, nkv, S, hd};
  const TensorId v = v_grad_in_layout ? b.view(parts[2], vs)
                                      : b.view_copying_grad(parts[2], vs, checked_mul(checked_mul(B, S), kvd) * es);
  b.hold(v);  // value_states until the module returns (or the cache update rebinds it)
  b.hold(q);
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, c.cos, c.sin);
  return attention_o_proj(b, s, qe, ke, v, v, c.mask, c.window, w.out_proj, kNoTensor, weights);
}

// DbrxFFN.forward (router, routing, the experts' loop; the header's statements).
TensorId ffn(GraphBuilder& b, const TransformerSpec& s, const DbrxLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], S = xs[1], H = s.hidden_size, E = s.num_experts, K = s.num_experts_per_tok,
                F = s.moe_intermediate_size;
  const int64_t T = checked_mul(B, S), R = checked_mul(T, K);
  const DType dt = b.dtype(x);
  if (b.training() && s.dbrx_moe_jitter) {
    // DbrxRouter: `hidden_states *= torch.empty_like(hidden_states).uniform_(1 - eps, 1 + eps)`, in place on the
    // FFN's input (the experts read the product too); MulBackward keeps the noise and writes a fresh gradient.
    const TensorId noise = b.generic_one("empty_like_uniform_", {}, xs, dt);
    x = b.inplace_fresh_grad("mul_", x, {noise});
  }
  const TensorId flat = b.view(x, {T, H});
  const TensorId logits = b.linear(flat, w.router);
  b.hold(logits);
  const TensorId probs = b.softmax_last(logits);
  b.hold(probs);  // router_logits inside route_tokens_to_experts until it returns
  auto top = b.generic({"topk", {probs}, {{{T, K}, b.dtype(probs)}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  TensorId top_w = top[0];
  if (s.dbrx_normalize_expert_weights) {
    // torch.norm(p, dim=-1, keepdim=True): NormBackward keeps its input and result; the quotient keeps both
    // operands.
    const TensorId nrm = b.generic({"norm", {top_w}, {{{T, 1}, b.dtype(top_w)}}, {0}, {0}, {}, {}})[0];
    top_w = b.binary("div", top_w, nrm, true, true);
  }
  b.hold(top_w);
  b.hold(top[1]);
  b.drop(probs);
  // DbrxExperts.forward
  const TensorId next = b.generic_one("zeros_like", {}, {T, H}, dt);
  b.hold(next);
  const TensorId mask = b.generic_one("one_hot", {}, {T, K, E}, DType::i64);
  b.hold(mask);  // expert_mask, bound until the experts return
  const TensorId hit = b.generic_one("nonzero", {}, {E, 1}, DType::i64);
  b.hold(hit);
  TensorId acc = next;
  std::vector<TensorId> loop_vars;  // the previous iteration's bindings, rebound by this one
  for (int64_t e = 0; e < E; ++e) {
    const int64_t ne = R / E + (e < R % E ? 1 : 0);
    if (ne == 0) continue;
    const TensorId where = b.generic_one("where", {}, {ne, 2}, DType::i64);
    // `mlp.<w>.view(E, F, H)[e]`: the zero-filled whole-parameter gradient reaches AccumulateGrad through
    // ViewBackward, as a view, so the first sum into its buffer is out of place.
    const TensorId v1 = b.select_param(w.v1, {F, H}, true);
    const TensorId w1 = b.select_param(w.w1, {F, H}, true);
    const TensorId w2 = b.select_param(w.w2, {H, F}, true);  // `@ w2` of the [F, H] slice: a linear by its transpose
    for (TensorId t : loop_vars) b.drop(t);
    loop_vars = {where, v1, w1, w2};
    for (TensorId t : loop_vars) b.hold(t);
    // DbrxExpertGLU.forward(x[token_idx], w1, v1, w2)
    // x, gate_proj (rebound to its activation), up_proj and intermediate_states are locals until the GLU returns.
    const TensorId xe = b.generic_one("index", {flat, where}, {ne, H}, dt, {1});
    b.hold(xe);
    const TensorId gate = b.linear(xe, w1);
    b.hold(gate);
    const TensorId up = b.linear(xe, v1);
    b.hold(up);
    const TensorId act = b.unary("silu", gate, true, false);
    b.hold(act);
    b.drop(gate);
    const TensorId inter = b.mul(act, up);
    b.hold(inter);
    const TensorId down = b.linear(inter, w2);
    for (TensorId t : {xe, act, up, inter}) b.drop(t);
    const TensorId tw = b.generic_one("index", {top_w, where}, {ne, 1}, b.dtype(top_w), {1});
    const TensorId states = b.mul(down, tw);
    b.hold(states);
    loop_vars.push_back(states);
    acc = b.inplace("index_add_", acc, false, {states, where});
  }
  for (TensorId t : loop_vars) b.drop(t);
  const TensorId out = b.view(acc, {B, S, H});
  for (TensorId t : {next, mask, hit, logits, top_w, top[1]}) b.drop(t);
  return out;
}

TensorId dbrx_block(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const DbrxLayer w = layer_params(b, s, "transformer.blocks." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  // DbrxNormAttentionNorm.forward
  TensorId n1 = layer_norm_no_bias(b, h, w.norm_1);
  b.hold(n1);
  TensorId attn_weights = kNoTensor;
  TensorId a = attention(b, s, w, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(b.dropout(a, s.resid_dropout), h);
  TensorId n2 = layer_norm_no_bias(b, h1, w.norm_2);
  if (attn_weights != kNoTensor) b.drop(attn_weights);  // `hidden_states, _ = self.attn(...)`: freed on return
  b.hold(n2);
  TensorId m = b.dropout(ffn(b, s, w, n2), s.resid_dropout);
  b.drop(n2);
  return b.add(h1, m);
}

}  // namespace

void build_dbrx(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts)
    throw InputError("model.ffn_config.moe_num_experts", std::to_string(s.num_experts),
                     "dbrx needs moe_num_experts >= moe_top_k >= 1");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.ffn_config.ffn_act_fn", s.hidden_act, "dbrx is modelled with silu");
  if (s.tie_word_embeddings)
    throw InputError("model.tie_word_embeddings", "true", "DbrxConfig refuses tied embeddings");
  SkeletonSpec k{"transformer.wte.weight", "transformer.norm_f", false, false, dbrx_block};
  k.final_norm = layer_norm_no_bias;
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
