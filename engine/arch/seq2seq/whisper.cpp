// WhisperForConditionalGeneration (transformers 5.17 models/whisper/modeling_whisper.py), training forward + loss,
// or one inference pass with an EncoderDecoderCache (build_inference below).
//   labels (at most max_target_positions) -> shift_tokens_right (new_zeros, labels[:, :-1].clone() copied in,
//   decoder_start_token_id in column 0, -100 -> pad) before the model.
//   encoder: input_features [B, num_mel_bins, 2 * max_source_positions] (the model's dtype; WhisperEncoder raises
//            on any other length) -> gelu(conv1) [B, d, 2P] -> gelu(conv2, stride 2) [B, d, P] -> permute(0, 2, 1)
//            (a view) + embed_positions(arange(P)) (a frozen nn.Embedding: its [P, d] output needs no grad) ->
//            dropout -> N x pre-LN WhisperEncoderLayer -> layer_norm
//   decoder: embed_tokens(ids) (no scale) + embed_positions.weight[position_ids] (position_ids =
//            (arange(T) + 0).unsqueeze(0).repeat(B, 1), bound until the decoder returns) -> dropout -> causal mask
//            (SDPA skips it; eager materialises it) -> M x pre-LN WhisperDecoderLayer -> layer_norm
//   proj_out (tied to embed_tokens) -> CrossEntropyLoss over lm_logits.view(-1, V) (no fp32 upcast).
// WhisperAttention scales q before its head view and makes q, k and v contiguous (mbart_parts.h BartStyle).
// Parameters in Module._apply order: encoder conv1, conv2, embed_positions, layers, layer_norm; decoder
// embed_tokens, embed_positions, layers, layer_norm; proj_out (tied).
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/seq2seq/mbart_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

constexpr BartStyle kWhisper{/*k_bias=*/false, /*contiguous_heads=*/true, /*permuted_encoder_stream=*/true};

struct Params {
  TensorId conv1_w = kNoTensor, conv1_b = kNoTensor, conv2_w = kNoTensor, conv2_b = kNoTensor;
  TensorId enc_pos = kNoTensor, enc_ln_w = kNoTensor, enc_ln_b = kNoTensor;
  TensorId embed = kNoTensor, dec_pos = kNoTensor, dec_ln_w = kNoTensor, dec_ln_b = kNoTensor;
  std::vector<BartLayerParams> enc_layers, dec_layers;
};

// Every parameter in Module._apply order, none trainable (inference).
Params inference_params(GraphBuilder& b, const TransformerSpec& s) {
  const int64_t d = s.hidden_size, P = s.max_source_positions;
  Params p;
  p.conv1_w = b.param("model.encoder.conv1.weight", {d, s.num_mel_bins, 3}, false);
  p.conv1_b = b.param("model.encoder.conv1.bias", {d}, false);
  p.conv2_w = b.param("model.encoder.conv2.weight", {d, d, 3}, false);
  p.conv2_b = b.param("model.encoder.conv2.bias", {d}, false);
  p.enc_pos = b.param("model.encoder.embed_positions.weight", {P, d}, false);
  for (int64_t i = 0; i < s.num_layers; ++i)
    p.enc_layers.push_back(bart_layer_params(b, s, "model.encoder.", i, false, false, kWhisper.k_bias));
  std::tie(p.enc_ln_w, p.enc_ln_b) = bart_norm_params(b, "model.encoder.layer_norm", d, false);
  p.embed = b.param("model.decoder.embed_tokens.weight", {s.vocab_size, d}, false);
  p.dec_pos = b.param("model.decoder.embed_positions.weight", {s.max_position_embeddings, d}, false);
  for (int64_t i = 0; i < s.num_decoder_layers; ++i)
    p.dec_layers.push_back(bart_layer_params(b, s, "model.decoder.", i, true, false, kWhisper.k_bias));
  std::tie(p.dec_ln_w, p.dec_ln_b) = bart_norm_params(b, "model.decoder.layer_norm", d, false);
  return p;
}

// WhisperEncoder over `features` [B, num_mel_bins, 2P] without autograd: the statements of the training forward
// below (conv front end, permuted residual stream, pre-LN layers, layer_norm on a contiguous copy).
TensorId encoder(GraphBuilder& b, const TransformerSpec& s, const Params& p, TensorId features) {
  const int64_t B = b.shape(features)[0], P = s.max_source_positions, d = s.hidden_size;
  const TensorId x = b.unary("gelu", b.conv1d(features, p.conv1_w, p.conv1_b, 1, 1), true, false);
  b.hold(x);
  const TensorId x2 = b.unary("gelu", b.conv1d(x, p.conv2_w, p.conv2_b, 2, 1), true, false);
  b.drop(x);
  const TensorId all_positions = b.generic_one("arange", {}, {P}, DType::i64);
  b.hold(all_positions);
  const TensorId inputs_embeds = b.view(x2, {B, P, d});  // permute(0, 2, 1): bound until the encoder returns
  b.hold(inputs_embeds);
  TensorId h = b.dropout(b.add(inputs_embeds, b.embedding(all_positions, p.enc_pos)), s.resid_dropout);
  for (int64_t i = 0; i < s.num_layers; ++i)
    h = bart_encoder_layer(b, s, kWhisper, p.enc_layers[static_cast<size_t>(i)], i, h);
  b.hold(h);
  const TensorId out = b.layer_norm(h, p.enc_ln_w, p.enc_ln_b, /*contiguous_copy=*/true, /*grad_contiguous=*/true);
  b.drop(h);
  b.drop(all_positions);
  b.drop(inputs_embeds);
  return out;
}

// WhisperDecoder in one inference pass over `ids` [B, L] with `past` positions cached: inputs_embeds =
// embed_tokens(ids) (no scale); position_ids = (arange(L) + past).unsqueeze(0).repeat(B, 1) and positions =
// embed_positions.weight[position_ids], both bound until the decoder returns; h = dropout(inputs_embeds +
// positions); the causal mask (SDPA: none, a single query or is_causal; eager: the float mask, no attention_mask
// passed); the cached pre-LN layers (mbart_parts.h); layer_norm.
TensorId cached_decoder(GraphBuilder& b, const TransformerSpec& s, const Params& p, TensorId ids, TensorId enc,
                        int64_t past) {
  const int64_t B = b.shape(ids)[0], L = b.shape(ids)[1];
  const TensorId inputs_embeds = b.embedding(ids, p.embed);
  b.hold(inputs_embeds);
  const TensorId arange = b.generic_one("add_scalar", {b.generic_one("arange", {}, {L}, DType::i64)}, {L}, DType::i64);
  const TensorId position_ids = b.generic_one("repeat", {arange}, {B, L}, DType::i64);
  b.hold(position_ids);
  const TensorId positions = b.embedding(position_ids, p.dec_pos);
  b.hold(positions);
  TensorId h = b.dropout(b.add(inputs_embeds, positions), s.resid_dropout);
  TensorId mask = kNoTensor;
  if (b.config().attn == AttnImpl::eager) {
    mask = eager_mask(b, 1, L, past + L, b.param_dtype());
    b.hold(mask);
  }
  for (int64_t i = 0; i < s.num_decoder_layers; ++i)
    h = bart_cached_decoder_layer(b, s, kWhisper, p.dec_layers[static_cast<size_t>(i)], i, h, enc, mask, past);
  b.hold(h);
  const TensorId out = b.layer_norm(h, p.dec_ln_w, p.dec_ln_b);
  b.drop(h);
  for (TensorId t : {inputs_embeds, position_ids, positions, mask})
    if (t != kNoTensor) b.drop(t);
  return out;
}

// One inference pass (engine/inference_replay.cpp). The measured prefill (past_len 0, not from generate()) runs the
// encoder over the features and the first decoder step over [B, 1] decoder_start_token_id. Inside generate()
// (WhisperGenerationMixin.generate, short-form: one segment of 2P frames), the decoder's prompt is the init
// tokens, spec.generate_decoder_prompt of them ([decoder_start, <|notimestamps|>]), all run by the first pass
// (past_len 0); a decode pass with past_len P' is one token over P' - seq_len + prompt cached positions.
// generate() cuts `segment_input` out of the features (torch.cat of the per-row slices: a copy, bound until
// generate() returns) and feeds that to the encoder: the first pass's features input is that copy, carried from
// pass to pass as the first cache slot (the encoder output the second, then per decoder layer self k, self v,
// cross k, cross v).
void build_inference(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, F = cfg.seq_len, d = s.hidden_size;
  const bool gen = b.pass().from_generate;
  const int64_t prompt = gen ? std::max<int64_t>(s.generate_decoder_prompt, 1) : 1;
  const int64_t past = seq2seq_decoder_past(b, "whisper");
  const int64_t dec_past = b.pass().past_len == 0 ? 0 : past + prompt - 1;
  hf_construction_scalar(b);
  const Params p = inference_params(b, s);
  if (gen) {
    const TensorId segment = b.pass().past_len == 0 ? b.input({B, s.num_mel_bins, F}, b.param_dtype())
                                                    : b.kv_cache_in({B, s.num_mel_bins, F}, b.param_dtype());
    b.kv_cache_out(segment);
    const TensorId enc = seq2seq_encoder_output(b, d, [&] { return encoder(b, s, p, segment); });
    const TensorId ids = b.input({B, b.pass().past_len == 0 ? prompt : 1}, DType::i64);
    const TensorId h = cached_decoder(b, s, p, ids, enc, dec_past);
    b.construction_temp(b.info(p.embed).bytes);
    seq2seq_inference_end(b, b.linear(h, p.embed), enc);
    return;
  }
  const TensorId enc = seq2seq_encoder_output(
      b, d, [&] { return encoder(b, s, p, b.input({B, s.num_mel_bins, F}, b.param_dtype())); });
  const TensorId h = cached_decoder(b, s, p, b.input({B, 1}, DType::i64), enc, dec_past);
  // proj_out: its own weight from construction until tie_weights() replaced it by embed_tokens.
  b.construction_temp(b.info(p.embed).bytes);
  seq2seq_inference_end(b, b.linear(h, p.embed), enc);
}

}  // namespace

void build_whisper(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, F = cfg.seq_len, T = cfg.target_len > 0 ? cfg.target_len : cfg.seq_len,
                V = s.vocab_size, d = s.hidden_size, P = s.max_source_positions;
  if (F != checked_mul(2, P))
    throw InputError("seq_len", std::to_string(F),
                     "whisper's input features must hold 2 x max_source_positions = " + std::to_string(2 * P) +
                         " frames (WhisperEncoder raises otherwise)");
  if (!b.training()) {
    if (cfg.attn != AttnImpl::sdpa && cfg.attn != AttnImpl::eager)
      throw InputError("attn", "?", "whisper inference is modelled with sdpa or eager");
    // _set_max_new_tokens_and_length raises when the init tokens plus max_new_tokens pass max_target_positions.
    const int64_t prompt = std::max<int64_t>(s.generate_decoder_prompt, 1);
    if (cfg.generate_tokens > s.max_position_embeddings - prompt)
      throw InputError("generate_tokens", std::to_string(cfg.generate_tokens),
                       "plus the " + std::to_string(prompt) + " init tokens exceeds max_target_positions (" +
                           std::to_string(s.max_position_embeddings) + "): whisper's generate() raises");
    build_inference(b, s);
    return;
  }
  if (T > s.max_position_embeddings)
    throw InputError("target_len", std::to_string(T),
                     "exceeds max_target_positions (" + std::to_string(s.max_position_embeddings) +
                         "): WhisperForConditionalGeneration raises on longer labels");
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  // main_input_name is input_features: gradient checkpointing installs no input-embedding hook.
  b.no_input_require_grads();
  // encoder parameters
  const TensorId conv1_w = b.param("model.encoder.conv1.weight", {d, s.num_mel_bins, 3}, true);
  const TensorId conv1_b = b.param("model.encoder.conv1.bias", {d}, true);
  const TensorId conv2_w = b.param("model.encoder.conv2.weight", {d, d, 3}, true);
  const TensorId conv2_b = b.param("model.encoder.conv2.bias", {d}, true);
  const TensorId enc_pos = b.param("model.encoder.embed_positions.weight", {P, d}, false);  // requires_grad_(False)
  std::vector<BartLayerParams> enc_layers, dec_layers;
  for (int64_t i = 0; i < s.num_layers; ++i)
    enc_layers.push_back(
        bart_layer_params(b, s, "model.encoder.", i, false, !layer_frozen(cfg, i), kWhisper.k_bias));
  TensorId enc_ln_w, enc_ln_b;
  std::tie(enc_ln_w, enc_ln_b) = bart_norm_params(b, "model.encoder.layer_norm", d, true);
  // decoder parameters
  const TensorId embed = b.param("model.decoder.embed_tokens.weight", {V, d}, emb_train);
  const TensorId dec_pos = b.param("model.decoder.embed_positions.weight", {s.max_position_embeddings, d}, emb_train);
  for (int64_t i = 0; i < s.num_decoder_layers; ++i)
    dec_layers.push_back(
        bart_layer_params(b, s, "model.decoder.", i, true, !layer_frozen(cfg, s.num_layers + i), kWhisper.k_bias));
  TensorId dec_ln_w, dec_ln_b;
  std::tie(dec_ln_w, dec_ln_b) = bart_norm_params(b, "model.decoder.layer_norm", d, true);

  const TensorId features = b.input({B, s.num_mel_bins, F}, b.param_dtype());
  const TensorId labels = b.input({B, T}, DType::i64);

  // shift_tokens_right(labels, pad, decoder_start_token_id)
  TensorId dec_ids = b.generic_one("new_zeros", {}, {B, T}, DType::i64);
  const TensorId body = b.generic_one("clone", {labels}, {B, T > 1 ? T - 1 : 1}, DType::i64);
  dec_ids = b.inplace("copy_", dec_ids, false, {body});
  dec_ids = b.inplace("fill_", dec_ids, false);
  dec_ids = b.inplace("masked_fill_", dec_ids, false, {b.generic_one("eq", {dec_ids}, {B, T}, DType::boolean)});
  b.hold(dec_ids);  // decoder_input_ids: bound until forward returns

  // encoder: the conv front end; inputs_embeds is rebound by each statement
  TensorId x = b.unary("gelu", b.conv1d(features, conv1_w, conv1_b, 1, 1), true, false);
  b.hold(x);
  const TensorId x2 = b.unary("gelu", b.conv1d(x, conv2_w, conv2_b, 2, 1), true, false);
  b.drop(x);
  const TensorId all_positions = b.generic_one("arange", {}, {P}, DType::i64);
  b.hold(all_positions);
  const TensorId inputs_embeds_enc = b.view(x2, {B, P, d});  // permute(0, 2, 1): bound until the encoder returns
  b.hold(inputs_embeds_enc);
  TensorId h = b.add(inputs_embeds_enc, b.embedding(all_positions, enc_pos));
  h = b.dropout(h, s.resid_dropout);
  for (int64_t i = 0; i < s.num_layers; ++i) h = bart_encoder_layer(b, s, kWhisper, enc_layers[static_cast<size_t>(i)], i, h);
  b.hold(h);
  const TensorId enc = b.layer_norm(h, enc_ln_w, enc_ln_b, /*contiguous_copy=*/true, /*grad_contiguous=*/true);  // the permuted stream
  b.drop(h);
  b.drop(all_positions);
  b.drop(inputs_embeds_enc);
  b.hold(enc);  // encoder_outputs: bound until forward returns

  // decoder
  const TensorId inputs_embeds = b.embedding(dec_ids, embed);
  b.hold(inputs_embeds);
  const TensorId arange = b.generic_one("add_scalar", {b.generic_one("arange", {}, {T}, DType::i64)}, {T}, DType::i64);
  const TensorId position_ids = b.generic_one("repeat", {arange}, {B, T}, DType::i64);
  b.hold(position_ids);
  const TensorId positions = b.embedding(position_ids, dec_pos);  // weight[position_ids]
  b.hold(positions);
  h = b.dropout(b.add(inputs_embeds, positions), s.resid_dropout);
  TensorId mask = kNoTensor;
  if (cfg.attn == AttnImpl::eager) {
    mask = eager_mask(b, 1, T, T, b.param_dtype());
    b.hold(mask);
  }
  for (int64_t i = 0; i < s.num_decoder_layers; ++i)
    h = bart_decoder_layer(b, s, kWhisper, dec_layers[static_cast<size_t>(i)], i, h, enc, mask);
  b.hold(h);
  const TensorId dec_out = b.layer_norm(h, dec_ln_w, dec_ln_b);
  b.drop(h);
  for (TensorId t : {inputs_embeds, position_ids, positions, mask})
    if (t != kNoTensor) b.drop(t);
  b.hold(dec_out);  // outputs.last_hidden_state: bound until forward returns

  // proj_out: its own weight from construction until tie_weights() replaced it by embed_tokens.
  b.construction_temp(b.info(embed).bytes);
  seq2seq_lm_loss(b, b.linear(dec_out, embed), labels, {dec_out, enc, dec_ids});
}

}  // namespace memplan
