// GPT2LMHeadModel (transformers 5.17 modeling_gpt2.py), training forward + causal-LM loss; with cfg.task
// seq_cls, GPT2ForSequenceClassification (the same GPT2Model, then decoder_cls_head: heads_decoder.cpp).
//   wte(ids) + wpe(pos) -> drop -> N x Block -> ln_f -> lm_head (tied to wte) -> ForCausalLMLoss.
//   Block: h + drop(c_proj(attn(ln_1(h)))), then h + drop(c_proj(gelu_new(c_fc(ln_2(h))))).
//   Conv1D is addmm(bias, x2d, W[in, out]). gelu_new is the tanh formula written out in Python, so each
//   elementwise step is its own kernel with its own saved tensors.
// Inference (one InferencePass): K/V through the DynamicCache update, position ids [1, S] (plain forward) or
// [B, S] (generate), lm_head over the last logits_to_keep positions, no loss.
#include "engine/arch/builders.h"

#include <tuple>

namespace memplan {

namespace {

// `weights` receives eager attention's probabilities, held: GPT2Block binds them (`attn_output,
// self_attn_weights = self.attn(...)`) until it returns (whole-run stream, amp eager + checkpointing: the
// post-dropout probabilities are freed with the block's other locals). kNoTensor for SDPA.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, int64_t layer, TensorId h, TensorId mask,
                   TensorId& weights) {
  weights = kNoTensor;
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, hd = s.head_dim;
  const std::string p = "h." + std::to_string(layer) + ".attn.";
  const bool frozen = layer_frozen(cfg, layer);
  TensorId w_attn = b.param(p + "c_attn.weight", {H, 3 * H}, !frozen);
  TensorId b_attn = b.param(p + "c_attn.bias", {3 * H}, !frozen);
  TensorId w_proj = b.param(p + "c_proj.weight", {H, H}, !frozen);
  TensorId b_proj = b.param(p + "c_proj.bias", {H}, !frozen);

  TensorId qkv = b.linear(b.view(h, {B * S, H}), w_attn, b_attn, /*conv1d=*/true);
  // split(dim=2) + view + transpose: strided views of one buffer; SplitBackward concatenates the gradients.
  const auto qkv_parts = b.split(qkv, 3, {B, nh, S, hd});
  TensorId q = qkv_parts[0], k = qkv_parts[1], v = qkv_parts[2];
  for (TensorId t : qkv_parts) b.hold(t);  // query/key/value_states stay bound until the attention returns
  int64_t Lk = S;
  if (inf) {
    std::tie(k, v) = kv_update(b, k, v, 0);
    Lk = b.shape(k)[2];
  }
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    ctx = b.sdpa(q, k, v, s.attn_dropout, true);
  } else {
    // torch.matmul reshapes its 4-d operands to 3-d for bmm. q (and, in training, k^T and v: views of the
    // split qkv buffer) cannot merge batch and head dims without a copy, so each is copied first and the
    // copies are what bmm saves; the split buffer itself is saved by nobody. Cached K/V (inference) are
    // cat outputs, contiguous: no copy (whole-run stream, GPT-2 small amp eager + checkpointing: two
    // [B, S, H] copies before each scores bmm, one before each context bmm).
    const bool split_kv = !b.kv_cached();  // generate() without a cache: the split views, as in training
    TensorId scores = b.matmul(q, k, {B, nh, S, Lk}, /*copy_a=*/true, /*copy_b=*/split_kv);
    TensorId scale = b.generic({"full", {}, {{{}, b.dtype(scores)}}, {}, {}, {}, {}})[0];
    TensorId scaled = b.binary("div", scores, scale, false, true);
    TensorId masked = b.add(scaled, mask);
    TensorId probs = b.softmax_last(masked);
    probs = b.to(probs, b.dtype(v));  // .type(value.dtype)
    probs = b.dropout(probs, s.attn_dropout);
    weights = probs;
    b.hold(weights);
    ctx = b.matmul(probs, v, {B, nh, S, hd}, false, /*copy_b=*/split_kv);
    ctx = b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);  // transpose(1, 2) then reshape of a non-contiguous view
  }
  TensorId out = b.linear(b.view(ctx, {B * S, H}), w_proj, b_proj, true);
  TensorId y = b.dropout(b.view(out, {B, S, H}), s.resid_dropout);
  for (TensorId t : qkv_parts) b.drop(t);
  return y;
}

TensorId mlp(GraphBuilder& b, const TransformerSpec& s, int64_t layer, TensorId h) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, H = s.hidden_size,
                I = s.intermediate_size;
  const std::string p = "h." + std::to_string(layer) + ".mlp.";
  const bool frozen = layer_frozen(cfg, layer);
  TensorId w_fc = b.param(p + "c_fc.weight", {H, I}, !frozen);
  TensorId b_fc = b.param(p + "c_fc.bias", {I}, !frozen);
  TensorId w_proj = b.param(p + "c_proj.weight", {I, H}, !frozen);
  TensorId b_proj = b.param(p + "c_proj.bias", {H}, !frozen);
  TensorId fc = b.linear(b.view(h, {B * S, H}), w_fc, b_fc, true);
  b.hold(fc);  // `hidden_states = self.act(hidden_states)` rebinds only after the activation returns
  TensorId act = s.hidden_act == "gelu_new" ? gelu_new(b, fc) : b.unary("gelu", fc, true, false);
  b.drop(fc);
  b.hold(act);
  TensorId out = b.linear(act, w_proj, b_proj, true);
  b.drop(act);
  return b.dropout(b.view(out, {B, S, H}), s.resid_dropout);
}

}  // namespace

void build_gpt2(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows
  const bool emb_frozen = cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId wte = b.param("wte.weight", {V, H}, !emb_frozen);
  TensorId wpe = b.param("wpe.weight", {s.max_position_embeddings, H}, !emb_frozen);
  TensorId ids = b.input({B, S}, DType::i64);
  // GPT2ForSequenceClassification: the labels come with the batch, after the ids (heads_decoder.cpp).
  const TensorId labels = task_labels(b, kNoTensor);

  TensorId tok = b.embedding(ids, wte);
  b.hold(tok);  // inputs_embeds lives until GPT2Model.forward returns
  TensorId pos = b.embedding(b.input({P, S}, DType::i64), wpe);
  b.hold(pos);
  TensorId h = b.add(tok, pos);
  // Eager attention adds a materialised [B, 1, S, S] float mask built once per forward, after the embedding
  // sum and before its dropout, from a [1, 1, S, S] bool mask freed at once (whole-run stream).
  TensorId mask = kNoTensor;
  if (inf) {
    mask = inference_mask(b, 0, b.param_dtype());
  } else if (cfg.attn == AttnImpl::eager) {
    mask = eager_mask(b, 1, S, S, b.param_dtype());
  }
  h = b.dropout(h, s.embd_dropout);

  for (int64_t i = 0; i < s.num_layers; ++i) {
    b.begin_layer("h." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId block_in = h;
    if (inf) b.hold(block_in);  // the model's loop variable holds the block input until the block returns
    const std::string p = "h." + std::to_string(i) + ".";
    const bool frozen = layer_frozen(cfg, i);
    TensorId ln1 = b.layer_norm(h, b.param(p + "ln_1.weight", {H}, !frozen), b.param(p + "ln_1.bias", {H}, !frozen));
    b.hold(ln1);
    TensorId attn_weights = kNoTensor;
    TensorId a = attention(b, s, i, ln1, mask, attn_weights);
    b.hold(a);  // attn_output stays referenced until the block returns
    TensorId h1 = b.add(a, h);
    b.drop(ln1);
    TensorId ln2 = b.layer_norm(h1, b.param(p + "ln_2.weight", {H}, !frozen), b.param(p + "ln_2.bias", {H}, !frozen));
    b.hold(ln2);
    TensorId m = mlp(b, s, i, ln2);
    b.hold(m);
    h = b.add(h1, m);
    b.drop(ln2);
    b.drop(a);
    b.drop(m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (inf) b.drop(block_in);
    b.end_layer();
  }
  TensorId hf = b.layer_norm(h, b.param("ln_f.weight", {H}, !emb_frozen), b.param("ln_f.bias", {H}, !emb_frozen));
  b.drop(tok);
  b.drop(pos);
  if (cfg.task != Task::lm) {  // score over every position, no lm_head (so no tied head's temporary either)
    decoder_cls_head(b, s, hf, ids, labels);
    return;
  }
  b.construction_temp(b.info(wte).bytes);  // lm_head's own weight, until tie_weights() (whole-run streams)
  const TensorId head = b.tied_param("lm_head.weight", wte, !emb_frozen);  // wte, or peft's modules_to_save copy
  if (inf) {
    inference_head(b, hf, head);
    return;
  }
  causal_lm_training_head(b, hf, head, ids);
}

}  // namespace memplan
