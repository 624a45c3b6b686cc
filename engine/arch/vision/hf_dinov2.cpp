// Dinov2ForImageClassification (transformers 5.17 models/dinov2/modeling_dinov2.py), training forward + cross
// entropy. Stages:
//   Dinov2Embeddings: pixel_values.to(the projection's dtype) (a no-op: the batch is in the parameters' dtype, fp32
//     under amp) -> patch Conv2d (kernel = stride = patch) -> flatten(2).transpose(1, 2) (a view) ->
//     cat(cls_token.expand, patches) -> + interpolate_pos_encoding(...) -> dropout(hidden_dropout_prob).
//     interpolate_pos_encoding returns position_embeddings itself when the patch count equals the table's and the
//     image is square: always here (the input is the config's square image_size), so no bicubic interpolation runs.
//   N x Dinov2Layer: norm1; Dinov2Attention (Dinov2SelfAttention: key, value, query projections in that order,
//     each viewed [B, S, heads, hd].transpose(1, 2), sdpa / eager, reshape; then Dinov2SelfOutput: dense,
//     dropout); layer_scale1 (x * lambda1); drop_path (identity at rate 0) + residual; norm2; Dinov2MLP (fc1,
//     gelu, fc2) or Dinov2SwiGLUFFN (weights_in, chunk(2), silu(x1) * x2, weights_out); layer_scale2; drop_path
//     + residual.
//   Dinov2Model: the final layernorm; Dinov2ForImageClassification: cat([sequence_output[:, 0],
//     sequence_output[:, 1:].mean(dim=1)], dim=1) -> classifier (Linear(2H, num_labels)) ->
//     ForSequenceClassificationLoss (cross entropy, mean).
// Python bindings that decide lifetimes:
//   - Dinov2Model.forward keeps embedding_output and encoder_outputs (the last layer's output) bound until it
//     returns, after the final layernorm; Dinov2Encoder's loop variable holds each layer's input until it returns.
//   - Dinov2SelfAttention binds key / value / query until it returns, before the dense projection (ViT's
//     attention keeps them through o_proj); Dinov2Attention binds eager attention's probabilities to `_` until it
//     returns, after the dense projection (ViT: until the layer returns).
//   - Dinov2Layer binds hidden_states_norm, the layer-scaled attention output (self_attention_output) and the
//     first residual sum until it returns; LayerScale's mul saves its input (lambda1 needs a gradient).
//   - Dinov2ForImageClassification keeps outputs (sequence_output), linear_input and the logits bound until it
//     returns, after the loss; the patch-token mean is a temporary cat copies.
// Under autocast the residual stream is fp32 (cat promotes the bf16 patches to the fp32 cls token, and each
// layer scale multiplies a bf16 projection by the fp32 lambda1).
#include "engine/arch/builders.h"
#include "engine/arch/encoders/bert_parts.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/hf_vit_parts.h"
#include "engine/errors.h"
#include "engine/reduce_workspace.h"

namespace memplan {

namespace {

using hfvit::VitLinear;
using hfvit::vit_linear;

TensorId apply(GraphBuilder& b, const VitLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct Dinov2LayerParams {
  TensorId n1_w, n1_b, n2_w, n2_b, ls1, ls2;
  VitLinear q, k, v, o, fc1, fc2;  // fc1 / fc2: weights_in / weights_out of the SwiGLU FFN
};

// Dinov2Layer.__init__ order: norm1, attention (query, key, value, output.dense), layer_scale1, norm2, mlp,
// layer_scale2.
Dinov2LayerParams dinov2_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, A = s.num_heads * s.head_dim, I = s.intermediate_size;
  Dinov2LayerParams w;
  w.n1_w = b.param(p + "norm1.weight", {H}, train);
  w.n1_b = b.param(p + "norm1.bias", {H}, train);
  w.q = vit_linear(b, p + "attention.attention.query", A, H, s.qkv_bias, train);
  w.k = vit_linear(b, p + "attention.attention.key", A, H, s.qkv_bias, train);
  w.v = vit_linear(b, p + "attention.attention.value", A, H, s.qkv_bias, train);
  w.o = vit_linear(b, p + "attention.output.dense", H, A, true, train);
  w.ls1 = b.param(p + "layer_scale1.lambda1", {H}, train);
  w.n2_w = b.param(p + "norm2.weight", {H}, train);
  w.n2_b = b.param(p + "norm2.bias", {H}, train);
  if (s.dinov2_swiglu_ffn) {
    w.fc1 = vit_linear(b, p + "mlp.weights_in", 2 * I, H, true, train);
    w.fc2 = vit_linear(b, p + "mlp.weights_out", H, I, true, train);
  } else {
    w.fc1 = vit_linear(b, p + "mlp.fc1", I, H, true, train);
    w.fc2 = vit_linear(b, p + "mlp.fc2", H, I, true, train);
  }
  w.ls2 = b.param(p + "layer_scale2.lambda1", {H}, train);
  return w;
}

// Dinov2Attention.forward on the normed input x [B, S, H]: returns the dense projection's output (after dropout).
TensorId dinov2_attention(GraphBuilder& b, const TransformerSpec& s, const Dinov2LayerParams& w, TensorId x) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, hd = s.head_dim;
  const bool eager = cfg.attn == AttnImpl::eager;
  // `proj(x).view(B, -1, heads, hd).transpose(1, 2)`: views (as ViT's: eager's bmm gradients come back contiguous
  // and the transposed view copies them).
  auto heads = [&](const VitLinear& l) {
    const TensorId t = apply(b, l, x);
    return eager ? b.view_copying_grad(t, {B, nh, S, hd}) : b.view(t, {B, nh, S, hd});
  };
  const TensorId k = heads(w.k);
  const TensorId v = heads(w.v);
  const TensorId q = heads(w.q);
  for (TensorId t : {k, v, q}) b.hold(t);  // key / value / query_layer until Dinov2SelfAttention returns
  TensorId ctx, weights = kNoTensor;
  if (!eager) {
    ctx = b.sdpa(q, k, v, s.attn_dropout, false);  // no mask, not causal; its [B, S, heads, hd] output
  } else {
    // eager_attention_forward (the bert copy): matmul(q, k.transpose(2, 3)) * scaling (matmul copies both
    // head-split views), softmax(dim=-1) in the scores' dtype (fp32 under autocast's policy), dropout, matmul
    // with v, transpose(1, 2).contiguous().
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, S, S}, true, true), false);
    b.hold(scores);  // attn_weights until the softmax statement rebinds it
    TensorId probs = b.softmax_last(scores);
    b.drop(scores);
    weights = b.dropout(probs, s.attn_dropout);
    b.hold(weights);  // Dinov2Attention's `_` until it returns
    ctx = b.contiguous_copy(b.matmul(weights, v, {B, nh, S, hd}, false, true), {B, S, nh, hd}, /*grad_copied=*/true);
  }
  // context_layer.reshape(B, S, all_head_size): a view of the contiguous context. Dinov2SelfAttention returns.
  const TensorId context = b.view(ctx, {B, S, nh * hd});
  for (TensorId t : {k, v, q}) b.drop(t);
  // Dinov2SelfOutput: dense, dropout.
  const TensorId out = b.dropout(apply(b, w.o, context), s.resid_dropout);
  if (weights != kNoTensor) b.drop(weights);
  return out;
}

TensorId dinov2_layer(GraphBuilder& b, const TransformerSpec& s, const Dinov2LayerParams& w, const std::string& name,
                      bool checkpointed, TensorId h) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, I = s.intermediate_size;
  b.begin_layer(name, checkpointed);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the encoder's loop variable until the layer returns
  const TensorId norm = b.layer_norm(h, w.n1_w, w.n1_b);
  b.hold(norm);  // hidden_states_norm until the layer returns
  const TensorId sao = b.mul(dinov2_attention(b, s, w, norm), w.ls1);
  b.hold(sao);  // self_attention_output until the layer returns
  const TensorId h1 = b.add(hfbackbone::drop_path(b, sao, s.drop_path_rate), layer_in);
  b.hold(h1);  // hidden_states until the layer returns
  const TensorId n2 = b.layer_norm(h1, w.n2_w, w.n2_b);
  b.hold(n2);  // layer_output until the MLP's return rebinds it
  TensorId m;
  if (s.dinov2_swiglu_ffn) {
    // Dinov2SwiGLUFFN: chunk(2) -> two views of weights_in's output (SplitBackward concatenates their gradients),
    // silu(x1) (saves x1) * x2 (saves both).
    const auto halves = b.split(apply(b, w.fc1, n2), 2, {B, S, I});
    m = apply(b, w.fc2, b.mul(b.unary("silu", halves[0], true, false), halves[1]));
  } else {
    m = apply(b, w.fc2, b.unary("gelu", apply(b, w.fc1, n2), true, false));
  }
  b.drop(n2);
  const TensorId out = b.add(hfbackbone::drop_path(b, b.mul(m, w.ls2), s.drop_path_rate), h1);
  for (TensorId t : {h1, sao, norm, layer_in}) b.drop(t);
  b.end_layer();
  return out;
}

}  // namespace

void build_hf_dinov2(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)), "dinov2 has its own image-classification head");
  const int64_t B = cfg.batch_size, H = s.hidden_size, R = s.image_size, P = s.patch_size, C = s.num_channels;
  const int64_t side = R / P, n = side * side, S = n + 1, NL = s.image_num_labels;
  if (cfg.seq_len != S || hf_image_tokens(s) != S)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "a dinov2's sequence is its (image_size / patch_size)^2 + 1 = " + std::to_string(S) +
                         " tokens, set from the config (not a run setting)");
  const bool emb_train = !cfg.freeze_embeddings;

  hf_construction_scalar(b);
  // Parameters in the order they reach the GPU: built there (weights_load on_device) in __init__ order (cls_token,
  // mask_token, the patch projection, position_embeddings); moved by model.to("cuda") (Module._apply), the patch
  // projection (a child) before the embeddings' own parameters. Then the layers, the final layernorm, the
  // classifier. mask_token requires grad but the classifier's forward never reads it: no gradient, and
  // AdamW skips it (a parameter without .grad), so it is registered as a weight without training state.
  const bool built_on_device = cfg.weights_load == WeightsLoad::on_device;
  auto own = [&] {
    TensorId c = b.param("dinov2.embeddings.cls_token", {1, 1, H}, emb_train);
    if (s.dinov2_mask_token) b.param("dinov2.embeddings.mask_token", {1, H}, false);
    return c;
  };
  TensorId cls = built_on_device ? own() : kNoTensor;
  TensorId conv_w = b.param("dinov2.embeddings.patch_embeddings.projection.weight", {H, C, P, P}, emb_train);
  TensorId conv_b = b.param("dinov2.embeddings.patch_embeddings.projection.bias", {H}, emb_train);
  if (!built_on_device) cls = own();
  TensorId pos = b.param("dinov2.embeddings.position_embeddings", {1, S, H}, emb_train);
  std::vector<Dinov2LayerParams> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(
        dinov2_layer_params(b, s, "dinov2.encoder.layer." + std::to_string(i) + ".", !layer_frozen(cfg, i)));
  TensorId lnf_w = b.param("dinov2.layernorm.weight", {H});
  TensorId lnf_b = b.param("dinov2.layernorm.bias", {H});
  TensorId cls_w = b.param("classifier.weight", {NL, 2 * H});
  TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels.
  TensorId x = b.input({B, C, R, R}, b.param_dtype());
  TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;  // inference passes no labels

  // Dinov2Embeddings.forward, as ViT's: the conv output's gradient is the transposed narrow of cat's gradient
  // (copied contiguous for cuDNN); under autocast cat promotes the bf16 patches to the fp32 cls token's dtype and
  // its backward casts their narrow back.
  TensorId patches = b.view_copying_grad(b.conv2d(x, conv_w, conv_b, P, 0, {B, H, side, side}), {B, n, H});
  TensorId e = b.cat("cat", {b.view(cls, {B, 1, H}), patches}, 1, std::nullopt, /*cast_part_grads=*/true);
  e = b.add(e, pos);
  TensorId h = b.dropout(e, s.embd_dropout);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // bound in Dinov2Model.forward until it returns

  for (int64_t i = 0; i < s.num_layers; ++i)
    h = dinov2_layer(b, s, layers[static_cast<size_t>(i)], "dinov2.encoder.layer." + std::to_string(i),
                     layer_checkpointed(cfg, i), h);
  b.hold(h);  // encoder_outputs.last_hidden_state until Dinov2Model.forward returns
  const TensorId seq = b.layer_norm(h, lnf_w, lnf_b);
  b.drop(h);
  b.drop(embedding_output);

  // Dinov2ForImageClassification: sequence_output[:, 0] (select) and [:, 1:] (slice): views whose backward each
  // writes a zero-filled sequence-sized gradient; mean(dim=1) (MeanBackward: a fresh [B, n, H] gradient);
  // cat([cls, mean], dim=1); the classifier; the loss.
  b.hold(seq);  // outputs.last_hidden_state until the forward returns
  const TensorId cls_tok = first_token(b, seq);
  const TensorId patch_tok = b.view_copying_grad(seq, {B, n, H});
  // mean(dim=1) reduces over a dimension that is not the fastest: with many tokens per output ATen's Reduce.cuh
  // splits each output across CTAs and stages partial sums in a global buffer plus semaphores, alive for the call
  // (1369 tokens: the 518 bf16 row's 66 MiB + 192 B, in every step; 256 tokens: none, as the 224 rows).
  const ReduceWorkspace ws = column_sum_workspace(n, B * H, cfg.gpu_sm_count, cfg.gpu_max_threads_per_sm);
  std::vector<int64_t> mean_temps;
  if (ws.buffer_bytes > 0) mean_temps = {ws.buffer_bytes, ws.semaphore_bytes};
  const TensorId mean = b.generic({"mean", {patch_tok}, {{{B, H}, b.dtype(seq)}}, {}, {}, mean_temps, {}})[0];
  const TensorId linear_input = b.cat("cat", {cls_tok, mean}, 1);
  b.hold(linear_input);  // until the forward returns
  const TensorId logits = b.linear(linear_input, cls_w, cls_b);
  if (!b.training()) {  // inference: the logits are the output, dropped by the caller after the forward returns
    b.hold(logits);
    b.mark_model_end();
    return;
  }
  b.mark_model_end();
  b.hold(logits);  // the output's logits until the forward returns
  const TensorId loss = b.cross_entropy(logits, labels);
  b.drop(logits);
  b.drop(linear_input);
  b.drop(seq);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
