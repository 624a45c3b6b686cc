// The pieces of Qwen3VLForConditionalGeneration / Qwen3VLMoeForConditionalGeneration (engine/arch/vlm/qwen3_vl.cpp):
// the vision tower (Qwen3VLVisionModel) and the image sizes a run's RunConfig gives it.
#pragma once
#include <vector>

#include "engine/arch/builders.h"

namespace memplan::qwen3vl {

// The images of one training micro-batch: RunConfig image_grid [t, h, w] (patches) for each of
// images_per_sample images of each sample. images == 0: text only.
struct Images {
  int64_t images = 0;       // B * images_per_sample
  int64_t t = 0, h = 0, w = 0;
  int64_t patches = 0;      // images * t * h * w: pixel_values' rows, the tower's sequence
  int64_t tokens = 0;       // patches / merge^2: the image tokens in input_ids (all samples)
};
// Checks the run's image keys against the spec (InputError naming image_grid / images_per_sample).
Images images_of(const GraphBuilder& b, const TransformerSpec& s);

// Qwen3VLVisionModel's parameters in registration order (model.to() moves them so): patch_embed.proj (Conv3d
// weight, bias), pos_embed, blocks.i (norm1, norm2, attn.qkv, attn.proj, mlp.linear_fc1, mlp.linear_fc2: weight then
// bias each), merger (norm, linear_fc1, linear_fc2), deepstack_merger_list.k (the same, the norm over merge^2 x hidden).
struct Linear {
  TensorId w = kNoTensor, b = kNoTensor;
};
struct BlockParams {
  TensorId n1w, n1b, n2w, n2b;
  Linear qkv, proj, fc1, fc2;
};
struct MergerParams {
  TensorId nw, nb;
  Linear fc1, fc2;
};
struct VisionParams {
  TensorId conv_w, conv_b, pos;
  std::vector<BlockParams> blocks;
  MergerParams merger;
  std::vector<MergerParams> deepstack;
};
// `train`: the tower runs (a batch with images); deepstack mergers k >= used_deepstack (the text layer count) are
// registered untrained: their features are never added, so their parameters get no gradient.
VisionParams vision_params(GraphBuilder& b, const TransformerSpec& s, const std::string& prefix, bool train,
                           int64_t used_deepstack);

// Qwen3VLVisionModel.forward on pixel_values [patches, C * T * P * P] with image_grid_thw `grid`: the outputs the
// caller binds (image_outputs: last_hidden_state, the merger's pooler_output, the deepstack features), each held.
struct VisionOut {
  TensorId last = kNoTensor, merged = kNoTensor;
  std::vector<TensorId> deepstack;
  std::vector<TensorId> casts;  // under autocast: the unused deepstack mergers' weight casts, held (the caller drops)
};
// Deepstack mergers k >= used_deepstack run without a backward (their features are never added).
VisionOut vision_forward(GraphBuilder& b, const TransformerSpec& s, const VisionParams& w, const Images& im,
                         TensorId pixels, TensorId grid, int64_t used_deepstack);

}  // namespace memplan::qwen3vl
