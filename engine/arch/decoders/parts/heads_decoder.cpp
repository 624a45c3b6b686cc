// Classification heads on decoder-only models, in place of the CausalLM head (no lm_head, so no [B, S, V]
// logits): transformers 5.17 modeling_layers.py GenericForSequenceClassification / GenericForTokenClassification
// (LlamaFor..., MistralFor..., Qwen2For..., Qwen3For... are those classes with nothing added) and modeling_gpt2.py
// GPT2ForSequenceClassification (the same statements as the generic sequence head; CrossEntropyLoss()).
//   seq_cls:   logits = score(hidden) [B, S, NL] (Linear, no bias); non_pad_mask = (ids != pad).to(int32);
//              token_indices = arange(S, int32); last = (token_indices * non_pad_mask).argmax(-1);
//              pooled = logits[arange(B), last] [B, NL]; loss = cross_entropy(pooled.view(-1, NL), labels [B])
//              (ForSequenceClassificationLoss: no upcast; single-label classification).
//   token_cls: x = dropout(hidden); logits = score(x) [B, S, NL] (+ bias); ForTokenClassification:
//              logits.view(-1, NL).float(), cross_entropy against labels [B * S].
// Python lifetimes: the base model's output keeps the last hidden state, and the forward's locals (logits, the
// mask and indices, the dropout output) live until the forward returns, after the loss. The index's backward
// writes the pooled gradient into a zero-filled [B, S, NL] tensor; score's backward gives the [B, S, H] gradient
// the final norm receives (the CausalLM head's [B, S, V] logits, their fp32 copy and their gradient are gone).
// The labels are a batch input of their own (the causal LM's labels are the input ids themselves), made after the
// input ids.
#include "engine/arch/builders.h"

#include "engine/errors.h"

namespace memplan {

namespace {

// What the sequence head raises in transformers (the losses not modelled: check_cls_loss).
void check_seq_cls(const TransformerSpec& s, const RunConfig& cfg) {
  if (!s.has_pad_token_id && cfg.batch_size != 1)
    throw InputError("config.pad_token_id", "None",
                     "the sequence classification head raises at batch size > 1 without a padding token "
                     "(\"Cannot handle batch sizes > 1 if no padding token is defined.\"); set pad_token_id");
}

}  // namespace

void decoder_cls_head(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId ids, TensorId labels) {
  const auto& cfg = b.config();
  if (!b.training()) throw InputError("task", std::string(task_name(cfg.task)), "is modelled for training only");
  const bool seq = cfg.task == Task::seq_cls;
  if (seq) check_seq_cls(s, cfg);
  check_cls_loss(b, s);
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, NL = cfg.num_labels;
  // nn.Linear(hidden, num_labels): registered after the base model (the head's only parameters).
  const TensorId w = b.param("score.weight", {NL, H});
  const TensorId bias = !seq && s.token_cls_bias ? b.param("score.bias", {NL}) : kNoTensor;
  if (labels == kNoTensor) labels = task_labels(b, kNoTensor);
  b.hold(hidden);  // outputs.last_hidden_state until the forward returns
  if (!seq) {
    const TensorId x = b.dropout(hidden, s.token_cls_dropout);
    if (x != hidden) b.hold(x);  // sequence_output, rebound to the dropout's output
    const TensorId logits = b.linear(x, w, bias);
    b.hold(logits);
    b.mark_model_end();
    // ForTokenClassification: view, then .float() (a copy unless fp32), bound as `logits` until it returns.
    const TensorId f = b.to(b.view(logits, {B * S, NL}), DType::f32);
    b.hold(f);
    const TensorId loss = b.cross_entropy(f, b.view(labels, {B * S}));
    for (TensorId t : {f, logits, x, hidden}) b.drop(t);
    b.exit_autocast();
    b.set_loss(loss);
    return;
  }
  const TensorId logits = b.linear(hidden, w);
  b.hold(logits);
  TensorId last = kNoTensor, mask = kNoTensor, positions = kNoTensor;
  if (s.has_pad_token_id) {
    // (input_ids != pad) is a temporary of the statement; its int32 copy is the local non_pad_mask.
    mask = b.generic_one("to_copy", {b.generic_one("ne", {ids}, {B, S}, DType::boolean)}, {B, S}, DType::i32);
    b.hold(mask);
    positions = b.generic_one("arange", {}, {S}, DType::i32);
    b.hold(positions);
    last = b.generic_one("argmax", {b.generic_one("mul", {positions, mask}, {B, S}, DType::i32)}, {B}, DType::i64);
    b.hold(last);
  }
  // logits[torch.arange(B), last_non_pad_token]: the advanced index keeps its index tensors for the backward,
  // which scatters the gradient into a zero-filled tensor of logits' size with index_put_(accumulate=True); its
  // sort of the linearised indices holds four [B] int64 vectors and a flag at once (whole-run streams: five
  // small blocks after the zero-filled gradient).
  const TensorId rows = b.generic_one("arange", {}, {B}, DType::i64);
  std::vector<TensorId> reads{logits, rows};
  if (last != kNoTensor) reads.push_back(last);
  std::vector<int> saved{1};
  if (last != kNoTensor) saved.push_back(2);
  const int64_t idx = 8 * B;
  const TensorId pooled =
      b.generic({"index", reads, {{{B, NL}, b.dtype(logits)}}, saved, {}, {}, {idx, idx, idx, idx, 1}})[0];
  b.hold(pooled);  // the output's logits
  b.mark_model_end();
  const TensorId loss = b.cross_entropy(b.view(pooled, {B, NL}), labels);
  for (TensorId t : {pooled, last, positions, mask, logits, hidden})
    if (t != kNoTensor) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
