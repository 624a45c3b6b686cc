// MPNetForMaskedLM / MPNetForSequenceClassification / MPNetForTokenClassification (transformers 5.17
// models/mpnet/modeling_mpnet.py), training forward + loss. Eager attention only (MPNetPreTrainedModel has no
// SDPA: from_config(attn_implementation="sdpa") raises) and no gradient checkpointing (transformers refuses it).
//
// Stages:
//   MPNetEmbeddings: position ids from the input ids with the fixed padding index 1
//     (create_position_ids_from_input_ids: ne, int, cumsum, type_as, * mask, long, + 1: [B, S] integer kernels,
//     `mask` and `incremental_indices` bound until the function returns), word + position embeddings (both
//     [B, S, H] locals bound until the embeddings return), LayerNorm, dropout. No token types.
//   create_bidirectional_mask with no attention_mask: None.
//   MPNetEncoder.compute_position_bias, once per forward: the bucket arithmetic runs on the CPU (torch.arange
//     without a device, outside the harness' device context), rp_bucket.to(cuda) is one int64 [S, S] tensor (the
//     bias lookup saves it), relative_attention_bias(rp_bucket) [S, S, heads] in the parameters' dtype (fp32 under
//     autocast: nn.Embedding is no autocast op), permuted to [1, heads, S, S] and expand(B).contiguous() into a
//     fresh [B, heads, S, S] tensor the encoder keeps bound until it returns. Its backward sums every layer's
//     gradient into one buffer (cast to fp32 per layer under autocast), reduces it to [1, heads, S, S] and
//     scatters it into the [32, heads] table.
//   MPNetLayer (per layer): MPNetSelfAttention: q, k, v (nn.Linear views, bound until it returns), scores =
//     matmul(q, k^T) (head-split copies saved by bmm), / sqrt(head_dim) (a new tensor), += position_bias (in
//     place), softmax, dropout, matmul with v, permute().contiguous(), o. `attention_scores` is never rebound
//     after the in-place add, so the scaled scores stay alive until the self-attention returns (BERT's eager
//     attention rebinds its scores to the softmax). MPNetAttention keeps the self-attention's output tuple
//     (o) while LayerNorm(dropout(o) + hidden_states) runs; MPNetIntermediate / MPNetOutput are BERT's.
//   heads: lm: MPNetLMHead (dense, gelu, layer_norm, decoder tied to the word embeddings with lm_head.bias):
//     BERT's masked-LM statements (masked_lm_head_loss); seq_cls: MPNetClassificationHead, RoBERTa's statements;
//     token_cls: dropout(hidden_dropout_prob), classifier (roberta_cls_head's token path).
// Parameter order: the harness builds the model on the GPU, so parameters are allocated as __init__ creates
// them: embeddings (word, position, LayerNorm, then the int64 position_ids buffer [1, max_positions]), every
// layer (attn q, k, v, o, attention LayerNorm, intermediate, output dense and LayerNorm), the encoder's
// relative_attention_bias after the layers, then the head (MPNetLMHead: dense, layer_norm, bias; the tied
// decoder's own weight and bias never reach the device).
#include "engine/arch/encoders/bert_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct MpnetLayer {
  BertLinear q, k, v, o, inter, out;
  TensorId aln_w, aln_b, oln_w, oln_b;
};

MpnetLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  const std::string p = "encoder.layer." + std::to_string(i) + ".";
  const bool train = !layer_frozen(b.config(), i);
  MpnetLayer w;
  w.q = bert_linear(b, p + "attention.attn.q", H, H, train);
  w.k = bert_linear(b, p + "attention.attn.k", H, H, train);
  w.v = bert_linear(b, p + "attention.attn.v", H, H, train);
  w.o = bert_linear(b, p + "attention.attn.o", H, H, train);
  w.aln_w = b.param(p + "attention.LayerNorm.weight", {H}, train);
  w.aln_b = b.param(p + "attention.LayerNorm.bias", {H}, train);
  w.inter = bert_linear(b, p + "intermediate.dense", I, H, train);
  w.out = bert_linear(b, p + "output.dense", H, I, train);
  w.oln_w = b.param(p + "output.LayerNorm.weight", {H}, train);
  w.oln_b = b.param(p + "output.LayerNorm.bias", {H}, train);
  return w;
}

TensorId apply(GraphBuilder& b, const BertLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

// MPNetEncoder.compute_position_bias on the GPU side (see the file comment): [B, heads, S, S].
TensorId position_bias(GraphBuilder& b, const TransformerSpec& s, TensorId table) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len, nh = s.num_heads;
  const TensorId rp_bucket = b.generic_one("to_device", {}, {S, S}, DType::i64);
  const TensorId values = b.embedding(rp_bucket, table);  // [S, S, heads]
  // permute([2, 0, 1]).unsqueeze(0): a view; embedding_dense_backward makes its permuted gradient contiguous.
  const TensorId permuted = b.view_copying_grad(values, {1, nh, S, S});
  // expand((B, -1, S, S)).contiguous(): a fresh tensor; ExpandBackward sums the gradient back to [1, heads, S, S].
  return b.generic_one("expand_contiguous", {permuted}, {B, nh, S, S}, b.dtype(values));
}

// MPNetLayer.forward over h with the encoder's position bias.
TensorId mpnet_layer(GraphBuilder& b, const TransformerSpec& s, const MpnetLayer& w, TensorId h, TensorId bias) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len, H = s.hidden_size;
  const int64_t nh = s.num_heads, hd = s.head_dim;
  const TensorId layer_in = h;
  b.hold(layer_in);  // MPNetLayer.forward's hidden_states (and the encoder's loop variable) until it returns
  // MPNetSelfAttention.forward
  // view(...).transpose(1, 2): bmm's backward hands each a gradient in [B, heads, S, head_dim] memory, which
  // the projection's backward reshapes to [B * S, H] with a copy (whole-run streams: a head-sized block made
  // and the incoming one freed before each q / k / v projection's backward).
  const TensorId q = b.view_copying_grad(apply(b, w.q, h), {B, nh, S, hd});
  const TensorId k = b.view_copying_grad(apply(b, w.k, h), {B, nh, S, hd});
  const TensorId v = b.view_copying_grad(apply(b, w.v, h), {B, nh, S, hd});
  for (TensorId t : {q, k, v}) b.hold(t);  // bound until the self-attention returns
  // torch.matmul copies each head-split view before bmm, which saves the copies (as BERT's eager attention).
  TensorId scores = b.scalar_op("div_scalar", b.matmul(q, k, {B, nh, S, S}, true, true), false);
  // attention_scores += position_bias: AddBackward0 hands the gradient to both; the replay casts the bias's
  // share to fp32 under autocast (validate_outputs), a fresh [B, heads, S, S] block per layer.
  scores = b.inplace("add_", scores, false, {bias});
  b.hold(scores);                        // attention_scores: bound until the self-attention returns
  // nn.functional.softmax without a dtype: autocast's fp32 policy calls softmax(x, dim, float32); ATen fuses
  // the upcast into the kernel for fp16 input only, a bf16 input is first copied to fp32 (ToCopyBackward casts
  // the gradient back): whole-run streams, amp bf16 an fp32 [B, heads, S, S] copy made before the output and
  // freed after it, amp fp16 none. Dropout rebinds attention_probs.
  const TensorId soft_in = b.autocast() && b.dtype(scores) == DType::bf16 ? b.to(scores, DType::f32) : scores;
  const TensorId probs = b.dropout(b.softmax_last(soft_in), s.attn_dropout);
  b.hold(probs);
  TensorId c = b.contiguous_copy(b.matmul(probs, v, {B, nh, S, hd}, false, true), {B, S, nh, hd},
                                 /*grad_copied=*/true);
  b.hold(c);  // c (rebound to its [B, S, H] view) until the self-attention returns
  const TensorId o = apply(b, w.o, b.view(c, {B, S, H}));
  for (TensorId t : {q, k, v, scores, probs, c}) b.drop(t);
  // MPNetAttention.forward: self_outputs holds o while LayerNorm(dropout(o) + hidden_states) runs.
  b.hold(o);
  const TensorId h1 = b.layer_norm(b.add(b.dropout(o, s.resid_dropout), h), w.aln_w, w.aln_b);
  b.drop(o);
  b.hold(h1);  // attention_output, until the layer returns
  // MPNetIntermediate / MPNetOutput (BERT's): intermediate_output bound until the layer returns; MPNetOutput
  // binds the dropout's output while LayerNorm(hidden_states + input_tensor) runs.
  const TensorId mid = b.unary("gelu", apply(b, w.inter, h1), true, false);
  b.hold(mid);
  const TensorId od = b.dropout(apply(b, w.out, mid), s.resid_dropout);
  b.hold(od);
  const TensorId out = b.layer_norm(b.add(od, h1), w.oln_w, w.oln_b);
  for (TensorId t : {od, mid, h1, layer_in}) b.drop(t);
  return out;
}

}  // namespace

void build_mpnet(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "MPNet has no SDPA attention in transformers 5.17 (from_config refuses it): use eager");
  if (cfg.grad_checkpointing || !cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing", "true",
                     "transformers 5.17 refuses gradient checkpointing for MPNet (supports_gradient_checkpointing "
                     "is False)");
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId word = b.param("mpnet.embeddings.word_embeddings.weight", {V, H}, emb_train);
  const TensorId posw = b.param("mpnet.embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, emb_train);
  const TensorId eln_w = b.param("mpnet.embeddings.LayerNorm.weight", {H}, emb_train);
  const TensorId eln_b = b.param("mpnet.embeddings.LayerNorm.bias", {H}, emb_train);
  b.buffer("mpnet.embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  std::vector<MpnetLayer> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(layer_params(b, s, i));
  const TensorId table = b.param("mpnet.encoder.relative_attention_bias.weight",
                                 {s.relative_attention_num_buckets, s.num_heads}, true);
  BertLinear lm_dense{};
  TensorId lm_ln_w = kNoTensor, lm_ln_b = kNoTensor, lm_bias = kNoTensor;
  RobertaClsHead head;
  if (cfg.task == Task::lm) {
    lm_dense = bert_linear(b, "lm_head.dense", H, H, emb_train);
    lm_ln_w = b.param("lm_head.layer_norm.weight", {H}, emb_train);
    lm_ln_b = b.param("lm_head.layer_norm.bias", {H}, emb_train);
    // The decoder's own weight and bias are never allocated on the device: the whole-run streams go from
    // layer_norm's bias straight to lm_head.bias (no [V, H] block between them, unlike BERT's builder).
    lm_bias = b.param("lm_head.bias", {V}, emb_train);
  } else if (cfg.task != Task::feature) {
    head = roberta_cls_params(b, s);
  }
  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);

  // create_position_ids_from_input_ids(input_ids, 1); every intermediate is [B, S].
  auto op1 = [&](std::string_view name, std::vector<TensorId> reads, DType t) {
    return b.generic_one(name, std::move(reads), {B, S}, t);
  };
  const TensorId mask = op1("to_int", {op1("ne", {ids}, DType::boolean)}, DType::i32);
  b.hold(mask);
  TensorId incremental = op1("type_as", {op1("cumsum", {mask}, DType::i64)}, DType::i32);
  incremental = op1("mul", {incremental, mask}, DType::i32);
  b.hold(incremental);
  const TensorId position_ids = op1("add_scalar", {op1("to_long", {incremental}, DType::i64)}, DType::i64);
  b.drop(incremental);
  b.drop(mask);
  b.hold(position_ids);  // MPNetEmbeddings.forward's local until it returns
  const TensorId we = b.embedding(ids, word);
  b.hold(we);  // inputs_embeds and position_embeddings: locals until the embeddings return
  const TensorId pe = b.embedding(position_ids, posw);
  b.hold(pe);
  TensorId h = b.dropout(b.layer_norm(b.add(we, pe), eln_w, eln_b), s.embd_dropout);
  for (TensorId t : {we, pe, position_ids}) b.drop(t);

  const TensorId embedding_output = h;
  b.hold(embedding_output);  // MPNetModel.forward keeps it bound until the encoder has run
  const TensorId bias = position_bias(b, s, table);
  b.hold(bias);  // position_bias: MPNetEncoder.forward's local until it returns
  for (int64_t i = 0; i < s.num_layers; ++i) {
    b.begin_layer("encoder.layer." + std::to_string(i), false);
    h = mpnet_layer(b, s, layers[static_cast<size_t>(i)], h, bias);
    b.end_layer();
  }
  b.drop(bias);
  if (cfg.task == Task::feature) {
    // AutoModel: MPNetModel(config) with its pooler (dense + tanh on the first token), registered after the
    // encoder and run while embedding_output is still bound; BaseModelOutputWithPooling.
    const BertLinear pooler = bert_linear(b, "pooler.dense", H, H, true);
    forward_output(b, {h, encoder_pooler(b, pooler, h, embedding_output)});
    return;
  }
  b.drop(embedding_output);

  if (cfg.task != Task::lm) {
    roberta_cls_head(b, s, head, h, labels);  // MPNetClassificationHead is RoBERTa's; the token head too
    return;
  }
  masked_lm_head_loss(b, h, {lm_dense, lm_ln_w, lm_ln_b, word, lm_bias}, ids);
}

}  // namespace memplan
