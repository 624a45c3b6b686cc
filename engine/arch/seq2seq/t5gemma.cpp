// T5GemmaForConditionalGeneration (transformers 5.17 models/t5gemma/modeling_t5gemma.py), training forward + loss,
// or one inference pass with an EncoderDecoderCache (engine/inference_replay.cpp, as bart's and mbart's).
//
//   forward(input_ids, labels): decoder_input_ids = _shift_right(labels) (new_zeros, a clone of labels[..., :-1]
//     copied in, the start token written, masked_fill_(== -100, pad): BART's statements); T5GemmaModel: encoder,
//     decoder (encoder_attention_mask = the caller's attention_mask: None from the harness); logits =
//     lm_head.out_proj(hidden_states[:, -0:, :]) (a view), final logit softcapping (/ cap, tanh, * cap, each a new
//     tensor); loss_type "ForMaskedLM": logits.float() (a copy of 16-bit logits, bound until the loss returns),
//     cross entropy (mean) over [B*T, V] against the unshifted labels.
//   T5GemmaEncoder: inputs_embeds = embed_tokens(ids) (bound until it returns); position_ids = arange(S)[None];
//     attention_mask = (ids != pad_token_id).to(long) [B, S] (bound until it returns; the bool comparison dies at
//     once); create_bidirectional_mask / create_bidirectional_sliding_window_mask each turn it into a bool copy
//     and test padding_mask.all(): without padding both masks are None for SDPA and eager alike (eager_mask passes
//     allow_is_bidirectional_skip through), the sliding one only while S < sliding_window; h = inputs_embeds *
//     normalizer (a 0-dim CPU tensor: a fresh [B, S, d], nothing saved); dropout; rotary cos / sin [1, S, hd];
//     N x T5GemmaEncoderLayer; norm; dropout.
//   T5GemmaDecoder: the same over decoder_input_ids, with position_ids = arange(T) + 0, attention_mask =
//     (ids != pad).to(long) in training (a cache makes none in inference), create_causal_mask and
//     create_sliding_window_causal_mask: SDPA skips both (fast_all of the padding mask: a sum and a comparison)
//     while T < sliding_window; eager materialises both: ones(()) & causal [1, 1, T, T] & the padding mask gathered
//     [B, 1, 1, T] -> [B, 1, T, T] bool, then torch.where into the model dtype, held until the decoder returns. The
//     cross-attention mask (create_bidirectional_mask of None) is None.
//   Layers (Gemma 2's): h + post_norm(attn(pre_norm(h))) (decoder: then h + post_cross_norm(cross_attn(
//     pre_cross_norm(h), enc))), h + post_ff_norm(mlp(pre_ff_norm(h))); T5GemmaRMSNorm is GemmaRMSNorm
//     (gemma_rms_norm: the product with 1 + weight in fp32, then type_as(x)); MLP down(act(gate(x)) * up(x)).
//   Self-attention: q / k / v projections viewed [B, H, L, D], rotary on q and k, the cache update in inference,
//     SDPA (enable_gqa without a mask, the softcap ignored; the encoder's is_causal False) or eager (* scaling,
//     softcap: / cap, tanh, * cap, + mask when one exists, softmax in fp32, .to(q dtype), dropout, @ v).
//   Cross-attention: q of the decoder states; k / v of the encoder output (no rotary), stored in the cross
//     cache at the first inference step and read back later; no mask.
// Layer indices (grad_checkpointing_layers, frozen_layers): encoder layers 0..N-1, decoder layers N..N+M-1.
// Parameters in construction order (the harness builds on the device): encoder (embed_tokens, norm, layers,
// rotary_emb's two fp32 [hd / 2] buffers), decoder (the same, each layer's cross_attn and its norms after the MLP
// norms), lm_head.out_proj (tied to the decoder's embed_tokens with tie_word_embeddings: its own [V, d] weight
// exists until tie_weights()).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/gemma_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/kv_cache_update.h"
#include "engine/arch/seq2seq/bart_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// One stack's widths as a TransformerSpec (spec.h [t5gemma]): the decoder's are the spec's own fields, the
// encoder's the t5gemma_enc_* ones; num_layers is the stack's layer count.
TransformerSpec stack_spec(const TransformerSpec& s, bool decoder) {
  TransformerSpec t = s;
  if (decoder) {
    t.num_layers = s.num_decoder_layers;
    return t;
  }
  t.vocab_size = s.t5gemma_enc_vocab;
  t.hidden_size = s.t5gemma_enc_hidden;
  t.intermediate_size = s.t5gemma_enc_intermediate;
  t.num_heads = s.t5gemma_enc_heads;
  t.num_kv_heads = s.t5gemma_enc_kv_heads;
  t.head_dim = s.t5gemma_enc_head_dim;
  t.sliding_window = s.t5gemma_enc_sliding_window;
  t.sliding_layers = s.t5gemma_enc_sliding_layers;
  t.hidden_act = s.t5gemma_enc_act;
  t.attn_logit_softcapping = s.t5gemma_enc_attn_softcap;
  t.attention_bias = t.qkv_bias = t.o_bias = s.t5gemma_enc_attention_bias;
  return t;
}

struct AttnW {
  TensorId q = kNoTensor, qb = kNoTensor, k = kNoTensor, kb = kNoTensor, v = kNoTensor, vb = kNoTensor,
           o = kNoTensor, ob = kNoTensor;
};
struct LayerW {
  AttnW sa, ca;
  TensorId pre_sa = kNoTensor, post_sa = kNoTensor, gate = kNoTensor, up = kNoTensor, down = kNoTensor,
           pre_ff = kNoTensor, post_ff = kNoTensor, pre_ca = kNoTensor, post_ca = kNoTensor;
};
struct StackW {
  TensorId embed = kNoTensor, norm = kNoTensor;
  std::vector<LayerW> layers;
};

// T5GemmaSelfAttention / T5GemmaCrossAttention.__init__: q_proj, k_proj, v_proj, o_proj, each weight then its
// bias under attention_bias; k / v read `kv_in` features (the encoder's hidden size for cross-attention).
AttnW attn_params(GraphBuilder& b, const TransformerSpec& t, const std::string& p, int64_t kv_in, bool train) {
  const int64_t H = t.hidden_size, nh = t.num_heads, nkv = t.num_kv_heads, hd = t.head_dim;
  const bool bias = t.attention_bias;
  AttnW w;
  auto lin = [&](const char* name, int64_t out, int64_t in, TensorId& wt, TensorId& bt) {
    wt = b.param(p + name + ".weight", {out, in}, train);
    bt = bias ? b.param(p + name + ".bias", {out}, train) : kNoTensor;
  };
  lin("q_proj", nh * hd, H, w.q, w.qb);
  lin("k_proj", nkv * hd, kv_in, w.k, w.kb);
  lin("v_proj", nkv * hd, kv_in, w.v, w.vb);
  lin("o_proj", H, nh * hd, w.o, w.ob);
  return w;
}

// T5GemmaEncoder / T5GemmaDecoder.__init__: embed_tokens, norm, the layers (self_attn, pre / post self-attention
// norms, mlp, pre / post feed-forward norms; the decoder's cross_attn and its two norms after them), rotary_emb's
// inv_freq and original_inv_freq. get_input_embeddings() is the encoder's embed_tokens: freeze_embeddings freezes
// that one only.
StackW stack_params(GraphBuilder& b, const TransformerSpec& t, bool decoder, int64_t cross_in, int64_t base) {
  const auto& cfg = b.config();
  const bool train = b.training();
  const int64_t H = t.hidden_size, I = t.intermediate_size;
  const std::string prefix = decoder ? "model.decoder." : "model.encoder.";
  StackW sw;
  sw.embed = b.param(prefix + "embed_tokens.weight", {t.vocab_size, H}, train && (decoder || !cfg.freeze_embeddings));
  sw.norm = b.param(prefix + "norm.weight", {H}, train);
  for (int64_t i = 0; i < t.num_layers; ++i) {
    const std::string p = prefix + "layers." + std::to_string(i) + ".";
    const bool lt = train && !layer_frozen(cfg, base + i);
    LayerW w;
    w.sa = attn_params(b, t, p + "self_attn.", H, lt);
    w.pre_sa = b.param(p + "pre_self_attn_layernorm.weight", {H}, lt);
    w.post_sa = b.param(p + "post_self_attn_layernorm.weight", {H}, lt);
    w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, lt);
    w.up = b.param(p + "mlp.up_proj.weight", {I, H}, lt);
    w.down = b.param(p + "mlp.down_proj.weight", {H, I}, lt);
    w.pre_ff = b.param(p + "pre_feedforward_layernorm.weight", {H}, lt);
    w.post_ff = b.param(p + "post_feedforward_layernorm.weight", {H}, lt);
    if (decoder) {
      w.ca = attn_params(b, t, p + "cross_attn.", cross_in, lt);
      w.pre_ca = b.param(p + "pre_cross_attn_layernorm.weight", {H}, lt);
      w.post_ca = b.param(p + "post_cross_attn_layernorm.weight", {H}, lt);
    }
    sw.layers.push_back(w);
  }
  for (const char* nm : {"rotary_emb.inv_freq", "rotary_emb.original_inv_freq"})
    b.buffer(prefix + nm, {t.head_dim / 2}, DType::f32);
  return sw;
}

// `x = norm(x)` where nothing else holds x: the argument stays bound until the norm returns.
TensorId norm_rebinding(GraphBuilder& b, TensorId x, TensorId w) {
  b.hold(x);
  TensorId y = gemma_rms_norm(b, x, w);
  b.drop(x);
  return y;
}

TensorId activation(GraphBuilder& b, const std::string& act, TensorId x) {
  if (act == "relu") return b.unary("relu", x, false, true);
  return b.unary(act, x, true, false);
}

// Whether SDPA runs its math backend here (fp32 with grouped KV heads: enable_gqa is the math backend's only).
bool math_sdpa(const GraphBuilder& b, const TransformerSpec& t, TensorId qp) {
  return b.config().attn == AttnImpl::sdpa && b.dtype(qp) == DType::f32 && t.num_kv_heads != t.num_heads;
}

// The attention after the (cache-updated) k / v exist, as eager_attention_forward or sdpa_attention_forward run
// it: q [B, H, Lq, D], k / v [B, Hkv, Lk, D]. `k_base` / `v_base`: k / v as the projection's head views (training:
// torch.matmul copies them for bmm), kNoTensor where they are cache tensors (contiguous). `mask`: the float (eager)
// or bool (SDPA) mask, kNoTensor for none. `q_copies`: q's head view cannot merge its batch and head dims (more
// than one query). Returns the context [B, Lq, H, D]; `weights` receives eager's probabilities (held).
TensorId attention_core(GraphBuilder& b, const TransformerSpec& t, TensorId q, TensorId k, TensorId v, TensorId k_base,
                        TensorId v_base, TensorId mask, bool q_copies, TensorId& weights) {
  weights = kNoTensor;
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const Shape qs = b.shape(q);
  const int64_t B = qs[0], nh = qs[1], Lq = qs[2], hd = qs[3], nkv = b.shape(k)[1], Lk = b.shape(k)[2];
  auto repeat = [&](TensorId x) {
    if (nkv == nh) return x;
    return nkv == 1 ? b.view_copying_grad(x, {B, nh, Lk, hd}) : b.contiguous_copy(x, {B, nh, Lk, hd});
  };
  if (cfg.attn == AttnImpl::sdpa && mask == kNoTensor) {
    TensorId ctx = b.sdpa(q, k, v, t.attn_dropout, Lq > 1);  // enable_gqa: no repeat_kv
    if (inf && Lq > 1 && b.dtype(q) == DType::f32 && nkv != nh)  // math backend: transpose(1, 2).contiguous()
      ctx = b.contiguous_copy(ctx, {B, Lq, nh, hd});
    return ctx;
  }
  if (cfg.attn == AttnImpl::sdpa) {  // a mask disables enable_gqa (use_gqa_in_sdpa)
    TensorId kr = repeat(k), vr = repeat(v);
    return inf ? b.sdpa_masked_inference(q, kr, vr, mask) : b.sdpa(q, kr, vr, t.attn_dropout, false, mask);
  }
  TensorId kr = repeat(k), vr = repeat(v);
  b.hold(kr);
  b.hold(vr);
  auto copies = [&](TensorId x, TensorId base, TensorId base_of) {
    if (x == base_of) return base != kNoTensor;  // the projection's head view (training), not a cache tensor
    if (nkv != 1) return false;                  // repeat_kv's contiguous copy
    const bool cast_by_autocast = b.autocast() && b.dtype(x) != b.low_dtype();
    return B > 1 && !cast_by_autocast;
  };
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, kr, {B, nh, Lq, Lk}, q_copies, copies(kr, k_base, k)), false);
  if (t.attn_logit_softcapping > 0.0) {
    scores = b.scalar_op("div_scalar", scores, false);
    scores = b.unary("tanh", scores, false, true);
    scores = b.scalar_op("mul_scalar", scores, false);
  }
  TensorId masked = mask != kNoTensor ? b.add(scores, mask) : scores;
  b.hold(masked);
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(q));
  b.drop(masked);
  probs = b.dropout(probs, t.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.matmul(probs, vr, {B, nh, Lq, hd}, false, copies(vr, v_base, v));
  if (Lq > 1) ctx = b.contiguous_copy(ctx, {B, Lq, nh, hd}, /*grad_copied=*/true);
  b.drop(kr);
  b.drop(vr);
  return ctx;
}

// T5GemmaSelfAttention.forward on the normed x [B, L, d]: projections and head views, apply_rotary_pos_emb, the
// cache update when `cached` (an inference pass's decoder: kv_cat_update over the decoder's own `past` cached
// positions, since past_len counts the encoder prompt too; the encoder passes past_key_values=None), the attention,
// o_proj.
TensorId self_attention(GraphBuilder& b, const TransformerSpec& t, const AttnW& w, TensorId x, TensorId cos,
                        TensorId sin, TensorId mask, int64_t window, int64_t past, bool cached, TensorId& weights) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], L = xs[1], nh = t.num_heads, nkv = t.num_kv_heads, hd = t.head_dim;
  const TensorId qp = b.linear(x, w.q, w.qb);
  // q and k take contiguous gradients from the rotary backward (copied back by the transposed views); v's comes
  // in its own layout from a fused SDPA kernel without a mask, contiguous from bmm / repeat_kv's sum otherwise.
  const bool v_in_layout = b.config().attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa(b, t, qp);
  const TensorId q = b.view_copying_grad(qp, {B, nh, L, hd});
  const TensorId k = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, nkv, L, hd});
  const TensorId vp = b.linear(x, w.v, w.vb);
  const TensorId v_proj = v_in_layout ? b.view(vp, {B, nkv, L, hd}) : b.view_copying_grad(vp, {B, nkv, L, hd});
  b.hold(v_proj);  // value_states: bound until the module returns or the cache rebinds it
  b.hold(q);
  b.hold(k);
  const std::pair<TensorId, TensorId> qk = rope_qk(b, q, k, cos, sin);
  const TensorId qe = qk.first;
  TensorId ke = qk.second, v = v_proj;
  TensorId k_base = ke, v_base = v_proj;
  if (cached) {  // key_states / value_states rebound to what the cache returns
    const std::pair<TensorId, TensorId> kv = kv_cat_update(b, ke, v, past, window);
    b.drop(ke);
    b.drop(v_proj);
    ke = kv.first;
    v = kv.second;
    k_base = v_base = kNoTensor;
  }
  TensorId ctx = attention_core(b, t, qe, ke, v, k_base, v_base, mask, true, weights);
  TensorId out = b.linear(b.view(ctx, {B, L, nh * hd}), w.o, w.ob);
  b.drop(qe);
  b.drop(ke);
  if (!cached) b.drop(v_proj);
  return out;
}

// T5GemmaCrossAttention.forward on the normed decoder states x [B, L, d] over the encoder output `enc`
// [B, S, d_enc]. Inference: `past` 0 projects enc and stores k / v in the cross-attention cache (a cat onto an
// empty tensor: a copy), later steps read them back (past > 0).
TensorId cross_attention(GraphBuilder& b, const TransformerSpec& t, const AttnW& w, TensorId x, TensorId enc,
                         int64_t past, TensorId& weights) {
  const bool inf = !b.training();
  const bool eager = b.config().attn == AttnImpl::eager;
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], L = xs[1], S = b.shape(enc)[1], nh = t.num_heads, nkv = t.num_kv_heads,
                hd = t.head_dim;
  const TensorId qp = b.linear(x, w.q, w.qb);
  // No rotary: every gradient reaches its head view from the attention itself, in the view's layout from a fused
  // SDPA kernel, contiguous from eager's bmm or the math backend (then copied back).
  const bool copy_grads = !inf && (eager || math_sdpa(b, t, qp));
  auto heads = [&](TensorId p, int64_t n, int64_t len) {
    return copy_grads ? b.view_copying_grad(p, {B, n, len, hd}) : b.view(p, {B, n, len, hd});
  };
  const TensorId q = heads(qp, nh, L);
  b.hold(q);
  TensorId k, v, k_base = kNoTensor, v_base = kNoTensor;
  if (inf && past > 0) {  // is_updated: the stored keys / values
    const DType dt = b.autocast() ? b.low_dtype() : b.param_dtype();
    k = b.kv_cache_in({B, nkv, S, hd}, dt);
    b.kv_cache_out(k);
    v = b.kv_cache_in({B, nkv, S, hd}, dt);
    b.kv_cache_out(v);
  } else {
    const TensorId kp = heads(b.linear(enc, w.k, w.kb), nkv, S);
    b.hold(kp);
    const TensorId vp = heads(b.linear(enc, w.v, w.vb), nkv, S);
    b.hold(vp);
    k = kp;
    v = vp;
    k_base = kp;
    v_base = vp;
    if (inf) {  // curr_past_key_values.update: DynamicLayer's cat([empty, k]) and the same for v
      const TensorId kc = b.cat("kv_cat", {kp}, 2, b.dtype(kp));
      b.kv_cache_out(kc);
      b.hold(kc);
      const TensorId vc = b.cat("kv_cat", {vp}, 2, b.dtype(vp));
      b.kv_cache_out(vc);
      b.hold(vc);
      b.drop(kp);
      b.drop(vp);
      k = kc;
      v = vc;
      k_base = v_base = kNoTensor;
    }
  }
  TensorId ctx = attention_core(b, t, q, k, v, k_base, v_base, kNoTensor, L > 1, weights);
  TensorId out = b.linear(b.view(ctx, {B, L, nh * hd}), w.o, w.ob);
  b.drop(q);
  if (!(inf && past > 0)) {
    b.drop(k);
    b.drop(v);
  }
  return out;
}

// make_default_2d_attention_mask: (ids != pad_token_id).to(long), bound by the stack until it returns.
TensorId default_2d_mask(GraphBuilder& b, TensorId ids) {
  const Shape s = b.shape(ids);
  const TensorId ne = b.generic_one("ne", {ids}, s, DType::boolean);
  const TensorId m = b.generic_one("to_copy", {ne}, s, DType::i64);
  b.hold(m);
  return m;
}

// _preprocess_mask_arguments' attention_mask.to(bool) and the SDPA skip test on it (padding_mask.all(), or
// fast_all's sum and comparison), whose results die as the mask function returns None.
void skipped_mask_checks(GraphBuilder& b, TensorId mask2d, bool fast_all) {
  const TensorId pm = b.generic_one("to_copy", {mask2d}, b.shape(mask2d), DType::boolean);
  if (fast_all) {
    b.generic_one("eq", {b.generic_one("sum", {pm}, {}, DType::i64)}, {}, DType::boolean);
  } else {
    b.generic_one("all", {pm}, {}, DType::boolean);
  }
}

// A materialised mask over [B, 1, q, kv] with the 2-d padding mask folded in (and_masks(..., padding_mask_function)):
// the pattern's bool [1, 1, q, kv] pieces, the padding mask gathered [B, 1, 1, kv] and the & into [B, 1, q, kv];
// eager then torch.where's it into the model dtype. Returns the bool (SDPA) or float (eager) mask.
TensorId padded_mask(GraphBuilder& b, TensorId mask2d, int64_t q, int64_t kv, bool sliding, DType dt) {
  const int64_t B = b.config().batch_size;
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::boolean}}, {}, {}, {}, {}})[0];
  };
  const TensorId pm = b.generic_one("to_copy", {mask2d}, b.shape(mask2d), DType::boolean);
  b.hold(pm);
  TensorId r = op("and", {op("le", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  if (sliding) r = op("and", {r, op("gt", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  r = op("and", {r, op("index", {pm}, {B, 1, 1, kv})}, {B, 1, q, kv});
  b.drop(pm);
  if (b.config().attn == AttnImpl::sdpa) return r;
  return b.generic({"causal_mask", {r}, {{{B, 1, q, kv}, dt}}, {}, {}, {}, {}})[0];
}

// One stack's forward (training, or an inference pass's encoder / decoder step). `enc`: the encoder output
// (decoder only); `past`: cached decoder positions (inference), -1 in training. `base`: the stack's first layer
// index. Returns the output of norm (dropout p = 0 elsewhere is the identity).
TensorId stack(GraphBuilder& b, const TransformerSpec& t, const StackW& sw, TensorId ids, TensorId enc, int64_t past,
               int64_t base) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const bool decoder = enc != kNoTensor;
  const bool eager = cfg.attn == AttnImpl::eager;
  const int64_t L = b.shape(ids)[1], hd = t.head_dim;
  const std::string prefix = decoder ? "model.decoder.layers." : "model.encoder.layers.";
  const TensorId inputs_embeds = b.embedding(ids, sw.embed);
  b.hold(inputs_embeds);
  std::vector<TensorId> locals;  // bound until the stack returns
  // position_ids: the encoder's arange(S).unsqueeze(0); the decoder's arange(L) + past_seen_tokens
  TensorId pos = b.generic_one("arange", {}, {L}, DType::i64);
  if (decoder) pos = b.generic_one("add_scalar", {pos}, {L}, DType::i64);
  b.hold(pos);
  locals.push_back(pos);
  TensorId full_mask = kNoTensor, sliding_mask = kNoTensor;
  const DType dt = b.dtype(inputs_embeds);
  const int64_t W = t.sliding_window;
  if (!decoder || !inf) {
    const TensorId m2d = default_2d_mask(b, ids);
    locals.push_back(m2d);
    if (!decoder) {
      // create_bidirectional_mask: skipped without padding (sdpa and eager); the sliding one while S < window
      skipped_mask_checks(b, m2d, false);
      if (W > 0 && L >= W) {
        sliding_mask = padded_mask(b, m2d, L, L, true, dt);
      } else {
        skipped_mask_checks(b, m2d, false);
      }
    } else if (eager) {
      full_mask = padded_mask(b, m2d, L, L, false, dt);
      sliding_mask = padded_mask(b, m2d, L, L, true, dt);
    } else {
      skipped_mask_checks(b, m2d, true);  // create_causal_mask: _ignore_causal_mask_sdpa
      if (W > 0 && L >= W) {
        sliding_mask = padded_mask(b, m2d, L, L, true, dt);
      } else {
        skipped_mask_checks(b, m2d, true);
      }
    }
  } else if (eager) {
    // a decoder step with a cache: no 2-d mask; eager's causal masks [B, 1, L, kv] from a [1, 1, L, kv] bool
    full_mask = eager_mask(b, 1, L, past + L, dt);
    sliding_mask = eager_mask(b, 1, L, (W > 0 ? std::min(past, W - 1) : past) + L, dt);
  }
  for (TensorId m : {full_mask, sliding_mask})
    if (m != kNoTensor) {
      b.hold(m);
      locals.push_back(m);
    }
  // hidden_states = inputs_embeds * normalizer (a 0-dim CPU tensor of the embeddings' dtype); dropout
  TensorId h = b.dropout(b.scalar_op("mul", inputs_embeds, false), t.embd_dropout);
  const std::pair<TensorId, TensorId> cs = rotary_cos_sin(b, 1, L, hd, b.dtype(h));
  const TensorId cos = cs.first, sin = cs.second;
  b.hold(cos);
  b.hold(sin);
  for (size_t i = 0; i < sw.layers.size(); ++i) {
    const LayerW& w = sw.layers[i];
    const int64_t li = base + static_cast<int64_t>(i);
    b.begin_layer(prefix + std::to_string(i), !inf && layer_checkpointed(cfg, li));
    const TensorId layer_in = h;
    b.hold(layer_in);
    const bool sliding = layer_is_sliding(t, static_cast<int64_t>(i));
    TensorId w1 = kNoTensor, w2 = kNoTensor;
    TensorId n1 = gemma_rms_norm(b, h, w.pre_sa);
    b.hold(n1);
    TensorId a = self_attention(b, t, w.sa, n1, cos, sin, sliding ? sliding_mask : full_mask,
                                sliding ? W : 0, past < 0 ? 0 : past, decoder && inf, w1);
    b.drop(n1);
    a = norm_rebinding(b, a, w.post_sa);
    h = b.add(h, b.dropout(a, t.resid_dropout));
    if (decoder) {
      const TensorId residual = h;
      b.hold(residual);
      TensorId n2 = gemma_rms_norm(b, h, w.pre_ca);
      b.hold(n2);
      a = cross_attention(b, t, w.ca, n2, enc, past < 0 ? 0 : past, w2);
      b.drop(n2);
      if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
      w1 = kNoTensor;
      a = norm_rebinding(b, a, w.post_ca);
      h = b.add(residual, b.dropout(a, t.resid_dropout));
      b.drop(residual);
    }
    const TensorId residual = h;
    b.hold(residual);
    TensorId n3 = gemma_rms_norm(b, h, w.pre_ff);
    b.hold(n3);
    TensorId g = activation(b, t.hidden_act, b.linear(n3, w.gate));
    TensorId m = b.dropout(b.mul(g, b.linear(n3, w.up)), t.resid_dropout);
    m = b.linear(m, w.down);
    b.drop(n3);
    m = norm_rebinding(b, m, w.post_ff);
    h = b.add(residual, b.dropout(m, t.resid_dropout));
    b.drop(residual);
    for (TensorId x : {w1, w2})
      if (x != kNoTensor) b.drop(x);
    b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = gemma_rms_norm(b, h, sw.norm);
  b.drop(h);
  hn = b.dropout(hn, t.resid_dropout);
  b.drop(cos);
  b.drop(sin);
  for (TensorId x : locals) b.drop(x);
  b.drop(inputs_embeds);
  return hn;
}

// Gemma2-style final logit softcapping: logits / cap; tanh; * cap (each statement rebinds `logits`).
TensorId final_softcap(GraphBuilder& b, const TransformerSpec& s, TensorId logits) {
  if (s.final_logit_softcapping <= 0.0) return logits;
  logits = b.scalar_op("div_scalar", logits, false);
  logits = b.unary("tanh", logits, false, true);
  return b.scalar_op("mul_scalar", logits, false);
}

struct Model {
  TransformerSpec enc_t, dec_t;
  StackW enc_w, dec_w;
  TensorId head = kNoTensor;
};

// All parameters and buffers in construction order; the tied head's own weight as a construction temporary.
Model build_params(GraphBuilder& b, const TransformerSpec& s) {
  Model m{stack_spec(s, false), stack_spec(s, true), {}, {}, kNoTensor};
  hf_construction_scalar(b);
  m.enc_w = stack_params(b, m.enc_t, false, 0, 0);
  m.dec_w = stack_params(b, m.dec_t, true, m.enc_t.hidden_size, s.num_layers);
  const bool train = b.training();
  if (s.tie_word_embeddings) {
    m.head = b.tied_param("lm_head.out_proj.weight", m.dec_w.embed, train);
    b.construction_temp(b.info(m.dec_w.embed).bytes);  // lm_head.out_proj's own weight before tie_weights()
  } else {
    m.head = b.param("lm_head.out_proj.weight", {s.vocab_size, s.hidden_size}, train && !b.config().freeze_embeddings);
  }
  return m;
}

void build_inference(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len;
  const int64_t past = seq2seq_decoder_past(b, "t5gemma");
  const Model m = build_params(b, s);
  const TensorId enc = seq2seq_encoder_output(b, m.enc_t.hidden_size, [&] {
    const TensorId ids = b.input({B, S}, DType::i64);
    return stack(b, m.enc_t, m.enc_w, ids, kNoTensor, -1, 0);
  });
  const TensorId dec_ids = b.input({B, 1}, DType::i64);
  const TensorId h = stack(b, m.dec_t, m.dec_w, dec_ids, enc, past, s.num_layers);
  // logits_to_keep (generate: 1; the measured forward: 0, every position): one position either way
  TensorId logits = final_softcap(b, s, b.linear(h, m.head));
  seq2seq_inference_end(b, logits, enc);
}

}  // namespace

void build_t5gemma(GraphBuilder& b, const TransformerSpec& s) {
  if (s.t5gemma_enc_hidden <= 0)
    throw InputError("model.model_type", s.model_type, "has no T5Gemma encoder fields (models/hf/import_t5gemma.cpp)");
  if (!b.training()) {
    build_inference(b, s);
    return;
  }
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, T = cfg.target_len > 0 ? cfg.target_len : cfg.seq_len;
  const Model m = build_params(b, s);
  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = b.input({B, T}, DType::i64);
  const TensorId dec_ids = bart_shift_tokens_right(b, labels);  // _shift_right: the same statements, held
  const TensorId enc = stack(b, m.enc_t, m.enc_w, ids, kNoTensor, -1, 0);
  b.hold(enc);  // encoder_outputs: bound until forward returns
  const TensorId h = stack(b, m.dec_t, m.dec_w, dec_ids, enc, -1, s.num_layers);
  b.hold(h);  // decoder_outputs.last_hidden_state: bound until forward returns
  const TensorId logits = final_softcap(b, s, b.linear(h, m.head));  // hidden_states[:, -0:, :]: a view
  b.mark_model_end();
  b.hold(logits);  // the output's logits
  // ForMaskedLMLoss: logits = logits.float() (a local until it returns), view(-1, V), labels.view(-1), mean CE
  const TensorId f = b.to(logits, DType::f32);
  b.hold(f);
  const int64_t BT = checked_mul(B, T);
  const TensorId loss = b.cross_entropy(b.view(f, {BT, s.vocab_size}), b.view(labels, {BT}));
  b.drop(f);
  b.drop(logits);
  for (TensorId x : {h, enc, dec_ids}) b.drop(x);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
