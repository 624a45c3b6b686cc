// M2M100ForConditionalGeneration (transformers 5.17 models/m2m_100/modeling_m2m_100.py: M2M-100, NLLB-200),
// training forward + loss, or one inference pass with an EncoderDecoderCache.
//
//   forward(input_ids, labels): decoder_input_ids = shift_tokens_right(labels) (BART's: new_zeros, a clone of
//     labels[:, :-1] copied in, the start token written, masked_fill_(== -100, pad)); M2M100Model: encoder,
//     decoder; lm_logits = lm_head(decoder output) (tied to shared, no bias); CrossEntropyLoss over [B*T, V].
//   M2M100Encoder: inputs_embeds = embed_tokens(ids) * embed_scale (M2M100ScaledWordEmbedding: a new tensor);
//     embed_pos = embed_positions(ids) (sinusoidal_positions below, under no_grad); both bound until the encoder
//     returns; h = dropout(inputs_embeds + embed_pos) (no layernorm_embedding); pre-LN layers (MBart's, copied);
//     layer_norm. create_bidirectional_mask without a padding mask returns None (SDPA and eager).
//   M2M100Decoder: inputs_embeds of the decoder ids, attention_mask = torch.ones(B, past + L) in the default dtype,
//     rebound by create_causal_mask (SDPA: None; eager: the float mask), positions from the decoder ids with the
//     cache's length as past_key_values_length ([B, L, d], not broadcast), h = dropout(inputs_embeds + positions),
//     pre-LN layers with cross-attention, layer_norm.
//   Both position tables are non-persistent buffers [max_position_embeddings + 2, d] in the default dtype,
//   allocated by Module._apply in the encoder's then the decoder's turn, before each stack's layers.
// Layers: mbart_parts.h (training, and the encoder in inference); the decoder layer with its cache here.
// Layer indices (grad_checkpointing_layers, frozen_layers): encoder layers 0..N-1, decoder layers N..N+M-1.
// LayerDrop (encoder_layerdrop / decoder_layerdrop): replayed as the step in which every layer runs.
#include <string>
#include <tuple>

#include "engine/arch/builders.h"
#include "engine/arch/seq2seq/mbart_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct StackParams {
  TensorId positions = kNoTensor, ln_w = kNoTensor, ln_b = kNoTensor;
  std::vector<BartLayerParams> layers;
};

// M2M100Encoder / M2M100Decoder in Module._apply order: embed_tokens (the shared weight, already moved),
// embed_positions' buffer `weights`, the layers, layer_norm.
StackParams stack_params(GraphBuilder& b, const TransformerSpec& s, bool decoder) {
  const std::string prefix = bart_stack_prefix(decoder);
  const int64_t d = s.hidden_size;
  StackParams sp;
  sp.positions = b.buffer(prefix + "embed_positions.weights", {s.max_position_embeddings + 2, d}, b.param_dtype());
  sp.layers = bart_stack_layer_params(b, s, decoder, b.training());
  std::tie(sp.ln_w, sp.ln_b) = bart_norm_params(b, prefix + "layer_norm", d, b.training());
  return sp;
}

// M2M100SinusoidalPositionalEmbedding.forward(ids, past) under no_grad: create_position_ids_from_input_ids
// (mask = ids.ne(pad).int(); incremental = (cumsum(mask, 1).type_as(mask) + past) * mask; position_ids =
// incremental.long() + pad, every step a fresh tensor: cumsum of int32 gives int64), then
// weights.index_select(0, position_ids.view(-1)) viewed [B, L, d]. mask and incremental are the function's
// locals, position_ids forward's, each freed when its function returns.
TensorId sinusoidal_positions(GraphBuilder& b, TensorId table, TensorId ids) {
  const Shape sh = b.shape(ids);
  const int64_t B = sh[0], L = sh[1], d = b.shape(table)[1];
  const TensorId mask = b.generic_one("int", {b.generic_one("ne", {ids}, sh, DType::boolean)}, sh, DType::i32);
  b.hold(mask);
  TensorId inc = b.generic_one("type_as", {b.generic_one("cumsum", {mask}, sh, DType::i64)}, sh, DType::i32);
  inc = b.generic_one("mul", {b.generic_one("add_scalar", {inc}, sh, DType::i32), mask}, sh, DType::i32);
  b.hold(inc);
  const TensorId pos_ids = b.generic_one("add_scalar", {b.generic_one("long", {inc}, sh, DType::i64)}, sh, DType::i64);
  b.drop(inc);
  b.drop(mask);
  b.hold(pos_ids);
  const TensorId out = b.generic_one("index_select", {table, pos_ids}, {B * L, d}, b.dtype(table));
  b.drop(pos_ids);
  return b.view(out, {B, L, d});
}

// Token embeddings times embed_scale plus the sinusoidal positions, dropout. inputs_embeds and the positions are
// bound until the stack's forward returns: appended to `locals`. `before_positions` runs between the two
// (the decoder's attention_mask and causal mask).
template <typename F>
TensorId embed(GraphBuilder& b, const TransformerSpec& s, const StackParams& sp, TensorId shared, TensorId ids,
               std::vector<TensorId>& locals, F before_positions) {
  const TensorId inputs_embeds = b.scalar_op("mul_scalar", b.embedding(ids, shared), false);
  b.hold(inputs_embeds);
  locals.push_back(inputs_embeds);
  before_positions();
  const TensorId pos = sinusoidal_positions(b, sp.positions, ids);
  b.hold(pos);
  locals.push_back(pos);
  return b.dropout(b.add(inputs_embeds, pos), s.embd_dropout);
}

TensorId encoder(GraphBuilder& b, const TransformerSpec& s, const StackParams& sp, TensorId shared, TensorId ids) {
  std::vector<TensorId> locals;
  TensorId h = embed(b, s, sp, shared, ids, locals, [] {});
  for (size_t i = 0; i < sp.layers.size(); ++i)
    h = bart_encoder_layer(b, s, BartStyle{}, sp.layers[i], static_cast<int64_t>(i), h);
  b.hold(h);
  const TensorId out = b.layer_norm(h, sp.ln_w, sp.ln_b);
  b.drop(h);
  for (TensorId t : locals) b.drop(t);
  return out;
}

// M2M100DecoderLayer (MBart's, copied) in one inference pass: the self-attention appends to the cache
// (`past` cached positions), the cross-attention stores or reads the encoder's keys and values.
TensorId cached_decoder_layer(GraphBuilder& b, const TransformerSpec& s, const BartLayerParams& w, int64_t i,
                              TensorId h, TensorId enc, TensorId mask, int64_t past) {
  b.begin_layer("decoder.layers." + std::to_string(i), false);
  const int64_t heads = s.decoder_num_heads;
  b.hold(h);  // the decoder's loop variable and `residual` until the layer returns / the block's add
  TensorId w1 = kNoTensor, w2 = kNoTensor;
  TensorId x = b.layer_norm(h, w.sa_ln_w, w.sa_ln_b);
  b.hold(x);
  TensorId a = bart_attention(b, s, w.sa, x, kNoTensor, true, mask, heads, past, w1);
  b.drop(x);
  const TensorId h1 = b.add(h, b.dropout(a, s.resid_dropout));
  b.hold(h1);
  x = b.layer_norm(h1, w.ca_ln_w, w.ca_ln_b);
  b.hold(x);
  a = bart_attention(b, s, w.ca, x, enc, false, kNoTensor, heads, past, w2);
  b.drop(x);
  if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
  const TensorId h2 = b.add(h1, b.dropout(a, s.resid_dropout));
  b.drop(h1);
  b.hold(h2);
  const TensorId ffn_in = b.layer_norm(h2, w.ln_w, w.ln_b);
  const TensorId out = b.add(h2, bart_ffn(b, s, ffn_in, w.fc1, w.fc1_b, w.fc2, w.fc2_b, /*pre_ln=*/true));
  for (TensorId t : {w2, h2, h})
    if (t != kNoTensor) b.drop(t);
  b.end_layer();
  return out;
}

// The decoder over `ids` [B, L]: training (`past` -1: every layer from mbart_parts) or one cached pass.
TensorId decoder(GraphBuilder& b, const TransformerSpec& s, const StackParams& sp, TensorId shared, TensorId ids,
                 TensorId enc, int64_t past) {
  const auto& cfg = b.config();
  const int64_t B = b.shape(ids)[0], L = b.shape(ids)[1], kv = (past < 0 ? 0 : past) + L;
  std::vector<TensorId> locals;
  TensorId mask = kNoTensor;
  TensorId h = embed(b, s, sp, shared, ids, locals, [&] {
    // attention_mask = torch.ones(B, kv), rebound by create_causal_mask's result: SDPA skips it (is_causal, or
    // one query); eager materialises the float mask in the embeddings' dtype.
    const TensorId ones = b.generic_one("ones", {}, {B, kv}, b.param_dtype());
    b.hold(ones);
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, B, L, kv, b.dtype(locals.front()));
      b.hold(mask);
      locals.push_back(mask);
    }
    b.drop(ones);
  });
  for (size_t i = 0; i < sp.layers.size(); ++i) {
    const auto li = static_cast<int64_t>(i);
    h = past < 0 ? bart_decoder_layer(b, s, BartStyle{}, sp.layers[i], li, h, enc, mask)
                 : cached_decoder_layer(b, s, sp.layers[i], li, h, enc, mask, past);
  }
  b.hold(h);
  const TensorId out = b.layer_norm(h, sp.ln_w, sp.ln_b);
  b.drop(h);
  for (TensorId t : locals) b.drop(t);
  return out;
}

// The position tables hold max_position_embeddings + 2 rows; forward rebuilds them (a fresh buffer, not
// modelled) once padding_idx + 1 + past + length passes that: refused, naming the length.
void check_positions(const TransformerSpec& s, const RunConfig& cfg) {
  const int64_t limit = position_limit(s);  // the longest sequence the table holds
  if (limit < 1)
    throw InputError("model.pad_token_id", std::to_string(s.m2m_padding_idx),
                     "puts every position id past the sinusoidal table (max_position_embeddings + 2 rows); forward "
                     "would rebuild it, which is not modelled");
  const std::string why = "exceeds the " + std::to_string(limit) +
                          " positions of the sinusoidal table (max_position_embeddings + 2 rows, ids from "
                          "pad_token_id + 1); forward would rebuild it, which is not modelled";
  check_seq2seq_lengths(cfg, limit, why);
}

// One inference pass (engine/inference_replay.cpp), as bart's: past_len 0 runs the encoder over the seq_len ids
// and the first decoder step ([B, 1] decoder_start_token_id); a decode pass with past_len P is decoder step
// P - seq_len + 1 over the cached encoder output (the first cache slot inside generate()). Cache slots per
// decoder layer: self k, self v, cross k, cross v.
void build_inference(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, V = s.vocab_size, d = s.hidden_size;
  const int64_t past = seq2seq_decoder_past(b, "m2m_100");
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, false);
  const StackParams enc_p = stack_params(b, s, false);
  const StackParams dec_p = stack_params(b, s, true);
  const TensorId enc =
      seq2seq_encoder_output(b, d, [&] { return encoder(b, s, enc_p, shared, b.input({B, S}, DType::i64)); });
  const TensorId h = decoder(b, s, dec_p, shared, b.input({B, 1}, DType::i64), enc, past);
  seq2seq_inference_end(b, b.linear(h, shared), enc);
}

}  // namespace

void build_m2m_100(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::sdpa && cfg.attn != AttnImpl::eager) throw InputError("attn", "?", "sdpa or eager");
  check_positions(s, cfg);
  if (!b.training()) {
    build_inference(b, s);
    return;
  }
  const int64_t B = cfg.batch_size, S = cfg.seq_len, T = cfg.target_len > 0 ? cfg.target_len : cfg.seq_len,
                V = s.vocab_size, d = s.hidden_size;
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, !cfg.freeze_embeddings);
  const StackParams enc_p = stack_params(b, s, false);
  const StackParams dec_p = stack_params(b, s, true);
  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = b.input({B, T}, DType::i64);
  const TensorId dec_ids = bart_shift_tokens_right(b, labels);
  const TensorId enc = encoder(b, s, enc_p, shared, ids);
  b.hold(enc);  // encoder_outputs: bound until forward returns
  const TensorId h = decoder(b, s, dec_p, shared, dec_ids, enc, -1);
  b.hold(h);  // outputs[0]: bound until forward returns
  seq2seq_lm_loss(b, b.linear(h, shared), labels, {h, enc, dec_ids});
}

}  // namespace memplan
