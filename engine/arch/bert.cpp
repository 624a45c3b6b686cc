// BertForMaskedLM (transformers 5.17 modeling_bert.py), training forward + masked-LM loss.
//   word + token_type embeddings, += position embeddings (in place), LayerNorm, dropout
//   N x layer: LN(h + drop(dense(sdpa(q, k, v)))), then LN(h + drop(dense(gelu(dense(h)))))
//   head: dense -> gelu -> LayerNorm -> decoder (tied to word embeddings, own bias) -> cross entropy.
#include "engine/arch/builders.h"

namespace memplan {

namespace {
struct Linear {
  TensorId w, b;
};
Linear make_linear(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool train) {
  return {b.param(name + ".weight", {out, in}, train), b.param(name + ".bias", {out}, train)};
}
TensorId apply(GraphBuilder& b, const Linear& l, TensorId x) { return b.linear(x, l.w, l.b); }
}  // namespace

void build_bert(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size, I = s.intermediate_size;
  const int64_t nh = s.num_heads, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId word = b.param("embeddings.word_embeddings.weight", {V, H}, emb_train);
  b.construction_temp(b.info(word).bytes);  // the decoder's own weight, until tie_weights() (whole-run stream)
  TensorId posw = b.param("embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, emb_train);
  TensorId typew = b.param("embeddings.token_type_embeddings.weight", {s.type_vocab_size, H}, emb_train);
  TensorId eln_w = b.param("embeddings.LayerNorm.weight", {H}, emb_train);
  TensorId eln_b = b.param("embeddings.LayerNorm.bias", {H}, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  TensorId type_ids = b.generic({"expand", {}, {{{B, S}, DType::i64}}, {}, {}, {}, {}})[0];

  // inputs_embeds and token_type_embeddings stay bound until BertEmbeddings.forward returns.
  TensorId we = b.embedding(ids, word);
  b.hold(we);
  TensorId te = b.embedding(type_ids, typew);
  b.hold(te);
  TensorId e = b.add(we, te);
  e = b.add(e, b.embedding(b.input({1, S}, DType::i64), posw));
  TensorId h = b.dropout(b.layer_norm(e, eln_w, eln_b), s.embd_dropout);
  b.drop(we);
  b.drop(te);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // BertModel.forward keeps it bound until the encoder has run (whole-run stream)

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    Linear q = make_linear(b, p + "attention.self.query", H, H, train);
    Linear k = make_linear(b, p + "attention.self.key", H, H, train);
    Linear v = make_linear(b, p + "attention.self.value", H, H, train);
    Linear ao = make_linear(b, p + "attention.output.dense", H, H, train);
    TensorId aln_w = b.param(p + "attention.output.LayerNorm.weight", {H}, train);
    TensorId aln_b = b.param(p + "attention.output.LayerNorm.bias", {H}, train);
    Linear inter = make_linear(b, p + "intermediate.dense", I, H, train);
    Linear out = make_linear(b, p + "output.dense", H, I, train);
    TensorId oln_w = b.param(p + "output.LayerNorm.weight", {H}, train);
    TensorId oln_b = b.param(p + "output.LayerNorm.bias", {H}, train);

    b.begin_layer("encoder.layer." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // BertLayer.forward's hidden_states (and the encoder's loop variable) until it returns
    TensorId qs = b.view(apply(b, q, h), {B, nh, S, hd});
    TensorId ks = b.view(apply(b, k, h), {B, nh, S, hd});
    TensorId vs = b.view(apply(b, v, h), {B, nh, S, hd});
    const TensorId proj[3] = {qs, ks, vs};
    for (TensorId t : proj) b.hold(t);  // query/key/value_layer stay bound until the self-attention returns
    TensorId ctx;
    if (cfg.attn == AttnImpl::sdpa) {
      ctx = b.sdpa(qs, ks, vs, s.attn_dropout, false);
    } else {
      // torch.matmul copies each head-split view (batch and head dims cannot merge) before bmm, and
      // bmm saves the copies (as GPT-2's eager attention, gpt2.cpp).
      TensorId scores = b.scalar_op("mul_scalar", b.matmul(qs, ks, {B, nh, S, S}, true, true), false);
      TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(qs));
      probs = b.dropout(probs, s.attn_dropout);
      ctx = b.contiguous_copy(b.matmul(probs, vs, {B, nh, S, hd}, false, true), {B, S, nh, hd},
                              /*grad_copied=*/true);
    }
    for (TensorId t : proj) b.drop(t);
    // BertSelfOutput / BertOutput: `LayerNorm(hidden_states + input_tensor)`, both operands bound until the
    // module returns, after the norm (whole-run stream).
    TensorId a = b.dropout(apply(b, ao, b.view(ctx, {B, S, H})), s.resid_dropout);
    b.hold(a);
    TensorId h1 = b.layer_norm(b.add(a, h), aln_w, aln_b);
    b.drop(a);
    b.hold(h1);  // attention_output, until the layer returns
    TensorId mid = b.unary("gelu", apply(b, inter, h1), true, false);
    b.hold(mid);  // intermediate_output, until feed_forward_chunk returns
    TensorId o = b.dropout(apply(b, out, mid), s.resid_dropout);
    b.hold(o);
    h = b.layer_norm(b.add(o, h1), oln_w, oln_b);
    for (TensorId t : {o, mid, h1, layer_in}) b.drop(t);
    b.end_layer();
  }
  b.drop(embedding_output);
  Linear tr = make_linear(b, "cls.predictions.transform.dense", H, H, emb_train);
  TensorId tln_w = b.param("cls.predictions.transform.LayerNorm.weight", {H}, emb_train);
  TensorId tln_b = b.param("cls.predictions.transform.LayerNorm.bias", {H}, emb_train);
  TensorId dec_b = b.param("cls.predictions.bias", {V}, emb_train);
  b.hold(h);  // BertForMaskedLM.forward keeps sequence_output bound until it returns, after the loss (trace)
  TensorId t = b.layer_norm(b.unary("gelu", apply(b, tr, h), true, false), tln_w, tln_b);
  TensorId logits = b.linear(t, word, dec_b);
  b.mark_model_end();
  b.hold(logits);  // prediction_scores live in the output until forward returns
  TensorId flat = b.view(logits, {B * S, V});
  TensorId loss = b.cross_entropy(flat, b.view(ids, {B * S}));
  b.drop(logits);
  b.drop(h);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
