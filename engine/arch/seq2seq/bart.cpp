// BartForConditionalGeneration (transformers 5.17 models/bart/modeling_bart.py), training forward + seq2seq loss,
// or one inference pass with an EncoderDecoderCache.
//
//   forward(input_ids, labels): decoder_input_ids = shift_tokens_right(labels) (new_zeros, a clone of
//     labels[:, :-1] copied in, the start token written, masked_fill_(== -100, pad)); BartModel: encoder, decoder;
//     lm_logits = lm_head(decoder output) + final_logits_bias (a [1, V] buffer of the default dtype: under amp the
//     bf16 logits plus the fp32 bias give fresh fp32 logits); CrossEntropyLoss over [B*T, V].
//   BartEncoder: inputs_embeds = embed_tokens(ids) * embed_scale (BartScaledWordEmbedding: the product is a new
//     tensor, by 1.0 without scale_embedding); embed_pos = embed_positions(ids) [B, S, d] (arange expanded, + 2);
//     both bound until the encoder returns; h = layernorm_embedding(inputs_embeds + embed_pos); dropout; layers.
//   BartDecoder: the same over decoder_input_ids, its positions from cache_position ([1, T, d], broadcast in the
//     sum); the causal mask only for eager (SDPA runs is_causal without one).
//   Post-LN layers: h = norm(h + dropout(self_attn(h))); decoder: h = norm(h + dropout(encoder_attn(h, enc)));
//     h = norm(h + dropout(fc2(dropout(act(fc1(h)), activation_dropout)))); the encoder layer's fp16 check
//     (isinf(h).any() or isnan(h).any()) runs under fp16 weights.
//   BartAttention: q / k / v projections (with biases) viewed [B, H, L, D] (transposes), the attention with
//     scaling D^-0.5 (SDPA; eager: matmul * scaling, + mask, softmax, dropout, matmul, transpose.contiguous),
//     reshape, out_proj.
// Layer indices (grad_checkpointing_layers, frozen_layers): encoder layers 0..N-1, decoder layers N..N+M-1.
#include <string>
#include <tuple>

#include "engine/arch/seq2seq/bart_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

BartAttnParams bart_attn_params(GraphBuilder& b, int64_t d, const std::string& p, bool train, bool k_bias) {
  BartAttnParams w;
  w.k = b.param(p + "k_proj.weight", {d, d}, train);
  w.kb = k_bias ? b.param(p + "k_proj.bias", {d}, train) : kNoTensor;
  w.v = b.param(p + "v_proj.weight", {d, d}, train);
  w.vb = b.param(p + "v_proj.bias", {d}, train);
  w.q = b.param(p + "q_proj.weight", {d, d}, train);
  w.qb = b.param(p + "q_proj.bias", {d}, train);
  w.o = b.param(p + "out_proj.weight", {d, d}, train);
  w.ob = b.param(p + "out_proj.bias", {d}, train);
  return w;
}

std::pair<TensorId, TensorId> bart_norm_params(GraphBuilder& b, const std::string& name, int64_t d, bool train) {
  const TensorId w = b.param(name + ".weight", {d}, train);
  return {w, b.param(name + ".bias", {d}, train)};
}

TensorId bart_shift_tokens_right(GraphBuilder& b, TensorId labels) {
  const Shape sh = b.shape(labels);
  const int64_t B = sh[0], T = sh[1];
  TensorId dec_ids = b.generic_one("new_zeros", {}, {B, T}, DType::i64);
  const TensorId shifted = b.generic_one("clone", {labels}, {B, T > 1 ? T - 1 : 1}, DType::i64);
  dec_ids = b.inplace("copy_", dec_ids, false, {shifted});
  const TensorId eq = b.generic_one("eq", {dec_ids}, {B, T}, DType::boolean);
  dec_ids = b.inplace("masked_fill_", dec_ids, false, {eq});
  b.hold(dec_ids);
  return dec_ids;
}

std::vector<BartLayerParams> bart_stack_layer_params(GraphBuilder& b, const TransformerSpec& s, bool decoder,
                                                     bool train) {
  const auto& cfg = b.config();
  const int64_t n = decoder ? s.num_decoder_layers : s.num_layers, base = decoder ? s.num_layers : 0;
  std::vector<BartLayerParams> layers;
  for (int64_t i = 0; i < n; ++i)
    layers.push_back(
        bart_layer_params(b, s, bart_stack_prefix(decoder), i, decoder, train && !layer_frozen(cfg, base + i)));
  return layers;
}

void check_seq2seq_lengths(const RunConfig& cfg, int64_t limit, const std::string& why) {
  if (cfg.seq_len > limit) throw InputError("seq_len", std::to_string(cfg.seq_len), why);
  if (cfg.mode == Mode::training && cfg.target_len > limit)
    throw InputError("target_len", std::to_string(cfg.target_len), why);
  if (cfg.mode == Mode::inference && cfg.generate_tokens > limit)
    throw InputError("generate_tokens", std::to_string(cfg.generate_tokens), why);
}

int64_t seq2seq_decoder_past(const GraphBuilder& b, const std::string& family) {
  const int64_t past_len = b.pass().past_len;
  const int64_t past = past_len == 0 ? 0 : past_len - b.config().seq_len + 1;
  if (past < 0)
    throw InputError("inference.past_len", std::to_string(past_len), "is shorter than the " + family + " prompt");
  return past;
}

void seq2seq_inference_end(GraphBuilder& b, TensorId logits, TensorId enc) {
  b.hold(logits);
  b.mark_model_end();
  b.drop(enc);
  b.exit_autocast();
}

void seq2seq_lm_loss(GraphBuilder& b, TensorId logits, TensorId labels, std::initializer_list<TensorId> bound) {
  const int64_t BT = checked_mul(b.shape(labels)[0], b.shape(labels)[1]), V = b.shape(logits).back();
  b.mark_model_end();
  b.hold(logits);
  const TensorId loss = b.cross_entropy(b.view(logits, {BT, V}), b.view(labels, {BT}));
  b.drop(logits);
  for (TensorId t : bound) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

BartLayerParams bart_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& prefix, int64_t i,
                                  bool decoder, bool train, bool k_bias) {
  const int64_t d = s.hidden_size, f = decoder ? s.decoder_intermediate_size : s.intermediate_size;
  const std::string p = prefix + "layers." + std::to_string(i) + ".";
  BartLayerParams w;
  w.sa = bart_attn_params(b, d, p + "self_attn.", train, k_bias);
  std::tie(w.sa_ln_w, w.sa_ln_b) = bart_norm_params(b, p + "self_attn_layer_norm", d, train);
  if (decoder) {
    w.ca = bart_attn_params(b, d, p + "encoder_attn.", train, k_bias);
    std::tie(w.ca_ln_w, w.ca_ln_b) = bart_norm_params(b, p + "encoder_attn_layer_norm", d, train);
  }
  w.fc1 = b.param(p + "fc1.weight", {f, d}, train);
  w.fc1_b = b.param(p + "fc1.bias", {f}, train);
  w.fc2 = b.param(p + "fc2.weight", {d, f}, train);
  w.fc2_b = b.param(p + "fc2.bias", {d}, train);
  std::tie(w.ln_w, w.ln_b) = bart_norm_params(b, p + "final_layer_norm", d, train);
  return w;
}

namespace {

// The cache's entry for one k / v: DynamicLayer.update's cat([cached, new], dim=-2), a fresh tensor each step
// (the first step's cat of an empty tensor copies too).
TensorId cache_cat(GraphBuilder& b, TensorId x, int64_t past) {
  TensorId full;
  if (past == 0) {
    full = b.cat("kv_cat", {x}, 2, b.dtype(x));
  } else {
    Shape old = b.shape(x);
    old[2] = past;
    full = b.cat("kv_cat", {b.kv_cache_in(old, b.dtype(x)), x}, 2);
  }
  b.kv_cache_out(full);
  return full;
}

}  // namespace

TensorId bart_attention(GraphBuilder& b, const TransformerSpec& s, const BartAttnParams& w, TensorId h, TensorId kv_src,
                        bool causal, TensorId mask, int64_t heads, int64_t cache_past, TensorId& weights,
                        const BartAttnStyle& style) {
  const auto& cfg = b.config();
  weights = kNoTensor;
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], Lq = hs[1], d = hs[2], hd = d / heads;
  const bool cross = kv_src != kNoTensor;
  const TensorId src = cross ? kv_src : h;
  const int64_t Ls = b.shape(src)[1];
  const bool eager = cfg.attn == AttnImpl::eager;
  const bool multi_query = Lq > 1 || !style.one_query_merges;
  // SDPA's fused kernels return each gradient in its input's layout; eager's bmm returns contiguous [B, H, L, D]
  // gradients, which the transposed head views copy back (style.view_grad_copies).
  auto heads_view = [&](TensorId t, int64_t L) {
    const Shape v{B, heads, L, hd};
    if (style.contiguous_heads) return b.contiguous_copy(b.view(t, v), v, /*grad_copied=*/true);
    return eager && b.training() && style.view_grad_copies ? b.view_copying_grad(t, v) : b.view(t, v);
  };
  TensorId qp = b.linear(h, w.q, w.qb);
  if (style.contiguous_heads) qp = b.scalar_op("mul_scalar", qp, false);  // * scaling
  TensorId q = heads_view(qp, Lq);
  b.hold(q);  // query_states: bound until the module returns
  TensorId k, v;
  if (cross && cache_past > 0) {
    // is_updated: the cross-attention cache's keys / values, stored at the first step
    const DType dt = b.autocast() ? b.low_dtype() : b.param_dtype();
    k = b.kv_cache_in({B, heads, Ls, hd}, dt);
    b.kv_cache_out(k);
    v = b.kv_cache_in({B, heads, Ls, hd}, dt);
    b.kv_cache_out(v);
  } else {
    k = heads_view(b.linear(src, w.k, w.kb), Ls);
    b.hold(k);
    v = heads_view(b.linear(src, w.v, w.vb), Ls);
    b.hold(v);
    if (cache_past >= 0) {
      // `key_states, value_states = cache.update(key_states, value_states, idx)` (BART, mBART, Whisper, M2M-100,
      // Marian, BioGPT: the same statement): the projected k and v stay bound until the tuple is assigned, after
      // both cats (whole-run mbart / whisper / biogpt generate() streams: k freed after v's cat at every layer).
      const TensorId kc = cache_cat(b, k, cross ? 0 : cache_past);
      b.hold(kc);
      const TensorId vc = cache_cat(b, v, cross ? 0 : cache_past);
      b.hold(vc);
      b.drop(k);
      b.drop(v);
      k = kc;
      v = vc;
    }
  }
  const int64_t Lk = b.shape(k)[2];
  TensorId ctx;
  if (!eager) {
    // sdpa_attention_forward: is_causal for the decoder's self-attention over more than one query, no mask;
    // transpose(1, 2).contiguous() of the fused kernels' output is free (its memory is [B, Lq, H, D]).
    ctx = b.sdpa(q, k, v, s.attn_dropout, causal && multi_query);
    // cuDNN (16-bit) allocates its output in q's layout (alloc_with_matching_layout): Whisper's q is a
    // contiguous [B, H, L, D], so the output is too and sdpa_attention_forward's transpose(1, 2).contiguous()
    // copies it: a new [B, L, H, D] tensor that out_proj saves, besides the output the kernel saves. Its
    // gradient passes through (CloneBackward); cuDNN >= 9.5.1 takes the transposed gradient without copying it
    // (innermost stride 1). The memory-efficient kernel (fp32) writes [B, L, H, D] memory: no copy.
    // (Whole-run amp fp16 whisper-medium-width stream: a q-sized block after each attention's, freed after
    // out_proj's backward; the checkpointed amp bf16 stream shows the same pair in its first forward.)
    // One query (a decode step): [B, H, 1, D] transposed is already contiguous, so nothing is copied.
    if (style.contiguous_heads && b.dtype(ctx) != DType::f32 && multi_query)
      ctx = b.contiguous_copy(ctx, {B, Lq, heads, hd});
  } else {
    // torch.matmul copies the head-split views whose batch and head dims cannot merge (training's projections;
    // one query merges, cached k / v are cat outputs, whisper's are contiguous copies).
    const bool copy_q = multi_query && !style.contiguous_heads;
    const bool copy_kv = cache_past < 0 && !style.contiguous_heads;
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, heads, Lq, Lk}, copy_q, copy_kv), false);
    if (mask != kNoTensor) scores = b.add(scores, mask);
    TensorId probs = b.dropout(b.softmax_last(scores), s.attn_dropout);
    weights = probs;
    b.hold(weights);
    ctx = b.matmul(probs, v, {B, heads, Lq, hd}, false, copy_kv);
    if (multi_query) ctx = b.contiguous_copy(ctx, {B, Lq, heads, hd}, /*grad_copied=*/true);
  }
  TensorId out = b.linear(b.view(ctx, {B, Lq, d}), w.o, w.ob);
  b.drop(q);
  if (!(cross && cache_past > 0)) {
    b.drop(k);
    b.drop(v);
  }
  return out;
}

TensorId bart_ffn(GraphBuilder& b, const TransformerSpec& s, TensorId h, TensorId fc1, TensorId fc1_b, TensorId fc2,
                  TensorId fc2_b, bool pre_ln) {
  if (pre_ln) b.hold(h);
  TensorId x = activation_or_gelu_new(b, s.hidden_act, b.linear(h, fc1, fc1_b));
  x = b.dropout(x, s.activation_dropout);
  if (pre_ln) {
    b.drop(h);
    b.hold(x);
  }
  const TensorId y = b.linear(x, fc2, fc2_b);
  if (pre_ln) b.drop(x);
  return b.dropout(y, s.resid_dropout);
}

TensorId bart_positions(GraphBuilder& b, TensorId table, TensorId position_ids, int64_t rows, int64_t len) {
  TensorId pos = position_ids;
  if (pos == kNoTensor) {
    pos = b.generic_one("arange", {}, {len}, DType::i64);  // expanded to [rows, len]: a view
    b.hold(pos);  // position_ids: bound until forward returns
  }
  TensorId ids = b.generic_one("add_scalar", {pos}, {rows, len}, DType::i64);
  TensorId out = b.embedding(ids, table);
  if (position_ids == kNoTensor) b.drop(pos);
  return out;
}

namespace {

struct StackParams {
  TensorId pos = kNoTensor;
  std::vector<BartLayerParams> layers;
  TensorId ln_emb_w = kNoTensor, ln_emb_b = kNoTensor;
};

// BartEncoder / BartDecoder.__init__ order: embed_positions, the layers (self_attn, self_attn_layer_norm, the
// decoder's encoder_attn and encoder_attn_layer_norm, fc1, fc2, final_layer_norm), layernorm_embedding.
StackParams stack_params(GraphBuilder& b, const TransformerSpec& s, bool decoder) {
  const int64_t d = s.hidden_size;
  const std::string prefix = bart_stack_prefix(decoder);
  // freeze_embeddings freezes get_input_embeddings() (model.shared) only: the position tables and
  // layernorm_embedding stay trainable.
  StackParams sp;
  sp.pos = b.param(prefix + "embed_positions.weight", {s.max_position_embeddings + 2, d}, true);
  sp.layers = bart_stack_layer_params(b, s, decoder, true);
  sp.ln_emb_w = b.param(prefix + "layernorm_embedding.weight", {d}, true);
  sp.ln_emb_b = b.param(prefix + "layernorm_embedding.bias", {d}, true);
  return sp;
}

// BartEncoderLayer's fp16 check: not torch.isfinite(h).all() (a bool copy of h, then one element; the clamp
// itself runs only on overflow).
void fp16_check(GraphBuilder& b, TensorId h) {
  if (b.dtype(h) != DType::f16) return;
  TensorId m = b.generic_one("isfinite", {h}, b.shape(h), DType::boolean);
  b.generic_one("all", {m}, {}, DType::boolean);
}

// One BartEncoder / BartDecoder over `ids` [B, L]. Decoder: `enc` is the encoder output, `past` the positions
// already cached (inference; -1 in training). Returns the last layer's output.
TensorId stack(GraphBuilder& b, const TransformerSpec& s, const StackParams& sp, TensorId shared, TensorId ids,
               TensorId enc, int64_t past) {
  const auto& cfg = b.config();
  const bool decoder = enc != kNoTensor;
  const int64_t B = b.shape(ids)[0], L = b.shape(ids)[1];
  const int64_t base = decoder ? s.num_layers : 0;
  const int64_t heads = decoder ? s.decoder_num_heads : s.num_heads;
  const std::string prefix = decoder ? "model.decoder.layers." : "model.encoder.layers.";
  // BartScaledWordEmbedding: embedding(ids) * embed_scale
  const TensorId inputs_embeds = b.scalar_op("mul_scalar", b.embedding(ids, shared), false);
  b.hold(inputs_embeds);  // bound until the stack returns
  TensorId mask = kNoTensor, position_ids = kNoTensor;
  if (decoder) {
    // position_ids = arange(L) + past (the sum a local to the end); attention_mask = torch.ones(B, past + L) in
    // the default dtype, rebound by create_causal_mask's result: eager materialises the padding-and-causal mask
    // [B, 1, L, kv] (bool, then the float mask); SDPA skips it (no padding, is_causal or one query).
    const int64_t kv = (past < 0 ? 0 : past) + L;
    position_ids = b.generic_one("add_scalar", {b.generic_one("arange", {}, {L}, DType::i64)}, {L}, DType::i64);
    b.hold(position_ids);
    const TensorId ones = b.generic_one("ones", {}, {B, kv}, b.param_dtype());
    b.hold(ones);
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, B, L, kv, b.dtype(inputs_embeds));
      b.hold(mask);
    }
    b.drop(ones);
  }
  // encoder: embed_positions(ids) over arange(S).expand(B, -1); decoder: position_ids.unsqueeze(0) [1, L]
  const TensorId positions = bart_positions(b, sp.pos, position_ids, decoder ? 1 : B, L);
  b.hold(positions);
  TensorId h = b.add(inputs_embeds, positions);
  h = b.dropout(b.layer_norm(h, sp.ln_emb_w, sp.ln_emb_b), s.embd_dropout);
  const int64_t cache_past = past < 0 ? -1 : past;
  for (size_t i = 0; i < sp.layers.size(); ++i) {
    const BartLayerParams& w = sp.layers[i];
    const int64_t li = base + static_cast<int64_t>(i);
    b.begin_layer(prefix + std::to_string(i), b.training() && layer_checkpointed(cfg, li));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the stack's hidden_states and the layer's `residual` until the layer returns
    TensorId w1 = kNoTensor, w2 = kNoTensor;
    TensorId a = bart_attention(b, s, w.sa, h, kNoTensor, decoder, mask, heads, cache_past, w1);
    h = b.layer_norm(b.add(h, b.dropout(a, s.resid_dropout)), w.sa_ln_w, w.sa_ln_b);
    if (decoder) {
      const TensorId residual = h;
      b.hold(residual);
      a = bart_attention(b, s, w.ca, h, enc, false, kNoTensor, heads, cache_past, w2);
      if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
      w1 = kNoTensor;
      h = b.layer_norm(b.add(residual, b.dropout(a, s.resid_dropout)), w.ca_ln_w, w.ca_ln_b);
      b.drop(residual);
    }
    const TensorId residual = h;
    b.hold(residual);
    TensorId f = bart_ffn(b, s, h, w.fc1, w.fc1_b, w.fc2, w.fc2_b);
    h = b.layer_norm(b.add(residual, f), w.ln_w, w.ln_b);
    b.drop(residual);
    if (!decoder) fp16_check(b, h);
    for (TensorId t : {w1, w2})
      if (t != kNoTensor) b.drop(t);
    b.drop(layer_in);
    b.end_layer();
  }
  for (TensorId t : {inputs_embeds, positions, mask, position_ids})
    if (t != kNoTensor) b.drop(t);
  return h;
}

// Positions run from 0 (plus the offset): the encoder needs seq_len rows, the decoder target_len (training) or one
// per generated token; nn.Embedding asserts on the device past max_position_embeddings.
void check_positions(const TransformerSpec& s, const RunConfig& cfg) {
  const int64_t limit = position_limit(s);
  check_seq2seq_lengths(cfg, limit, "exceeds bart's max_position_embeddings (" + std::to_string(limit) + ")");
}

// One inference pass (engine/inference_replay.cpp), as T5's (build_t5_family): past_len 0 runs the encoder over
// the seq_len ids and the first decoder step ([B, 1] decoder_start_token_id); a decode pass with past_len P is
// decoder step P - seq_len + 1 over the cached encoder output (carried from pass to pass as the first cache slot
// inside generate()). Cache slots per decoder layer: self k, self v, cross k, cross v.
void build_inference(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, V = s.vocab_size, d = s.hidden_size;
  const int64_t past = seq2seq_decoder_past(b, "bart");
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, false);
  const StackParams enc_params = stack_params(b, s, false);
  const StackParams dec_params = stack_params(b, s, true);
  const TensorId bias = b.buffer("final_logits_bias", {1, V}, b.param_dtype());
  const TensorId enc = seq2seq_encoder_output(b, d, [&] {
    const TensorId ids = b.input({B, S}, DType::i64);
    return stack(b, s, enc_params, shared, ids, kNoTensor, -1);
  });
  const TensorId dec_ids = b.input({B, 1}, DType::i64);
  const TensorId h = stack(b, s, dec_params, shared, dec_ids, enc, past);
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  seq2seq_inference_end(b, b.add(b.linear(h, shared), bias), enc);
}

}  // namespace

void build_bart(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  check_positions(s, cfg);
  if (!b.training()) {
    build_inference(b, s);
    return;
  }
  const int64_t B = cfg.batch_size, S = cfg.seq_len, T = cfg.target_len > 0 ? cfg.target_len : cfg.seq_len,
                V = s.vocab_size, d = s.hidden_size;
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, !cfg.freeze_embeddings);
  const StackParams enc_params = stack_params(b, s, false);
  const StackParams dec_params = stack_params(b, s, true);
  const TensorId bias = b.buffer("final_logits_bias", {1, V}, b.param_dtype());
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  TensorId ids = b.input({B, S}, DType::i64);
  TensorId labels = b.input({B, T}, DType::i64);
  const TensorId dec_ids = bart_shift_tokens_right(b, labels);
  const TensorId enc = stack(b, s, enc_params, shared, ids, kNoTensor, -1);
  b.hold(enc);  // encoder_outputs: bound until forward returns
  TensorId h = stack(b, s, dec_params, shared, dec_ids, enc, -1);
  b.hold(h);  // outputs[0]: bound until forward returns
  seq2seq_lm_loss(b, b.add(b.linear(h, shared), bias), labels, {h, enc, dec_ids});
}

}  // namespace memplan
