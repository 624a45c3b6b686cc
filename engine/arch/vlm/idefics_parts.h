// Idefics3ForConditionalGeneration (engine/arch/vlm/idefics3.cpp) and SmolVLMForConditionalGeneration
// (engine/arch/vlm/smolvlm.cpp): transformers 5.17's modeling_smolvlm.py is generated from Idefics3's and runs the
// same vision transformer, connector, Llama text model and head; only Model.inputs_merger (how the image features
// reach the text embeddings) and a guard in get_image_features (an all-padding batch keeps one image) differ.
// Defined in idefics3.cpp.
#pragma once
#include <cstdint>

#include "engine/arch/builders.h"

namespace memplan::idefics {

// The images of one training micro-batch, as calibrate/harness_kinds/idefics.py lays them out: every sample
// carries RunConfig::images_per_sample images, each split by the image processor into image_splits [rows, cols]
// tiles plus the global image ([0, 0]: the global image alone); every sub-image is a full image_size square.
struct Images {
  int64_t per_sample = 0;          // images per sample (0: text only)
  int64_t rows = 0, cols = 0;      // tiles per image
  int64_t sub_per_image = 0;       // rows * cols + 1, or 1 without tiles
  int64_t count = 0;               // sub-images in the batch: B * per_sample * sub_per_image
  int64_t side = 0;                // patches per side: image_size / patch
  int64_t patches = 0;             // side^2: the vision transformer's sequence
  int64_t tokens = 0;              // image tokens per sub-image after the pixel shuffle: patches / scale^2
  int64_t tokens_per_image = 0;    // the processor's layout of one image (tokens + framing)
};
// Reads and checks the run's image keys: InputError naming image_splits / images_per_sample / image_grid /
// seq_len for a layout the harness cannot make (no image_splits with images, rows xor cols 0, a sequence too short
// for the images), images in an inference run (text-only serving is what is modelled), image_grid (a Qwen-VL key).
Images images(const GraphBuilder& b, const TransformerSpec& s);

// Which Model.inputs_merger runs.
enum class Merger {
  masked_scatter,  // Idefics3Model: inputs_embeds.masked_scatter(input_ids == image_token_id, features)
  index_where,     // SmolVLMModel: zeros_like, boolean index_put_ of gathered feature rows, torch.where
};

// The whole <Type>ForConditionalGeneration graph: a training step with or without images, or one text-only
// inference pass (prefill / decode).
void build(GraphBuilder& b, const TransformerSpec& s, Merger merger);

}  // namespace memplan::idefics
