// XLMRobertaXLForMaskedLM / XLMRobertaXLFor{Sequence,Token}Classification / XLMRobertaXLModel (transformers
// models/xlm_roberta_xl/modular_xlm_roberta_xl.py as the code index holds it: a 5.x modular file over 5.17's
// BertSelfAttention, BertLayer, BertModel and RobertaEmbeddings, whose statements bert_parts.h mirrors, measured),
// training forward + loss, or one forward (Task::feature: the bare model with its pooler; heads: their logits).
//
// XLMRobertaXLEmbeddings: RobertaEmbeddings without its LayerNorm: the position ids from the input ids and the
//   token-type buffer gathered at them (roberta_embedding_ids); inputs_embeds + token_type_embeddings, then
//   `embeddings = embeddings + position_embeddings`, dropout. The lookups are locals until it returns.
// XLMRobertaXLLayer (pre-LN; BertLayer's forward): XLMRobertaXLAttention: intermediate = self_attn_layer_norm(h)
//   (bound until the attention module returns), BertSelfAttention on it (bert_self_attention), self.output:
//   dense, dropout, + h (no norm; the context bound until it returns in inference, as BERT's); the layer keeps
//   the attention probabilities (`_`, eager) until it returns. feed_forward_chunk: intermediate_output =
//   LayerNorm(attention_output); intermediate_output = intermediate(...) (dense, gelu; the normed input released
//   once it returns); output: dense + attention_output (no dropout, no norm). attention_output is bound until the
//   layer returns.
// XLMRobertaXLEncoder: the layers, then LayerNorm. XLMRobertaXLModel is BertModel: the embeddings' output bound
//   until the encoder returns; no mask is made (create_bidirectional_mask returns None without one).
// Heads: XLMRobertaXLLMHead (dense, gelu, layer_norm, decoder tied to the word embeddings, its bias lm_head.bias;
//   the masked-LM loss), RobertaClassificationHead (seq_cls), dropout + classifier (token_cls), registered after
//   the base model (the classes assign self.roberta first).
// Registration order: embeddings word, token_type, position (RobertaEmbeddings' order with the LayerNorm deleted);
// per layer attention.self query, key, value, attention.output.dense, attention.self_attn_layer_norm,
// intermediate.dense, output.dense, LayerNorm; encoder.LayerNorm; pooler (feature); then the head.
#include "engine/arch/encoders/bert_parts.h"

namespace memplan {

namespace {

struct XlLayer {
  BertLinear q, k, v, ao, inter, out;
  TensorId sa_ln_w, sa_ln_b, ln_w, ln_b;
};

XlLayer xl_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  const std::string p = "encoder.layer." + std::to_string(i) + ".";
  XlLayer w;
  w.q = bert_linear(b, p + "attention.self.query", H, H, train);
  w.k = bert_linear(b, p + "attention.self.key", H, H, train);
  w.v = bert_linear(b, p + "attention.self.value", H, H, train);
  w.ao = bert_linear(b, p + "attention.output.dense", H, H, train);
  w.sa_ln_w = b.param(p + "attention.self_attn_layer_norm.weight", {H}, train);
  w.sa_ln_b = b.param(p + "attention.self_attn_layer_norm.bias", {H}, train);
  w.inter = bert_linear(b, p + "intermediate.dense", I, H, train);
  w.out = bert_linear(b, p + "output.dense", H, I, train);
  w.ln_w = b.param(p + "LayerNorm.weight", {H}, train);
  w.ln_b = b.param(p + "LayerNorm.bias", {H}, train);
  return w;
}

TensorId xl_layer(GraphBuilder& b, const TransformerSpec& s, const XlLayer& w, int64_t i, TensorId h) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size;
  b.begin_layer("encoder.layer." + std::to_string(i), layer_checkpointed(cfg, i));
  const TensorId layer_in = h;
  b.hold(layer_in);  // BertLayer.forward's hidden_states (and the encoder's loop variable) until it returns
  const TensorId n1 = b.layer_norm(h, w.sa_ln_w, w.sa_ln_b);
  b.hold(n1);  // `intermediate`: bound until XLMRobertaXLAttention.forward returns
  const BertAttentionOut att = bert_self_attention(b, s, w.q, w.k, w.v, n1);
  const TensorId probs = !b.training() ? att.weights : kNoTensor;  // `_` until the layer returns
  if (probs != kNoTensor) b.hold(probs);
  if (!b.training()) b.hold(att.output);  // attention_output until self.output returns (inference, as BERT's)
  const TensorId h1 = b.add(b.dropout(b.linear(b.view(att.output, {B, S, H}), w.ao.w, w.ao.b), s.resid_dropout), h);
  if (!b.training()) b.drop(att.output);
  b.drop(n1);
  b.hold(h1);  // attention_output, until the layer returns
  const TensorId n2 = b.layer_norm(h1, w.ln_w, w.ln_b);
  b.hold(n2);  // intermediate_output, until self.intermediate returns
  const TensorId mid = b.unary("gelu", b.linear(n2, w.inter.w, w.inter.b), true, false);
  b.drop(n2);
  b.hold(mid);  // rebound intermediate_output, until self.output returns
  const TensorId out = b.add(b.linear(mid, w.out.w, w.out.b), h1);
  for (TensorId t : {mid, h1, layer_in, probs})
    if (t != kNoTensor) b.drop(t);
  b.end_layer();
  return out;
}

}  // namespace

void build_xlm_roberta_xl(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId word = b.param("embeddings.word_embeddings.weight", {V, H}, emb_train);
  const TensorId typew = b.param("embeddings.token_type_embeddings.weight", {s.type_vocab_size, H}, emb_train);
  const TensorId posw = b.param("embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, emb_train);
  // The embeddings' non-persistent int64 buffers (registered in inference only, as roberta.cpp's).
  if (!b.training()) {
    b.buffer("embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
    b.buffer("embeddings.token_type_ids", {1, s.max_position_embeddings}, DType::i64);
  }
  std::vector<XlLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(xl_layer_params(b, s, i, !layer_frozen(cfg, i)));
  const TensorId fln_w = b.param("encoder.LayerNorm.weight", {H}, emb_train);
  const TensorId fln_b = b.param("encoder.LayerNorm.bias", {H}, emb_train);

  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  const RobertaEmbeddingIds eids = roberta_embedding_ids(b, ids);
  const TensorId we = b.embedding(ids, word);
  b.hold(we);  // inputs_embeds, token_type_embeddings and position_embeddings: locals until the embeddings return
  const TensorId te = b.embedding(eids.type_ids, typew);
  b.hold(te);
  TensorId e = b.add(we, te);
  const TensorId pe = b.embedding(eids.position_ids, posw);
  b.hold(pe);
  e = b.add(e, pe);
  TensorId h = b.dropout(e, s.embd_dropout);
  for (TensorId t : {we, te, pe, eids.position_ids}) b.drop(t);
  if (!b.training()) b.drop(eids.type_ids);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // BertModel.forward keeps it bound until the encoder has run
  for (int64_t i = 0; i < s.num_layers; ++i) h = xl_layer(b, s, layers[static_cast<size_t>(i)], i, h);
  b.hold(h);  // `hidden_states = self.LayerNorm(hidden_states)` rebinds once the norm returns
  const TensorId seq = b.layer_norm(h, fln_w, fln_b);
  b.drop(h);
  b.drop(embedding_output);
  if (cfg.task == Task::feature) {
    // AutoModel: XLMRobertaXLModel(config) keeps its pooler (add_pooling_layer=True).
    const BertLinear pooler = bert_linear(b, "pooler.dense", H, H, true);
    forward_output(b, {seq, encoder_pooler(b, pooler, seq, kNoTensor)});
    return;
  }
  if (cfg.task == Task::seq_cls || cfg.task == Task::token_cls) {
    roberta_cls_head(b, s, roberta_cls_params(b, s), seq, labels);
    return;
  }
  const BertLinear lm_dense = bert_linear(b, "lm_head.dense", H, H, emb_train);
  const TensorId lm_ln_w = b.param("lm_head.layer_norm.weight", {H}, emb_train);
  const TensorId lm_ln_b = b.param("lm_head.layer_norm.bias", {H}, emb_train);
  const TensorId lm_bias = b.param("lm_head.bias", {V}, emb_train);
  masked_lm_head_loss(b, seq, {lm_dense, lm_ln_w, lm_ln_b, word, lm_bias}, ids);
}

}  // namespace memplan
