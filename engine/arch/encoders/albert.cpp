// AlbertForMaskedLM / AlbertForSequenceClassification / AlbertForTokenClassification (transformers 5.17
// models/albert/modeling_albert.py), training forward + loss.
//
// Stages:
//   AlbertEmbeddings (BertEmbeddings' statements at embedding_size E): word + token_type, + position (the [1, S]
//     slice of the position_ids buffer), LayerNorm(E), dropout(hidden_dropout_prob);
//   AlbertTransformer: embedding_hidden_mapping_in (nn.Linear(E, H), always), then for i in num_hidden_layers:
//     group int(i / (L / G)) runs its inner_group_num AlbertLayers. The parameters are the groups' (G * inner
//     sets), read once per application: autograd's AccumulateGrad InputBuffer holds the first gradient that
//     arrives (the last application's) and adds each later one into it in place (step_replay), so a shared weight
//     has one gradient buffer and one transient per application;
//   AlbertLayer: AlbertAttention (q, k, v projections as head views, sdpa or eager_attention_forward, the
//     context reshaped, dense, dropout, LayerNorm(hidden_states + attn_output)); q / k / v stay bound until the
//     attention module returns (after its LayerNorm) and the eager probabilities until the layer returns
//     (`attention_output, _ = ...`); ff_chunk (ffn, ACT2FN[hidden_act], ffn_output), then
//     full_layer_layer_norm(ffn_output + attention_output);
//   heads (after the base model in every class):
//     lm:        AlbertMLMHead: dense (H -> E), activation, LayerNorm(E), decoder (E -> V, weight tied to the word
//                embeddings, bias to predictions.bias), CrossEntropyLoss over the input ids;
//     seq_cls:   AlbertModel's pooler (dense + tanh on the first token), dropout(classifier_dropout_prob),
//                classifier: BERT's statements (bert_cls_head);
//     token_cls: dropout, classifier, as BERT's.
// Parameter order: the GPU allocations follow Module._apply's order under model.to("cuda") (each module's
// children, then its own parameters, then its buffers; the recordings show it), __init__'s when built on the
// GPU (they differ in the MLM head only): embeddings (word, position, token_type, LayerNorm),
// embedding_hidden_mapping_in, per group and inner layer full_layer_layer_norm, query, key, value, dense,
// attention LayerNorm, ffn, ffn_output; then the pooler (seq_cls) and the head. The tied decoder's weight and
// bias are the word embeddings and predictions.bias: under to_device no tensor of their own reaches the GPU.
// Not modelled (refused naming the option): gradient checkpointing (AlbertPreTrainedModel does not support it),
// frozen layers (the layers share parameters), LoRA, inference.
#include <string>
#include <vector>

#include "engine/arch/encoders/bert_parts.h"
#include "engine/errors.h"
#include "engine/limits.h"

namespace memplan {

namespace {

TensorId apply(GraphBuilder& b, const BertLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

// ACT2FN[hidden_act]: gelu_new (NewGELUActivation, written out in Python) or gelu (nn.functional.gelu).
// The module's forward binds its argument `input` until it returns (NewGELUActivation evaluates its whole
// expression with it bound: under autocast the 16-bit input lives past the fp32 tail, as recorded).
TensorId activation(GraphBuilder& b, const TransformerSpec& s, TensorId x) {
  if (s.hidden_act != "gelu_new") return b.unary("gelu", x, true, false);
  b.hold(x);
  const TensorId y = gelu_new(b, x);
  b.drop(x);
  return y;
}

// One AlbertLayer's parameters, in __init__ order.
struct AlbertLayerParams {
  TensorId full_ln_w, full_ln_b;
  BertLinear q, k, v, dense;
  TensorId attn_ln_w, attn_ln_b;
  BertLinear ffn, ffn_output;
};

AlbertLayerParams layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  AlbertLayerParams w{};
  w.full_ln_w = b.param(p + "full_layer_layer_norm.weight", {H}, true);
  w.full_ln_b = b.param(p + "full_layer_layer_norm.bias", {H}, true);
  w.q = bert_linear(b, p + "attention.query", H, H, true);
  w.k = bert_linear(b, p + "attention.key", H, H, true);
  w.v = bert_linear(b, p + "attention.value", H, H, true);
  w.dense = bert_linear(b, p + "attention.dense", H, H, true);
  w.attn_ln_w = b.param(p + "attention.LayerNorm.weight", {H}, true);
  w.attn_ln_b = b.param(p + "attention.LayerNorm.bias", {H}, true);
  w.ffn = bert_linear(b, p + "ffn", I, H, true);
  w.ffn_output = bert_linear(b, p + "ffn_output", H, I, true);
  return w;
}

// AlbertLayer.forward over h (bound by the caller until the layer returns). Returns the layer's output.
TensorId albert_layer(GraphBuilder& b, const TransformerSpec& s, const AlbertLayerParams& w, TensorId h) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, nh = s.num_heads, hd = s.head_dim;
  // AlbertAttention.forward: query_layer / key_layer / value_layer bound until it returns. Eager: torch.matmul
  // copies each head-split view, so its gradient comes back contiguous in [B, heads, S, head_dim] and the
  // transpose / view backward's reshape copies it into the projection's [B, S, H] layout (the recording's 16 MiB
  // alloc / free before each projection's addmm backward, f17-albertl eager fp32). SDPA's backward returns
  // gradients in the views' own layout: no copy.
  const auto head_view = [&](TensorId x) {
    return cfg.attn == AttnImpl::eager ? b.view_copying_grad(x, {B, nh, S, hd}) : b.view(x, {B, nh, S, hd});
  };
  const TensorId qs = head_view(apply(b, w.q, h));
  const TensorId ks = head_view(apply(b, w.k, h));
  const TensorId vs = head_view(apply(b, w.v, h));
  const TensorId proj[3] = {qs, ks, vs};
  for (TensorId t : proj) b.hold(t);
  const BertAttentionOut core = bert_attention(b, s, qs, ks, vs);
  // attn_weights (eager) stays bound as `_` in AlbertLayer.forward until the layer returns.
  if (core.weights != kNoTensor) b.hold(core.weights);
  // attn_output = dense(context); output_dropout; LayerNorm(hidden_states + attn_output): the dense output is
  // bound until the norm has run.
  // The sum is LayerNorm's argument, bound by its forward until it returns (under autocast the norm saves its
  // fp32 copy, and the 16-bit sum is freed only after the norm's output exists, as recorded).
  const TensorId a = b.dropout(apply(b, w.dense, b.view(core.output, {B, S, H})), s.resid_dropout);
  b.hold(a);
  const TensorId sum = b.add(h, a);
  b.hold(sum);
  const TensorId attention_output = b.layer_norm(sum, w.attn_ln_w, w.attn_ln_b);
  b.drop(sum);
  b.drop(a);
  for (TensorId t : proj) b.drop(t);
  b.hold(attention_output);  // until AlbertLayer.forward returns
  // ff_chunk (apply_chunking_to_forward with chunk size 0 calls it once): each statement rebinds ffn_output.
  // Each rebound value lives until the statement that rebinds it has run.
  const TensorId pre = apply(b, w.ffn, attention_output);
  b.hold(pre);
  const TensorId mid = activation(b, s, pre);
  b.drop(pre);
  b.hold(mid);
  const TensorId ffn_output = apply(b, w.ffn_output, mid);
  b.drop(mid);
  b.hold(ffn_output);  // bound in AlbertLayer.forward until it returns
  const TensorId out = b.layer_norm(b.add(ffn_output, attention_output), w.full_ln_w, w.full_ln_b);
  b.drop(ffn_output);
  b.drop(attention_output);
  if (core.weights != kNoTensor) b.drop(core.weights);
  return out;
}

// AlbertMLMHead and the masked-LM loss: dense -> activation -> LayerNorm -> decoder (tied weight and bias) ->
// CrossEntropyLoss over prediction_scores.view(-1, V) and the input ids. AlbertForMaskedLM.forward keeps
// sequence_outputs and prediction_scores bound until it returns, after the loss.
void mlm_head_loss(GraphBuilder& b, const TransformerSpec& s, TensorId h, const BertLinear& dense, TensorId ln_w,
                   TensorId ln_b, TensorId dec_w, TensorId dec_b, TensorId ids) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len, V = s.vocab_size;
  b.hold(h);
  // AlbertMLMHead.forward rebinds hidden_states per statement: each value lives until the next one has run.
  const TensorId d = apply(b, dense, h);
  b.hold(d);
  const TensorId act = activation(b, s, d);
  b.drop(d);
  b.hold(act);
  const TensorId t = b.layer_norm(act, ln_w, ln_b);
  b.drop(act);
  b.hold(t);
  const TensorId logits = b.linear(t, dec_w, dec_b);
  b.drop(t);
  if (!b.training()) {  // MaskedLMOutput(logits=prediction_scores): no labels, no loss
    forward_output(b, {logits});
    return;
  }
  b.mark_model_end();
  b.hold(logits);
  const TensorId loss = b.cross_entropy(b.view(logits, {B * S, V}), b.view(ids, {B * S}));
  b.drop(logits);
  b.drop(h);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace

void build_albert(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size, E = s.embedding_size;
  const int64_t G = s.albert_num_hidden_groups, inner = s.albert_inner_group_num, L = s.num_layers;
  if (E <= 0 || E > kMaxDim)
    throw InputError("model.embedding_size", std::to_string(E), "must be a positive integer (albert)");
  if (G <= 0 || G > L || inner <= 0 || inner > kMaxLayers / L)
    throw InputError("model.num_hidden_groups", std::to_string(G) + " x " + std::to_string(inner),
                     "albert needs 1 <= num_hidden_groups <= num_hidden_layers and a positive inner_group_num");
  if (cfg.grad_checkpointing || !cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing", cfg.checkpoint_layers.empty() ? "true" : "some layers",
                     "transformers refuses it for ALBERT (AlbertPreTrainedModel.supports_gradient_checkpointing is "
                     "False)");
  if (!cfg.frozen_layers.empty())
    throw InputError("frozen_layers", std::to_string(cfg.frozen_layers.size()) + " layers",
                     "albert's layers share their group's parameters: freezing single layers is not modelled");
  if (cfg.lora.enabled() || cfg.quant.enabled())
    throw InputError("lora", "enabled", "LoRA / quantized weights are not modelled for albert (shared layers)");
  // freeze_embeddings: the harness sets requires_grad False on get_input_embeddings().parameters(), the word
  // embeddings alone (and so the tied decoder weight); the other embedding tables and the head stay trainable.
  hf_construction_scalar(b);
  const TensorId word = b.param("albert.embeddings.word_embeddings.weight", {V, E}, !cfg.freeze_embeddings);
  const TensorId posw = b.param("albert.embeddings.position_embeddings.weight", {s.max_position_embeddings, E}, true);
  const TensorId typew = b.param("albert.embeddings.token_type_embeddings.weight", {s.type_vocab_size, E}, true);
  const TensorId eln_w = b.param("albert.embeddings.LayerNorm.weight", {E}, true);
  const TensorId eln_b = b.param("albert.embeddings.LayerNorm.bias", {E}, true);
  // The embeddings' non-persistent int64 [1, max_position_embeddings] buffers position_ids and token_type_ids,
  // after the module's parameters (the recordings: two 4 KiB blocks after the LayerNorm's bias).
  b.buffer("albert.embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  b.buffer("albert.embeddings.token_type_ids", {1, s.max_position_embeddings}, DType::i64);
  const BertLinear mapping_in = bert_linear(b, "albert.encoder.embedding_hidden_mapping_in", H, E, true);
  std::vector<AlbertLayerParams> groups;  // [g * inner + j]
  for (int64_t g = 0; g < G; ++g)
    for (int64_t j = 0; j < inner; ++j)
      groups.push_back(layer_params(b, s,
                                    "albert.encoder.albert_layer_groups." + std::to_string(g) + ".albert_layers." +
                                        std::to_string(j) + "."));
  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  // token_type_ids: the zero buffer gathered at the position ids and expanded.
  const TensorId type_ids = b.generic({"expand", {}, {{{B, S}, DType::i64}}, {}, {}, {}, {}})[0];

  // AlbertEmbeddings.forward: inputs_embeds and token_type_embeddings bound until it returns.
  const TensorId we = b.embedding(ids, word);
  b.hold(we);
  const TensorId te = b.embedding(type_ids, typew);
  b.hold(te);
  TensorId e = b.add(we, te);
  // position_embeddings is a local until the embeddings return too. Held in inference only: in training the
  // [1, S, H] block's earlier release is what the measured rows were fitted with (its add saves nothing).
  const TensorId pe = b.embedding(b.input({1, S}, DType::i64), posw);
  if (!b.training()) b.hold(pe);
  e = b.add(e, pe);
  const TensorId embedding_output = b.dropout(b.layer_norm(e, eln_w, eln_b), s.embd_dropout);
  b.drop(we);
  b.drop(te);
  if (!b.training()) b.drop(pe);
  b.hold(embedding_output);  // AlbertModel.forward binds it until it returns (after the pooler)

  // AlbertTransformer.forward.
  TensorId h = apply(b, mapping_in, embedding_output);
  const double per_group = static_cast<double>(L) / static_cast<double>(G);  // Python's true division
  for (int64_t i = 0; i < L; ++i) {
    const int64_t g = static_cast<int64_t>(static_cast<double>(i) / per_group);
    const TensorId group_in = h;
    b.hold(group_in);  // the transformer's hidden_states until the group returns
    for (int64_t j = 0; j < inner; ++j) {
      b.begin_layer("albert.encoder.albert_layer_groups." + std::to_string(g) + ".albert_layers." +
                        std::to_string(j) + " (layer " + std::to_string(i) + ")",
                    false);
      const TensorId layer_in = h;
      b.hold(layer_in);  // AlbertLayer.forward's hidden_states (and the group's loop variable) until it returns
      h = albert_layer(b, s, groups[static_cast<size_t>(g * inner + j)], h);
      b.drop(layer_in);
      b.end_layer();
    }
    b.drop(group_in);
  }

  if (cfg.task == Task::feature) {
    // AutoModel: AlbertModel(config) with its pooler (nn.Linear "pooler" and tanh on sequence_output[:, 0]), run
    // while embedding_output is bound; BaseModelOutputWithPooling(last_hidden_state, pooler_output).
    const BertLinear pooler = bert_linear(b, "albert.pooler", H, H, true);
    forward_output(b, {h, encoder_pooler(b, pooler, h, embedding_output)});
    return;
  }
  if (cfg.task == Task::lm) {
    b.drop(embedding_output);  // AlbertModel(add_pooling_layer=False) returns here
    // model.to("cuda") (weights_load to_device, the harness's) moves AlbertMLMHead children first
    // (Module._apply): LayerNorm, dense, then the decoder, whose weight is the word embeddings' (already moved)
    // and whose bias is predictions.bias (moved here). Built on the GPU (on_device), __init__ allocates LayerNorm,
    // bias, dense, then the decoder's own [V, E] weight and [V] bias, which post_init's tie replaces
    // (construction temporaries; the replay counts them for on_device only).
    const bool on_device = cfg.weights_load == WeightsLoad::on_device;
    const TensorId ln_w = b.param("predictions.LayerNorm.weight", {E}, true);
    const TensorId ln_b = b.param("predictions.LayerNorm.bias", {E}, true);
    TensorId dec_b = on_device ? b.param("predictions.bias", {V}, true) : kNoTensor;
    const BertLinear dense = bert_linear(b, "predictions.dense", E, H, true);
    if (!on_device) dec_b = b.param("predictions.bias", {V}, true);
    b.construction_temp(b.info(word).bytes);
    b.construction_temp(b.info(dec_b).bytes);
    mlm_head_loss(b, s, h, dense, ln_w, ln_b, word, dec_b, ids);
    return;
  }
  // AlbertForSequenceClassification (AlbertModel with its pooler, which runs while embedding_output is bound) /
  // AlbertForTokenClassification (no pooler): BERT's heads.
  // bert_cls_head releases embedding_output after the pooler (seq_cls); AlbertForTokenClassification's
  // AlbertModel has no pooler and returns here.
  if (cfg.task == Task::token_cls) b.drop(embedding_output);
  bert_cls_head(b, s, h, labels, embedding_output);
}

}  // namespace memplan
