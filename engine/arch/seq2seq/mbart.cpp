// MBartForConditionalGeneration (transformers 5.17 models/mbart/modeling_mbart.py), training forward + loss, or one
// inference pass with an EncoderDecoderCache.
//   labels -> shift_tokens_right (clone, -100 -> pad, the last non-pad token wrapped to the front) before the model
//   encoder: embed_tokens(ids) * embed_scale (MBartScaledWordEmbedding: always a product, 1.0 without
//            scale_embedding) + embed_positions(arange(S).expand(B, -1) + 2) -> layernorm_embedding -> dropout ->
//            N x pre-LN MBartEncoderLayer -> layer_norm
//   decoder: the same embeddings of the shifted labels (positions from cache_position: [1, T]), an all-ones
//            attention_mask [B, T] in the default dtype, the causal mask (SDPA skips it; eager materialises it),
//            M x pre-LN MBartDecoderLayer (self-attention, cross-attention over the encoder output, FFN) ->
//            layer_norm
//   lm_logits = lm_head(h) + final_logits_bias (a [1, V] buffer in the model dtype: under amp the fp16 head's
//   output plus the fp32 buffer is an fp32 [B, T, V]); CrossEntropyLoss over lm_logits.view(-1, V).
// Inference (one pass of engine/inference_replay.cpp, as bart's): past_len 0 runs the encoder over the seq_len ids
// and the first decoder step ([B, 1] decoder_start_token_id); a decode pass is one decoder step over the cached
// encoder output. MBartDecoder in a pass: inputs_embeds = embed_tokens(ids) * embed_scale; position_ids =
// arange(L) + past; attention_mask = torch.ones(B, past + L) (default dtype, bound until the decoder returns:
// the causal mask is a new name; SDPA makes none, eager the float mask); `position_ids = embed_positions(...)`
// rebinds the ids to the [1, L, d] lookup of position_ids.unsqueeze(0) + 2; layernorm_embedding, the cached
// pre-LN layers (mbart_parts.h), layer_norm; lm_logits = lm_head(h) + final_logits_bias.
// Layers: mbart_parts.h. Parameters in Module._apply order (the harness builds on the CPU, then .to("cuda")):
// shared, encoder (embed_tokens = shared, embed_positions, layers, layernorm_embedding, layer_norm), decoder
// (the same), lm_head (tied), then the buffer final_logits_bias.
#include <string>
#include <tuple>

#include "engine/arch/builders.h"
#include "engine/arch/seq2seq/mbart_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct StackParams {
  TensorId positions = kNoTensor, ln_emb_w = kNoTensor, ln_emb_b = kNoTensor, ln_w = kNoTensor, ln_b = kNoTensor;
  std::vector<BartLayerParams> layers;
};

StackParams stack_params(GraphBuilder& b, const TransformerSpec& s, bool decoder) {
  const std::string prefix = bart_stack_prefix(decoder);
  const int64_t d = s.hidden_size;
  const bool train = b.training();
  const bool emb_train = train && !b.config().freeze_embeddings;
  StackParams sp;
  sp.positions = b.param(prefix + "embed_positions.weight", {s.max_position_embeddings + 2, d}, emb_train);
  sp.layers = bart_stack_layer_params(b, s, decoder, train);
  std::tie(sp.ln_emb_w, sp.ln_emb_b) = bart_norm_params(b, prefix + "layernorm_embedding", d, train);
  std::tie(sp.ln_w, sp.ln_b) = bart_norm_params(b, prefix + "layer_norm", d, train);
  return sp;
}

// MBartScaledWordEmbedding(ids) * embed_scale + MBartLearnedPositionalEmbedding, layernorm_embedding, dropout.
// `pos_ids` are the position ids before the +2 offset ([B, S] encoder, [1, T] decoder). inputs_embeds and the
// position embedding are bound until the stack's forward returns: returned through `locals`.
TensorId embed(GraphBuilder& b, const TransformerSpec& s, const StackParams& sp, TensorId shared, TensorId ids,
               TensorId pos_ids, std::vector<TensorId>& locals) {
  const TensorId inputs_embeds = b.scalar_op("mul_scalar", b.embedding(ids, shared), false);
  b.hold(inputs_embeds);
  const Shape ps = b.shape(pos_ids);
  const TensorId pos = b.embedding(b.generic_one("add_scalar", {pos_ids}, ps, DType::i64), sp.positions);
  b.hold(pos);
  locals.insert(locals.end(), {inputs_embeds, pos});
  const TensorId h = b.layer_norm(b.add(inputs_embeds, pos), sp.ln_emb_w, sp.ln_emb_b);
  return b.dropout(h, s.embd_dropout);
}

// MBartEncoder over `ids` [B, S]: positions arange(S).expand(B, -1) (+ 2 inside embed), the pre-LN layers,
// layer_norm; inputs_embeds and embed_pos bound until it returns.
TensorId encoder(GraphBuilder& b, const TransformerSpec& s, const StackParams& sp, TensorId shared, TensorId ids) {
  const int64_t B = b.shape(ids)[0], S = b.shape(ids)[1];
  std::vector<TensorId> locals;
  const TensorId pos_ids = b.generic_one("arange", {}, {S}, DType::i64);  // expand(B, -1): a view
  TensorId h = embed(b, s, sp, shared, ids, b.view(pos_ids, {B, S}), locals);
  for (size_t i = 0; i < sp.layers.size(); ++i)
    h = bart_encoder_layer(b, s, BartStyle{}, sp.layers[i], static_cast<int64_t>(i), h);
  b.hold(h);
  const TensorId out = b.layer_norm(h, sp.ln_w, sp.ln_b);
  b.drop(h);
  for (TensorId t : locals) b.drop(t);
  return out;
}

// MBartDecoder in one inference pass over `ids` [B, L] with `past` positions cached (statements in the header).
TensorId cached_decoder(GraphBuilder& b, const TransformerSpec& s, const StackParams& sp, TensorId shared,
                        TensorId ids, TensorId enc, int64_t past) {
  const int64_t B = b.shape(ids)[0], L = b.shape(ids)[1], kv = past + L;
  const TensorId inputs_embeds = b.scalar_op("mul_scalar", b.embedding(ids, shared), false);
  b.hold(inputs_embeds);
  const TensorId position_ids =
      b.generic_one("add_scalar", {b.generic_one("arange", {}, {L}, DType::i64)}, {L}, DType::i64);
  b.hold(position_ids);
  const TensorId ones = b.generic_one("ones", {}, {B, kv}, b.param_dtype());
  b.hold(ones);
  std::vector<TensorId> locals{inputs_embeds, ones};
  TensorId mask = kNoTensor;
  if (b.config().attn == AttnImpl::eager) {
    mask = eager_mask(b, B, L, kv, b.dtype(inputs_embeds));
    b.hold(mask);
    locals.push_back(mask);
  }
  const TensorId pos_ids1 = b.generic_one("add_scalar", {b.view(position_ids, {1, L})}, {1, L}, DType::i64);
  const TensorId positions = b.embedding(pos_ids1, sp.positions);
  b.hold(positions);
  b.drop(position_ids);  // rebound to the lookup
  locals.push_back(positions);
  TensorId h = b.dropout(b.layer_norm(b.add(inputs_embeds, positions), sp.ln_emb_w, sp.ln_emb_b), s.embd_dropout);
  for (size_t i = 0; i < sp.layers.size(); ++i)
    h = bart_cached_decoder_layer(b, s, BartStyle{}, sp.layers[i], static_cast<int64_t>(i), h, enc, mask, past);
  b.hold(h);
  const TensorId out = b.layer_norm(h, sp.ln_w, sp.ln_b);
  b.drop(h);
  for (TensorId t : locals) b.drop(t);
  return out;
}

// One inference pass (engine/inference_replay.cpp), as bart.cpp's. Cache slots per decoder layer: self k, self v,
// cross k, cross v (after the encoder output's slot inside generate()).
void build_inference(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, V = s.vocab_size, d = s.hidden_size;
  const int64_t past = seq2seq_decoder_past(b, "mbart");
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, false);
  const StackParams enc_p = stack_params(b, s, false);
  const StackParams dec_p = stack_params(b, s, true);
  const TensorId logits_bias = b.buffer("final_logits_bias", {1, V}, b.param_dtype());
  const TensorId enc =
      seq2seq_encoder_output(b, d, [&] { return encoder(b, s, enc_p, shared, b.input({B, S}, DType::i64)); });
  const TensorId h = cached_decoder(b, s, dec_p, shared, b.input({B, 1}, DType::i64), enc, past);
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  seq2seq_inference_end(b, b.add(b.linear(h, shared), logits_bias), enc);
}

}  // namespace

void build_mbart(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::sdpa && cfg.attn != AttnImpl::eager) throw InputError("attn", "?", "sdpa or eager");
  if (!b.training()) {
    // Positions run from 0 (plus the offset): the encoder needs seq_len rows, the decoder one per generated
    // token; an index past the table is a device assert.
    check_seq2seq_lengths(
        cfg, s.max_position_embeddings,
        "exceeds the model's position embeddings (" + std::to_string(s.max_position_embeddings) + ")");
    build_inference(b, s);
    return;
  }
  const int64_t B = cfg.batch_size, S = cfg.seq_len, T = cfg.target_len > 0 ? cfg.target_len : cfg.seq_len,
                V = s.vocab_size, d = s.hidden_size;
  // The decoder's learned positions end at max_position_embeddings (an index past the table is a device assert).
  if (T > s.max_position_embeddings)
    throw InputError("target_len", std::to_string(T),
                     "exceeds the model's position embeddings (" + std::to_string(s.max_position_embeddings) + ")");
  hf_construction_scalar(b);
  const TensorId shared = b.param("model.shared.weight", {V, d}, !cfg.freeze_embeddings);
  const StackParams enc_p = stack_params(b, s, false);
  const StackParams dec_p = stack_params(b, s, true);
  const TensorId logits_bias = b.buffer("final_logits_bias", {1, V}, b.param_dtype());
  TensorId ids = b.input({B, S}, DType::i64);
  TensorId labels = b.input({B, T}, DType::i64);

  // shift_tokens_right(labels, pad): clone, masked_fill_(== -100, pad), the index of the last non-pad token
  // (ne, sum(1) - 1), its gather, prev[:, 1:] = prev[:, :-1].clone(), prev[:, 0] = the gathered tokens.
  TensorId dec_ids = b.generic_one("clone", {labels}, {B, T}, DType::i64);
  dec_ids = b.inplace("masked_fill_", dec_ids, false, {b.generic_one("eq", {dec_ids}, {B, T}, DType::boolean)});
  TensorId eos = b.generic_one("sum", {b.generic_one("ne", {dec_ids}, {B, T}, DType::boolean)}, {B}, DType::i64);
  eos = b.generic_one("sub_scalar", {eos}, {B, 1}, DType::i64);
  const TensorId start = b.generic_one("gather", {dec_ids, eos}, {B, 1}, DType::i64);
  b.hold(start);  // decoder_start_tokens, until the function returns
  const TensorId body = b.generic_one("clone", {dec_ids}, {B, T > 1 ? T - 1 : 1}, DType::i64);
  dec_ids = b.inplace("copy_", dec_ids, false, {body});
  dec_ids = b.inplace("copy_", dec_ids, false, {start});
  b.drop(start);
  b.hold(dec_ids);  // decoder_input_ids: bound until forward returns

  const TensorId enc = encoder(b, s, enc_p, shared, ids);
  b.hold(enc);  // encoder_outputs: bound until forward returns

  // decoder: attention_mask = torch.ones(B, T) (default dtype), position_ids = arange(T) + 0, both locals.
  std::vector<TensorId> dec_locals;
  const TensorId ones = b.generic_one("ones", {}, {B, T}, b.param_dtype());
  b.hold(ones);
  const TensorId dec_pos_ids = b.generic_one("add_scalar", {b.generic_one("arange", {}, {T}, DType::i64)}, {T},
                                             DType::i64);
  b.hold(dec_pos_ids);
  dec_locals.insert(dec_locals.end(), {ones, dec_pos_ids});
  // create_causal_mask: SDPA skips it (all-ones padding mask, is_causal); eager materialises a [B, 1, T, T]
  // float mask in the embeddings' dtype from the per-row bool mask.
  TensorId mask = kNoTensor;
  if (cfg.attn == AttnImpl::eager) {
    mask = eager_mask(b, B, T, T, b.param_dtype());
    b.hold(mask);
    dec_locals.push_back(mask);
  }
  TensorId h = embed(b, s, dec_p, shared, dec_ids, b.view(dec_pos_ids, {1, T}), dec_locals);
  for (size_t i = 0; i < dec_p.layers.size(); ++i)
    h = bart_decoder_layer(b, s, BartStyle{}, dec_p.layers[i], static_cast<int64_t>(i), h, enc, mask);
  b.hold(h);
  const TensorId dec_out = b.layer_norm(h, dec_p.ln_w, dec_p.ln_b);
  b.drop(h);
  for (TensorId t : dec_locals) b.drop(t);
  b.hold(dec_out);  // outputs[0]: bound until forward returns

  // lm_head (tied to shared: the encoder's and decoder's embed_tokens and lm_head each had their own weight
  // from construction until tie_weights()).
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  seq2seq_lm_loss(b, b.add(b.linear(dec_out, shared), logits_bias), labels, {dec_out, enc, dec_ids});
}

}  // namespace memplan
