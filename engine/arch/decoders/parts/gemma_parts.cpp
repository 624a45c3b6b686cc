// The Gemma decoders, op by op as transformers 5.17 runs them (gemma_parts.h names the three modelling files).
//   GemmaTextScaledWordEmbedding: embedding(ids) * embed_scale (a 0-dim buffer of the model dtype), a fresh tensor
//   masks (create_causal_mask, and for gemma2/3 create_sliding_window_causal_mask) -> rotary cos/sin (gemma3: one
//   pair per layer type, all bound in the position_embeddings dict until forward returns) -> N x DecoderLayer ->
//   norm -> lm_head (-> final logit softcapping) -> loss.
//   DecoderLayer (gemma): h + attn(input_layernorm(h)), then + mlp(post_attention_layernorm(.)).
//   DecoderLayer (gemma2/3): h + post_attention_layernorm(attn(input_layernorm(h))), then
//   + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(.))).
//   Attention: q/k/v projections, (gemma3: q_norm / k_norm over the head-split views), RoPE, the DynamicCache
//   update in inference, SDPA (which drops any softcap: integrations/sdpa_attention.py takes none) or eager
//   (gemma2: scores * scaling, / cap, tanh, * cap, + mask, softmax in fp32, .to(q dtype), @ v).
//   MLP: down(act(gate(x)) * up(x)) with hidden_activation (gelu_pytorch_tanh: one kernel saving its input).
#include "engine/arch/decoders/parts/gemma_parts.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

TensorId gemma_rms_norm(GraphBuilder& b, TensorId x, TensorId w) {
  const DType in_dt = b.dtype(x);
  TensorId x32 = b.to(x, DType::f32);  // x.float(): bound as _norm's x until _norm returns
  TensorId sq = b.pow_scalar(x32);
  TensorId var = b.reduce_last("mean", sq, false);
  TensorId ve = b.add_scalar(var);
  TensorId r = b.unary("rsqrt", ve, false, true, true);
  TensorId n = b.mul(x32, r);                                // `output`, rebound by the weight product
  TensorId w1 = b.add_scalar(b.to(w, DType::f32));           // 1.0 + self.weight.float()
  TensorId y32 = b.mul(n, w1);
  return b.to(y32, in_dt);                                   // output.type_as(x)
}

namespace {

// `x = norm(x)`: the variable (and the norm's own `x` parameter) keeps the input bound until the norm returns
// (whole-run streams: the q projection and the attention / MLP outputs are freed after the norm's last kernel,
// not after the x.float() copy). Only for inputs nothing else holds.
TensorId norm_rebinding(GraphBuilder& b, TensorId x, TensorId w) {
  b.hold(x);
  TensorId y = gemma_rms_norm(b, x, w);
  b.drop(x);
  return y;
}

// Registration order (model.parameters(), which orders the optimizer's temporaries): self_attn (q, k, v, o with
// their biases under attention_bias; gemma3 then q_norm, k_norm), mlp (gate, up, down), input_layernorm,
// post_attention_layernorm (gemma2/3: pre_feedforward_layernorm, post_feedforward_layernorm).
GemmaLayerParams layer_params(GraphBuilder& b, const TransformerSpec& s, GemmaVersion v, const std::string& p,
                              bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, hd = s.head_dim;
  GemmaLayerParams w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  if (v == GemmaVersion::v3) {
    w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
    w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  }
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_attn_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  if (v != GemmaVersion::v1) {
    w.pre_ffn_norm = b.param(p + "pre_feedforward_layernorm.weight", {H}, train);
    w.post_ffn_norm = b.param(p + "post_feedforward_layernorm.weight", {H}, train);
  }
  return w;
}

}  // namespace

TensorId gemma_activation(GraphBuilder& b, const std::string& act, TensorId x) {
  if (act == "relu") return b.unary("relu", x, false, true);
  return b.unary(act, x, true, false);
}

namespace {

// The attention from the cache update on: sdpa_attention_forward or the modelling file's eager_attention_forward.
// It differs from llama_parts.h attention_core in two statements the Gemma models reach:
//  - repeat_kv of a single KV head (gemma-2b, gemma-3-1b: MQA) is a view, not a copy: expand(B, 1, n, S, D) then
//    reshape merges a size-1 dim with the stride-0 one (whole-run gemma3 stream: no K/V copies before a masked
//    cuDNN SDPA). torch.matmul in eager attention then copies the expanded operand for bmm (its batch and head dims
//    cannot merge when B > 1), unless autocast's cast already made it contiguous (a stride-0 view is cast to a
//    contiguous tensor).
//  - gemma2's eager attention softcaps the scores: * scaling, / cap, tanh (saves its result), * cap, + mask.
// Lifetimes as in attention_core (key/value_states bound until the function returns, the masked scores through
// the softmax statement, the probabilities by the decoder layer).
TensorId attention_core_gemma(GraphBuilder& b, const TransformerSpec& s, double softcap, TensorId qe, TensorId& ke,
                              TensorId& v, TensorId v_proj, TensorId mask, int64_t window, TensorId& weights) {
  weights = kNoTensor;
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  int64_t Lk = S;
  if (inf) {  // key_states / value_states rebind to what the cache returns
    auto [kc, vc] = kv_update(b, ke, v, window);
    b.drop(ke);
    b.drop(v_proj);
    ke = kc;
    v = vc;
    Lk = b.shape(kc)[2];
  }
  // repeat_kv: a copy for grouped heads, a view for one KV head (whose backward, ExpandBackward, sums the
  // gradient into a fresh tensor of the single head's size).
  auto repeat = [&](TensorId x) {
    if (nkv == nh) return x;
    return nkv == 1 ? b.view_copying_grad(x, {B, nh, Lk, hd}) : b.contiguous_copy(x, {B, nh, Lk, hd});
  };
  if (cfg.attn == AttnImpl::sdpa && mask == kNoTensor) {
    TensorId ctx = b.sdpa(qe, ke, v, s.attn_dropout, true);  // enable_gqa: no repeat_kv
    if (inf && b.dtype(qe) == DType::f32 && nkv != nh)  // math backend: transpose(1, 2).contiguous() copies
      ctx = b.contiguous_copy(ctx, {B, S, nh, hd});
    return ctx;
  }
  if (cfg.attn == AttnImpl::sdpa) {  // a mask disables enable_gqa (use_gqa_in_sdpa)
    TensorId kr = repeat(ke), vr = repeat(v);
    return inf ? b.sdpa_masked_inference(qe, kr, vr, mask) : b.sdpa(qe, kr, vr, s.attn_dropout, false, mask);
  }
  TensorId kr = repeat(ke), vr = repeat(v);
  b.hold(kr);
  b.hold(vr);
  // Whether torch.matmul's reshape copies the (post-autocast) operand: a head-split projection view (training,
  // no repeat copy) or an expanded single KV head with B > 1 that autocast did not already cast.
  auto copies = [&](TensorId x, TensorId base) {
    if (x == base) return !inf;  // k / v as the projection left them ([B, S, H, D] memory order)
    if (nkv != 1) return false;  // repeat_kv's contiguous copy
    const bool cast_by_autocast = b.autocast() && b.dtype(x) != b.low_dtype();
    return B > 1 && !cast_by_autocast;
  };
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, kr, {B, nh, S, Lk}, true, copies(kr, ke)), false);
  if (softcap > 0.0) {
    scores = b.scalar_op("div_scalar", scores, false);
    scores = b.unary("tanh", scores, false, true);
    scores = b.scalar_op("mul_scalar", scores, false);
  }
  TensorId masked = b.add(scores, mask);
  b.hold(masked);
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(qe));
  b.drop(masked);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}, false, copies(vr, v)), {B, S, nh, hd},
                                   /*grad_copied=*/true);
  b.drop(kr);
  b.drop(vr);
  return ctx;
}

}  // namespace

TensorId gemma_attention(GraphBuilder& b, const TransformerSpec& s, GemmaVersion ver, const GemmaLayerParams& w,
                         TensorId x, TensorId cos, TensorId sin, TensorId mask, int64_t window, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                hd = s.head_dim;
  auto [q, k, v] = llama_qkv_views(b, s, w, x, mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  if (ver == GemmaVersion::v3) {  // query_states = self.q_norm(query_states); the same for the keys
    q = norm_rebinding(b, q, w.q_norm);
    k = norm_rebinding(b, k, w.k_norm);
  }
  b.hold(q);  // apply_rotary_pos_emb(q, k, ...): both rebound once both are rotated
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);
  const double softcap = ver == GemmaVersion::v2 ? s.attn_logit_softcapping : 0.0;  // eager only
  TensorId ctx = attention_core_gemma(b, s, softcap, qe, ke, v, v_proj, mask, window, weights);
  TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), w.o, w.ob);
  b.drop(qe);
  b.drop(ke);
  if (!inf) b.drop(v_proj);
  return out;
}

TensorId gemma_final_softcap(GraphBuilder& b, const TransformerSpec& s, TensorId logits) {
  if (s.final_logit_softcapping <= 0.0) return logits;
  logits = b.scalar_op("div_scalar", logits, false);
  logits = b.unary("tanh", logits, false, true);
  return b.scalar_op("mul_scalar", logits, false);
}

TensorId gemma_text_model(GraphBuilder& b, const TransformerSpec& s, GemmaVersion v, TensorId h, int64_t P,
                          const GemmaMasks* given) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  const TensorId inputs_embeds = h;
  const DType dt = b.dtype(h);

  // Masks: create_causal_mask, then (gemma2/3) create_sliding_window_causal_mask; eager materialises both
  // whatever the lengths, SDPA skips the full one and the sliding one while the window covers the sequence.
  const bool hybrid = v != GemmaVersion::v1;
  TensorId mask = kNoTensor, sliding_mask = kNoTensor;
  if (given) {
    mask = given->full;
    sliding_mask = given->sliding;
  } else if (!inf) {
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, 1, S, S, dt);
      if (hybrid) sliding_mask = eager_mask(b, 1, S, S, dt);
    } else if (hybrid && s.sliding_window > 0 && S >= s.sliding_window) {
      sliding_mask = sliding_sdpa_mask(b, 1, S, S);
    }
  } else {
    mask = inference_mask(b, 0, dt);
    if (hybrid && s.sliding_window > 0) sliding_mask = inference_sliding_mask(b, s.sliding_window, dt);
  }
  if (!given)
    for (TensorId m : {mask, sliding_mask})
      if (m != kNoTensor) b.hold(m);  // the mask mapping lives until the model's forward returns

  // Rotary embeddings: one (gemma, gemma2), or one per layer type present (gemma3: a local-base one for sliding
  // layers, the global one with its rope scaling for full layers), all kept in position_embeddings.
  bool any_sliding = false, any_full = false;
  for (int64_t i = 0; i < s.num_layers; ++i) (layer_is_sliding(s, i) ? any_sliding : any_full) = true;
  TensorId cos_full = kNoTensor, sin_full = kNoTensor, cos_slide = kNoTensor, sin_slide = kNoTensor;
  if (v == GemmaVersion::v3) {
    if (any_sliding) std::tie(cos_slide, sin_slide) = rotary_cos_sin(b, P, S, hd, dt);
    if (any_full) std::tie(cos_full, sin_full) = rotary_cos_sin(b, P, S, hd, dt);
  } else {
    std::tie(cos_full, sin_full) = rotary_cos_sin(b, P, S, hd, dt);
    cos_slide = cos_full;
    sin_slide = sin_full;
  }
  b.hold(inputs_embeds);
  std::vector<TensorId> rotary_held;
  for (TensorId t : {cos_full, sin_full, cos_slide, sin_slide})
    if (t != kNoTensor) {
      b.hold(t);
      rotary_held.push_back(t);
    }

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const GemmaLayerParams w = layer_params(b, s, v, p, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = gemma_rms_norm(b, h, w.in_norm);
    b.hold(n1);
    const bool sliding = layer_is_sliding(s, i);
    TensorId attn_weights = kNoTensor;
    TensorId a = gemma_attention(b, s, v, w, n1, sliding ? cos_slide : cos_full, sliding ? sin_slide : sin_full,
                           sliding ? sliding_mask : mask, sliding ? s.sliding_window : 0, attn_weights);
    b.drop(n1);
    if (v != GemmaVersion::v1) a = norm_rebinding(b, a, w.post_attn_norm);
    TensorId h1 = b.add(h, a);
    TensorId n2 = gemma_rms_norm(b, h1, v == GemmaVersion::v1 ? w.post_attn_norm : w.pre_ffn_norm);
    b.hold(n2);
    TensorId g = gemma_activation(b, s.hidden_act, b.linear(n2, w.gate));
    TensorId m = b.linear(b.mul(g, b.linear(n2, w.up)), w.down);
    b.drop(n2);
    if (v != GemmaVersion::v1) m = norm_rebinding(b, m, w.post_ffn_norm);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = gemma_rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  b.drop(h);
  b.drop(inputs_embeds);
  for (TensorId t : rotary_held) b.drop(t);
  if (!given)
    for (TensorId m : {mask, sliding_mask})
      if (m != kNoTensor) b.drop(m);
  return hn;
}

void build_gemma_decoder(GraphBuilder& b, const TransformerSpec& s, GemmaVersion v) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  // GemmaTextScaledWordEmbedding.embed_scale: a 0-dim buffer of the default dtype, made right after the weight
  // (whole-run recordings: a 2-byte bf16 / 4-byte fp32 block after the embedding).
  b.buffer("embed_tokens.embed_scale", {}, b.param_dtype());
  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows (generate: from the mask)
  if (P > 1) b.input({B, S}, DType::i64);
  // GemmaTextScaledWordEmbedding: embedding(ids) * embed_scale.to(weight dtype) (a 0-dim buffer: MulBackward keeps
  // only it, the gradient is a fresh tensor).
  TensorId h = b.scalar_op("mul", b.embedding(ids, embed), false);
  TensorId hn = gemma_text_model(b, s, v, h, P, nullptr);
  TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train) : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);  // the head's own weight before tie_weights()
  if (inf) {
    Shape hs = b.shape(hn);
    const int64_t keep = cfg.logits_to_keep;
    if (keep > 0 && keep < hs[1]) hs[1] = keep;
    TensorId logits = gemma_final_softcap(b, s, b.linear(b.view(hn, hs), head));
    b.hold(logits);  // the output holds the logits
    b.mark_model_end();
    return;
  }
  b.hold(hn);  // the CausalLM forward keeps hidden_states bound until it returns
  TensorId logits = gemma_final_softcap(b, s, b.linear(hn, head));
  b.mark_model_end();
  TensorId loss = causal_lm_loss(b, logits, ids);
  b.drop(hn);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
