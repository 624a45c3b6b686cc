// LlavaForConditionalGeneration (transformers 5.17 models/llava/modeling_llava.py): a training step with images
// (the harness plugin calibrate/harness_kinds/llava.py), a text-only training step, or one text-only inference pass.
//   Batch: input_ids [B, S] (images_per_sample runs of mm_image_tokens image tokens), pixel_values
//     [B * images_per_sample, C, R, R] in the model's dtype (fp32 under amp), labels [B, S] (the image tokens
//     masked to -100: a fresh tensor). Text only: input_ids, which are also the labels.
//   LlavaModel.forward: inputs_embeds = embed_tokens(input_ids); get_image_features: the vision tower with
//     output_hidden_states=True (llava_parts.h), hidden_states[vision_feature_layer] (a list: each, then
//     torch.cat(dim=-1)), [:, 1:] under the "default" strategy (a slice: its backward zero-fills the whole hidden
//     state), the projector (linear_1, act, linear_2), list(image_features) (unbind: its backward stacks); the
//     tuple and the pooled output die as get_image_features' output does; torch.cat(list, 0) (a copy), .to(the
//     embeddings' dtype) (a copy under amp); get_placeholder_mask and masked_scatter; then the text model
//     (LlamaModel: llama_parts.h llama_text_model, for llama / mistral / qwen2 text configs) with attention_mask
//     None; lm_head over every position and ForCausalLMLoss against the labels.
// Python bindings that decide lifetimes: LlavaModel.forward keeps the placeholder mask until it returns; the
// output keeps image_hidden_states (the cat / cast features) until the harness takes .loss, after the loss.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/vlm/llava_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

void build_llava(GraphBuilder& b, const TransformerSpec& s) {
  // The harness lays out 4 text tokens, then each image's tokens followed by 3 text tokens.
  const int64_t images = llava::check_run(b, s, s.mm_image_tokens + 3, 4);
  const auto& cfg = b.config();
  const bool inf = !b.training(), with_images = images > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, ntok = s.mm_image_tokens;
  const int64_t deepest = llava::deepest_feature_layer(s);

  hf_construction_scalar(b);
  // Parameters in __init__ order: model.vision_tower, model.multi_modal_projector, model.language_model
  // (embed_tokens, layers, norm: llama_text_model creates the last two), lm_head.
  const llava::TowerParams tower = llava::tower_params(b, s, with_images, deepest, false);
  const auto [l1, l2] = llava::projector_params(b, s, with_images);
  const TensorId embed = b.param("embed_tokens.weight", {V, H});

  // The batch, as the plugin draws it: input_ids, pixel_values, labels (generate(): its position_ids).
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId pixels = kNoTensor, labels = ids;
  if (with_images) {
    pixels = b.input({images, s.vision_num_channels, s.vision_image_size, s.vision_image_size}, b.param_dtype());
    labels = b.input({B, S}, DType::i64);
  }

  TensorId h = b.embedding(ids, embed);
  TensorId features = kNoTensor, mask = kNoTensor;
  if (with_images) {
    TensorId pooled = kNoTensor;
    std::vector<TensorId> dead;
    const std::vector<TensorId> hidden = llava::tower_forward(b, s, tower, pixels, true, pooled, dead);
    const TensorId proj = llava::project_features(b, s, hidden, l1, l2, images);
    // list(image_features): unbind into per-image views (UnbindBackward stacks their gradients afresh).
    std::vector<TensorId> per_image = b.split(proj, static_cast<int>(images), {ntok, H});
    // pooler_output = the list: the pooled output goes; the output object (the hidden-state tuple) goes once
    // LlavaModel.forward has taken .pooler_output.
    b.drop(pooled);
    for (TensorId t : hidden) b.drop(t);
    for (TensorId t : dead) b.drop(t);
    features = b.cat_list("cat", per_image, 0);                 // torch.cat(image_features, dim=0)
    features = b.to(features, b.dtype(h));                      // .to(inputs_embeds.dtype)
    b.hold(features);  // image_features: LlavaModel's local, then the output's image_hidden_states
    h = llava::scatter_image_features(b, h, ids, features, checked_mul(images, ntok, "images"), mask);
  }
  llava::decoder_and_loss(b, s, h, P, mask, features, embed, ids, labels, !inf && with_images);
}

}  // namespace memplan
