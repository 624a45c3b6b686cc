// LlavaOnevisionForConditionalGeneration (models/llava_onevision/modeling_llava_onevision.py): a training step with
// images (the harness plugin calibrate/harness_kinds/llava.py), a text-only training step, or one text-only
// inference pass. Mirrored from huggingface/transformers' modular_llava_onevision.py as the code index holds it
// (the same 4.5x-era copy, commit 00dcc6dd, that llava_next.cpp mirrors); where that copy differs from 5.17 this
// file assumes llava_next's 5.17 statements (llava_next.cpp, measured in family set 39): get_placeholder_mask, the
// vision output object alive until the model's forward has taken .pooler_output. Diff against 5.17 before trusting
// lifetimes. The model is LlavaNextVideoModel's without its vision_resampler; no video is drawn.
//
// What differs from LLaVA-NeXT (llava_next.cpp), as the model runs it:
//   The tower: SigLIP (no class position) under the "full" strategy from the last hidden state (vision_feature_layer
//     -1): every tower layer reaches the loss, post_layernorm does not (its output is dropped unused).
//   Which images are tiled (get_image_features' need_patching): only those of a sample holding one image. The
//     processor passes batch_num_images; with several images a sample every image is one padded square tile
//     (T = 1), and pack_image_features takes f[0], cats image_newline[None].to(f) (a [1, H] copy when the
//     parameter's dtype differs) along dim 0 and flattens: mm_image_tokens + 1 tokens an image.
//   anyres_max_N (vision_aspect_ratio): a single image's unpadded map [H, rows, cols] larger than N base tiles,
//     ratio = sqrt(rows * cols / (N * side^2)) > 1.1, is resized with F.interpolate(map[None], [int(rows // ratio),
//     int(cols // ratio)], mode="bilinear") (fp32 under autocast; the packed image is then fp32 by cat's
//     promotion) before the newline column: mm_image_tokens + rows' * (cols' + 1) tokens.
// Stages otherwise as llava_next.cpp's, in llava::build_tiled_llava: torch.cat of each image's first T tiles, the
// tower with output_hidden_states, the projector, torch.split by image, pack_image_features (this file's), torch.cat
// and .to(inputs_embeds' dtype), masked_scatter, the Qwen2 text model, lm_head over every position and
// ForCausalLMLoss.
#include <cmath>

#include "engine/arch/builders.h"
#include "engine/arch/vlm/llava_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// Python's float floor division a // b for positive operands (float_floor_div: fmod, then the quotient rounded to
// the nearest integer when it lies within half of one), as int(curr_height // ratio) computes it.
int64_t py_floordiv(double a, double b) {
  const double mod = std::fmod(a, b);
  const double div = (a - mod) / b;
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return static_cast<int64_t>(floordiv);
}

}  // namespace

void build_llava_onevision(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t R = s.vision_image_size, side = R / s.vision_patch_size, k = cfg.images_per_sample;
  // need_patching: [n == 1 for n in batch_num_images ...] (the harness passes batch_num_images as the processor does).
  const bool tiled = k <= 1;
  llava::AnyresGrid ar;
  int64_t out_rows = 0, out_cols = 0, tokens = s.mm_image_tokens + 1, T = 1;
  if (tiled) {
    ar = llava::run_anyres_grid(b, s);
    out_rows = ar.rows;
    out_cols = ar.cols;
    const double ratio = std::sqrt(static_cast<double>(ar.rows * ar.cols) /
                                   static_cast<double>(s.mm_anyres_max_patches * side * side));
    if (ratio > 1.1) {
      out_rows = py_floordiv(static_cast<double>(ar.rows), ratio);
      out_cols = py_floordiv(static_cast<double>(ar.cols), ratio);
    }
    tokens = s.mm_image_tokens + out_rows * (out_cols + 1);
    T = ar.tiles;
  }
  // The harness lays out 4 text tokens, then each image's tokens followed by 3 text tokens.
  const int64_t images = llava::check_run(b, s, tokens + 3, 4, tokens, /*lora=*/true);
  const int64_t ntok = s.mm_image_tokens, H = s.hidden_size;
  llava::build_tiled_llava(b, s, images, T, tokens, [&](TensorId f, TensorId newline, int64_t elt) {
    if (tiled) return llava::pack_anyres_image(b, s, f, ar, newline, elt, out_rows, out_cols);
    const TensorId one = b.view_copying_grad(f, {ntok, H}, checked_mul(checked_mul(ntok, H, "tiles"), elt, "tiles"));  // f[0]
    const TensorId nl = b.to(b.view(newline, {1, H}), b.dtype(one));  // image_newline[None].to(image_feature)
    return b.cat("cat", {one, nl}, 0);                                  // then flatten(0, 1): a view
  });
}

}  // namespace memplan
