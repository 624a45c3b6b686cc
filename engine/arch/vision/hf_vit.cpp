// ViTForImageClassification (transformers 5.17 models/vit/modeling_vit.py), training forward + cross entropy.
// Not torchvision's ViT (vit.cpp): other modules, other statements, other layouts.
//   ViTEmbeddings: patch Conv2d (kernel = stride = patch) -> flatten(2).transpose(1, 2) (a view) ->
//     cat(cls_token.expand(B, -1, -1), patches) -> + position_embeddings -> dropout(hidden_dropout_prob).
//   N x ViTLayer (pre-LN): residual = h; layernorm_before; ViTAttention (q / k / v projections viewed
//     [B, S, heads, head_dim].transpose(1, 2), sdpa / eager, reshape, o_proj); dropout; + residual;
//     layernorm_after; ViTMLP (fc1, gelu, fc2); dropout; + residual.
//   ViTModel: the final layernorm (no pooler: ViTForImageClassification builds it without one).
//   Head: sequence_output[:, 0, :] -> classifier -> ForSequenceClassificationLoss (cross entropy, mean).
// Python bindings that decide lifetimes:
//   - ViTModel.forward keeps embedding_output bound until it returns (after the final layernorm), and its loop
//     variable holds each layer's input until the layer returns.
//   - ViTAttention.forward binds query / key / value_states until it returns; eager attention returns its
//     probabilities, which the layer binds to `_` until it returns.
//   - ViTForImageClassification.forward keeps the model output (sequence_output) and the logits bound until it
//     returns, after the loss.
// Under autocast the residual stream is fp32: cat promotes the bf16 patch embeddings to the fp32 cls token's dtype,
// the fp32 position table keeps it there, and each residual add promotes the projection's 16-bit output.
#include "engine/arch/builders.h"
#include "engine/arch/encoders/bert_parts.h"
#include "engine/arch/sdpa_bias.h"
#include "engine/arch/vision/hf_vit_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace hfvit {

VitLinear vit_linear(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool bias, bool train) {
  VitLinear l;
  l.w = b.param(name + ".weight", {out, in}, train);
  if (bias) l.b = b.param(name + ".bias", {out}, train);
  return l;
}

namespace {
TensorId apply(GraphBuilder& b, const VitLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }
}  // namespace

VitLayerParams vit_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train,
                                bool key_bias) {
  const int64_t H = s.hidden_size, A = s.num_heads * s.head_dim, I = s.intermediate_size;
  VitLayerParams w;
  w.q = vit_linear(b, p + "attention.q_proj", A, H, s.qkv_bias, train);
  w.k = vit_linear(b, p + "attention.k_proj", A, H, key_bias, train);
  w.v = vit_linear(b, p + "attention.v_proj", A, H, s.qkv_bias, train);
  w.o = vit_linear(b, p + "attention.o_proj", H, A, true, train);
  w.ln1_w = b.param(p + "layernorm_before.weight", {H}, train);
  w.ln1_b = b.param(p + "layernorm_before.bias", {H}, train);
  w.ln2_w = b.param(p + "layernorm_after.weight", {H}, train);
  w.ln2_b = b.param(p + "layernorm_after.bias", {H}, train);
  w.fc1 = vit_linear(b, p + "mlp.fc1", I, H, true, train);
  w.fc2 = vit_linear(b, p + "mlp.fc2", H, I, true, train);
  return w;
}

TensorId vit_attention(GraphBuilder& b, const TransformerSpec& s, const VitLinear& wq, const VitLinear& wk,
                       const VitLinear& wv, const VitLinear& wo, TensorId x, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, hd = s.head_dim;
  const bool eager = cfg.attn == AttnImpl::eager;
  weights = kNoTensor;
  // `proj(x).view(B, S, -1, hd).transpose(1, 2)`: views of the projections. SDPA's fused backward writes each
  // gradient in its input's layout; eager's bmm gradients are contiguous [B, heads, S, hd] tensors the transposed
  // view copies back.
  auto heads = [&](const VitLinear& l) {
    const TensorId t = apply(b, l, x);
    return eager ? b.view_copying_grad(t, {B, nh, S, hd}) : b.view(t, {B, nh, S, hd});
  };
  const TensorId q = heads(wq);
  const TensorId k = heads(wk);
  const TensorId v = heads(wv);
  for (TensorId t : {q, k, v}) b.hold(t);  // query / key / value_states until the module returns
  TensorId ctx;
  if (!eager) {
    // sdpa_attention_forward, not causal: without a mask the fused kernels; with one the float mask
    // (engine/arch/sdpa_bias.h: the memory-efficient kernel when it needs a gradient). transpose(1, 2).contiguous()
    // of the kernel's output, which it allocates [B, S, heads, hd] (a view here).
    ctx = mask != kNoTensor ? sdpa_float_mask(b, q, k, v, mask, s.attn_dropout) : b.sdpa(q, k, v, s.attn_dropout, false);
  } else {
    // eager_attention_forward: `matmul(q, k.transpose(2, 3)) * scaling` (torch.matmul copies the head-split
    // views: their batch and head dims cannot merge; bmm saves the copies), + the mask (broadcast over the batch:
    // its gradient is summed), softmax(dtype=float32).to(q.dtype) in one statement, dropout, matmul with v,
    // transpose(1, 2).contiguous().
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, S, S}, true, true), false);
    if (mask != kNoTensor) scores = b.add(scores, mask);
    b.hold(scores);  // attn_weights until the softmax statement rebinds it
    TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(q));
    b.drop(scores);
    probs = b.dropout(probs, s.attn_dropout);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, v, {B, nh, S, hd}, false, true), {B, S, nh, hd}, /*grad_copied=*/true);
  }
  // attn_output.reshape(B, S, -1).contiguous(): a view of the contiguous context.
  const TensorId out = apply(b, wo, b.view(ctx, {B, S, nh * hd}));
  for (TensorId t : {q, k, v}) b.drop(t);
  return out;
}

TensorId vit_layer(GraphBuilder& b, const TransformerSpec& s, const VitLayerParams& w, const std::string& name,
                   bool checkpointed, TensorId h) {
  b.begin_layer(name, checkpointed);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the model's loop variable (and `residual`) until the layer returns
  TensorId a = b.layer_norm(h, w.ln1_w, w.ln1_b);
  b.hold(a);  // hidden_states until the attention's return rebinds it
  TensorId weights = kNoTensor;
  TensorId att = vit_attention(b, s, w.q, w.k, w.v, w.o, a, kNoTensor, weights);
  b.drop(a);
  att = b.dropout(att, s.resid_dropout);
  TensorId h1 = b.add(att, layer_in);
  b.hold(h1);  // residual until the layer returns
  const TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b);
  b.hold(n2);  // the layer's hidden_states until the MLP returns (ViTMLP rebinds only its own local)
  TensorId m = apply(b, w.fc2, b.unary("gelu", apply(b, w.fc1, n2), true, false));
  b.drop(n2);
  m = b.dropout(m, s.resid_dropout);
  h = b.add(m, h1);
  for (TensorId t : {h1, weights, layer_in})
    if (t != kNoTensor) b.drop(t);
  b.end_layer();
  return h;
}

void vit_tail(GraphBuilder& b, TensorId h, TensorId embedding_output, TensorId lnf_w, TensorId lnf_b, TensorId cls_w,
              TensorId cls_b, TensorId labels) {
  b.hold(h);  // the loop variable until ViTModel.forward returns
  const TensorId seq = b.layer_norm(h, lnf_w, lnf_b);
  b.drop(h);
  b.drop(embedding_output);

  // ViTForImageClassification: sequence_output[:, 0, :] (a strided view), classifier, the loss.
  b.hold(seq);  // outputs.last_hidden_state until the forward returns
  const TensorId logits = b.linear(first_token(b, seq), cls_w, cls_b);
  if (!b.training()) {  // inference: the logits are the output, dropped by the caller after the forward returns
    b.hold(logits);
    b.mark_model_end();
    return;
  }
  b.mark_model_end();
  b.hold(logits);  // the output's logits until the forward returns
  const TensorId loss = b.cross_entropy(logits, labels);
  b.drop(logits);
  b.drop(seq);
  b.exit_autocast();
  b.set_loss(loss);
}

// ViTForImageClassification, and DeiTForImageClassification (`distillation`: DeiTEmbeddings' distillation token,
// registered after the position table, and one more expanded token in the cat; engine/arch/vision/hf_deit.cpp says
// what else is the same). `type` / `cls_name` name the model in messages, `prefix` its parameters.
void build_vit_classifier(GraphBuilder& b, const TransformerSpec& s, const std::string& type,
                          const std::string& cls_name, bool distillation) {
  const auto& cfg = b.config();
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)),
                     type + " (" + cls_name + ") has its own image-classification head");
  const int64_t B = cfg.batch_size, H = s.hidden_size, R = s.image_size, P = s.patch_size, C = s.num_channels;
  const int64_t extra = distillation ? 2 : 1;
  const int64_t side = R / P, n = side * side, S = n + extra, NL = s.image_num_labels;
  if (cfg.seq_len != S || hf_image_tokens(s) != S)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "a " + type + "'s sequence is its (image_size / patch_size)^2 + " + std::to_string(extra) +
                         " = " + std::to_string(S) + " tokens, set from the config (not a run setting)");
  const bool emb_train = !cfg.freeze_embeddings;
  const std::string pre = type + ".";

  hf_construction_scalar(b);
  // Parameters in the order they reach the GPU. model.to("cuda") (Module._apply) moves a module's children, then
  // its own parameters: the embeddings' patch projection (weight, bias), then cls_token and position_embeddings
  // (and DeiT's distillation_token); built on the GPU (weights_load on_device) they are allocated in __init__
  // order, cls_token first. Then the layers, the final layernorm, the classifier.
  const bool built_on_device = cfg.weights_load == WeightsLoad::on_device;
  TensorId cls = built_on_device ? b.param(pre + "embeddings.cls_token", {1, 1, H}, emb_train) : kNoTensor;
  TensorId conv_w = b.param(pre + "embeddings.patch_embeddings.projection.weight", {H, C, P, P}, emb_train);
  TensorId conv_b = b.param(pre + "embeddings.patch_embeddings.projection.bias", {H}, emb_train);
  if (!built_on_device) cls = b.param(pre + "embeddings.cls_token", {1, 1, H}, emb_train);
  TensorId pos = b.param(pre + "embeddings.position_embeddings", {1, S, H}, emb_train);
  TensorId dist = distillation ? b.param(pre + "embeddings.distillation_token", {1, 1, H}, emb_train) : kNoTensor;
  std::vector<VitLayerParams> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(
        vit_layer_params(b, s, pre + "layers." + std::to_string(i) + ".", !layer_frozen(cfg, i), s.qkv_bias));
  TensorId lnf_w = b.param(pre + "layernorm.weight", {H});
  TensorId lnf_b = b.param(pre + "layernorm.bias", {H});
  TensorId cls_w = b.param("classifier.weight", {NL, H});
  TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels.
  TensorId x = b.input({B, C, R, R}, b.param_dtype());
  TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;  // inference passes no labels

  // The embeddings' forward. The conv output dies once cat has copied it (Conv2d saves its input and weight).
  // flatten(2).transpose(1, 2): views. The gradient reaching the conv output is the transposed narrow of cat's
  // gradient, which convolution_backward copies contiguous for cuDNN (allocated before the weight gradient, freed
  // after the kernel: whole-run streams, all four rows).
  TensorId patches = b.view_copying_grad(b.conv2d(x, conv_w, conv_b, P, 0, {B, H, side, side}), {B, n, H});
  // Under autocast the bf16 patches join the fp32 cls token: cat promotes, and its backward casts the patches'
  // narrow of the fp32 gradient back to bf16 (a fresh buffer; whole-run amp streams).
  TensorId e = distillation ? b.cat("cat", {b.view(cls, {B, 1, H}), b.view(dist, {B, 1, H}), patches}, 1,
                                    std::nullopt, /*cast_part_grads=*/true)
                             : b.cat("cat", {b.view(cls, {B, 1, H}), patches}, 1, std::nullopt,
                                     /*cast_part_grads=*/true);
  e = b.add(e, pos);
  TensorId h = b.dropout(e, s.embd_dropout);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // bound in the model's forward until it returns

  for (int64_t i = 0; i < s.num_layers; ++i)
    h = vit_layer(b, s, layers[static_cast<size_t>(i)], pre + "layers." + std::to_string(i),
                  layer_checkpointed(cfg, i), h);
  vit_tail(b, h, embedding_output, lnf_w, lnf_b, cls_w, cls_b, labels);
}

}  // namespace hfvit

void build_hf_vit(GraphBuilder& b, const TransformerSpec& s) {
  hfvit::build_vit_classifier(b, s, "vit", "ViTForImageClassification", /*distillation=*/false);
}

}  // namespace memplan
