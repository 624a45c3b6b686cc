// PaliGemmaForConditionalGeneration (transformers 5.17 models/paligemma/modeling_paligemma.py): a training step
// with images (the harness plugin calibrate/harness_kinds/llava.py), a text-only training step, or one text-only
// inference pass.
//   Batch: input_ids [B, S] (the images' tokens first, as the processor lays them out), token_type_ids [B, S]
//     (0 on the prefix: images, <bos>, prompt; 1 on the suffix), pixel_values [B * images_per_sample, C, R, R] in
//     the model's dtype (fp32 under amp), labels [B, S] (the prefix masked to -100: a fresh tensor). Text only:
//     input_ids, which are also the labels.
//   PaliGemmaModel.forward: inputs_embeds = embed_tokens(input_ids) (GemmaTextScaledWordEmbedding: embedding *
//     embed_scale); position_ids arange + 1; get_image_features: SiglipVisionModel (llava_parts.h; no hidden-state
//     tuple), its last_hidden_state (post_layernorm) through the projector Linear; .to(the embeddings' dtype) (a
//     copy under amp; 5.17 does not scale the image features); get_placeholder_mask and masked_scatter;
//     block_sequence_ids = where(token_type_ids == 0, 0, -1); create_causal_mask (and, with a sliding window,
//     create_sliding_window_causal_mask) with that blockwise overlay, which forbids the SDPA skip: the prefix-LM
//     mask is materialised (prefix_lm_mask below); the language model (GemmaModel / Gemma2Model: gemma_parts.h
//     gemma_text_model) takes the mask (mapping) as given; lm_head over every position (no final softcapping:
//     not Gemma2ForCausalLM's head) and ForCausalLMLoss against the labels.
// Python bindings that decide lifetimes: PaliGemmaModel.forward keeps the placeholder mask, mask_kwargs (the block
// ids) and the masks until it returns; the output keeps image_hidden_states until the harness takes .loss.
#include <algorithm>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/gemma_parts.h"
#include "engine/arch/vlm/llava_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

TensorId op0(GraphBuilder& b, std::string_view name, std::vector<TensorId> reads, Shape shape, DType dt) {
  return b.generic({name, std::move(reads), {{std::move(shape), dt}}, {}, {}, {}, {}})[0];
}

// masking_utils.sdpa_mask (use_vmap False) of or_masks(causal or sliding-causal, blockwise_overlay(block ids)) on
// broadcast index tensors over q queries and kv keys: the causal part [1, 1, q, kv] (sliding: sliding_sdpa_mask's
// ands), `zeros(()) | it`, then the blockwise part (ids[b, q] [B, 1, q, 1] and ids[b, kv] [B, 1, 1, kv] gathered,
// ==, >= 0, &: each a fresh tensor, the gathers bound until the inner function returns) and the | [B, 1, q, kv]
// bool. `padded` (generate()'s 2-D attention mask): and_masks(that, padding) adds `ones(()) & it` and
// `& mask[b, kv]` ([B, 1, 1, kv] gathered). Returned expanded (a view). Eager: torch.where(mask, 0.0, min) in
// `dtype`, the bool freed.
TensorId prefix_lm_mask(GraphBuilder& b, TensorId block_ids, int64_t B, int64_t q, int64_t kv, int64_t window,
                        bool padded, DType dtype) {
  const TensorId inner =
      window > 0 ? sliding_sdpa_mask(b, 1, q, kv) : op0(b, "le", {}, {1, 1, q, kv}, DType::boolean);
  const TensorId causal = op0(b, "or", {inner}, {1, 1, q, kv}, DType::boolean);
  const TensorId qg = op0(b, "index", {block_ids}, {B, 1, q, 1}, DType::i64);
  b.hold(qg);
  const TensorId kg = op0(b, "index", {block_ids}, {B, 1, 1, kv}, DType::i64);
  b.hold(kg);
  const TensorId eq = op0(b, "eq", {qg, kg}, {B, 1, q, kv}, DType::boolean);
  const TensorId ge = op0(b, "ge", {qg}, {B, 1, q, 1}, DType::boolean);
  const TensorId blk = op0(b, "and", {eq, ge}, {B, 1, q, kv}, DType::boolean);
  b.drop(qg);
  b.drop(kg);
  TensorId m = op0(b, "or", {causal, blk}, {B, 1, q, kv}, DType::boolean);
  if (padded) {
    m = op0(b, "and", {m}, {B, 1, q, kv}, DType::boolean);  // ones(()) & it
    m = op0(b, "and", {m, op0(b, "index", {}, {B, 1, 1, kv}, DType::boolean)}, {B, 1, q, kv}, DType::boolean);
  }
  if (b.config().attn == AttnImpl::eager) m = op0(b, "where", {m}, {B, 1, q, kv}, dtype);
  return m;
}

}  // namespace

void build_paligemma(GraphBuilder& b, const TransformerSpec& s) {
  // The harness lays out every image's tokens first, then <bos>, the prompt and "\n" (8 tokens), then the suffix.
  const int64_t images = llava::check_run(b, s, s.mm_image_tokens, 9);
  const auto& cfg = b.config();
  const bool inf = !b.training(), with_images = images > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, Hv = s.vision_hidden_size, ntok = s.mm_image_tokens;
  const GemmaVersion ver = s.mm_text_type == "gemma2" ? GemmaVersion::v2 : GemmaVersion::v1;

  hf_construction_scalar(b);
  // Parameters in __init__ order: model.vision_tower, model.multi_modal_projector, model.language_model
  // (embed_tokens and its embed_scale buffer, layers, norm: gemma_text_model creates the last two), lm_head.
  const llava::TowerParams tower = llava::tower_params(b, s, with_images, s.vision_num_layers, true);
  const clip::Lin proj = clip::linear_params(b, "multi_modal_projector.linear", H, Hv, true, with_images);
  const TensorId embed = b.param("embed_tokens.weight", {V, H});
  b.buffer("embed_tokens.embed_scale", {}, b.param_dtype());

  // The batch, as the plugin draws it: input_ids, token_type_ids, pixel_values, labels (generate(): its
  // position_ids).
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId types = kNoTensor, pixels = kNoTensor, labels = ids;
  if (with_images) {
    types = b.input({B, S}, DType::i64);
    pixels = b.input({images, s.vision_num_channels, s.vision_image_size, s.vision_image_size}, b.param_dtype());
    labels = b.input({B, S}, DType::i64);
  }

  // generate(): prepare_inputs_for_generation calls PaliGemma's create_masks_for_generate, whose group ids
  // (torch.full([B, q], -1), padded to the keys) carry the blockwise overlay into create_causal_mask at every
  // step, text-only prompts included: the mask (mapping) is always materialised, before the forward; the model's
  // own create_causal_mask then returns it as given.
  GemmaMasks masks;
  TensorId gen_ids = kNoTensor;
  const bool gen = inf && b.pass().from_generate;
  if (gen) {
    const int64_t past = b.pass().past_len, kv = past + S;
    gen_ids = op0(b, "full", {}, {B, S}, DType::i64);
    if (kv > S) gen_ids = op0(b, "pad", {gen_ids}, {B, kv}, DType::i64);
    b.hold(gen_ids);
    const DType dt = b.param_dtype();
    masks.full = prefix_lm_mask(b, gen_ids, B, S, kv, 0, true, dt);
    b.hold(masks.full);
    if (ver == GemmaVersion::v2 && s.sliding_window > 0) {
      const int64_t kv_s = std::min(past, s.sliding_window - 1) + S;
      masks.sliding = prefix_lm_mask(b, gen_ids, B, S, kv_s, s.sliding_window, true, dt);
      b.hold(masks.sliding);
    }
  }
  TensorId h = b.scalar_op("mul", b.embedding(ids, embed), false);
  TensorId features = kNoTensor, mask = kNoTensor, block_ids = kNoTensor;
  if (with_images) {
    TensorId last = kNoTensor;
    std::vector<TensorId> dead;  // none: every layer and post_layernorm reach the loss
    const std::vector<TensorId> vis = llava::tower_forward(b, s, tower, pixels, false, last, dead);
    for (TensorId t : vis) b.drop(t);  // the vision model returns
    features = clip::apply(b, proj, last);
    b.drop(last);  // image_outputs (its last_hidden_state) dies once .pooler_output is taken
    features = b.to(features, b.dtype(h));
    b.hold(features);  // image_features: PaliGemmaModel's local, then the output's image_hidden_states
    h = llava::scatter_image_features(b, h, ids, features, checked_mul(images, ntok, "images"), mask);
    // mask_kwargs["block_sequence_ids"] = torch.where(token_type_ids == 0, 0, -1)
    block_ids = op0(b, "where", {op0(b, "eq", {types}, {B, S}, DType::boolean)}, {B, S}, DType::i64);
    b.hold(block_ids);
    masks.full = prefix_lm_mask(b, block_ids, B, S, S, 0, false, b.dtype(h));
    b.hold(masks.full);
    if (ver == GemmaVersion::v2 && s.sliding_window > 0) {  // causal_mask = {full, sliding}
      masks.sliding = prefix_lm_mask(b, block_ids, B, S, S, s.sliding_window, false, b.dtype(h));
      b.hold(masks.sliding);
    }
  }
  const TensorId hn = gemma_text_model(b, s, ver, h, P, with_images || gen ? &masks : nullptr);
  // The rotary embedding's inv_freq and original_inv_freq buffers (fp32 [head_dim / 2]), after the norm.
  for (const char* nm : {"rotary_emb.inv_freq", "rotary_emb.original_inv_freq"}) b.buffer(nm, {s.head_dim / 2}, DType::f32);
  for (TensorId t : {mask, block_ids, gen_ids, masks.full, masks.sliding})  // PaliGemmaModel.forward returns
    if (t != kNoTensor) b.drop(t);

  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed) : b.param("lm_head.weight", {V, H});
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);  // the head's own weight before tie_weights()
  if (inf) {
    inference_head(b, hn, head, kNoTensor, nullptr);
    return;
  }
  // lm_head over hidden_states[:, slice(0, None)] (a view), ForCausalLMLoss against the labels; the output (and
  // with it image_hidden_states) dies once the harness has read .loss.
  b.hold(hn);
  const TensorId logits = b.linear(hn, head);
  b.mark_model_end();
  const TensorId loss = causal_lm_loss(b, logits, labels);
  b.drop(hn);
  if (features != kNoTensor) b.drop(features);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
