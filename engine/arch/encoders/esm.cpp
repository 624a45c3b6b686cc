// EsmForMaskedLM (transformers models/esm/modeling_esm.py), training forward + masked-LM loss;
// EsmForSequenceClassification / EsmForTokenClassification (RunConfig::task) and EsmModel (Task::feature, inference).
// Written from the modeling file's statements before any ESM run was measured (family set 32, held out): what it
// predicts is on record in data/validation/predictions/families32-holdout.json.
// Stages, in the order the Python runs them:
//   EsmEmbeddings.forward(input_ids) (EsmModel passes no attention mask to it):
//     position_ids = create_position_ids_from_input_ids(ids, pad): RoBERTa's [B, S] integer chain (ne, int,
//       cumsum in int64, type_as, * mask, long, + pad); a local until the embeddings return, read only by an
//       absolute position table.
//     inputs_embeds = word_embeddings(ids), a local until return.
//     token_dropout: embeddings.masked_fill((ids == mask).unsqueeze(-1), 0.0) (saves the bool mask), then
//       (embeddings * 0.88 / (1 - mask_ratio_observed)[:, None, None]).to(dtype): mask_ratio_observed
//       = (ids == mask).sum(-1).float() / S is an fp32 [B]; dividing a 16-bit [B, S, H] by an fp32 [B, 1, 1]
//       promotes to an fp32 [B, S, H] (the divisor is saved), cast back by .to().
//     absolute: + position_embeddings(position_ids) (a [B, S, H] local); emb_layer_norm_before: LayerNorm.
//   EsmModel.forward: _create_attention_masks -> create_bidirectional_mask(attention_mask=None): None for SDPA and
//     eager (no padding to mask). Rotary: position_ids = torch.arange(S).unsqueeze(0) ([1, S] int64) and
//     EsmRotaryEmbedding(inputs_embeds, position_ids), LlamaRotaryEmbedding's statements (fp32 with autocast off,
//     cos / sin [1, S, D] returned in the embeddings' dtype: fp32 under amp); both bound until forward returns, as
//     is the embeddings' output.
//   EsmLayer (a GradientCheckpointingLayer; pre-LN, no LayerNorm inside the sub-layers' outputs):
//     EsmAttention: ln = LayerNorm(h) (bound until it returns); EsmSelfAttention: q, k, v = Linear views
//       [B, H, S, D]; q = q * D^-0.5 (before the rotary embedding); apply_rotary_pos_emb:
//       q_embed = (q.float() * cos) + (rotate_half(q.float()) * sin), .to(q.dtype), then the same for k: two fp32
//       copies of a 16-bit q (each dies after its product; ToCopyBackward and the products against the no-grad
//       tables save nothing), fp32 products, the cast back; the scaled q and the projected k stay bound until both
//       are rotated. Attention: BERT's eager_attention_forward (copied; softmax without a dtype) or SDPA, no mask,
//       scale 1.0; the probabilities bound as `_` until EsmAttention returns. EsmSelfOutput: dense, dropout, + h.
//     feed_forward_chunk: ln2 = LayerNorm(attention_output); EsmIntermediate: dense, then the module's gelu()
//       x * 0.5 * (1.0 + torch.erf(x / sqrt(2))), x bound throughout: x * 0.5 and (1 + erf) are saved by the
//       product, erf's input by erf (three [B, S, I] saved where nn.GELU saves one), and ErfBackward holds four
//       [B, S, I] temporaries while it makes its gradient; EsmOutput: dense, dropout, + attention_output.
//       ln2, the intermediate output and attention_output live until feed_forward_chunk / the layer return.
//   EsmEncoder: emb_layer_norm_after over the last layer's output.
//   EsmLMHead: dense, gelu() (the same erf chain), layer_norm, decoder (no bias; tied to the word embeddings)
//     + lm_head.bias (a separate add: [B, S, V] twice), CrossEntropyLoss over view(-1, V) and the labels.
//   Heads: EsmClassificationHead runs RobertaClassificationHead's statements, EsmForTokenClassification
//     RobertaForTokenClassification's (heads_encoder.cpp); both after EsmModel(add_pooling_layer=False).
// Parameters and buffers in the order they reach the GPU (model.to("cuda"): Module._apply, each module's children
// before its own parameters and buffers; built on the device: construction order, which differs only where noted):
// word_embeddings, [layer_norm], [position_embeddings], the position_ids buffer (int64 [1, max_position_embeddings]);
// [rotary_embeddings.inv_freq, fp32 [D / 2]: one, EsmModel's]; per layer query, key, value,
// attention.output.dense, attention.LayerNorm, intermediate.dense, output.dense, LayerNorm; emb_layer_norm_after;
// [pooler.dense for EsmModel]; contact_head.regression (Linear(layers * heads, 1): never called by these forwards, so
// no gradient and no optimizer state); the head (lm: dense, layer_norm, the decoder's own weight until the tie drops
// it, bias).
// History: the first version (family set 32's predictions) was written from an older modeling_esm.py (a
// RotaryEmbedding per layer with cached fp32 tables, an all-ones extended mask, eager softmax in fp32); the installed
// 5.17 file (dump_sources.py esm) is what this mirrors now.
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/encoders/bert_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

TensorId apply(GraphBuilder& b, const BertLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct EsmLayerParams {
  BertLinear q, k, v, o, inter, out;
  TensorId ln_w, ln_b, ln2_w, ln2_b;
};

// gelu(x) = x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0))), left operand first. x stays bound (gelu's argument and
// the caller's local) until gelu returns: the product's inputs, x and its output are alive together.
TensorId esm_gelu(GraphBuilder& b, TensorId x) {
  b.hold(x);
  const TensorId half = b.scalar_op("mul_scalar", x, false);
  const TensorId scaled = b.scalar_op("div_scalar", x, false);
  // ErfBackward saves its input; its formula, 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad, is one C++
  // full-expression: pow, neg, exp and the scaled exp are temporaries alive until the gradient is made.
  const int64_t t = b.info(scaled).bytes;
  const TensorId erf =
      b.generic({"erf", {scaled}, {{b.shape(scaled), b.dtype(scaled)}}, {0}, {}, {}, {}, {t, t, t, t}})[0];
  const TensorId one_plus = b.add_scalar(erf);
  const TensorId out = b.mul(half, one_plus);
  b.drop(x);
  return out;
}

// apply_rotary_pos_emb for one of q / k: (x.float() * cos) + (rotate_half(x.float()) * sin), then .to(x.dtype).
// x.float() is x itself in fp32, else a copy made twice (one per product, each a temporary).
TensorId esm_rotary(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  const DType dt = b.dtype(x);
  const TensorId a = b.mul(b.to(x, DType::f32), cos);
  const TensorId c = b.mul(rotate_half(b, b.to(x, DType::f32)), sin);
  return b.to(b.add(a, c), dt);
}

}  // namespace

void build_esm(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size, I = s.intermediate_size;
  const int64_t nh = s.num_heads, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  const bool lm = cfg.task == Task::lm;
  hf_construction_scalar(b);

  // ---- parameters and buffers, construction order
  const TensorId word = b.param("embeddings.word_embeddings.weight", {V, H}, emb_train);
  TensorId eln_w = kNoTensor, eln_b = kNoTensor;
  if (s.esm_emb_layer_norm_before) {
    eln_w = b.param("embeddings.layer_norm.weight", {H}, emb_train);
    eln_b = b.param("embeddings.layer_norm.bias", {H}, emb_train);
  }
  // The position_ids buffer: created before the absolute table on the GPU; model.to("cuda") (Module._apply, children
  // first) moves it after the embeddings' parameters.
  const bool built_on_device = cfg.weights_load == WeightsLoad::on_device;
  if (built_on_device) b.buffer("embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  const TensorId posw =
      s.esm_rotary ? kNoTensor : b.param("embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, emb_train);
  if (!built_on_device) b.buffer("embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  if (s.esm_rotary) b.buffer("rotary_embeddings.inv_freq", {hd / 2}, DType::f32);
  std::vector<EsmLayerParams> layers(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    EsmLayerParams& w = layers[static_cast<size_t>(i)];
    w.q = bert_linear(b, p + "attention.self.query", H, H, train);
    w.k = bert_linear(b, p + "attention.self.key", H, H, train);
    w.v = bert_linear(b, p + "attention.self.value", H, H, train);
    w.o = bert_linear(b, p + "attention.output.dense", H, H, train);
    w.ln_w = b.param(p + "attention.LayerNorm.weight", {H}, train);
    w.ln_b = b.param(p + "attention.LayerNorm.bias", {H}, train);
    w.inter = bert_linear(b, p + "intermediate.dense", I, H, train);
    w.out = bert_linear(b, p + "output.dense", H, I, train);
    w.ln2_w = b.param(p + "LayerNorm.weight", {H}, train);
    w.ln2_b = b.param(p + "LayerNorm.bias", {H}, train);
  }
  const TensorId fln_w = b.param("encoder.emb_layer_norm_after.weight", {H}, true);
  const TensorId fln_b = b.param("encoder.emb_layer_norm_after.bias", {H}, true);
  BertLinear pooler{kNoTensor, kNoTensor};
  if (cfg.task == Task::feature) pooler = bert_linear(b, "pooler.dense", H, H, true);  // EsmModel's default
  // contact_head.regression: registered, never called by these forwards (all-linear LoRA still adapts it).
  const TensorId contact_w = b.param("contact_head.regression.weight", {1, s.num_layers * nh}, true);
  b.unreached_param(b.param("contact_head.regression.bias", {1}, true));
  b.unreached_linear(contact_w);
  BertLinear lm_dense{kNoTensor, kNoTensor};
  TensorId lm_ln_w = kNoTensor, lm_ln_b = kNoTensor, decoder = word, lm_bias = kNoTensor;
  RobertaClsHead head;
  if (lm) {
    lm_dense = bert_linear(b, "lm_head.dense", H, H, emb_train);
    lm_ln_w = b.param("lm_head.layer_norm.weight", {H}, emb_train);
    lm_ln_b = b.param("lm_head.layer_norm.bias", {H}, emb_train);
    if (s.tie_word_embeddings)
      b.construction_temp(b.info(word).bytes);  // the decoder's own weight until the tie replaces it
    else
      decoder = b.param("lm_head.decoder.weight", {V, H}, emb_train);
    lm_bias = b.param("lm_head.bias", {V}, emb_train);
  } else if (cfg.task != Task::feature) {
    head = roberta_cls_params(b, s);
  }

  // ---- EsmEmbeddings.forward
  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  auto op1 = [&](std::string_view name, std::vector<TensorId> reads, DType t) {
    return b.generic_one(name, std::move(reads), {B, S}, t);
  };
  // create_position_ids_from_input_ids: `mask` is bound until it returns; torch.cumsum of an int32 tensor first
  // copies it to int64 (roberta.cpp's inference stream).
  const TensorId pmask = op1("to_int", {op1("ne", {ids}, DType::boolean)}, DType::i32);
  b.hold(pmask);
  TensorId incremental = op1("type_as", {op1("cumsum", {op1("to_long", {pmask}, DType::i64)}, DType::i64)}, DType::i32);
  incremental = op1("mul", {incremental, pmask}, DType::i32);
  b.hold(incremental);
  const TensorId position_ids = op1("add_scalar", {op1("to_long", {incremental}, DType::i64)}, DType::i64);
  b.drop(incremental);
  b.drop(pmask);
  b.hold(position_ids);
  const TensorId inputs_embeds = b.embedding(ids, word);
  b.hold(inputs_embeds);
  TensorId e = inputs_embeds;
  TensorId ratio = kNoTensor;
  if (s.esm_token_dropout) {
    const TensorId is_mask = op1("eq", {ids}, DType::boolean);
    e = b.generic_one("masked_fill", {e, is_mask}, {B, S, H}, b.dtype(e), {1});
    // mask_ratio_observed = (ids == mask).sum(-1).float() / S: a local until the embeddings return
    const TensorId count = b.generic_one("sum", {op1("eq", {ids}, DType::boolean)}, {B}, DType::i64);
    ratio = b.generic_one("div_scalar", {b.generic_one("to_float", {count}, {B}, DType::f32)}, {B}, DType::f32);
    b.hold(ratio);
    const DType dt = b.dtype(e);
    const TensorId scaled = b.scalar_op("mul_scalar", e, false);  // embeddings * (1 - mask_ratio_train)
    const TensorId keep = b.view(b.generic_one("rsub", {ratio}, {B}, DType::f32), {B, 1, 1});
    e = b.to(b.binary("div", scaled, keep, false, true), dt);
  }
  TensorId pe = kNoTensor;
  if (!s.esm_rotary) {
    pe = b.embedding(position_ids, posw);
    b.hold(pe);
    e = b.add(e, pe);
  }
  if (s.esm_emb_layer_norm_before) e = b.layer_norm(e, eln_w, eln_b);
  const TensorId embedding_output = e;
  b.hold(embedding_output);  // EsmModel.forward's inputs_embeds until it returns
  for (TensorId t : {inputs_embeds, position_ids, ratio, pe})
    if (t != kNoTensor && t != embedding_output) b.drop(t);

  // ---- EsmModel.forward: no mask (create_bidirectional_mask returns None); the rotary tables
  TensorId arange = kNoTensor, cos = kNoTensor, sin = kNoTensor;
  if (s.esm_rotary) {
    arange = b.generic_one("arange", {}, {1, S}, DType::i64);  // position_ids, bound until forward returns
    b.hold(arange);
    const std::pair<TensorId, TensorId> cs = rotary_cos_sin(b, 1, S, hd, b.dtype(embedding_output));
    cos = cs.first;
    sin = cs.second;
    b.hold(cos);
    b.hold(sin);
  }

  // ---- EsmEncoder
  TensorId h = embedding_output;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const EsmLayerParams& w = layers[static_cast<size_t>(i)];
    b.begin_layer("encoder.layer." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the encoder's loop variable and EsmAttention's residual until the layer returns
    const TensorId ln = b.layer_norm(h, w.ln_w, w.ln_b);
    b.hold(ln);  // hidden_states_ln until EsmAttention returns
    TensorId q = b.view(apply(b, w.q, ln), {B, nh, S, hd});
    b.hold(q);
    TensorId k = b.view(apply(b, w.k, ln), {B, nh, S, hd});
    b.hold(k);
    const TensorId v = b.view(apply(b, w.v, ln), {B, nh, S, hd});
    b.hold(v);
    const TensorId q_scaled = b.scalar_op("mul_scalar", q, false);  // query_layer * head_size ** -0.5
    b.drop(q);
    q = q_scaled;
    b.hold(q);
    if (s.esm_rotary) {
      // query_layer, key_layer = self.rotary_embeddings(query_layer, key_layer): rebound once both are rotated.
      const TensorId qe = esm_rotary(b, q, cos, sin);
      b.hold(qe);
      const TensorId ke = esm_rotary(b, k, cos, sin);
      b.hold(ke);
      b.drop(q);
      b.drop(k);
      q = qe;
      k = ke;
    }
    const BertAttentionOut att = bert_attention(b, s, q, k, v);
    const TensorId ctx = att.output, weights = att.weights;
    for (TensorId t : {q, k, v}) b.drop(t);  // EsmSelfAttention's locals
    b.hold(ctx);  // attn_output until self.output has returned
    const TensorId a = b.add(b.dropout(apply(b, w.o, b.view(ctx, {B, S, H})), s.resid_dropout), h);
    b.drop(ctx);
    if (weights != kNoTensor) b.drop(weights);  // `_` until EsmAttention returns
    b.drop(ln);
    const TensorId attention_output = a;
    b.hold(attention_output);  // until the layer returns
    const TensorId ln2 = b.layer_norm(a, w.ln2_w, w.ln2_b);
    b.hold(ln2);  // attention_output_ln until feed_forward_chunk returns
    const TensorId mid = esm_gelu(b, apply(b, w.inter, ln2));
    b.hold(mid);  // intermediate_output
    h = b.add(b.dropout(apply(b, w.out, mid), s.resid_dropout), attention_output);
    for (TensorId t : {mid, ln2, attention_output, layer_in}) b.drop(t);
    b.end_layer();
  }
  h = b.layer_norm(h, fln_w, fln_b);  // emb_layer_norm_after
  const TensorId seq = h;

  if (cfg.task == Task::feature) {  // EsmModel: BaseModelOutputWithPooling(last_hidden_state, pooler_output)
    const TensorId pooled = encoder_pooler(b, pooler, seq, embedding_output);
    for (TensorId t : {embedding_output, arange, cos, sin})
      if (t != kNoTensor) b.drop(t);
    forward_output(b, {seq, pooled});
    return;
  }
  for (TensorId t : {embedding_output, arange, cos, sin})  // EsmModel.forward returns
    if (t != kNoTensor) b.drop(t);
  if (!lm) {
    roberta_cls_head(b, s, head, seq, labels);  // EsmClassificationHead / EsmForTokenClassification
    return;
  }
  // ---- EsmLMHead and the loss
  b.hold(seq);  // outputs[0] until EsmForMaskedLM.forward returns
  TensorId x = esm_gelu(b, apply(b, lm_dense, seq));
  x = b.layer_norm(x, lm_ln_w, lm_ln_b);
  const TensorId logits = b.add(b.linear(x, decoder), lm_bias);  // self.decoder(x) + self.bias
  if (!b.training()) {
    forward_output(b, {logits});
    return;
  }
  b.mark_model_end();
  b.hold(logits);  // prediction_scores in the output until forward returns
  const TensorId loss = b.cross_entropy(b.view(logits, {B * S, V}), b.view(labels, {B * S}));
  b.drop(logits);
  b.drop(seq);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
