// DistilBertForMaskedLM (transformers 5.17 models/distilbert/modeling_distilbert.py), training forward +
// masked-LM loss.
//   Embeddings: word + position embeddings (position_ids: a [1, S] slice of the registered buffer), LayerNorm,
//     dropout; no token types. sinusoidal_pos_embds only changes how _init_weights fills the position table
//     (the weight stays a trainable parameter), so it changes nothing here.
//   n_layers x TransformerBlock (a GradientCheckpointingLayer):
//     DistilBertSelfAttention: q_lin / k_lin / v_lin -> head-split views -> eager_attention_forward (BERT's,
//       copied) or SDPA, no mask (create_bidirectional_mask returns None without an attention_mask) -> reshape
//       -> out_lin. Unlike BertSelfOutput there is no dropout after out_lin, and out_lin runs inside the
//       self-attention's forward, so query/key/value_layer are still bound while it runs.
//     sa_layer_norm(attention_output + hidden_states)         (post-LN)
//     FFN.ff_chunk: lin1 -> activation -> lin2 -> dropout, each statement rebinding `x`
//     output_layer_norm(ffn_output + attention_output)
//   MLM head, written out in the forward: vocab_transform -> activation -> vocab_layer_norm -> vocab_projector
//     (weight tied to the word embeddings, own bias) -> nn.CrossEntropyLoss over prediction_logits.view(-1, V).
//   DistilBertForSequenceClassification / ...ForTokenClassification (RunConfig::task): the same DistilBertModel,
//     their heads in engine/arch/encoders/heads_encoder.cpp. Task::feature (inference): DistilBertModel alone
//     (no pooler), last_hidden_state returned.
//   Inference (model.eval(), inference_mode): dropout is the identity, nothing saved, no labels, no loss.
#include "engine/arch/encoders/bert_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

TensorId apply(GraphBuilder& b, const BertLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

// Transformer.forward over the embeddings' output: every TransformerBlock ("distilbert.transformer.layer.<i>."),
// parameters registered in module order, checkpointed / frozen per the run. Returns the last block's output.
TensorId distilbert_transformer(GraphBuilder& b, const TransformerSpec& s, TensorId h) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, I = s.intermediate_size;
  const int64_t nh = s.num_heads, hd = s.head_dim;
  const bool sdpa = cfg.attn == AttnImpl::sdpa;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "distilbert.transformer.layer." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    BertLinear q = bert_linear(b, p + "attention.q_lin", H, H, train);
    BertLinear k = bert_linear(b, p + "attention.k_lin", H, H, train);
    BertLinear v = bert_linear(b, p + "attention.v_lin", H, H, train);
    BertLinear o = bert_linear(b, p + "attention.out_lin", H, H, train);
    TensorId sln_w = b.param(p + "sa_layer_norm.weight", {H}, train);
    TensorId sln_b = b.param(p + "sa_layer_norm.bias", {H}, train);
    BertLinear lin1 = bert_linear(b, p + "ffn.lin1", I, H, train);
    BertLinear lin2 = bert_linear(b, p + "ffn.lin2", H, I, train);
    TensorId oln_w = b.param(p + "output_layer_norm.weight", {H}, train);
    TensorId oln_b = b.param(p + "output_layer_norm.bias", {H}, train);

    b.begin_layer("distilbert.transformer.layer." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // TransformerBlock.forward's hidden_states (and Transformer's loop variable) until it returns
    // DistilBertSelfAttention.forward: query/key/value_layer are locals until it returns, after out_lin.
    // The head-split views' gradients: SDPA's backward writes them in the projections' layout; eager's bmm
    // backward writes contiguous [B, heads, S, head_dim] ones, which the view's backward copies.
    auto heads = [&](TensorId x) {
      return sdpa ? b.view(x, {B, nh, S, hd}) : b.view_copying_grad(x, {B, nh, S, hd});
    };
    TensorId qs = heads(apply(b, q, h));
    TensorId ks = heads(apply(b, k, h));
    TensorId vs = heads(apply(b, v, h));
    const TensorId proj[3] = {qs, ks, vs};
    for (TensorId t : proj) b.hold(t);
    const BertAttentionOut attn = bert_attention(b, s, qs, ks, vs);
    // attn_weights (eager: the probabilities after dropout) is returned and bound as `_` in the block's forward
    // until it returns.
    if (attn.weights != kNoTensor) b.hold(attn.weights);
    TensorId a = apply(b, o, b.view(attn.output, {B, S, H}));
    for (TensorId t : proj) b.drop(t);
    // attention_output = sa_layer_norm(attention_output + hidden_states): the out_lin output stays bound
    // through the norm, then the name is rebound to the norm's output until the block returns.
    b.hold(a);
    TensorId h1 = b.layer_norm(b.add(a, h), sln_w, sln_b);
    b.drop(a);
    b.hold(h1);
    // FFN.ff_chunk (apply_chunking_to_forward calls it once: chunk_size_feed_forward 0): x rebound per
    // statement, so each output lives while the next op runs, then only if saved.
    TensorId x = b.unary("gelu", apply(b, lin1, h1), true, false);
    x = b.dropout(apply(b, lin2, x), s.resid_dropout);
    // ffn_output = output_layer_norm(ffn_output + attention_output): the FFN's output bound through the norm.
    b.hold(x);
    h = b.layer_norm(b.add(x, h1), oln_w, oln_b);
    b.drop(x);
    if (attn.weights != kNoTensor) b.drop(attn.weights);
    b.drop(h1);
    b.drop(layer_in);
    b.end_layer();
  }
  return h;
}

}  // namespace

void build_distilbert(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId word = b.param("distilbert.embeddings.word_embeddings.weight", {V, H}, emb_train);
  TensorId posw = b.param("distilbert.embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, emb_train);
  TensorId eln_w = b.param("distilbert.embeddings.LayerNorm.weight", {H}, emb_train);
  TensorId eln_b = b.param("distilbert.embeddings.LayerNorm.bias", {H}, emb_train);
  // The non-persistent position_ids buffer, arange(max_position_embeddings).expand((1, -1)): moved to the device
  // with the model after the module's parameters (whole-run stream: 4 KiB after the LayerNorm's bias).
  TensorId position_ids = b.buffer("distilbert.embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);

  // Embeddings.forward: inputs_embeds and position_embeddings are locals until it returns.
  TensorId we = b.embedding(ids, word);
  b.hold(we);
  TensorId pe = b.embedding(b.view(position_ids, {1, S}), posw);  // self.position_ids[:, :seq_length]
  b.hold(pe);
  TensorId h = b.dropout(b.layer_norm(b.add(we, pe), eln_w, eln_b), s.embd_dropout);
  b.drop(we);
  b.drop(pe);
  // DistilBertModel.forward keeps `embeddings` bound until the transformer returns.
  const TensorId embeddings = h;
  b.hold(embeddings);
  h = distilbert_transformer(b, s, h);
  b.drop(embeddings);
  if (cfg.task == Task::feature) {  // AutoModel: DistilBertModel, BaseModelOutput(last_hidden_state)
    forward_output(b, {h});
    return;
  }
  if (cfg.task != Task::lm) {
    distilbert_cls_head(b, s, h, labels);  // DistilBertFor{Sequence,Token}Classification (heads_encoder.cpp)
    return;
  }

  BertLinear transform = bert_linear(b, "vocab_transform", H, H, emb_train);
  TensorId ln_w = b.param("vocab_layer_norm.weight", {H}, emb_train);
  TensorId ln_b = b.param("vocab_layer_norm.bias", {H}, emb_train);
  // tie_word_embeddings false: vocab_projector keeps its own weight (registered before its bias); tied, the
  // projector's weight built at construction is dropped by tie_weights() (a construction transient when the
  // model is built on the device).
  TensorId projector = word;
  if (s.tie_word_embeddings)
    b.construction_temp(b.info(word).bytes);
  else
    projector = b.param("vocab_projector.weight", {V, H}, emb_train);
  TensorId projector_b = b.param("vocab_projector.bias", {V}, emb_train);

  // DistilBertForMaskedLM.forward: hidden_states (and dlbrt_output) stay bound until it returns, after the loss.
  // Each head statement rebinds prediction_logits, so the previous value lives until the next call returns: the
  // gelu output through vocab_layer_norm, the norm's output through vocab_projector (under autocast neither is
  // saved: the norm keeps its fp32 cast, the projector its bf16 cast; whole-run amp stream).
  b.hold(h);
  TensorId t = apply(b, transform, h);
  b.hold(t);
  TensorId g = b.unary("gelu", t, true, false);
  b.drop(t);
  b.hold(g);
  TensorId n = b.layer_norm(g, ln_w, ln_b);
  b.drop(g);
  b.hold(n);
  TensorId logits = b.linear(n, projector, projector_b);
  b.drop(n);
  if (!b.training()) {  // MaskedLMOutput(logits=prediction_logits): no labels, no loss
    forward_output(b, {logits});
    return;
  }
  b.mark_model_end();
  b.hold(logits);  // prediction_logits live in the output until forward returns
  // mlm_loss_fct (nn.CrossEntropyLoss) over prediction_logits.view(-1, V) and labels.view(-1); the harness passes
  // the input ids as labels.
  TensorId loss = b.cross_entropy(b.view(logits, {B * S, V}), b.view(ids, {B * S}));
  b.drop(logits);
  b.drop(h);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
