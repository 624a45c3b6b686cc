// GptOssForCausalLM (transformers 5.17 models/gpt_oss/modeling_gpt_oss.py), training forward + causal-LM loss
// or one inference pass.
//   embed_tokens -> both masks (create_causal_mask, create_sliding_window_causal_mask: the eager attention gets
//   them materialised) -> rotary cos / sin [P, S, D/2] (no cat(freqs, freqs)) -> N x decoder layer -> norm
//   -> lm_head -> loss.
//   Decoder layer: h + o_proj(attn(norm(h))), then h + experts(router(norm(h))) (GptOssMLP; the router scores
//   it returns are bound to `_` until the layer returns).
//   GptOssRMSNorm: (weight * x_normed).to(input dtype): the product is in fp32 (unlike llama's norm).
//   _apply_rotary_emb: chunk(x, 2), first * cos - second * sin, second * cos + first * sin, cat: the rotated
//   q / k are contiguous [B, H, S, D] (cat's layout), so matmul copies neither.
//   eager_attention_forward with sinks: repeat_kv, scores * scaling + mask, cat with the per-head sink logits
//   expanded to [B, H, S, 1], minus the row max (max(dim=-1, keepdim)), softmax in the scores' dtype, the sink
//   column dropped (a slice view), dropout, .to(value dtype), matmul with the values, transposed back.
//   GptOssTopKRouter: F.linear with bias -> topk -> softmax over the k values (in their dtype).
//   GptOssExperts (experts_grouped_mm, engine/arch/decoders/parts/deepseek_parts.h): biased, transposed weights, the
//   interleaved clamp / sigmoid gate.
// GptOssPreTrainedModel has _supports_sdpa = False: from_config(attn_implementation="sdpa") raises, so sdpa is
// refused here (flash / flex kernels are not modelled).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct GptOssLayer {
  TensorId q, qb, k, kb, v, vb, o, ob, sinks, router, router_b;
  ExpertsParams experts;
  TensorId in_norm, post_norm;
};

GptOssLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim, E = s.num_experts,
                I = s.intermediate_size;
  const bool bias = s.attention_bias;
  GptOssLayer l{};
  auto opt = [&](const std::string& name, Shape shape) { return bias ? b.param(name, std::move(shape), train) : kNoTensor; };
  l.q = b.param(p + "self_attn.q_proj.weight", {nh * hd, H}, train);
  l.qb = opt(p + "self_attn.q_proj.bias", {nh * hd});
  l.k = b.param(p + "self_attn.k_proj.weight", {nkv * hd, H}, train);
  l.kb = opt(p + "self_attn.k_proj.bias", {nkv * hd});
  l.v = b.param(p + "self_attn.v_proj.weight", {nkv * hd, H}, train);
  l.vb = opt(p + "self_attn.v_proj.bias", {nkv * hd});
  l.o = b.param(p + "self_attn.o_proj.weight", {H, nh * hd}, train);
  l.ob = opt(p + "self_attn.o_proj.bias", {H});
  l.sinks = b.param(p + "self_attn.sinks", {nh}, train);
  l.router = b.param(p + "mlp.router.weight", {E, H}, train);
  l.router_b = b.param(p + "mlp.router.bias", {E}, train);
  ExpertsParams& e = l.experts;
  e.experts = E;
  e.top_k = s.num_experts_per_tok;
  e.inter = I;
  e.gpt_oss_gate = true;
  e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, H, 2 * I}, train);
  e.gate_up_bias = b.param(p + "mlp.experts.gate_up_proj_bias", {E, 2 * I}, train);
  e.down = b.param(p + "mlp.experts.down_proj", {E, I, H}, train);
  e.down_bias = b.param(p + "mlp.experts.down_proj_bias", {E, H}, train);
  l.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  l.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return l;
}

// GptOssRMSNorm: x.to(f32), pow(2).mean, x * rsqrt(var + eps), then (weight * x) in fp32, .to(input dtype).
TensorId gpt_oss_norm(GraphBuilder& b, TensorId x, TensorId w) {
  const DType in_dt = b.dtype(x);
  TensorId x32 = b.to(x, DType::f32);
  TensorId var = b.reduce_last("mean", b.pow_scalar(x32), false);
  b.hold(var);  // `variance` is bound until forward returns (as in DeepseekV3RMSNorm's recorded stream)
  TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  TensorId n = b.mul(x32, r);
  b.hold(n);  // `hidden_states` stays bound through the return statement
  TensorId y = b.to(b.mul(w, n), in_dt);
  b.drop(n);
  b.drop(var);
  return y;
}

// _apply_rotary_emb for one of q / k.
TensorId rope_halves(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  Shape half = b.shape(x);
  half.back() /= 2;
  const auto parts = b.split(x, 2, half);
  const TensorId x1 = parts[0], x2 = parts[1];
  TensorId first = b.add(b.mul(x1, cos), b.mul(x2, sin));   // first * cos - second * sin
  TensorId second = b.add(b.mul(x2, cos), b.mul(x1, sin));  // second * cos + first * sin
  return b.cat_last("cat", {first, second});
}

TensorId attention(GraphBuilder& b, const TransformerSpec& s, const GptOssLayer& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask, int64_t window, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // The q / k views' gradients come back from the rotary's chunk as contiguous [B, H, S, D] buffers, which the
  // transposed views' reshape copies; v's from repeat_kv's sum or a bmm, contiguous too.
  TensorId q = b.view_copying_grad(b.linear(x, w.q, w.qb), {B, nh, S, hd});
  TensorId k = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, nkv, S, hd});
  TensorId v = b.view_copying_grad(b.linear(x, w.v, w.vb), {B, nkv, S, hd});
  b.hold(v);
  b.hold(q);
  b.hold(k);
  TensorId qe = rope_halves(b, q, cos, sin);
  b.hold(qe);
  TensorId ke = rope_halves(b, k, cos, sin);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  const TensorId v_proj = v;
  if (inf) {
    auto [kc, vc] = kv_update(b, ke, v, window);
    b.drop(ke);
    b.drop(v_proj);
    ke = kc;
    v = vc;
    b.hold(ke);
    b.hold(v);
  }
  const int64_t L = b.shape(ke)[2];
  TensorId kr = ke, vr = v;
  if (nkv != nh) {  // repeat_kv: expand + reshape copies
    kr = b.contiguous_copy(ke, {B, nh, L, hd});
    vr = b.contiguous_copy(v, {B, nh, L, hd});
  }
  b.hold(kr);
  b.hold(vr);
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, kr, {B, nh, S, L}), false);
  if (mask != kNoTensor) scores = b.add(scores, mask);
  // `attn_weights` (the masked scores) stays bound until the dropout statement rebinds it, and
  // `combined_logits` (the shifted logits) until the function returns (whole-run inference stream).
  b.hold(scores);
  // sinks.reshape(1, -1, 1, 1).expand(B, -1, S, -1): a view of the parameter; its gradient is summed back.
  TensorId sinks = b.view(w.sinks, {B, nh, S, 1});
  TensorId combined = b.cat_last("cat", {scores, sinks});
  b.hold(combined);
  const Shape cs = b.shape(combined);
  // combined.max(dim=-1, keepdim=True).values: max_backward scatters into a zero-filled full-size gradient.
  auto mx = b.generic({"max_dim", {combined}, {{{B, nh, S, 1}, b.dtype(combined)}, {{B, nh, S, 1}, DType::i64}}, {}, {1}, {}, {}});
  TensorId shifted = b.add(combined, mx[0]);  // combined - max
  b.drop(combined);
  b.hold(shifted);
  TensorId probs = b.softmax_last(shifted);
  b.hold(probs);
  TensorId kept = b.select_param(probs, {cs[0], cs[1], cs[2], cs[3] - 1});  // probs[..., :-1]
  TensorId attn_w = b.to(b.dropout(kept, s.attn_dropout), b.dtype(vr));
  weights = attn_w;
  b.hold(weights);
  b.drop(scores);
  b.drop(probs);
  TensorId ctx = b.contiguous_copy(b.matmul(attn_w, vr, {B, nh, S, hd}, false, vr == v && !inf), {B, S, nh, hd},
                                   /*grad_copied=*/true);
  b.drop(kr);
  b.drop(vr);
  b.drop(shifted);
  TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), w.o, w.ob);
  b.drop(qe);
  b.drop(ke);
  b.drop(v);
  if (!inf) b.drop(v_proj);
  return out;
}

}  // namespace

void build_gpt_oss(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     "gpt_oss has no SDPA attention in transformers 5.17 (GptOssPreTrainedModel._supports_sdpa is "
                     "False: from_config raises); use eager");
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, T = checked_mul(B, S);
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  std::vector<GptOssLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(layer_params(b, s, i, !layer_frozen(cfg, i)));
  TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train) : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  // position_ids = torch.arange(S) + past_seen_tokens, unsqueezed, when the caller passes none (a plain forward:
  // training and the harness's prefill; generate() passes its own): the arange is freed once the sum exists, the
  // sum stays bound until the model's forward returns (whole-run deepseek_v3 stream: two 8 KiB blocks).
  TensorId position_ids = kNoTensor;
  if (P == 1) {
    const TensorId ar = b.generic({"arange", {}, {{{S}, DType::i64}}, {}, {}, {}, {}})[0];
    position_ids = b.generic({"add", {ar}, {{{1, S}, DType::i64}}, {}, {}, {}, {}})[0];
    b.hold(position_ids);
  }
  // causal_mask_mapping: the full mask, then the sliding one (both materialised for eager attention).
  TensorId full_mask, sliding_mask = kNoTensor;
  if (!inf) {
    full_mask = eager_mask(b, 1, S, S, b.dtype(h));
    if (s.sliding_window > 0) sliding_mask = eager_mask(b, 1, S, S, b.dtype(h));
  } else {
    full_mask = inference_mask(b, 0, b.dtype(h));
    if (s.sliding_window > 0) sliding_mask = inference_mask(b, s.sliding_window, b.dtype(h));
  }
  for (TensorId m : {full_mask, sliding_mask})
    if (m != kNoTensor) b.hold(m);
  const auto [cos, sin] = half_rotary_cos_sin(b, P, S, s.head_dim, b.dtype(h));
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const GptOssLayer& w = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = gpt_oss_norm(b, h, w.in_norm);
    b.hold(n1);
    const bool sliding = layer_is_sliding(s, i);
    TensorId attn_weights = kNoTensor;
    TensorId a = attention(b, s, w, n1, cos, sin, sliding ? sliding_mask : full_mask, sliding ? s.sliding_window : 0,
                           attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = gpt_oss_norm(b, h1, w.post_norm);
    b.hold(n2);
    TensorId flat = b.view(n2, {T, H});
    // GptOssTopKRouter
    TensorId logits = b.linear(flat, w.router, w.router_b);
    auto top = b.generic({"topk", {logits}, {{{T, s.num_experts_per_tok}, b.dtype(logits)}, {{T, s.num_experts_per_tok}, DType::i64}},
                          {}, {1}, {}, {}});
    TensorId scores = b.softmax_last(top[0]);
    b.hold(scores);  // router_scores: returned by the MLP, bound to `_` until the layer returns
    TensorId m = b.view(experts_grouped_mm(b, w.experts, flat, scores, top[1]), {B, S, H});
    b.drop(n2);
    h = b.add(h1, m);
    b.drop(scores);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = gpt_oss_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, cos, sin, full_mask, sliding_mask, position_ids})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
