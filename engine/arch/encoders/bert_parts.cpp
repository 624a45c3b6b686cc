// BertModel's encoder and BertForMaskedLM's head (bert_parts.h).
#include "engine/arch/encoders/bert_parts.h"

#include <string_view>
#include <vector>

namespace memplan {

BertLinear bert_linear(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool train) {
  return {b.param(name + ".weight", {out, in}, train), b.param(name + ".bias", {out}, train)};
}

namespace {
TensorId apply(GraphBuilder& b, const BertLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }
}  // namespace

BertAttentionOut bert_attention(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k, TensorId v) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, hd = s.head_dim;
  if (cfg.attn == AttnImpl::sdpa) return {b.sdpa(q, k, v, s.attn_dropout, false), kNoTensor};
  // torch.matmul copies each head-split view (batch and head dims cannot merge) before bmm, and
  // bmm saves the copies (as GPT-2's eager attention, gpt2.cpp).
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, S, S}, true, true), false);
  // nn.functional.softmax without a dtype: fp32 under autocast (its fp32 policy), the scores' own dtype in
  // a pure 16-bit model; dropout runs on that, and the second matmul's autocast casts the result.
  TensorId probs = b.dropout(b.softmax_last(scores), s.attn_dropout);
  TensorId out = b.contiguous_copy(b.matmul(probs, v, {B, nh, S, hd}, false, true), {B, S, nh, hd},
                                   /*grad_copied=*/true);
  return {out, probs};
}

BertAttentionOut bert_self_attention(GraphBuilder& b, const TransformerSpec& s, const BertLinear& q,
                                     const BertLinear& k, const BertLinear& v, TensorId x) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len, nh = s.num_heads, hd = s.head_dim;
  const TensorId qs = b.view(apply(b, q, x), {B, nh, S, hd});
  const TensorId ks = b.view(apply(b, k, x), {B, nh, S, hd});
  const TensorId vs = b.view(apply(b, v, x), {B, nh, S, hd});
  const TensorId proj[3] = {qs, ks, vs};
  for (TensorId t : proj) b.hold(t);  // query/key/value_layer stay bound until the self-attention returns
  const BertAttentionOut att = bert_attention(b, s, qs, ks, vs);
  for (TensorId t : proj) b.drop(t);
  return att;
}

TensorId bert_encoder(GraphBuilder& b, const TransformerSpec& s, TensorId h) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, I = s.intermediate_size;
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // BertModel.forward keeps it bound until the encoder has run (whole-run stream)

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    BertLinear q = bert_linear(b, p + "attention.self.query", H, H, train);
    BertLinear k = bert_linear(b, p + "attention.self.key", H, H, train);
    BertLinear v = bert_linear(b, p + "attention.self.value", H, H, train);
    BertLinear ao = bert_linear(b, p + "attention.output.dense", H, H, train);
    TensorId aln_w = b.param(p + "attention.output.LayerNorm.weight", {H}, train);
    TensorId aln_b = b.param(p + "attention.output.LayerNorm.bias", {H}, train);
    BertLinear inter = bert_linear(b, p + "intermediate.dense", I, H, train);
    BertLinear out = bert_linear(b, p + "output.dense", H, I, train);
    TensorId oln_w = b.param(p + "output.LayerNorm.weight", {H}, train);
    TensorId oln_b = b.param(p + "output.LayerNorm.bias", {H}, train);

    b.begin_layer("encoder.layer." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // BertLayer.forward's hidden_states (and the encoder's loop variable) until it returns
    const BertAttentionOut att = bert_self_attention(b, s, q, k, v, h);
    const TensorId ctx = att.output;
    // BertLayer: `self_attention_output, _ = self.attention(...)`: eager's probabilities stay bound as `_` until
    // the layer returns (in training the context matmul saves them anyway).
    const TensorId probs = !b.training() ? att.weights : kNoTensor;
    if (probs != kNoTensor) b.hold(probs);
    // BertSelfOutput / BertOutput: `LayerNorm(hidden_states + input_tensor)`, both operands bound until the
    // module returns, after the norm (whole-run stream).
    // BertAttention.forward keeps the self-attention's output bound (attention_output) until self.output returns.
    // Held in inference only: in training the dense saves it anyway.
    if (!b.training()) b.hold(ctx);
    TensorId a = b.dropout(apply(b, ao, b.view(ctx, {B, S, H})), s.resid_dropout);
    b.hold(a);
    TensorId h1 = b.layer_norm(b.add(a, h), aln_w, aln_b);
    b.drop(a);
    if (!b.training()) b.drop(ctx);
    b.hold(h1);  // attention_output, until the layer returns
    TensorId mid = b.unary("gelu", apply(b, inter, h1), true, false);
    b.hold(mid);  // intermediate_output, until feed_forward_chunk returns
    TensorId o = b.dropout(apply(b, out, mid), s.resid_dropout);
    b.hold(o);
    h = b.layer_norm(b.add(o, h1), oln_w, oln_b);
    for (TensorId t : {o, mid, h1, layer_in}) b.drop(t);
    if (probs != kNoTensor) b.drop(probs);
    b.end_layer();
  }
  b.drop(embedding_output);
  return h;
}

void masked_lm_head_loss(GraphBuilder& b, TensorId h, const MaskedLmHead& w, TensorId ids) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len, V = b.shape(w.decoder)[0];
  b.hold(h);  // BertForMaskedLM.forward keeps sequence_output bound until it returns, after the loss (trace)
  TensorId t = b.layer_norm(b.unary("gelu", apply(b, w.dense, h), true, false), w.ln_w, w.ln_b);
  // hidden_states = self.transform(...); hidden_states = self.decoder(hidden_states): the norm's output stays bound
  // until the decoder returns, also past autocast's 16-bit copy of it (an fp32 [B, S, E] under amp).
  b.hold(t);
  TensorId logits = b.linear(t, w.decoder, w.decoder_bias);
  b.drop(t);
  if (!b.training()) {  // MaskedLMOutput(logits=prediction_scores); sequence_output bound until the forward returns
    forward_output(b, {logits});
    return;
  }
  b.mark_model_end();
  b.hold(logits);  // prediction_scores live in the output until forward returns
  TensorId flat = b.view(logits, {B * S, V});
  TensorId loss = b.cross_entropy(flat, b.view(ids, {B * S}));
  b.drop(logits);
  b.drop(h);
  b.exit_autocast();
  b.set_loss(loss);
}

RobertaEmbeddingIds roberta_embedding_ids(GraphBuilder& b, TensorId ids) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len;
  auto op1 = [&](std::string_view name, std::vector<TensorId> reads, DType t) {
    return b.generic_one(name, std::move(reads), {B, S}, t);
  };
  TensorId mask = op1("to_int", {op1("ne", {ids}, DType::boolean)}, DType::i32);
  b.hold(mask);
  // torch.cumsum of an int32 tensor accumulates in int64: it first copies the mask to int64, freed once the cumsum
  // has run (whole-run inference stream, roberta-large b128 s256). Inference only (training as fitted).
  const TensorId cumsum_in = b.training() ? mask : op1("to_long", {mask}, DType::i64);
  TensorId incremental = op1("type_as", {op1("cumsum", {cumsum_in}, DType::i64)}, DType::i32);
  incremental = op1("add_scalar", {incremental}, DType::i32);  // + past_key_values_length (0): a new tensor
  incremental = op1("mul", {incremental, mask}, DType::i32);
  b.hold(incremental);
  const TensorId position_ids = op1("add_scalar", {op1("to_long", {incremental}, DType::i64)}, DType::i64);
  b.drop(incremental);
  b.drop(mask);
  b.hold(position_ids);
  const TensorId type_ids = op1("gather", {position_ids}, DType::i64);
  if (!b.training()) b.hold(type_ids);
  return {position_ids, type_ids};
}

TensorId bert_position_ids(GraphBuilder& b, TensorId buffer) {
  const int64_t S = b.config().seq_len;
  if (b.training() || buffer == kNoTensor) return b.input({1, S}, DType::i64);
  return b.view(buffer, {1, S});
}

TokenTypeIds bert_token_type_ids(GraphBuilder& b) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len;
  if (b.training()) return {b.generic({"expand", {}, {{{B, S}, DType::i64}}, {}, {}, {}, {}})[0], kNoTensor};
  const TensorId gathered = b.generic_one("gather", {}, {1, S}, DType::i64);  // buffered_token_type_ids
  b.hold(gathered);
  return {b.view(gathered, {B, S}), gathered};
}

TensorId bert_token_type_embedding(GraphBuilder& b, const TokenTypeIds& t, TensorId table) {
  if (t.gathered == kNoTensor) return b.embedding(t.ids, table);
  const Shape s = b.shape(t.ids);
  const TensorId index = b.generic_one("index_contiguous", {t.ids}, {s[0] * s[1]}, DType::i64);
  return b.embedding(b.view(index, s), table);
}

TensorId encoder_pooler(GraphBuilder& b, const BertLinear& pooler, TensorId seq, TensorId embedding_output) {
  b.hold(seq);  // last_hidden_state, in the returned output
  if (embedding_output != kNoTensor) b.hold(embedding_output);
  const TensorId pooled = b.unary("tanh", apply(b, pooler, first_token(b, seq)), false, true);
  if (embedding_output != kNoTensor) b.drop(embedding_output);
  return pooled;
}

BertEmbeddingParams bert_embedding_params(GraphBuilder& b, const TransformerSpec& s) {
  const int64_t H = s.hidden_size;
  const bool train = !b.config().freeze_embeddings;
  BertEmbeddingParams w;
  w.word = b.param("embeddings.word_embeddings.weight", {s.vocab_size, H}, train);
  if (b.config().task == Task::lm) b.construction_temp(b.info(w.word).bytes);
  w.position = b.param("embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, train);
  w.token_type = b.param("embeddings.token_type_embeddings.weight", {s.type_vocab_size, H}, train);
  w.ln_w = b.param("embeddings.LayerNorm.weight", {H}, train);
  w.ln_b = b.param("embeddings.LayerNorm.bias", {H}, train);
  return w;
}

TensorId bert_embeddings(GraphBuilder& b, const TransformerSpec& s, const BertEmbeddingParams& w, TensorId ids,
                         const TokenTypeIds& type_ids, TensorId position_buffer) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len;
  // inputs_embeds and token_type_embeddings stay bound until the embeddings' forward returns.
  TensorId we = b.embedding(ids, w.word);
  b.hold(we);
  TensorId te = bert_token_type_embedding(b, type_ids, w.token_type);
  b.hold(te);
  TensorId e = b.add(we, te);
  // position_embeddings is a local until the embeddings return too. Held in inference only: in training the
  // [1, S, H] block's earlier release is what the measured rows were fitted with (its add saves nothing).
  const TensorId pe = b.embedding(bert_position_ids(b, position_buffer), w.position);
  if (!b.training()) b.hold(pe);
  e = b.add(e, pe);
  TensorId task_ids = kNoTensor, task_e = kNoTensor;
  if (w.task_type != kNoTensor) {
    // ErnieEmbeddings: task_type_ids = torch.zeros(input_shape, long) (the lookup saves it), the lookup (a local),
    // embeddings += task_type_embeddings.
    task_ids = b.generic_one("zeros", {}, {B, S}, DType::i64);
    b.hold(task_ids);
    task_e = b.embedding(task_ids, w.task_type);
    b.hold(task_e);
    e = b.inplace_add(e, task_e);
  }
  TensorId h = b.dropout(b.layer_norm(e, w.ln_w, w.ln_b), s.embd_dropout);
  b.drop(we);
  b.drop(te);
  if (!b.training()) b.drop(pe);
  if (type_ids.gathered != kNoTensor) b.drop(type_ids.gathered);
  if (task_e != kNoTensor) {
    b.drop(task_e);
    b.drop(task_ids);
  }
  return h;
}

void bert_model(GraphBuilder& b, const TransformerSpec& s, const BertEmbeddingParams& emb) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len;
  // The embeddings' non-persistent int64 buffers position_ids and token_type_ids [1, max_position_embeddings],
  // moved after its parameters (whole-run inference stream: two 4 KiB blocks after the LayerNorm's bias).
  // Registered in inference only (training predictions unchanged).
  TensorId position_buffer = kNoTensor;
  if (!b.training()) {
    position_buffer = b.buffer("embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
    b.buffer("embeddings.token_type_ids", {1, s.max_position_embeddings}, DType::i64);
  }
  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  const TokenTypeIds type_ids = bert_token_type_ids(b);
  const TensorId word = emb.word;
  TensorId h = bert_embeddings(b, s, emb, ids, type_ids, position_buffer);
  const TensorId embedding_output = h;
  const int64_t H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !b.config().freeze_embeddings;
  h = bert_encoder(b, s, h);
  if (b.config().task == Task::feature) {
    // AutoModel: BertModel(config) with its pooler; BaseModelOutputWithPooling(last_hidden_state, pooler_output).
    const BertLinear pooler = bert_linear(b, "pooler.dense", H, H, true);
    forward_output(b, {h, encoder_pooler(b, pooler, h, embedding_output)});
    return;
  }
  if (b.config().task != Task::lm) {
    // BertFor{Sequence,Token}Classification (heads_encoder.cpp)
    bert_cls_head(b, s, h, labels, embedding_output);
    return;
  }
  BertLinear tr = bert_linear(b, "cls.predictions.transform.dense", H, H, emb_train);
  TensorId tln_w = b.param("cls.predictions.transform.LayerNorm.weight", {H}, emb_train);
  TensorId tln_b = b.param("cls.predictions.transform.LayerNorm.bias", {H}, emb_train);
  TensorId dec_b = b.param("cls.predictions.bias", {V}, emb_train);
  masked_lm_head_loss(b, h, {tr, tln_w, tln_b, word, dec_b}, ids);
}

}  // namespace memplan
