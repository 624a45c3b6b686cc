// The pieces LlavaForConditionalGeneration (llava.cpp) and PaliGemmaForConditionalGeneration (paligemma.cpp)
// share: the vision tower as an AutoModel inside the wrapper (CLIPVisionModel or SiglipVisionModel, transformers
// 5.17 modeling_clip.py / modeling_siglip.py, their encoder layer from clip_parts.h), and the scatter of the image
// features into the text embeddings (get_placeholder_mask, masked_scatter). Defined in llava_parts.cpp.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/arch/vlm/clip_parts.h"

namespace memplan::llava {

// The tower's parameters (spec vision_* fields; mm_vision_clip picks the class).
struct TowerParams {
  clip::Tower t;
  TensorId cls = kNoTensor, patch_w = kNoTensor, patch_b = kNoTensor, pos_w = kNoTensor, pos_ids = kNoTensor;
  TensorId pre_w = kNoTensor, pre_b = kNoTensor, post_w = kNoTensor, post_b = kNoTensor;
  std::vector<clip::LayerParams> layers;
  int64_t live_layers = 0;  // layers [0, live_layers) reach the loss; the rest (and a dead post_layernorm) do not
  bool post_live = false;   // post_layernorm's output reaches the loss (paligemma's last_hidden_state)
};

// "vision_tower.<vision_model.>..." parameters in __init__ order (the harness builds on the device). CLIP:
// class_embedding, patch Conv2d (no bias), position table and its position_ids buffer, pre_layrnorm, layers,
// post_layernorm. SigLIP: patch Conv2d (with bias), position table and buffer, layers, post_layernorm.
// `train`: false for a text-only step (no gradient reaches the tower). Layers past `live_layers` and a dead
// post_layernorm get no .grad (AdamW keeps no state) but keep requires_grad (GraphBuilder::unreached_param).
TowerParams tower_params(GraphBuilder& b, const TransformerSpec& s, bool train, int64_t live_layers, bool post_live);

// The tower's forward on pixel_values [images, C, R, R]. `all_hidden` (output_hidden_states): returns
// hidden_states as the encoder records them (index 0: the first layer's input, i: layer i's output; num_layers + 1
// entries), each held (the output's tuple) until the caller drops them; otherwise returns {the first layer's input
// (the vision transformer's local), the encoder's output}, both held until the caller drops them (the vision model
// returns). `last` receives the post_layernorm output (SigLIP: over the whole sequence; CLIP: over position 0),
// held until the caller drops it. Layers past live_layers and a dead post_layernorm never reach the loss: their
// backward is cut (GraphBuilder::cut_dead_branch) and the activations they saved are appended to `dead_saved`,
// held: the caller drops them when the output object holding the branch dies.
std::vector<TensorId> tower_forward(GraphBuilder& b, const TransformerSpec& s, const TowerParams& w, TensorId pixels,
                                    bool all_hidden, TensorId& last, std::vector<TensorId>& dead_saved);

// get_placeholder_mask and inputs_embeds.masked_scatter(mask, features): `ids` [B, S] == image_token_id (a bool
// [B, S], held: bound until the model's forward returns), its sum and torch_compilable_check's scalar products,
// then the scatter into a fresh [B, S, H] (the mask-sized prefix sum and contiguous bool copy the CUDA kernel
// makes; its backward's masked_fill / masked_select gradients and index temporaries, as qwen2_vl.cpp measured).
// `embeds` (the embedding's output) is rebound: released once the scatter has returned. `tokens`: image tokens in
// the batch. Returns the new inputs_embeds; `mask` receives the placeholder mask (the caller drops it).
TensorId scatter_image_features(GraphBuilder& b, TensorId embeds, TensorId ids, TensorId features, int64_t tokens,
                                TensorId& mask);

// llava_next's anyres geometry (LlavaNext / LlavaOnevision's select_best_resolution, get_anyres_image_grid_shape,
// unpad_image): the pinpoint [ph, pw] keeping the most of an oh x ow image's resolution (ties: the least wasted
// area), its grid of R-pixel tiles (R = vision_image_size), the tiles a tower sees (the grid plus the base tile),
// and the feature map after unpad_image crops [grid_h * side, grid_w * side] back to the image's aspect ratio
// (side = R / patch). grid_h == 0 when no pinpoint fits (the caller refuses).
struct AnyresGrid {
  int64_t grid_h = 0, grid_w = 0;
  int64_t tiles = 0;
  int64_t rows = 0, cols = 0;
};
AnyresGrid anyres_grid(const TransformerSpec& s, int64_t oh, int64_t ow);
// The run's image (RunConfig::image_hw; absent: the tower's image_size square) through anyres_grid. Refused: an
// image_hw with no image in the run, an image no pinpoint fits (naming image_grid_pinpoints).
AnyresGrid run_anyres_grid(const GraphBuilder& b, const TransformerSpec& s);

// pack_image_features for one anyres image whose projected features `f` [tiles, mm_image_tokens, H] are a view of
// the projector's output (`elt_bytes` its element size): base = f[0], f[1:] viewed as the grid, permuted
// .contiguous() (a copy), flattened to [H, grid_h * side, grid_w * side], unpad_image's slice to [H, rows, cols];
// then, when (out_rows, out_cols) differ from the unpadded map, LlavaOnevision's anyres_max bilinear resize of
// image_feature[None] (GraphBuilder::upsample_bilinear2d: fp32 under autocast); the image_newline column
// (expand(...).to(dtype): a copy when the parameter's dtype differs) cat along the last dim, flatten(1, 2)
// .transpose(0, 1) (views), cat((base, map), 0). The selects and slices are views whose backward writes a fresh
// zero-filled gradient of their source's size (spelled out: views own no bytes). Returns the packed
// [mm_image_tokens + out_rows * (out_cols + 1), H].
TensorId pack_anyres_image(GraphBuilder& b, const TransformerSpec& s, TensorId f, const AnyresGrid& g,
                           TensorId newline, int64_t elt_bytes, int64_t out_rows, int64_t out_cols);

// The LLaVA-NeXT-shaped models (llava_next, llava_onevision: the same __init__ and forward, their
// pack_image_features their own) once each image's tiles T and tokens are known and check_run has counted the
// `images`: parameters in __init__ order (vision_tower, multi_modal_projector, image_newline, the language model's
// embed_tokens, layers and norm, lm_head), the batch as the plugin draws it (input_ids, pixel_values [images, T, C,
// R, R], image_sizes [images, 2], labels; generate(): position_ids), get_image_features (torch.cat of each image's
// first T tiles, a local; the tower with output_hidden_states; the projector; torch.split per image), `pack` on
// each image's projected features f [T, mm_image_tokens, H] (a view of the projector's output, held until every
// image is packed; `elt_bytes` its element size) returning the packed [tokens, H], then the vision output object
// dropped, torch.cat(packed).to(inputs_embeds' dtype) (held: image_hidden_states), masked_scatter, the text model
// and the loss (decoder_and_loss). With no image (text-only training, serving) only the text path runs.
using PackImage = std::function<TensorId(TensorId f, TensorId newline, int64_t elt_bytes)>;
void build_tiled_llava(GraphBuilder& b, const TransformerSpec& s, int64_t images, int64_t T, int64_t tokens,
                       const PackImage& pack);

// The deepest hidden_states index vision_feature_layer selects (0 = the embeddings' output).
int64_t deepest_feature_layer(const TransformerSpec& s);

// multi_modal_projector's linear_1 (the selected layers' concatenated width -> hidden_size) and linear_2
// (hidden_size -> hidden_size), with multimodal_projector_bias; trainable when the step has images (else no
// gradient reaches them).
struct Projector {
  clip::Lin l1, l2;
};
Projector projector_params(GraphBuilder& b, const TransformerSpec& s, bool with_images);

// hidden_states[vision_feature_layer] for each selected layer (torch.cat(dim=-1) of several), [:, 1:] under the
// "default" strategy (a strided slice whose backward zero-fills the whole hidden state), then the projector
// (linear_1, ACT2FN[projector_hidden_act], linear_2). `hidden`: tower_forward's all_hidden list over `images`
// tower inputs (llava: images; llava_next: tiles). Returns [images, mm_image_tokens, hidden_size]. The contract
// llava (measured, family set 23) and llava_next share: both modeling files run these statements verbatim.
TensorId project_features(GraphBuilder& b, const TransformerSpec& s, const std::vector<TensorId>& hidden,
                          const clip::Lin& l1, const clip::Lin& l2, int64_t images);

// The end of LlavaForConditionalGeneration.forward and LlavaNextForConditionalGeneration.forward (the same
// statements) once inputs_embeds `h` [B, S, H] exists: the Llama-type text model (position ids `P`), its rotary
// inv_freq / original_inv_freq buffers (fp32 [head_dim / 2], after the norm), the placeholder `mask` dropped as the
// model's forward returns; then, when `image_loss` (training with images), lm_head over every position and
// ForCausalLMLoss against `labels`, the output (and with it image_hidden_states, `features`) alive until the
// harness reads .loss; otherwise `features` dropped and the causal LM's own tail (causal_lm_tail). `embed` is the
// token embedding (a tied lm_head's weight).
void decoder_and_loss(GraphBuilder& b, const TransformerSpec& s, TensorId h, int64_t P, TensorId mask,
                      TensorId features, TensorId embed, TensorId ids, TensorId labels, bool image_loss);

// Refuses (InputError naming the key) what the llava / paligemma builders do not replay: LoRA / quantization,
// frozen layers or embeddings, a subset of checkpointed layers, a task other than the causal-LM loss, the
// qwen2_vl / siglip2 image keys, images in inference, a seq_len shorter than the harness's layout (`text_tokens`
// plus `per_image` tokens for each image), an image_hw for a model without anyres tiles. Returns the images in the
// batch (batch_size x images_per_sample). `image_tokens` (-1: mm_image_tokens) names each image's tokens in the
// message; `lora`: LoRA with a full-precision base is replayed (llava_next: adapters through GraphBuilder::linear,
// the dead tower layer's marked unreached by the builder), quantization still refused.
int64_t check_run(const GraphBuilder& b, const TransformerSpec& s, int64_t per_image, int64_t text_tokens,
                  int64_t image_tokens = -1, bool lora = false);

}  // namespace memplan::llava
