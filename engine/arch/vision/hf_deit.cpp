// DeiTForImageClassification (transformers 5.17 models/deit/modeling_deit.py), training forward + cross entropy.
// DeiT is ViT (engine/arch/vision/hf_vit.cpp) with a distillation token: DeiTLayer, DeiTAttention, DeiTMLP, the
// final layernorm and the head (sequence_output[:, 0, :] -> classifier -> ForSequenceClassificationLoss) are
// ViT's statements, run here through hf_vit_parts.h. What differs:
//   DeiTEmbeddings: patch Conv2d -> flatten(2).transpose(1, 2) -> cat(cls_token.expand, distillation_token.expand,
//     patches) -> + position_embeddings (num_patches + 2 rows; interpolate_pos_encoding is off: DeiTModel raises
//     on any other image size) -> dropout(hidden_dropout_prob). The sequence is num_patches + 2 tokens.
//   DeiTModel.forward casts pixel_values to the patch projection's dtype first (a no-op: the batch is already in
//     the parameters' dtype, fp32 under amp) and keeps embedding_output bound until it returns, as ViTModel.
//   Parameters: cls_token, patch projection, position_embeddings, distillation_token (DeiTEmbeddings.__init__
//     order; model.to("cuda") moves the projection first). No mask token (use_mask_token False for the
//     classifier) and no pooler (add_pooling_layer False).
// DeiTForImageClassificationWithTeacher (two heads, inference only in transformers) is refused by the importer.
#include "engine/arch/builders.h"
#include "engine/arch/vision/hf_vit_parts.h"
#include "engine/errors.h"

namespace memplan {

using namespace hfvit;

void build_hf_deit(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (!b.training())
    throw InputError("mode", "inference", "deit (DeiTForImageClassification) is modelled for training only");
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)), "deit has its own image-classification head");
  const int64_t B = cfg.batch_size, H = s.hidden_size, R = s.image_size, P = s.patch_size, C = s.num_channels;
  const int64_t side = R / P, n = side * side, S = n + 2, NL = s.image_num_labels;
  if (cfg.seq_len != S || hf_image_tokens(s) != S)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "a deit's sequence is its (image_size / patch_size)^2 + 2 = " + std::to_string(S) +
                         " tokens, set from the config (not a run setting)");
  const bool emb_train = !cfg.freeze_embeddings;

  hf_construction_scalar(b);
  // Parameters in the order they reach the GPU: built there (weights_load on_device) in __init__ order; moved by
  // model.to("cuda") (Module._apply), the patch projection (a child) before the embeddings' own parameters.
  const bool built_on_device = cfg.weights_load == WeightsLoad::on_device;
  TensorId cls = built_on_device ? b.param("deit.embeddings.cls_token", {1, 1, H}, emb_train) : kNoTensor;
  TensorId conv_w = b.param("deit.embeddings.patch_embeddings.projection.weight", {H, C, P, P}, emb_train);
  TensorId conv_b = b.param("deit.embeddings.patch_embeddings.projection.bias", {H}, emb_train);
  if (!built_on_device) cls = b.param("deit.embeddings.cls_token", {1, 1, H}, emb_train);
  TensorId pos = b.param("deit.embeddings.position_embeddings", {1, S, H}, emb_train);
  TensorId dist = b.param("deit.embeddings.distillation_token", {1, 1, H}, emb_train);
  std::vector<VitLayerParams> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(vit_layer_params(b, s, "deit.layers." + std::to_string(i) + ".", !layer_frozen(cfg, i)));
  TensorId lnf_w = b.param("deit.layernorm.weight", {H});
  TensorId lnf_b = b.param("deit.layernorm.bias", {H});
  TensorId cls_w = b.param("classifier.weight", {NL, H});
  TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels.
  TensorId x = b.input({B, C, R, R}, b.param_dtype());
  TensorId labels = b.input({B}, DType::i64);

  // DeiTEmbeddings.forward, as ViT's with one more expanded token in the cat: the conv output's gradient is the
  // transposed narrow of cat's gradient (copied contiguous for cuDNN), and under autocast cat promotes the bf16
  // patches to the fp32 tokens' dtype (its backward casts their narrow back).
  TensorId patches = b.view_copying_grad(b.conv2d(x, conv_w, conv_b, P, 0, {B, H, side, side}), {B, n, H});
  TensorId e = b.cat("cat", {b.view(cls, {B, 1, H}), b.view(dist, {B, 1, H}), patches}, 1, std::nullopt,
                     /*cast_part_grads=*/true);
  e = b.add(e, pos);
  TensorId h = b.dropout(e, s.embd_dropout);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // bound in DeiTModel.forward until it returns

  for (int64_t i = 0; i < s.num_layers; ++i)
    h = vit_layer(b, s, layers[static_cast<size_t>(i)], "deit.layers." + std::to_string(i),
                  layer_checkpointed(cfg, i), h);
  vit_tail(b, h, embedding_output, lnf_w, lnf_b, cls_w, cls_b, labels);
}

}  // namespace memplan
