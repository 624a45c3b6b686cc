// MarianMTModel (transformers 5.17 models/marian/modeling_marian.py) and PegasusForConditionalGeneration
// (models/pegasus/modeling_pegasus.py): training forward + seq2seq loss, or one inference pass with an
// EncoderDecoderCache. The two files share everything outside their layers: Pegasus copies Marian's sinusoidal
// position embedding and stacks, and adds a final layer_norm to each stack; Marian's layers are BART's (post-LN),
// Pegasus' are mBART's (pre-LN).
//
//   forward(input_ids, labels): decoder_input_ids = shift_tokens_right(labels) (BART's: new_zeros, a clone of
//     labels[:, :-1] copied in, the start token written, masked_fill_(== -100, pad)); encoder, decoder;
//     lm_logits = lm_head(decoder output) + final_logits_bias (a [1, V] buffer of the default dtype);
//     CrossEntropyLoss over [B*T, V].
//   Sinusoidal positions: an nn.Embedding(max_position_embeddings, d) made with _freeze=True (a parameter that
//     requires no gradient: counted in p.numel(), no gradient, no optimizer state), no offset, read under
//     torch.no_grad(): the encoder's forward makes arange(S) itself (a local of that call) and returns [S, d]; the
//     decoder passes its position_ids (arange(T) + past, made before the causal mask) and gets [T, d].
//   Encoder: inputs_embeds = embed_tokens(ids) * embed_scale (a new tensor even at 1.0), embed_pos, both bound
//     until the encoder returns; h = dropout(inputs_embeds + embed_pos) (no layernorm_embedding); the layers;
//     Pegasus: layer_norm.
//   Decoder: inputs_embeds = embed_tokens(ids); inputs_embeds = inputs_embeds * embed_scale (rebinding);
//     position_ids = arange(T) + past; attention_mask = torch.ones(B, past + T) (default dtype, bound until the
//     decoder returns); create_causal_mask (SDPA: none; eager: the float mask); positions (Marian rebinds
//     position_ids to them, Pegasus binds a new name); h = dropout(inputs_embeds + positions); the layers;
//     Pegasus: layer_norm.
//   Marian layers (BartEncoderLayer / BartDecoderLayer copies): h = norm(h + dropout(attn(h))) ...; the encoder
//     layer's fp16 check (not isfinite(h).all()).
//   Pegasus layers (MBartEncoderLayer / MBartDecoderLayer copies): h = h + dropout(attn(norm(h))) ...; the
//     encoder layer clamps fp16 hidden states unconditionally.
// Layer indices (grad_checkpointing_layers, frozen_layers): encoder layers 0..N-1, decoder layers N..N+M-1.
#include <string>
#include <tuple>
#include <vector>

#include "engine/arch/seq2seq/bart_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Family {
  const char* name;  // for messages
  bool pre_ln;       // pegasus: pre-LN layers and a final layer_norm per stack
};
constexpr Family kMarian{"marian", false};
constexpr Family kPegasus{"pegasus", true};

struct StackParams {
  TensorId pos = kNoTensor;
  std::vector<BartLayerParams> layers;
  TensorId ln_w = kNoTensor, ln_b = kNoTensor;  // pegasus' layer_norm
};

// MarianEncoder / PegasusEncoder (and the decoders).__init__ order: embed_tokens (tied to shared), embed_positions
// (frozen), the layers, Pegasus' layer_norm.
StackParams stack_params(GraphBuilder& b, const TransformerSpec& s, const Family& f, bool decoder) {
  const int64_t d = s.hidden_size;
  const std::string prefix = bart_stack_prefix(decoder);
  StackParams sp;
  sp.pos = b.param(prefix + "embed_positions.weight", {s.max_position_embeddings, d}, /*trainable=*/false);
  sp.layers = bart_stack_layer_params(b, s, decoder, true);
  if (f.pre_ln) std::tie(sp.ln_w, sp.ln_b) = bart_norm_params(b, prefix + "layer_norm", d, true);
  return sp;
}

// MarianEncoderLayer's fp16 check: not torch.isfinite(h).all() (a bool copy of h, then one element).
void fp16_check(GraphBuilder& b, TensorId h) {
  if (b.dtype(h) != DType::f16) return;
  TensorId m = b.generic_one("isfinite", {h}, b.shape(h), DType::boolean);
  b.generic_one("all", {m}, {}, DType::boolean);
}

// PegasusEncoderLayer's fp16 guard: torch.clamp(h, min, max) with Python scalars whenever h is fp16 (ClampBackward1
// keeps h for its mask).
TensorId fp16_clamp(GraphBuilder& b, TensorId h) {
  if (b.dtype(h) != DType::f16) return h;
  return b.generic_one("clamp", {h}, b.shape(h), DType::f16, {0});
}

// The attention of either family: BART's statements. Pegasus' eager gradient copies as mBART's model of them
// (BartAttnStyle::view_grad_copies false: the copies of the same Python that mbart's rows validated).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const Family& f, const BartAttnParams& w, TensorId h,
                   TensorId kv_src, bool causal, TensorId mask, int64_t heads, int64_t cache_past, TensorId& weights) {
  BartAttnStyle style;
  if (f.pre_ln) style.view_grad_copies = false;
  return bart_attention(b, s, w, h, kv_src, causal, mask, heads, cache_past, weights, style);
}

// A post-LN (Marian) layer, BART's statements: h = norm(h + dropout(self_attn(h))), [h = norm(h +
// dropout(encoder_attn(h, enc)))], h = norm(h + ffn(h)). `enc` kNoTensor for an encoder layer.
TensorId post_ln_layer(GraphBuilder& b, const TransformerSpec& s, const Family& f, const BartLayerParams& w, TensorId h,
                       TensorId enc, TensorId mask, int64_t heads, int64_t cache_past) {
  const bool decoder = enc != kNoTensor;
  TensorId w1 = kNoTensor, w2 = kNoTensor;
  TensorId a = attention(b, s, f, w.sa, h, kNoTensor, decoder, mask, heads, cache_past, w1);
  h = b.layer_norm(b.add(h, b.dropout(a, s.resid_dropout)), w.sa_ln_w, w.sa_ln_b);
  if (decoder) {
    const TensorId residual = h;
    b.hold(residual);
    a = attention(b, s, f, w.ca, h, enc, false, kNoTensor, heads, cache_past, w2);
    if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
    w1 = kNoTensor;
    h = b.layer_norm(b.add(residual, b.dropout(a, s.resid_dropout)), w.ca_ln_w, w.ca_ln_b);
    b.drop(residual);
  }
  const TensorId residual = h;
  b.hold(residual);
  const TensorId ffn = bart_ffn(b, s, h, w.fc1, w.fc1_b, w.fc2, w.fc2_b);
  h = b.layer_norm(b.add(residual, ffn), w.ln_w, w.ln_b);
  b.drop(residual);
  if (!decoder) fp16_check(b, h);
  for (TensorId t : {w1, w2})
    if (t != kNoTensor) b.drop(t);
  return h;
}

// One pre-LN attention block: `residual = h; h = norm(h); h, _ = attn(h); h = dropout(h); h = residual + h`, the
// normed input bound to hidden_states until the attention returns.
TensorId pre_ln_attention_block(GraphBuilder& b, const TransformerSpec& s, const Family& f, const BartAttnParams& w,
                                TensorId ln_w, TensorId ln_b, TensorId h, TensorId kv_src, bool causal, TensorId mask,
                                int64_t heads, int64_t cache_past, TensorId& weights) {
  const TensorId x = b.layer_norm(h, ln_w, ln_b);
  b.hold(x);
  const TensorId a = attention(b, s, f, w, x, kv_src, causal, mask, heads, cache_past, weights);
  b.drop(x);
  return b.add(h, b.dropout(a, s.resid_dropout));
}

// A pre-LN (Pegasus) layer, mBART's statements (mbart_parts.cpp's order of bindings), with the decode-step cache.
TensorId pre_ln_layer(GraphBuilder& b, const TransformerSpec& s, const Family& f, const BartLayerParams& w, TensorId h,
                      TensorId enc, TensorId mask, int64_t heads, int64_t cache_past) {
  const bool decoder = enc != kNoTensor;
  TensorId w1 = kNoTensor, w2 = kNoTensor;
  TensorId h1 = pre_ln_attention_block(b, s, f, w.sa, w.sa_ln_w, w.sa_ln_b, h, kNoTensor, decoder, mask, heads,
                                       cache_past, w1);
  b.hold(h1);  // `residual` of the next block
  if (decoder) {
    const TensorId h2 = pre_ln_attention_block(b, s, f, w.ca, w.ca_ln_w, w.ca_ln_b, h1, enc, false, kNoTensor, heads,
                                               cache_past, w2);
    if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
    w1 = kNoTensor;
    b.drop(h1);
    h1 = h2;
    b.hold(h1);
  }
  // feed-forward: final_layer_norm, bart_ffn's statements (pre_ln), the residual add; h1 is `residual`
  const TensorId x = b.layer_norm(h1, w.ln_w, w.ln_b);
  TensorId out = b.add(h1, bart_ffn(b, s, x, w.fc1, w.fc1_b, w.fc2, w.fc2_b, /*pre_ln=*/true));
  if (!decoder) out = fp16_clamp(b, out);
  for (TensorId t : {w1, w2, h1})
    if (t != kNoTensor) b.drop(t);
  return out;
}

// One encoder / decoder over `ids` [B, L]. Decoder: `enc` is the encoder output, `past` the positions already
// cached (inference; -1 in training). Returns the stack's output (Pegasus: after its layer_norm).
TensorId stack(GraphBuilder& b, const TransformerSpec& s, const Family& f, const StackParams& sp, TensorId shared,
               TensorId ids, TensorId enc, int64_t past) {
  const auto& cfg = b.config();
  const bool decoder = enc != kNoTensor;
  const int64_t L = b.shape(ids)[1];
  const int64_t B = b.shape(ids)[0];
  const int64_t base = decoder ? s.num_layers : 0;
  const int64_t heads = decoder ? s.decoder_num_heads : s.num_heads;
  const std::string prefix = decoder ? "model.decoder.layers." : "model.encoder.layers.";
  // embed_tokens(ids) * embed_scale (the decoder's two statements free the lookup at the product the same way)
  const TensorId inputs_embeds = b.scalar_op("mul_scalar", b.embedding(ids, shared), false);
  b.hold(inputs_embeds);  // bound until the stack returns
  std::vector<TensorId> locals{inputs_embeds};
  TensorId mask = kNoTensor, positions = kNoTensor;
  if (!decoder) {
    // embed_positions(shape): arange(S) inside the no_grad forward, a local of that call
    const TensorId pos_ids = b.generic_one("arange", {}, {L}, DType::i64);
    positions = b.embedding(pos_ids, sp.pos);
  } else {
    const int64_t kv = (past < 0 ? 0 : past) + L;
    const TensorId position_ids =
        b.generic_one("add_scalar", {b.generic_one("arange", {}, {L}, DType::i64)}, {L}, DType::i64);
    b.hold(position_ids);
    const TensorId ones = b.generic_one("ones", {}, {B, kv}, b.param_dtype());
    b.hold(ones);  // attention_mask: bound until the decoder returns
    locals.push_back(ones);
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, B, L, kv, b.dtype(inputs_embeds));
      b.hold(mask);
      locals.push_back(mask);
    }
    positions = b.embedding(position_ids, sp.pos);
    // Marian: `position_ids = self.embed_positions(...)` rebinds the ids; Pegasus binds `positions`
    if (f.pre_ln)
      locals.push_back(position_ids);
    else
      b.drop(position_ids);
  }
  b.hold(positions);
  locals.push_back(positions);
  TensorId h = b.dropout(b.add(inputs_embeds, positions), s.embd_dropout);
  const int64_t cache_past = past < 0 ? -1 : past;
  for (size_t i = 0; i < sp.layers.size(); ++i) {
    const int64_t li = base + static_cast<int64_t>(i);
    b.begin_layer(prefix + std::to_string(i), b.training() && layer_checkpointed(cfg, li));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the stack's hidden_states and the layer's `residual` until the layer returns
    h = f.pre_ln ? pre_ln_layer(b, s, f, sp.layers[i], h, enc, mask, heads, cache_past)
                 : post_ln_layer(b, s, f, sp.layers[i], h, enc, mask, heads, cache_past);
    b.drop(layer_in);
    b.end_layer();
  }
  if (f.pre_ln) {
    b.hold(h);
    const TensorId out = b.layer_norm(h, sp.ln_w, sp.ln_b);
    b.drop(h);
    h = out;
  }
  for (TensorId t : locals) b.drop(t);
  return h;
}

// Positions run from 0: the encoder needs seq_len rows (estimate.cpp checks it: learned_positions), the decoder
// target_len (training) or one per generated token; nn.Embedding asserts on the device past the table.
void check_positions(const TransformerSpec& s, const Family& f, const RunConfig& cfg) {
  const int64_t limit = s.max_position_embeddings;
  check_seq2seq_lengths(
      cfg, limit, std::string("exceeds ") + f.name + "'s max_position_embeddings (" + std::to_string(limit) + ")");
}

// One inference pass (engine/inference_replay.cpp), as bart.cpp's: past_len 0 runs the encoder over the seq_len
// ids and the first decoder step ([B, 1] decoder_start_token_id); a decode pass with past_len P is decoder step
// P - seq_len + 1 over the cached encoder output (carried from pass to pass as the first cache slot inside
// generate()). Cache slots per decoder layer: self k, self v, cross k, cross v.
void build_inference(GraphBuilder& b, const TransformerSpec& s, const Family& f) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, V = s.vocab_size, d = s.hidden_size;
  const int64_t past = seq2seq_decoder_past(b, f.name);
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, false);
  const StackParams enc_params = stack_params(b, s, f, false);
  const StackParams dec_params = stack_params(b, s, f, true);
  const TensorId bias = b.buffer("final_logits_bias", {1, V}, b.param_dtype());
  const TensorId enc = seq2seq_encoder_output(b, d, [&] {
    const TensorId ids = b.input({B, S}, DType::i64);
    return stack(b, s, f, enc_params, shared, ids, kNoTensor, -1);
  });
  const TensorId dec_ids = b.input({B, 1}, DType::i64);
  const TensorId h = stack(b, s, f, dec_params, shared, dec_ids, enc, past);
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  seq2seq_inference_end(b, b.add(b.linear(h, shared), bias), enc);
}

void build(GraphBuilder& b, const TransformerSpec& s, const Family& f) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::sdpa && cfg.attn != AttnImpl::eager)
    throw InputError("attn", "?", std::string(f.name) + " is modelled with sdpa or eager");
  check_positions(s, f, cfg);
  if (!b.training()) {
    build_inference(b, s, f);
    return;
  }
  const int64_t B = cfg.batch_size, S = cfg.seq_len, T = cfg.target_len > 0 ? cfg.target_len : cfg.seq_len,
                V = s.vocab_size, d = s.hidden_size;
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, !cfg.freeze_embeddings);
  const StackParams enc_params = stack_params(b, s, f, false);
  const StackParams dec_params = stack_params(b, s, f, true);
  const TensorId bias = b.buffer("final_logits_bias", {1, V}, b.param_dtype());
  // the encoder's and decoder's embed_tokens and lm_head each had a weight of their own until tie_weights()
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = b.input({B, T}, DType::i64);
  const TensorId dec_ids = bart_shift_tokens_right(b, labels);
  const TensorId enc = stack(b, s, f, enc_params, shared, ids, kNoTensor, -1);
  b.hold(enc);  // encoder_outputs: bound until forward returns
  const TensorId h = stack(b, s, f, dec_params, shared, dec_ids, enc, -1);
  b.hold(h);  // outputs[0]: bound until forward returns
  seq2seq_lm_loss(b, b.add(b.linear(h, shared), bias), labels, {h, enc, dec_ids});
}

}  // namespace

void build_marian(GraphBuilder& b, const TransformerSpec& s) { build(b, s, kMarian); }
void build_pegasus(GraphBuilder& b, const TransformerSpec& s) { build(b, s, kPegasus); }

}  // namespace memplan
