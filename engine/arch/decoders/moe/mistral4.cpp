// Mistral4ForCausalLM (transformers 5.17 models/mistral4/modeling_mistral4.py; Mistral-Small-4-119B-2603's text
// model): DeepSeek-V3's multi-head latent attention and shared-expert MoE with two differences that change the
// ops, so the statements are written here rather than borrowed from deepseek_parts.cpp (which keeps its own):
//   - Mistral4Attention scales query_states by get_llama_4_attn_scale(position_ids) (a [P, 1, S, 1] factor, cast to
//     the query's dtype) after the q cat, a rebinding product: the cat's output dies there;
//   - Mistral4TopkRouter: F.linear in the model's dtype (no fp32 upcast), softmax scores (fp32 only under autocast),
//     group top-2 sums, group mask, masked_fill(0.0), top-k, weights gathered from the scores, norm_topk_prob,
//     * routed_scaling_factor.
// Shared read-only: the routed experts (deepseek_parts.h experts_grouped_mm: transformers' default grouped_mm,
// batched_mm in generate()'s decode steps), Mistral4MLP = llama_parts.h swiglu_mlp, Mistral4RotaryEmbedding =
// rotary_cos_sin (LlamaRotaryEmbedding over qk_rope_head_dim dims), the masks, the cache update and
// the causal-LM heads.
//
// Stages: embed_tokens -> position_ids (arange + past, when the caller passes none) -> causal mask (eager: float;
// SDPA training: none) -> rotary cos / sin [P, S, rope] -> N x decoder layer -> norm -> lm_head -> loss (training)
// or the last logits (inference).
//   Attention: q_b_proj(q_a_layernorm(q_a_proj(x))) (or q_proj) viewed [B, H, S, qk], split into q_pass / q_rot;
//   compressed_kv = kv_a_proj_with_mqa(x) split into the latent (kv_a_layernorm, viewed [B, 1, S, kv_lora_rank])
//   and the shared rope key [B, 1, S, rope]; rope on q_rot / k_rot; the DynamicCache stores both latents;
//   query_states = cat(q_pass, q_rot) * scale; expand_kv: kv_b_proj(latent) viewed [B, H, L, nope + v], split, a
//   new_empty key [B, H, L, qk] with both parts copied in; attention; transposed back; o_proj.
//   MLP: Mistral4MLP in the first first_k_dense_replace layers, then Mistral4MoE: router, routed experts, then the
//   shared experts' MLP over the same input, added.
#include <tuple>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// A tensor computed without autograd history (routing bookkeeping used only for indices).
TensorId no_grad(GraphBuilder& b, std::string_view name, Shape shape, DType t, std::vector<TensorId> reads = {}) {
  return b.generic({name, std::move(reads), {{std::move(shape), t}}, {}, {}, {}, {}})[0];
}

// Mistral4RMSNorm.forward: x.to(f32), variance = pow(2).mean(-1) (bound until forward returns), x * rsqrt(var +
// eps) (bound until return), weight * x.to(input dtype).
TensorId m4_rms_norm(GraphBuilder& b, TensorId x, TensorId w) {
  const DType in_dt = b.dtype(x);
  TensorId x32 = b.to(x, DType::f32);
  TensorId var = b.reduce_last("mean", b.pow_scalar(x32), false);
  b.hold(var);
  TensorId n = b.mul(x32, b.unary("rsqrt", b.add_scalar(var), false, true, true));
  b.hold(n);
  TensorId y = b.mul(w, b.to(n, in_dt));
  b.drop(n);
  b.drop(var);
  return y;
}

// get_llama_4_attn_scale(position_ids, beta, original_max_position_embeddings)[:, None, :, None].to(dt):
// 1 + beta * log(1 + floor(position_ids / max)), each operator an fp32 [P, S] temporary (no autograd: integer
// positions), viewed [P, 1, S, 1], then cast to the query's dtype (a copy unless fp32).
TensorId llama4_attn_scale(GraphBuilder& b, TensorId position_ids, int64_t P, int64_t S, DType dt) {
  TensorId x = position_ids;
  for (const char* op : {"div", "floor", "add_scalar", "log", "mul_scalar", "add_scalar"})
    x = no_grad(b, op, {P, S}, DType::f32, {x});
  return b.to(b.view(x, {P, 1, S, 1}), dt);
}

// apply_rotary_pos_emb_interleave on one of q_rot / k_rot: half-width cos / sin views, the even / odd slices x1,
// x2 (strided views), cat(x1 cos - x2 sin, x2 cos + x1 sin); apply_rotary_pos_emb (rope_interleave False): llama's.
TensorId rope_one(GraphBuilder& b, const TransformerSpec& s, TensorId cos, TensorId sin, TensorId x) {
  if (!s.rope_interleave) return rope(b, x, cos, sin);
  Shape half = b.shape(x);
  half.back() /= 2;
  Shape cs = b.shape(cos);
  cs.back() /= 2;
  const TensorId c = b.view(cos, cs), sn = b.view(sin, cs);
  const TensorId x1 = b.select_param(x, half), x2 = b.select_param(x, half);
  TensorId first = b.sub(b.mul(x1, c), b.mul(x2, sn));
  TensorId second = b.add(b.mul(x2, c), b.mul(x1, sn));
  return b.cat_last("cat", {first, second});
}

// The attention from query_states / key_states / value_states on (sdpa_attention_forward or
// eager_attention_forward with num_key_value_groups 1), returning the output [B, S, H, v] (contiguous).
TensorId attention_core(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k, TensorId v, TensorId mask,
                        TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = b.shape(q)[2], nh = s.num_heads, vd = s.v_head_dim, L = b.shape(k)[2];
  weights = kNoTensor;
  if (cfg.attn == AttnImpl::sdpa) {
    TensorId out = inf && mask != kNoTensor ? b.sdpa_masked_inference(q, k, v, mask)
                                            : b.sdpa(q, k, v, s.attn_dropout, true);
    return b.contiguous_copy(out, {B, S, nh, vd});  // transpose(1, 2).contiguous() of a [B, H, S, v] output
  }
  // scores = matmul(q, k^T) * scaling + mask; softmax(dtype=float32).to(q.dtype) in one statement; dropout;
  // matmul with value_states (a strided split view: matmul copies it); transposed back.
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, S, L}), false);
  TensorId masked = mask != kNoTensor ? b.add(scores, mask) : scores;
  b.hold(masked);
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(q));
  b.drop(masked);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  return b.contiguous_copy(b.matmul(probs, v, {B, nh, S, vd}, false, true), {B, S, nh, vd}, /*grad_copied=*/true);
}

struct Rope {
  TensorId cos = kNoTensor, sin = kNoTensor, position_ids = kNoTensor;
  int64_t rows = 1;
};

// Mistral4Attention.forward on the normed input x.
TensorId mla_attention(GraphBuilder& b, const TransformerSpec& s, const DeepseekMla& w, const Rope& rot, TensorId x,
                       TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim, qk = nope + rd, kvr = s.kv_lora_rank,
                vd = s.v_head_dim;
  TensorId qlin;
  if (s.q_lora_rank == 0) {
    qlin = b.linear(x, w.q);
  } else {
    // q_b_proj(q_a_layernorm(q_a_proj(x))): the frame holds q_a_proj's output, the norm's argument, until the
    // norm returns.
    const TensorId qa = b.linear(x, w.q_a, w.q_a_b);
    b.hold(qa);
    const TensorId qn = m4_rms_norm(b, qa, w.q_a_norm);
    b.drop(qa);
    qlin = b.linear(qn, w.q_b);
  }
  // q_states.view(...).transpose(1, 2): the split's backward returns a contiguous [B, H, S, qk] gradient, which the
  // transposed view's reshape copies.
  const TensorId q = b.view_copying_grad(qlin, {B, nh, S, qk});
  b.hold(q);  // q_states: bound until forward returns
  const auto qparts = b.split(q, 2, {B, nh, S, nope});
  const TensorId q_pass = qparts[0];
  const TensorId q_rot_in = b.view(qparts[1], {B, nh, S, rd});
  const TensorId ckv = b.linear(x, w.kv_a, w.kv_a_b);
  b.hold(ckv);  // compressed_kv
  const auto kparts = b.split(ckv, 2, {B, S, kvr});
  TensorId k_pass = b.view(m4_rms_norm(b, kparts[0], w.kv_a_norm), {B, 1, S, kvr});
  TensorId k_rot_in = b.view(kparts[1], {B, 1, S, rd});
  b.hold(k_pass);
  b.hold(q_rot_in);
  b.hold(k_rot_in);
  const TensorId q_rot = rope_one(b, s, rot.cos, rot.sin, q_rot_in);
  b.hold(q_rot);
  TensorId k_rot = rope_one(b, s, rot.cos, rot.sin, k_rot_in);
  b.hold(k_rot);
  b.drop(q_rot_in);
  b.drop(k_rot_in);
  if (inf) {  // past_key_values.update(k_pass, k_rot): the cache cats both, the locals rebind
    auto [lc, kc] = kv_update(b, k_pass, k_rot, 0);
    b.drop(k_pass);
    b.drop(k_rot);
    k_pass = lc;
    k_rot = kc;
    b.hold(k_pass);
    b.hold(k_rot);
  }
  // Under autocast q_rot is fp32 (a 16-bit slice times fp32 cos / sin) and q_pass 16-bit: the cat promotes, and
  // its backward casts q_pass's part of the gradient back to 16 bits (a fresh buffer; glm4's measured mechanism).
  const TensorId cat = b.cat("cat", {q_pass, q_rot}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(cat);
  // query_states = query_states * get_llama_4_attn_scale(...).to(query_states.dtype): rebinds, the cat dies.
  const TensorId query = b.mul(cat, llama4_attn_scale(b, rot.position_ids, rot.rows, S, b.dtype(cat)));
  b.hold(query);
  b.drop(cat);
  const int64_t L = b.shape(k_pass)[2];
  // expand_kv(k_pass, k_rot)
  const TensorId kvb = b.view_copying_grad(b.linear(k_pass, w.kv_b), {B, nh, L, nope + vd});
  const auto kvparts = b.split(kvb, 2, {B, nh, L, nope});
  const TensorId k_nope = kvparts[0];
  const TensorId value = b.view(kvparts[1], {B, nh, L, vd});
  b.hold(value);
  const TensorId k_rot_h = b.view(k_rot, {B, nh, L, rd});  // expand: no storage of its own
  // key_states = new_empty(...); two copy_ into its slices (CopySlices: backward clones the incoming gradient).
  const int64_t key_bytes =
      checked_mul(checked_mul(checked_mul(B, nh), checked_mul(L, qk)), dtype_bytes(b.dtype(k_nope)));
  auto ks = b.generic({"new_empty_copy_", {k_nope, k_rot_h}, {{{B, nh, L, qk}, b.dtype(k_nope)}}, {}, {}, {}, {key_bytes}});
  const TensorId key = ks[0];
  b.hold(key);
  TensorId ctx = attention_core(b, s, query, key, value, mask, weights);
  TensorId out = b.linear(b.view(ctx, {B, S, nh * vd}), w.o, w.o_b);
  for (TensorId t : {q, ckv, k_pass, q_rot, k_rot, query, value, key}) b.drop(t);
  return out;
}

// Mistral4TopkRouter.forward over flat [T, H]: returns (router_logits, topk_weights, topk_indices), all three held
// (the MoE binds them until it returns); every other local lives until the router returns.
struct Route {
  TensorId logits = kNoTensor, weights = kNoTensor, indices = kNoTensor;
};
Route m4_route(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w) {
  const int64_t T = b.shape(flat)[0], E = s.num_experts, K = s.num_experts_per_tok, G = s.moe_n_group,
                TG = s.moe_topk_group;
  Route r;
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
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0)
    throw InputError("model.kv_lora_rank", std::to_string(s.kv_lora_rank), "multi-head latent attention needs it > 0");
  if (s.num_kv_heads != s.num_heads)
    throw InputError("config.num_key_value_heads", std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) +
                         ") for multi-head latent attention: transformers repeats the expanded keys otherwise and "
                         "the attention fails");
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  std::vector<DeepseekLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(deepseek_layer_params(b, s, i, !layer_frozen(cfg, i)));
  TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  TensorId head = s.tie_word_embeddings ? embed : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  TensorId position_ids = kNoTensor;
  if (P > 1) position_ids = b.input({B, S}, DType::i64);  // generate() passes position_ids [B, S]
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  // position_ids = torch.arange(S) + past_seen_tokens, unsqueezed: the arange dies once the sum exists, the sum
  // stays bound until the model's forward returns.
  if (P == 1) {
    const TensorId ar = no_grad(b, "arange", {S}, DType::i64);
    position_ids = no_grad(b, "add", {1, S}, DType::i64, {ar});
  }
  b.hold(position_ids);
  TensorId mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, S, S, b.dtype(h));
  } else {
    mask = inference_mask(b, 0, b.dtype(h));
  }
  if (mask != kNoTensor) b.hold(mask);
  Rope rot;
  rot.position_ids = position_ids;
  rot.rows = P;
  // Mistral4RotaryEmbedding is LlamaRotaryEmbedding's forward over qk_rope_head_dim dims (llama_parts.h).
  std::tie(rot.cos, rot.sin) = rotary_cos_sin(b, P, S, s.qk_rope_head_dim, b.dtype(h));
  b.hold(inputs_embeds);
  b.hold(rot.cos);
  b.hold(rot.sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const DeepseekLayer& d = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = m4_rms_norm(b, h, d.in_norm);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId a = mla_attention(b, s, d.attn, rot, n1, mask, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = m4_rms_norm(b, h1, d.post_norm);
    b.hold(n2);
    TensorId m;
    if (!d.moe) {
      m = swiglu_mlp(b, n2, d.mlp.gate, d.mlp.up, d.mlp.down);
    } else {
      const int64_t T = checked_mul(B, S);
      TensorId flat = b.view(n2, {T, H});
      Route r = m4_route(b, s, flat, d.router);  // `_, topk_weights, topk_indices`: bound until the MoE returns
      TensorId routed = b.view(experts_grouped_mm(b, d.experts, flat, r.weights, r.indices), {B, S, H});
      m = b.add(routed, swiglu_mlp(b, n2, d.mlp.gate, d.mlp.up, d.mlp.down));
      for (TensorId x : {r.weights, r.indices, r.logits}) b.drop(x);
    }
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = m4_rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, rot.cos, rot.sin, mask, position_ids})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
