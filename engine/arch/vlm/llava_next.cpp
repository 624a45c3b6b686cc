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
  const auto& cfg = b.config();
  const int64_t R = s.vision_image_size;
  if (!cfg.image_hw.empty() && cfg.images_per_sample == 0)
    throw InputError("image_hw", "set", "needs images_per_sample > 0 (a text-only run has no image to size)");
  const int64_t oh = cfg.image_hw.empty() ? R : cfg.image_hw[0], ow = cfg.image_hw.empty() ? R : cfg.image_hw[1];
  const llava::AnyresGrid ar = llava::anyres_grid(s, oh, ow);
  if (ar.grid_h == 0 || ar.grid_w == 0)
    throw InputError("image_grid_pinpoints", "set", "picks no tile grid for a " + std::to_string(oh) + " x " +
                                                         std::to_string(ow) + " image");
  const int64_t tokens = s.mm_image_tokens + ar.rows * (ar.cols + 1);  // the base tile, then rows with a newline
  // The harness lays out 4 text tokens, then each image's tokens followed by 3 text tokens.
  const int64_t images = llava::check_run(b, s, tokens + 3, 4, tokens, /*lora=*/true);
  const bool inf = !b.training(), with_images = images > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, ntok = s.mm_image_tokens, T = ar.tiles,
                tiles = checked_mul(images, T, "images_per_sample");
  const int64_t deepest = llava::deepest_feature_layer(s);

  hf_construction_scalar(b);
  // Parameters in __init__ order: model.vision_tower, model.multi_modal_projector, model.image_newline,
  // model.language_model (embed_tokens, layers, norm), lm_head.
  const llava::TowerParams tower = llava::tower_params(b, s, with_images, deepest, false);
  const auto [l1, l2] = llava::projector_params(b, s, with_images);
  const TensorId newline = b.param("image_newline", {H}, with_images);
  const TensorId embed = b.param("embed_tokens.weight", {V, H});

  // The batch, as the plugin draws it: input_ids, pixel_values, image_sizes, labels (generate(): position_ids).
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId pixels = kNoTensor, labels = ids;
  if (with_images) {
    pixels = b.input({images, T, s.vision_num_channels, R, R}, b.param_dtype());
    b.input({images, 2}, DType::i64);
    labels = b.input({B, S}, DType::i64);
  }

  TensorId h = b.embedding(ids, embed);
  TensorId features = kNoTensor, mask = kNoTensor;
  if (with_images) {
    // torch.cat of each image's first T tiles: a fresh [images * T, C, R, R], get_image_features' local.
    std::vector<TensorId> per_pix;
    for (int64_t i = 0; i < images; ++i) per_pix.push_back(b.view(pixels, {T, s.vision_num_channels, R, R}));
    const TensorId flat = b.cat_list("cat", per_pix, 0);
    b.hold(flat);
    TensorId pooled = kNoTensor;
    std::vector<TensorId> dead;
    const std::vector<TensorId> hidden = llava::tower_forward(b, s, tower, flat, true, pooled, dead);
    if (cfg.lora.enabled() && b.training())
      for (int64_t i = deepest; i < static_cast<int64_t>(tower.layers.size()); ++i) {
        const clip::LayerParams& l = tower.layers[static_cast<size_t>(i)];
        for (const clip::Lin* lin : {&l.k, &l.v, &l.q, &l.o, &l.fc1, &l.fc2}) b.unreached_linear(lin->w);
      }
    const TensorId proj = llava::project_features(b, s, hidden, l1, l2, tiles);
    b.hold(proj);  // the split's views, pack_image_features' argument, keep it until pack returns
    const std::vector<TensorId> per_image = b.split(proj, static_cast<int>(images), {T, ntok, H});
    std::vector<TensorId> packed;
    const int64_t elt = b.info(proj).bytes / checked_mul(checked_mul(tiles, ntok, "tiles"), H, "tiles");
    for (TensorId f : per_image)
      packed.push_back(llava::pack_anyres_image(b, s, f, ar, newline, elt, ar.rows, ar.cols));
    b.drop(proj);
    // get_image_features returns; forward takes .pooler_output (the packed list): the output object goes.
    b.drop(flat);
    b.drop(pooled);
    for (TensorId t : hidden) b.drop(t);
    for (TensorId t : dead) b.drop(t);
    features = b.cat_list("cat", packed, 0);  // torch.cat(image_features, dim=0)
    features = b.to(features, b.dtype(h));    // .to(inputs_embeds.dtype)
    b.hold(features);  // image_features: LlavaNextModel's local, then the output's image_hidden_states
    h = llava::scatter_image_features(b, h, ids, features, checked_mul(images, tokens, "images"), mask);
  }
  llava::decoder_and_loss(b, s, h, P, mask, features, embed, ids, labels, !inf && with_images);
}

}  // namespace memplan
