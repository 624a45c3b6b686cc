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

void build_hf_deit(GraphBuilder& b, const TransformerSpec& s) {
  hfvit::build_vit_classifier(b, s, "deit", "DeiTForImageClassification", /*distillation=*/true);
}

}  // namespace memplan
