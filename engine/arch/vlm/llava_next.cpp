// LlavaNextForConditionalGeneration (models/llava_next/modeling_llava_next.py): a training step with images (the
// harness plugin calibrate/harness_kinds/llava.py, "anyres" tiles), a text-only training step, or one text-only
// inference pass. Mirrored from huggingface/transformers' modeling_llava_next.py as the code index holds it (a
// 4.5x-era copy, commit 00dcc6dd: get_image_features returning the packed per-image list, an inline placeholder
// mask); the 5.17 statements this file assumes where that copy differs are llava 5.17's (llava.cpp, measured):
// get_placeholder_mask with torch_compilable_check, the vision output object (its hidden-state tuple and pooled
// output) alive until the model's forward has taken .pooler_output. Diff against 5.17 before trusting lifetimes.
//
// Stages, as the model runs them:
//   Batch: input_ids [B, S] (images_per_sample runs of n image tokens), pixel_values [B * k, T, C, R, R] in the
//     model's dtype (fp32 under amp; T = the image's tiles, the same for every image: one image_hw), image_sizes
//     [B * k, 2] int64, labels [B, S] (image tokens masked to -100). Text only: input_ids, also the labels.
//   Anyres geometry (anyres_layout): select_best_resolution picks the pinpoint [ph, pw] that keeps the most of the
//     image's resolution (ties: the least wasted area); the grid is ph / R x pw / R tiles, plus the base tile:
//     T = ph / R * pw / R + 1 (image_size_to_num_patches). unpad_image crops the [nph * side, npw * side] feature
//     map back to the image's aspect ratio (side = R / patch); each remaining row gains an image_newline column:
//     n = base + rows * (cols + 1), base = mm_image_tokens (576 for CLIP-L/336 under "default").
//   get_image_features: torch.cat([pv[:T] for pv in pixel_values]) (a copy, bound until it returns); the CLIP
//     tower over B * k * T tiles with output_hidden_states (llava_parts.h); the selected hidden state and the
//     projector (llava::project_features); torch.split(features, T per image) (one SplitWithSizesBackward: its
//     backward writes a fresh full-size gradient); pack_image_features per image: base = f[0], f[1:] (slices:
//     each backward a fresh f-sized zero-filled gradient), .view(nph, npw, side, side, H) (the gradient arrives
//     permuted: ViewBackward's reshape copies it), .permute(4, 0, 2, 1, 3).contiguous() (a copy),
//     flatten(1, 2).flatten(2, 3) (views), unpad_image (a slice: its backward a fresh map-sized gradient),
//     cat with image_newline[:, None, None].expand(H, rows, 1).to(dtype) (a copy under amp: the parameter is
//     fp32) along the last dim, flatten(1, 2).transpose(0, 1) (views), cat((base, f), 0).
//   LlavaNextModel.forward: inputs_embeds = embed_tokens(input_ids); torch.cat(list, 0).to(embeddings' dtype);
//     get_placeholder_mask and masked_scatter (llava_parts.h); the text model (llama_parts.h); lm_head over every
//     position and ForCausalLMLoss against the labels.
// LoRA (peft's target_modules also match the CLIP tower's q_proj / v_proj): the adapters come from
// GraphBuilder::linear; those of the tower layers past the selected hidden state run but get no gradient
// (unreached_linear after the forward, so they register where peft's injection order puts them).
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/vlm/llava_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

void build_llava_next(GraphBuilder& b, const TransformerSpec& s) {
  const llava::AnyresGrid ar = llava::run_anyres_grid(b, s);
  const int64_t tokens = s.mm_image_tokens + ar.rows * (ar.cols + 1);  // the base tile, then rows with a newline
  // The harness lays out 4 text tokens, then each image's tokens followed by 3 text tokens.
  const int64_t images = llava::check_run(b, s, tokens + 3, 4, tokens, /*lora=*/true);
  llava::build_tiled_llava(b, s, images, ar.tiles, tokens, [&](TensorId f, TensorId newline, int64_t elt) {
    return llava::pack_anyres_image(b, s, f, ar, newline, elt, ar.rows, ar.cols);
  });
}

}  // namespace memplan
