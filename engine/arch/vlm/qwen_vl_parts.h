// Pieces of Qwen2VLForConditionalGeneration (engine/arch/vlm/qwen2_vl.cpp) that Qwen2_5_VLForConditionalGeneration
// (engine/arch/vlm/qwen2_5_vl.cpp) runs unchanged: transformers 5.17's modeling_qwen2_5_vl.py copies the text
// model, M-RoPE, the placeholder scatter and the vision attention from modeling_qwen2_vl.py and differs in the
// vision blocks (RMSNorm + gated MLP), the window attention and the merger's norm. Defined in qwen2_vl.cpp.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan::qwenvl {

// The images of one micro-batch (RunConfig::image_grid, images_per_sample), checked against the spec.
struct ImageBatch {
  int64_t images = 0;          // batch_size * images_per_sample (0: text only)
  int64_t t = 0, h = 0, w = 0;  // one image's patch grid before the spatial merge
  int64_t patches = 0;          // all images' patches: images * t * h * w
  int64_t tokens = 0;           // all images' tokens: patches / merge^2
};
// Refuses (InputError naming image_grid / images_per_sample / seq_len) a grid whose h or w is not a multiple of
// the spatial merge size and a sequence (the prompt, in inference) too short for the images as the harness lays
// them out (3 text tokens, then per image <|vision_start|>, its tokens, <|vision_end|> and 2 text tokens).
ImageBatch image_batch(const GraphBuilder& b, const TransformerSpec& s);

// Qwen2.5-VL's variant: which statements of the vision tower differ.
struct VisionVariant {
  bool v25 = false;  // RMSNorm norms, gated MLP, window attention and its index permutations, RMSNorm merger
};

// The whole <Type>ForConditionalGeneration graph: a training step with or without images, or one text-only
// inference pass (prefill / decode).
void build_qwen_vl(GraphBuilder& b, const TransformerSpec& s, const VisionVariant& v);

}  // namespace memplan::qwenvl
