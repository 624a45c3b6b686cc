// DeBERTa-v2 / v3 (transformers 5.17 models/deberta_v2/modeling_deberta_v2.py): DebertaV2ForMaskedLM,
// DebertaV2ForSequenceClassification (--task seq_cls) and DebertaV2ForTokenClassification (--task token_cls),
// one training step; in inference (model.eval(), inference_mode: nothing saved, dropout the identity, no labels and no
// loss) also DebertaV2Model alone (--task feature). The class sets no _supports_sdpa: only the eager DisentangledSelfAttention exists, so
// from_config refuses attn_implementation "sdpa" and so does this builder.
//
// Stages, as the Python runs them:
//   DebertaV2Model.forward: attention_mask = torch.ones([B, S]) in the default dtype (the harness passes none),
//     token_type_ids = torch.zeros([B, S], long), both bound until it returns.
//   DebertaV2Embeddings: word embedding; position embedding of position_ids[:, :S] (position_biased_input), else
//     zeros_like(inputs_embeds); + token-type embedding (type_vocab_size > 0); LayerNorm; * mask.unsqueeze(2)
//     (cast to the embeddings' dtype); dropout. inputs_embeds / position_embeddings / token_type_embeddings are
//     locals until it returns.
//   DebertaV2Encoder: get_attention_mask ([B,1,1,S] * [B,1,S,1] -> a [B, 1, S, S] mask in the mask's dtype),
//     get_rel_pos (build_relative_position: two aranges, their [S, S] int64 difference, and under position
//     buckets make_log_bucket_position's [S, S] temporaries as TorchScript's fused steady state runs them, then
//     .to(long)),
//     get_rel_embedding (LayerNorm over rel_embeddings.weight when norm_rel_ebd has layer_norm), all bound until
//     the encoder returns; the loop keeps every layer output in all_hidden_states, which DebertaV2Model.forward
//     holds until it returns.
//   DebertaV2Layer (a GradientCheckpointingLayer):
//     DisentangledSelfAttention: q / k / v projections, transpose_for_scores (view, permute, contiguous copy,
//       [B*nh, S, hd]); k^T / scale (a fresh [B*nh, hd, S]); bmm; pos_dropout(rel_embeddings) (every layer its
//       own mask and output); disentangled_attention_bias: the positional q / k projections of the relative
//       embeddings ([1, 2span, H] -> [nh, 2span, hd] -> .repeat(B, 1, 1)), c2p: bmm(q, pos_k^T) [B*nh, S, 2span],
//       clamp(relative_pos + span) (int64 [S, S]), gather along the last dim (saves the bmm output and the index),
//       / scale, `score += ...` on the int 0 (a fresh tensor); p2c: clamp(-relative_pos + span), bmm(k, pos_q^T),
//       gather, transpose, / scale, then `score += ...` in place. The gathered tensors are locals until the
//       function returns. attention_scores + rel_att; view; mask.bool(), ~, masked_fill; softmax; dropout; bmm
//       with v; view / permute / contiguous. The .bool() mask, the masked scores and rel_att die when the
//       self-attention returns.
//     DebertaV2SelfOutput / DebertaV2Output: LayerNorm(dropout(dense(x)) + input), the dropout output bound
//       through the norm; DebertaV2Intermediate: dense, gelu.
//   Heads: LegacyDebertaV2OnlyMLMHead (dense, gelu, LayerNorm, decoder tied to the word embeddings with
//     cls.predictions.bias; CrossEntropyLoss over the [B*S, V] scores, labels = the input ids) or, legacy false,
//     DebertaV2OnlyMLMHead (matmul with word_embeddings.weight.t(), + bias); ContextPooler (hidden_states[:, 0],
//     dropout, dense, activation), dropout, classifier, and the single-label loss through (labels >= 0).nonzero()
//     and two gathers; token classification: dropout, classifier, CrossEntropyLoss over [B*S, num_labels].
#include "engine/arch/encoders/bert_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

TensorId apply(GraphBuilder& b, const BertLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct LayerWeights {
  BertLinear q, k, v, pos_k, pos_q, ao, inter, out;
  TensorId aln_w, aln_b, oln_w, oln_b;
  bool train;
};

// The tensors DebertaV2Encoder.forward computes once and hands every layer.
struct EncoderInputs {
  TensorId mask = kNoTensor;     // get_attention_mask: [B, 1, S, S]
  TensorId rel_pos = kNoTensor;  // build_relative_position: int64 [1, S, S]
  TensorId rel_emb = kNoTensor;  // get_rel_embedding: [2span, H]
};

// build_relative_position(hidden_states, hidden_states, position_buckets, max_relative_positions) as the
// encoder's get_rel_pos runs it. make_log_bucket_position is TorchScript: the profiling executor interprets the
// first call op by op, then fuses the elementwise chain. Inference replays the first call in its first forward
// (InferencePass::first_call) and the steady state after it; training replays the steady state (every step after
// the first in the whole-run streams): sign(relative_pos); torch.tensor(mid - 1).type_as(...) (a device scalar); one
// fused group writing abs_pos / mid (float) and abs_pos (int64); log of the former; a second group writing the
// bucket_pos from it, abs_pos, sign and relative_pos; then .to(long). Each dies after its last use. The float
// intermediates are in the default dtype (true division of int64 makes one): bf16 in a pure-bf16 run
// (whole-run stream: 0.5 MiB where fp32 has 1 MiB at S = 512).
TensorId relative_position(GraphBuilder& b, const TransformerSpec& s, int64_t S) {
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape, DType t) {
    return b.generic_one(name, std::move(reads), std::move(shape), t);
  };
  const Shape sq = {S, S};
  const DType fl = b.param_dtype();  // torch.get_default_dtype(): the harness sets the model's dtype
  const TensorId q_ids = op("arange", {}, {S}, DType::i64);
  const TensorId k_ids = op("arange", {}, {S}, DType::i64);
  b.hold(q_ids);
  b.hold(k_ids);
  TensorId rel = op("sub", {q_ids, k_ids}, sq, DType::i64);
  if (s.deberta_position_buckets > 0 && !b.training() && b.pass().first_call) {
    // The first call, interpreted: one kernel per operator, each value dropped after its last use (whole-run
    // inference stream, amp fp16 s512: 2 MiB int64 and 1 MiB fp32 blocks in this order in the first forward only).
    b.hold(rel);  // relative_pos, the function's argument, until build_relative_position rebinds it
    const TensorId sign = op("sign", {rel}, sq, DType::i64);
    const TensorId lt = op("lt", {rel}, sq, DType::boolean);
    const TensorId both = op("and", {lt, op("gt", {rel}, sq, DType::boolean)}, sq, DType::boolean);
    const TensorId mid1 = op("tensor_type_as", {}, {}, DType::i64);
    const TensorId abs_pos = op("where", {both, mid1, op("abs", {rel}, sq, DType::i64)}, sq, DType::i64);
    // log_pos = ceil(log(abs_pos / mid) / log(tensor(...)) * (mid - 1)) + mid, a kernel per operator
    TensorId x = op("log", {op("div", {abs_pos}, sq, fl)}, sq, fl);
    x = op("ceil", {op("mul_scalar", {op("div", {x}, sq, fl)}, sq, fl)}, sq, fl);
    const TensorId log_pos = op("add_scalar", {x}, sq, fl);
    const TensorId le = op("le", {abs_pos}, sq, DType::boolean);
    const TensorId as_float = op("type_as", {rel}, sq, fl);
    const TensorId bucket = op("where", {le, as_float, op("mul", {log_pos, sign}, sq, fl)}, sq, fl);
    b.drop(rel);
    rel = op("to_long", {bucket}, sq, DType::i64);
  } else if (s.deberta_position_buckets > 0) {
    b.hold(rel);  // relative_pos, an argument of the scripted function, until build_relative_position rebinds it
    const TensorId sign = op("sign", {rel}, sq, DType::i64);
    b.hold(sign);
    const TensorId mid1 = op("tensor_type_as", {}, {}, DType::i64);
    const auto group = b.generic({"fused_abs_pos", {rel, mid1}, {{sq, fl}, {sq, DType::i64}}, {}, {}, {}, {}});
    const TensorId abs_pos = group[1];
    b.hold(abs_pos);
    const TensorId logs = op("log", {group[0]}, sq, fl);
    const TensorId bucket = op("fused_bucket_pos", {logs, abs_pos, sign, rel}, sq, fl);
    b.drop(abs_pos);
    b.drop(sign);
    b.drop(rel);  // rel_pos_ids = make_log_bucket_position(...)
    rel = op("to_long", {bucket}, sq, DType::i64);
  }
  b.drop(q_ids);
  b.drop(k_ids);
  return b.view(rel, {1, S, S});  // rel_pos_ids[:query_size, :].unsqueeze(0)
}

// transpose_for_scores: x.view(..., heads, -1).permute(0, 2, 1, 3).contiguous().view(-1, len, head_dim). The
// gradient comes back through the permuted view, which the view's backward reshapes with a copy.
TensorId transpose_for_scores(GraphBuilder& b, TensorId x, int64_t batch, int64_t len, int64_t nh, int64_t hd) {
  // (The copy reads x through its [batch, len, nh, hd] view; the gradient copy is x's size.)
  return b.view(b.contiguous_copy(x, {batch, nh, len, hd}, /*grad_copied=*/true), {batch * nh, len, hd});
}

// DisentangledSelfAttention.disentangled_attention_bias: returns `score` (kNoTensor when neither term is on:
// the int 0).
TensorId disentangled_bias(GraphBuilder& b, const TransformerSpec& s, const LayerWeights& w, TensorId q, TensorId k,
                           TensorId rel_pos, TensorId rel_emb) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, hd = s.head_dim;
  const int64_t span = s.deberta_position_buckets > 0 ? s.deberta_position_buckets : s.deberta_max_relative_positions;
  const int64_t P = 2 * span, BH = B * nh;
  const TensorId rel = b.view(rel_emb, {1, P, s.hidden_size});  // rel_embeddings[0:2span, :].unsqueeze(0)
  auto positional = [&](const BertLinear& l) {
    const TensorId heads = transpose_for_scores(b, apply(b, l, rel), 1, P, nh, hd);
    return b.generic_one("repeat", {heads}, {BH, P, hd}, b.dtype(heads));  // .repeat(B, 1, 1)
  };
  TensorId pos_q = kNoTensor, pos_k = kNoTensor;
  if (s.deberta_share_att_key) {
    pos_q = positional(w.q);
    pos_k = positional(w.k);
  } else {
    if (s.deberta_c2p) pos_k = positional(w.pos_k);
    if (s.deberta_p2c) pos_q = positional(w.pos_q);
  }
  if (pos_q != kNoTensor) b.hold(pos_q);  // locals until the function returns (saved by their bmm anyway)
  if (pos_k != kNoTensor) b.hold(pos_k);
  auto clamp_index = [&](TensorId shifted) {  // torch.clamp(... + att_span, 0, 2span - 1): int64 [1, 1, S, S]
    return b.generic_one("clamp", {b.generic_one("add_scalar", {shifted}, {1, 1, S, S}, DType::i64)}, {1, 1, S, S},
                         DType::i64);
  };
  // torch.gather(x, -1, index.expand(...)): gather_backward needs x (saved whole) and the index.
  auto gather = [&](TensorId x, TensorId index) {
    return b.generic({"gather", {x, index}, {{{BH, S, S}, b.dtype(x)}}, {0, 1}, {}, {}, {}})[0];
  };
  // c2p_pos / p2c_pos (the clamped indices) are locals until the function returns: gather saves them anyway,
  // but under checkpointing (nothing saved in the first forward) they outlive the gather (whole-run amp fp16
  // checkpointed stream: the two [S, S] int64 indices freed with the function's other locals).
  TensorId score = kNoTensor, c2p = kNoTensor, p2c = kNoTensor, c2p_pos = kNoTensor, p2c_pos = kNoTensor;
  if (s.deberta_c2p) {
    const TensorId att = b.matmul(q, b.view(pos_k, {BH, hd, P}), {BH, S, P});
    c2p_pos = clamp_index(rel_pos);
    b.hold(c2p_pos);
    c2p = gather(att, c2p_pos);
    b.hold(c2p);  // c2p_att, until the function returns
    // score (the int 0) += c2p_att / scale: a fresh sum
    score = b.add_scalar(b.scalar_op("div", c2p, false));
  }
  if (s.deberta_p2c) {
    p2c_pos = clamp_index(b.generic_one("neg", {rel_pos}, {1, S, S}, DType::i64));
    b.hold(p2c_pos);
    const TensorId att = b.matmul(k, b.view(pos_q, {BH, hd, P}), {BH, S, P});
    p2c = b.view(gather(att, p2c_pos), {BH, S, S});  // .transpose(-1, -2)
    b.hold(p2c);
    const TensorId d = b.scalar_op("div", p2c, false);
    score = score == kNoTensor ? b.add_scalar(d) : b.inplace("add_", score, false, {d});
  }
  for (TensorId t : {c2p, p2c, pos_q, pos_k, c2p_pos, p2c_pos})
    if (t != kNoTensor) b.drop(t);
  return score;
}

// DebertaV2Layer: self-attention, SelfOutput, Intermediate, Output. Returns the layer output.
TensorId deberta_layer(GraphBuilder& b, const TransformerSpec& s, const LayerWeights& w, TensorId h,
                       const EncoderInputs& enc) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, nh = s.num_heads, hd = s.head_dim;
  const int64_t BH = B * nh;
  const TensorId layer_in = h;
  b.hold(layer_in);  // the layer's hidden_states (and the encoder's next_kv) until it returns
  // DisentangledSelfAttention.forward
  const TensorId q = transpose_for_scores(b, apply(b, w.q, h), B, S, nh, hd);
  const TensorId k = transpose_for_scores(b, apply(b, w.k, h), B, S, nh, hd);
  const TensorId v = transpose_for_scores(b, apply(b, w.v, h), B, S, nh, hd);
  for (TensorId t : {q, k, v}) b.hold(t);
  // key_layer.transpose(-1, -2) / scale.to(query dtype) (scale a CPU scalar): a fresh tensor in k's layout
  TensorId scores = b.matmul(q, b.scalar_op("div", b.view(k, {BH, hd, S}), false), {BH, S, S});
  TensorId rel_att = kNoTensor, rel_d = kNoTensor;
  if (s.deberta_relative_attention) {
    rel_d = b.dropout(enc.rel_emb, s.resid_dropout);  // self.pos_dropout(rel_embeddings), a local
    b.hold(rel_d);
    rel_att = disentangled_bias(b, s, w, q, k, enc.rel_pos, rel_d);
    // rel_att is the int 0 without c2p / p2c: attention_scores + 0 is still a fresh tensor
    scores = rel_att != kNoTensor ? b.add(scores, rel_att) : b.add_scalar(scores);
    if (rel_att != kNoTensor) b.hold(rel_att);
  }
  scores = b.view(scores, {B, nh, S, S});
  const TensorId mask_b = b.generic_one("to_bool", {enc.mask}, {B, 1, S, S}, DType::boolean);  // .bool()
  b.hold(mask_b);
  const TensorId inv = b.generic_one("bitwise_not", {mask_b}, {B, 1, S, S}, DType::boolean);
  // masked_fill(~mask, finfo.min): backward grad.masked_fill(mask, 0) needs the mask only
  const TensorId masked = b.generic({"masked_fill", {scores, inv}, {{{B, nh, S, S}, b.dtype(scores)}}, {1}, {}, {}, {}})[0];
  b.hold(masked);  // attention_scores, until the function returns
  // nn.functional.softmax without a dtype: autocast's fp32 policy asks for dtype float32, which ATen honours by
  // converting a bf16 input first (a [B, nh, S, S] fp32 copy, freed once the softmax has run); a half input takes
  // the half-to-float kernel without a copy (softmax_last).
  TensorId sm_in = masked;
  if (b.autocast() && b.low_dtype() == DType::bf16) sm_in = b.to(masked, DType::f32);
  const TensorId probs = b.dropout(b.softmax_last(sm_in), s.attn_dropout);
  b.hold(probs);  // attention_probs, until the function returns (under autocast the bmm saves its bf16 cast)
  const TensorId ctx = b.matmul(b.view(probs, {BH, S, S}), v, {BH, S, hd});
  const TensorId ctx_c = b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);  // view, permute, contiguous
  for (TensorId t : {q, k, v, mask_b, masked, probs}) b.drop(t);
  if (rel_att != kNoTensor) b.drop(rel_att);
  if (rel_d != kNoTensor) b.drop(rel_d);
  // DebertaV2SelfOutput(self_output, hidden_states): DebertaV2Attention.forward keeps self_output bound until
  // it returns, after the SelfOutput's LayerNorm (seen under checkpointing, where dense saves nothing).
  b.hold(ctx_c);
  TensorId a = b.dropout(apply(b, w.ao, b.view(ctx_c, {B, S, H})), s.resid_dropout);
  b.hold(a);
  const TensorId h1 = b.layer_norm(b.add(a, h), w.aln_w, w.aln_b);
  b.drop(a);
  b.drop(ctx_c);
  b.hold(h1);  // attention_output, until the layer returns
  const TensorId mid = b.unary("gelu", apply(b, w.inter, h1), true, false);
  b.hold(mid);  // intermediate_output
  TensorId o = b.dropout(apply(b, w.out, mid), s.resid_dropout);
  b.hold(o);
  const TensorId out = b.layer_norm(b.add(o, h1), w.oln_w, w.oln_b);
  for (TensorId t : {o, mid, h1, layer_in}) b.drop(t);
  return out;
}

}  // namespace

void build_deberta_v2(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "deberta-v2 has no SDPA attention in transformers 5.17 (_supports_sdpa is false): use eager");
  const Task task = cfg.task;
  if (task == Task::lm && !s.tie_word_embeddings)
    throw InputError("tie_word_embeddings", "false", "an untied deberta-v2 masked-LM decoder is not modelled");
  if (task == Task::seq_cls && cfg.num_labels == 1)
    throw InputError("num_labels", "1", "deberta-v2's regression head (MSELoss on num_labels 1) is not modelled");
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size, I = s.intermediate_size;
  // --freeze-embeddings freezes get_input_embeddings(), the word embeddings alone (the harness's option).
  const bool emb_train = !cfg.freeze_embeddings;
  const DType model_dt = b.param_dtype();

  // ---- parameters, in module order (Module._apply moves children, then own parameters, then buffers)
  hf_construction_scalar(b);
  const TensorId word = b.param("deberta.embeddings.word_embeddings.weight", {V, H}, emb_train);
  TensorId posw = kNoTensor, typew = kNoTensor;
  if (s.deberta_position_biased_input)
    posw = b.param("deberta.embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, true);
  if (s.type_vocab_size > 0)
    typew = b.param("deberta.embeddings.token_type_embeddings.weight", {s.type_vocab_size, H}, true);
  const TensorId eln_w = b.param("deberta.embeddings.LayerNorm.weight", {H}, true);
  const TensorId eln_b = b.param("deberta.embeddings.LayerNorm.bias", {H}, true);
  // The non-persistent position_ids buffer, arange(max_position_embeddings).expand((1, -1)).
  const TensorId position_ids =
      b.buffer("deberta.embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  std::vector<LayerWeights> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "deberta.encoder.layer." + std::to_string(i) + ".";
    LayerWeights w{};
    w.train = !layer_frozen(cfg, i);
    w.q = bert_linear(b, p + "attention.self.query_proj", H, H, w.train);
    w.k = bert_linear(b, p + "attention.self.key_proj", H, H, w.train);
    w.v = bert_linear(b, p + "attention.self.value_proj", H, H, w.train);
    if (s.deberta_relative_attention && !s.deberta_share_att_key) {
      if (s.deberta_c2p) w.pos_k = bert_linear(b, p + "attention.self.pos_key_proj", H, H, w.train);
      if (s.deberta_p2c) w.pos_q = bert_linear(b, p + "attention.self.pos_query_proj", H, H, w.train);
    }
    w.ao = bert_linear(b, p + "attention.output.dense", H, H, w.train);
    w.aln_w = b.param(p + "attention.output.LayerNorm.weight", {H}, w.train);
    w.aln_b = b.param(p + "attention.output.LayerNorm.bias", {H}, w.train);
    w.inter = bert_linear(b, p + "intermediate.dense", I, H, w.train);
    w.out = bert_linear(b, p + "output.dense", H, I, w.train);
    w.oln_w = b.param(p + "output.LayerNorm.weight", {H}, w.train);
    w.oln_b = b.param(p + "output.LayerNorm.bias", {H}, w.train);
    layers.push_back(w);
  }
  const int64_t span = s.deberta_position_buckets > 0 ? s.deberta_position_buckets : s.deberta_max_relative_positions;
  TensorId relw = kNoTensor, rln_w = kNoTensor, rln_b = kNoTensor;
  if (s.deberta_relative_attention) relw = b.param("deberta.encoder.rel_embeddings.weight", {2 * span, H}, true);
  if (s.deberta_norm_rel_ebd) {  // created whether or not relative_attention uses it
    rln_w = b.param("deberta.encoder.LayerNorm.weight", {H}, true);
    rln_b = b.param("deberta.encoder.LayerNorm.bias", {H}, true);
  }
  // Head parameters.
  BertLinear head_dense{}, classifier{};
  TensorId hln_w = kNoTensor, hln_b = kNoTensor, head_bias = kNoTensor;
  if (task == Task::lm) {
    const std::string p = s.deberta_legacy_mlm_head ? "cls.predictions." : "lm_predictions.lm_head.";
    head_dense = bert_linear(b, p + (s.deberta_legacy_mlm_head ? "transform.dense" : "dense"), H, H, true);
    hln_w = b.param(p + (s.deberta_legacy_mlm_head ? "transform.LayerNorm.weight" : "LayerNorm.weight"), {H}, true);
    hln_b = b.param(p + (s.deberta_legacy_mlm_head ? "transform.LayerNorm.bias" : "LayerNorm.bias"), {H}, true);
    head_bias = b.param(p + "bias", {V}, true);
    // Legacy: the decoder nn.Linear's own weight and bias exist until tie_weights() replaces them (a construction
    // transient when the model is built on the device).
    if (s.deberta_legacy_mlm_head) {
      b.construction_temp(b.info(word).bytes);
      b.construction_temp(b.info(head_bias).bytes);
    }
  } else if (task == Task::seq_cls) {
    head_dense = bert_linear(b, "pooler.dense", H, H, true);
    classifier = bert_linear(b, "classifier", cfg.num_labels, H, true);
  } else if (task == Task::token_cls) {
    classifier = bert_linear(b, "classifier", cfg.num_labels, H, true);
  }  // Task::feature: AutoModel, DebertaV2Model alone

  // ---- DebertaV2Model.forward
  const TensorId ids = b.input({B, S}, DType::i64);
  // The harness's labels: the input ids (masked LM), [B] (seq_cls) or [B, S] (token_cls) class ids, made after them.
  // Inference passes none.
  const TensorId labels = !b.training()    ? kNoTensor
                          : task == Task::lm ? ids
                                             : b.input(task == Task::seq_cls ? Shape{B} : Shape{B, S}, DType::i64);
  const TensorId attention_mask = b.generic_one("ones", {}, {B, S}, model_dt);  // the default dtype
  const TensorId token_type_ids = b.generic_one("zeros", {}, {B, S}, DType::i64);
  b.hold(attention_mask);
  b.hold(token_type_ids);

  // DebertaV2Embeddings.forward
  const TensorId we = b.embedding(ids, word);
  b.hold(we);
  TensorId pe, te = kNoTensor;
  if (posw != kNoTensor)
    pe = b.embedding(b.view(position_ids, {1, S}), posw);  // self.position_ids[:, :seq_length]
  else
    pe = b.generic_one("zeros_like", {}, {B, S, H}, b.dtype(we));
  b.hold(pe);
  TensorId e = we;
  if (s.deberta_position_biased_input) e = b.add(e, pe);
  if (typew != kNoTensor) {
    te = b.embedding(token_type_ids, typew);
    b.hold(te);
    e = b.add(e, te);
  }
  e = b.layer_norm(e, eln_w, eln_b);
  const TensorId mask = b.to(b.view(attention_mask, {B, S, 1}), b.dtype(e));  // mask.unsqueeze(2).to(dtype)
  b.hold(mask);
  e = b.mul(e, mask);
  e = b.dropout(e, s.embd_dropout);
  for (TensorId t : {we, pe, te, mask})
    if (t != kNoTensor) b.drop(t);
  const TensorId embedding_output = e;
  b.hold(embedding_output);  // until DebertaV2Model.forward returns (and in all_hidden_states)

  // DebertaV2Encoder.forward
  EncoderInputs enc;
  enc.mask = b.binary("mul", b.view(attention_mask, {B, 1, 1, S}), b.view(attention_mask, {B, 1, S, 1}), false, false);
  b.hold(enc.mask);
  if (s.deberta_relative_attention) {
    enc.rel_pos = relative_position(b, s, S);
    b.hold(enc.rel_pos);
    enc.rel_emb = s.deberta_norm_rel_ebd ? b.layer_norm(relw, rln_w, rln_b) : relw;
    if (enc.rel_emb != relw) b.hold(enc.rel_emb);
  }
  std::vector<TensorId> hidden_states;  // all_hidden_states: every layer output, until the model returns
  TensorId h = embedding_output;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    b.begin_layer("deberta.encoder.layer." + std::to_string(i), layer_checkpointed(cfg, i));
    h = deberta_layer(b, s, layers[static_cast<size_t>(i)], h, enc);
    b.end_layer();
    b.hold(h);
    hidden_states.push_back(h);
  }
  for (TensorId t : {enc.mask, enc.rel_pos, enc.rel_emb})
    if (t != kNoTensor && t != relw) b.drop(t);
  const TensorId sequence_output = h;  // encoded_layers[-1]: outputs[0], bound by the head's forward
  for (TensorId t : hidden_states)
    if (t != sequence_output) b.drop(t);
  for (TensorId t : {embedding_output, attention_mask, token_type_ids}) b.drop(t);

  // ---- heads
  if (task == Task::feature) {  // BaseModelOutput(last_hidden_state): the hidden-state tuple died with the encoder's
    forward_output(b, {sequence_output});
    return;
  }
  if (task == Task::lm) {
    // The MLM head's statements each rebind hidden_states, so a module's output lives until the next call has
    // returned: the gelu output through the LayerNorm, the norm's output through the decoder (under autocast
    // neither is saved: the norm keeps its fp32 copy, the decoder its bf16 cast; whole-run amp stream).
    // DebertaV2ForMaskedLM.forward keeps sequence_output and prediction_scores bound until it returns.
    b.hold(sequence_output);
    const TensorId d = apply(b, head_dense, sequence_output);
    const TensorId g = b.unary("gelu", d, true, false);
    b.hold(g);
    const TensorId n = b.layer_norm(g, hln_w, hln_b);
    b.drop(g);
    b.hold(n);
    TensorId logits;
    if (s.deberta_legacy_mlm_head) {
      logits = b.linear(n, word, head_bias);  // decoder: weight = word embeddings, bias = cls.predictions.bias
    } else {
      // torch.matmul(hidden_states, word_embeddings.weight.t()) + self.bias: the product, then a second
      // [B, S, V] tensor (under autocast the bf16 product plus the fp32 bias promotes to fp32). weight.t() is no
      // leaf, so autocast casts it afresh (no cache entry) and the GEMM saves that cast (as falcon_linear).
      const bool fresh_cast = b.autocast() && b.info(word).requires_grad;
      logits = b.add(b.linear(n, fresh_cast ? b.to(word, b.low_dtype()) : word), head_bias);
    }
    b.drop(n);
    if (!b.training()) {  // MaskedLMOutput(logits=prediction_scores): no labels, no loss
      forward_output(b, {logits});
      return;
    }
    b.mark_model_end();
    b.hold(logits);
    // CrossEntropyLoss over prediction_scores.view(-1, V) and labels.view(-1) (the input ids).
    const TensorId loss = b.cross_entropy(b.view(logits, {B * S, V}), b.view(labels, {B * S}));
    b.drop(logits);
    b.drop(sequence_output);
    b.exit_autocast();
    b.set_loss(loss);
    return;
  }
  const int64_t NL = cfg.num_labels;
  b.hold(sequence_output);  // encoder_layer / sequence_output, until the head's forward returns
  if (task == Task::seq_cls) {
    // ContextPooler: hidden_states[:, 0] (a view; SelectBackward writes a zero-filled [B, S, H] gradient),
    // dropout, dense, activation.
    TensorId x = b.dropout(b.select_param(sequence_output, {B, H}), s.deberta_pooler_dropout);
    x = apply(b, head_dense, x);
    const bool saves_out = s.deberta_pooler_act != "gelu";  // tanh / relu save their result, gelu its input
    x = b.unary(s.deberta_pooler_act, x, !saves_out, saves_out);
    x = b.dropout(x, s.deberta_cls_dropout);
    TensorId logits = apply(b, classifier, x);
    if (!b.training()) {
      forward_output(b, {logits});
      return;
    }
    b.mark_model_end();
    b.hold(logits);
    // label_index = (labels >= 0).nonzero(); labeled_logits = gather(logits, 0, label_index.expand(...));
    // labels = gather(labels, 0, label_index.view(-1)); CrossEntropyLoss(labeled_logits.view(-1, nl).float(), ...)
    const TensorId index = b.generic_one("nonzero", {b.generic_one("ge", {labels}, {B}, DType::boolean)}, {B, 1},
                                         DType::i64);
    b.hold(index);
    const TensorId picked = b.generic({"gather", {logits, index}, {{{B, NL}, b.dtype(logits)}}, {0, 1}, {}, {}, {}})[0];
    const TensorId picked_labels = b.generic_one("gather", {labels, index}, {B}, DType::i64);
    const TensorId loss = b.cross_entropy(b.to(picked, DType::f32), picked_labels);
    b.drop(index);
    b.drop(logits);
    b.drop(sequence_output);
    b.exit_autocast();
    b.set_loss(loss);
    return;
  }
  // DebertaV2ForTokenClassification: dropout, classifier, CrossEntropyLoss over [B*S, num_labels].
  TensorId x = b.dropout(sequence_output, s.resid_dropout);
  b.hold(x);
  TensorId logits = apply(b, classifier, x);
  if (!b.training()) {
    forward_output(b, {logits});
    return;
  }
  b.mark_model_end();
  b.hold(logits);
  const TensorId loss = b.cross_entropy(b.view(logits, {B * S, NL}), b.view(labels, {B * S}));
  b.drop(logits);
  b.drop(x);
  b.drop(sequence_output);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
