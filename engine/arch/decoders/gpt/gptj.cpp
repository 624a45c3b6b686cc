// GPTJForCausalLM (transformers 5.17 models/gptj/modeling_gptj.py), training forward + causal-LM loss, or one
// inference pass with the DynamicCache. Eager attention only: GPTJ_ATTENTION_CLASSES has eager and
// flash_attention_2, and from_config refuses attn_implementation "sdpa" for it, so the builder does too.
//   GPTJModel.forward: inputs_embeds = wte(ids) (bound until forward returns); position_ids (arange); the eager
//     causal mask [B, 1, S, kv] in the embeddings' dtype; drop (embd_pdrop); the blocks, each call's returned
//     tuple (hidden_states, attn_weights) bound to `outputs` until the next block has returned (the last one
//     until forward returns); ln_f.
//   GPTJBlock: n = ln_1(h); attn_outputs, _ = attn(n); ff = mlp(n); out = attn_outputs + ff + h (n, attn_outputs
//     and ff bound until the block returns; it returns (out, attn_weights)).
//   GPTJAttention.forward: q / k / v projections without bias; q and k viewed [B, S, nh, hd], v viewed and
//     permuted to [B, nh, S, hd]; embed_positions.repeat(P, 1, 1) (a fresh fp32 [P, n_positions, rot] copy of the
//     sinusoid table), position ids repeated to [P, S, rot], gathered (fp32) and cast to the keys' dtype, split
//     into sin and cos [P, S, rot / 2]; k[..., :rot] / k[..., rot:] and the same for q; apply_rotary_pos_emb on
//     k_rot then q_rot: sin and cos repeat_interleave'd to [P, S, 1, rot], x * cos + rotate_every_two(x) * sin,
//     rotate_every_two = stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2); key = cat(k_rot, k_pass), then
//     query; both permuted to [B, nh, S, hd]; the cache update (inference); _attn: query.to(fp32), key.to(fp32),
//     matmul (copies of the permuted operands), / scale_attn, + mask, softmax (fp32 here, even under autocast: the
//     scores are fp32 after the mask), .to(value dtype), dropout, matmul with value; _merge_heads
//     (permute.contiguous()), out_proj, resid_dropout. Every local stays bound until forward returns.
//   GPTJMLP: fc_in -> ACT2FN[activation_function] (gelu_new) -> fc_out -> dropout, biased.
// Registration order: wte, per block ln_1, attn k_proj, v_proj, q_proj, out_proj, the attention's non-persistent
// embed_positions buffer (fp32 [n_positions, rot] whatever the model dtype: create_sinusoidal_positions ends in
// .float()), mlp fc_in, fc_out, then ln_f, lm_head (weight and bias; the weight tied to wte only when
// tie_word_embeddings).
#include "engine/arch/builders.h"

#include <algorithm>

#include "engine/arch/decoders/parts/gpt_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct GptjLayer {
  TensorId ln_w, ln_b, k, v, q, o, table, fc_in, fc_in_b, fc_out, fc_out_b;
};

GptjLayer gptj_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  const std::string p = "transformer.h." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  GptjLayer w;
  w.ln_w = param("ln_1.weight", {H});
  w.ln_b = param("ln_1.bias", {H});
  w.k = param("attn.k_proj.weight", {H, H});
  w.v = param("attn.v_proj.weight", {H, H});
  w.q = param("attn.q_proj.weight", {H, H});
  w.o = param("attn.out_proj.weight", {H, H});
  w.table = b.buffer(p + "attn.embed_positions", {s.max_position_embeddings, s.rotary_dim}, DType::f32);
  w.fc_in = param("mlp.fc_in.weight", {I, H});
  w.fc_in_b = param("mlp.fc_in.bias", {I});
  w.fc_out = param("mlp.fc_out.weight", {H, I});
  w.fc_out_b = param("mlp.fc_out.bias", {H});
  return w;
}

// GPTJAttention.forward on the normed input x; `weights` receives _attn's attention weights (returned to the block).
TensorId gptj_attention(GraphBuilder& b, const TransformerSpec& s, const GptjLayer& w, TensorId x,
                        TensorId position_ids, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, hd = s.head_dim, rot = s.rotary_dim;
  const int64_t P = b.shape(position_ids)[0];
  std::vector<TensorId> locals;  // bound until forward returns
  auto bound = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  // Projections: q / k viewed [B, S, nh, hd] (their gradients come back contiguous from the rotary / cat
  // backward); v viewed and permuted [B, nh, S, hd], a view whose gradient from the bmm arrives contiguous
  // [B, nh, S, hd] and is copied back by the reshape of the permuted view.
  const TensorId q = bound(b.view(b.linear(x, w.q), {B, S, nh, hd}));
  const TensorId k = bound(b.view(b.linear(x, w.k), {B, S, nh, hd}));
  const TensorId vp = b.linear(x, w.v);
  TensorId v = bound(inf ? b.view(vp, {B, nh, S, hd}) : b.view_copying_grad(vp, {B, nh, S, hd}));
  // _get_embed_positions: embed_positions.repeat(P, 1, 1); position_ids.unsqueeze(-1).repeat(1, 1, rot); gather,
  // then .to(key.dtype) (the fp32 gather result a temporary when it casts).
  const TensorId table = bound(b.generic_one("repeat", {w.table}, {P, s.max_position_embeddings, rot}, DType::f32));
  const TensorId rep_ids = bound(b.generic_one("repeat", {position_ids}, {P, S, rot}, DType::i64));
  const TensorId gathered = b.generic_one("gather", {table, rep_ids}, {P, S, rot}, DType::f32);
  const TensorId sincos = bound(b.to(gathered, b.dtype(k)));
  const TensorId sin = b.view(sincos, {P, S, rot / 2});
  const TensorId cos = b.view(sincos, {P, S, rot / 2});
  Shape rs{B, S, nh, rot}, ps{B, S, nh, hd - rot};
  // k[..., :rot], k[..., rot:], then q's: views whose SliceBackward zero-fills a gradient of the whole head.
  TensorId k_rot = b.split(k, 1, rs)[0];
  const TensorId k_pass = b.split(k, 1, ps)[0];
  TensorId q_rot = b.split(q, 1, rs)[0];
  const TensorId q_pass = b.split(q, 1, ps)[0];
  k_rot = bound(gptj_apply_rotary(b, k_rot, sin, cos));
  q_rot = bound(gptj_apply_rotary(b, q_rot, sin, cos));
  TensorId key = bound(b.cat_last("cat", {k_rot, k_pass}));
  const TensorId query = bound(b.cat_last("cat", {q_rot, q_pass}));
  // key / query.permute(0, 2, 1, 3): views [B, nh, S, hd]; the cat backward takes their gradients as they come.
  TensorId kq = b.view(key, {B, nh, S, hd});
  const TensorId qq = b.view(query, {B, nh, S, hd});
  int64_t Lk = S;
  if (inf) {
    // `key, value = layer_past.update(key, value)` rebinds both: the key cat output and the value projection die
    // with the statement (q_pass / k_pass keep the q and k projections).
    auto [kc, vc] = kv_update(b, kq, v, 0);
    for (TensorId t : {key, v}) {
      locals.erase(std::find(locals.begin(), locals.end(), t));
      b.drop(t);
    }
    kq = bound(kc);
    v = bound(vc);
    Lk = b.shape(kc)[2];
  }
  // _attn: query.to(fp32), key.to(fp32) (locals of _attn; copies keep the permuted strides, so matmul copies
  // them again for bmm unless they are the cache's contiguous cat outputs), scores fp32.
  const TensorId q32 = b.to(qq, DType::f32);
  b.hold(q32);
  const TensorId k32 = b.to(kq, DType::f32);
  b.hold(k32);
  TensorId scores = b.matmul(q32, k32, {B, nh, S, Lk}, true, !inf);
  scores = b.scalar_op("div_scalar", scores, false);  // / self.scale_attn
  if (mask != kNoTensor) scores = b.add(scores, mask);
  TensorId probs = b.to(b.softmax_last(scores), b.dtype(v));
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.matmul(probs, v, {B, nh, S, hd}, false, !inf);
  b.drop(q32);
  b.drop(k32);
  ctx = b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);  // _merge_heads: permute.contiguous()
  TensorId out = b.linear(b.view(ctx, {B, S, H}), w.o);
  for (TensorId t : locals) b.drop(t);
  return b.dropout(out, s.resid_dropout);
}

}  // namespace

void build_gptj(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "GPT-J has no SDPA attention in transformers 5.17 (from_config refuses it): use eager");
  const GptModelParams<GptjLayer> mp = gpt_model_params<GptjLayer>(b, s, false, gptj_layer_params);
  parallel_block_causal_lm(b, s, mp, [&](const GptjLayer& w, TensorId n, TensorId position_ids, TensorId mask,
                                         TensorId& weights) {
    return gptj_attention(b, s, w, n, position_ids, mask, weights);
  });
}

}  // namespace memplan
