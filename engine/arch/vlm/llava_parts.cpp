// The vision tower inside llava / paligemma and the image-feature scatter (llava_parts.h).
//   CLIPVisionModel.forward: CLIPVisionEmbeddings (bias-free patch Conv2d, flatten(2).transpose(1, 2),
//     cat(class_embedding.expand(B, 1, -1), patches), + position_embedding(position_ids)), pre_layrnorm, the
//     encoder layers, post_layernorm over last_hidden_state[:, 0, :] (the pooled output).
//   SiglipVisionModel.forward: SiglipVisionEmbeddings (patch Conv2d with bias, flatten(2).transpose(1, 2),
//     + position_embedding(position_ids)), the encoder layers (the residual stream keeps the conv's transposed
//     layout: every LayerNorm copies its input, clip_parts.h), post_layernorm over the whole sequence.
//   With output_hidden_states (llava's get_image_features passes True whatever the caller asks) the encoder's
//   output tuple records the first layer's input and every layer's output; it lives until get_image_features
//   returns. Layers after the deepest selected hidden state, and a post_layernorm whose output the wrapper drops,
//   never reach the loss: PyTorch records them, and frees their graph (saved tensors included) when the output
//   object dies; their weights get no .grad.
#include "engine/arch/vlm/llava_parts.h"

#include <algorithm>
#include <cmath>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan::llava {

using namespace clip;

TowerParams tower_params(GraphBuilder& b, const TransformerSpec& s, bool train, int64_t live_layers, bool post_live) {
  TowerParams w;
  w.t = vision_tower(s);
  w.live_layers = live_layers;
  w.post_live = post_live;
  const bool clip = s.mm_vision_clip, on_device = b.config().weights_load == WeightsLoad::on_device;
  const int64_t Hv = w.t.hidden, C = s.vision_num_channels, P = s.vision_patch_size,
                side = s.vision_image_size / P, N = side * side + (clip ? 1 : 0);
  const std::string p = "vision_tower.vision_model.";
  // CLIPVisionEmbeddings: class_embedding first in __init__; model.to() moves the children (patch conv, position
  // table) before the module's own parameter, then its buffer.
  if (clip && on_device) w.cls = b.param(p + "embeddings.class_embedding", {Hv}, train);
  w.patch_w = b.param(p + "embeddings.patch_embedding.weight", {Hv, C, P, P}, train);
  if (!clip) w.patch_b = b.param(p + "embeddings.patch_embedding.bias", {Hv}, train);
  w.pos_w = b.param(p + "embeddings.position_embedding.weight", {N, Hv}, train);
  if (clip && !on_device) w.cls = b.param(p + "embeddings.class_embedding", {Hv}, train);
  w.pos_ids = b.buffer(p + "embeddings.position_ids", {1, N}, DType::i64);
  if (clip) {
    w.pre_w = b.param(p + "pre_layrnorm.weight", {Hv}, train);
    w.pre_b = b.param(p + "pre_layrnorm.bias", {Hv}, train);
  }
  for (int64_t i = 0; i < w.t.layers; ++i) {
    w.layers.push_back(layer_params(b, w.t, p + "encoder.layers." + std::to_string(i) + ".", !clip, train));
    if (train && i >= live_layers) {  // requires_grad, never reached
      const LayerParams& l = w.layers.back();
      for (const Lin* lin : {&l.q, &l.k, &l.v, &l.o, &l.fc1, &l.fc2}) {
        b.unreached_param(lin->w);
        if (lin->b != kNoTensor) b.unreached_param(lin->b);
      }
      for (TensorId t : {l.ln1_w, l.ln1_b, l.ln2_w, l.ln2_b}) b.unreached_param(t);
    }
  }
  w.post_w = b.param(p + "post_layernorm.weight", {Hv}, train);
  w.post_b = b.param(p + "post_layernorm.bias", {Hv}, train);
  if (train && !post_live) {
    b.unreached_param(w.post_w);
    b.unreached_param(w.post_b);
  }
  return w;
}

std::vector<TensorId> tower_forward(GraphBuilder& b, const TransformerSpec& s, const TowerParams& w, TensorId pixels,
                                    bool all_hidden, TensorId& last, std::vector<TensorId>& dead_saved) {
  const auto& cfg = b.config();
  const bool clip = s.mm_vision_clip;
  const Shape ps = b.shape(pixels);
  const int64_t Bi = ps[0], Hv = w.t.hidden, P = s.vision_patch_size, side = s.vision_image_size / P,
                n = side * side, N = n + (clip ? 1 : 0);
  const std::string name = "vision_tower.vision_model.encoder.layers.";
  // Embeddings. CLIP: the conv output (patch_embeds) stays bound until the embeddings return, after the position
  // sum (cat promotes the 16-bit patches to the fp32 class embedding's dtype under autocast); SigLIP: the sum keeps
  // the conv's transposed layout.
  TensorId e;
  const TensorId patches = b.view_copying_grad(
      b.conv2d(pixels, w.patch_w, clip ? kNoTensor : w.patch_b, P, 0, {Bi, Hv, side, side}), {Bi, n, Hv});
  if (clip) {
    b.hold(patches);
    e = b.cat("cat", {b.view(w.cls, {Bi, 1, Hv}), patches}, 1, std::nullopt, /*cast_part_grads=*/true);
    e = b.add(e, b.embedding(b.view(w.pos_ids, {1, N}), w.pos_w));
    b.drop(patches);
    e = b.layer_norm(e, w.pre_w, w.pre_b);  // pre_layrnorm
  } else {
    e = b.add(patches, b.embedding(b.view(w.pos_ids, {1, N}), w.pos_w));
  }
  std::vector<TensorId> hidden{e};
  TensorId h = e;
  int32_t dead_from = -1;
  for (int64_t i = 0; i < w.t.layers; ++i) {
    const bool live = i < w.live_layers;
    if (!live && dead_from < 0) dead_from = b.next_op();
    h = encoder_layer(b, w.t, w.layers[static_cast<size_t>(i)], name + std::to_string(i),
                      live && cfg.grad_checkpointing, h, kNoTensor, false, /*strided=*/!clip);
    if (all_hidden) hidden.push_back(h);
    for (TensorId t : hidden) b.hold(t);  // the output's tuple, or the embeddings' local (encoder_layer released it)
  }
  if (!all_hidden) {
    hidden.push_back(h);
    b.hold(h);  // encoder_outputs until the vision model returns
  }
  // A dead branch's saved tensors live in its graph until the branch's outputs die (whole-run llava stream: the
  // last CLIP layer's saved activations freed together as get_image_features returns). Checkpointed layers save
  // nothing: their intermediates go as they would without autograd.
  if (dead_from >= 0 && b.training()) {
    std::vector<TensorId> saved = b.cut_dead_branch(dead_from);
    if (!cfg.grad_checkpointing) dead_saved.insert(dead_saved.end(), saved.begin(), saved.end());
  }
  // post_layernorm: CLIP over last_hidden_state[:, 0, :] (a strided view: the kernel works on a contiguous copy),
  // SigLIP over the whole (transposed-layout) sequence.
  const int32_t post_from = b.next_op();
  if (clip)
    last = b.layer_norm(b.view_copying_grad(h, {Bi, Hv}), w.post_w, w.post_b, true, true);
  else
    last = b.layer_norm(h, w.post_w, w.post_b, /*contiguous_copy=*/true);
  b.hold(last);
  if (!w.post_live && b.training()) {
    std::vector<TensorId> saved = b.cut_dead_branch(post_from);
    dead_saved.insert(dead_saved.end(), saved.begin(), saved.end());
  }
  for (TensorId t : dead_saved) b.hold(t);
  return hidden;
}

TensorId scatter_image_features(GraphBuilder& b, TensorId embeds, TensorId ids, TensorId features, int64_t tokens,
                                TensorId& mask) {
  const Shape es = b.shape(embeds);
  const int64_t B = es[0], S = es[1], H = es[2];
  auto op0 = [&](std::string_view nm, std::vector<TensorId> reads, Shape shape, DType dt) {
    return b.generic({nm, std::move(reads), {{std::move(shape), dt}}, {}, {}, {}, {}})[0];
  };
  // special_image_mask = input_ids == image_token_id; n_image_tokens = mask.sum(); torch_compilable_check's
  // n_image_tokens * hidden == numel (scalar tensors).
  mask = op0("eq", {ids}, {B, S}, DType::boolean);
  b.hold(mask);
  const TensorId count = op0("sum", {mask}, {}, DType::i64);
  op0("eq", {op0("mul", {count}, {}, DType::i64)}, {}, DType::boolean);
  // inputs_embeds.masked_scatter(mask[..., None], features): a fresh [B, S, H]; saves the mask. The CUDA kernel
  // takes an int64 prefix sum over the broadcast mask [B, S, H] and a contiguous bool copy of it, freed before the
  // statement rebinds inputs_embeds. Its backward writes grad.masked_fill(mask, 0) for the embeddings, then
  // masked_select's [tokens * H] for the features, whose index() runs nonzero over the broadcast mask: a bool copy
  // and the int64 [tokens * H, 3] coordinates, alive while the gradients are computed (qwen2_vl.cpp's measurement).
  b.hold(embeds);
  const int64_t bsh = checked_mul(checked_mul(B, S, "batch"), H, "batch"), nnz = checked_mul(tokens, H, "tokens");
  const TensorId out = b.generic({"masked_scatter", {embeds, mask, features}, {{{B, S, H}, b.dtype(embeds)}}, {1}, {},
                                  {}, {}, {bsh, checked_mul(nnz, 24, "tokens")}})[0];
  const TensorId prefix = op0("mask_prefix_sum", {}, {bsh}, DType::i64);
  op0("mask_contiguous", {prefix}, {bsh}, DType::boolean);
  b.drop(embeds);
  return out;
}

TensorId project_features(GraphBuilder& b, const TransformerSpec& s, const std::vector<TensorId>& hidden,
                          const clip::Lin& l1, const clip::Lin& l2, int64_t images) {
  const int64_t Hv = s.vision_hidden_size, ntok = s.mm_image_tokens;
  std::vector<TensorId> picked;
  for (int64_t li : s.mm_feature_layers) {
    const TensorId hs = hidden[static_cast<size_t>(li)];
    picked.push_back(s.mm_feature_full ? hs : b.view_copying_grad(hs, {images, ntok, Hv}));
  }
  TensorId sel;
  if (picked.size() > 1) {
    sel = b.cat_list("cat", picked, 2);
  } else {
    sel = picked[0];
    // linear's matmul flattens [images, ntok, Hv] to 2-d: a copy of the strided slice (under autocast the cast
    // already made a contiguous 16-bit copy).
    if (!s.mm_feature_full && !b.autocast()) sel = b.contiguous_copy(sel, {images, ntok, Hv});
  }
  const TensorId p1 = apply(b, l1, sel);
  // ACT2FN[projector_hidden_act]: one kernel; relu saves its output, gelu / silu their input.
  const TensorId a = s.mm_projector_act == "relu" ? b.unary("relu", p1, false, true)
                                                  : b.unary(s.mm_projector_act, p1, true, false);
  return apply(b, l2, a);
}

int64_t check_run(const GraphBuilder& b, const TransformerSpec& s, int64_t per_image, int64_t text_tokens,
                  int64_t image_tokens, bool lora) {
  const auto& cfg = b.config();
  const std::string& type = s.model_type;
  if (!lora && (cfg.lora.enabled() || cfg.quant.enabled()))
    throw InputError("lora", "set", "LoRA / quantization of a " + type + " model is not modelled");
  if (cfg.quant.enabled())
    throw InputError("quantization", "set", "a quantised base (QLoRA) of a " + type + " model is not modelled");
  if (!cfg.image_hw.empty() && s.mm_grid_pinpoints.empty())
    throw InputError("image_hw", "set",
                     "applies to llava_next and llava_onevision only (anyres tiles); a " + type + " image is the vision config's square");
  if (!cfg.frozen_layers.empty())
    throw InputError("frozen_layers", std::to_string(cfg.frozen_layers.size()) + " layers",
                     "freezing layers of a " + type + " model is not modelled (the harness cannot find its layers)");
  if (cfg.freeze_embeddings) throw InputError("freeze_embeddings", "true", "is not modelled for a " + type + " model");
  if (!cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing_layers", std::to_string(cfg.checkpoint_layers.size()) + " layers",
                     "a subset of checkpointed layers is not modelled for " + type +
                         " (gradient_checkpointing_enable wraps every layer of both towers)");
  if (cfg.task != Task::lm)
    throw InputError("task", std::string(task_name(cfg.task)), "is not modelled for " + type);
  if (!cfg.image_grid.empty())
    throw InputError("image_grid", "set",
                     "is a qwen2_vl / qwen3_vl input; a " + type + " image is the vision config's image_size square");
  if (cfg.max_num_patches != 0) throw InputError("max_num_patches", "set", "applies to siglip2 only, not " + type);
  const int64_t k = cfg.images_per_sample;
  if (k == 0) return 0;
  if (!b.training())
    throw InputError("images_per_sample", std::to_string(k),
                     "inference with images is not modelled for " + type + " (text-only prompts are)");
  const int64_t need = checked_add(text_tokens, checked_mul(k, per_image, "images_per_sample"), "images_per_sample");
  if (cfg.seq_len < need)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "is too short for " + std::to_string(k) + " images of " +
                         std::to_string(image_tokens < 0 ? s.mm_image_tokens : image_tokens) +
                         " tokens each (needs " + std::to_string(need) +
                         ": the harness's layout, calibrate/harness_kinds/llava.py)");
  return checked_mul(cfg.batch_size, k, "images");
}

namespace {

// Python's int(round(x, 7)) for the non-negative values unpad_image meets.
int64_t round7_trunc(double x) { return static_cast<int64_t>(std::nearbyint(x * 1e7) / 1e7); }

}  // namespace

AnyresGrid anyres_grid(const TransformerSpec& s, int64_t oh, int64_t ow) {
  const int64_t R = s.vision_image_size, side = R / s.vision_patch_size;
  // select_best_resolution (image_processing_utils): Python float arithmetic, the same IEEE doubles.
  int64_t best_h = 0, best_w = 0, best_eff = 0;
  double best_waste = INFINITY;
  for (size_t i = 0; i + 1 < s.mm_grid_pinpoints.size(); i += 2) {
    const int64_t ph = s.mm_grid_pinpoints[i], pw = s.mm_grid_pinpoints[i + 1];
    const double scale = std::min(static_cast<double>(pw) / static_cast<double>(ow),
                                  static_cast<double>(ph) / static_cast<double>(oh));
    const auto dw = static_cast<int64_t>(static_cast<double>(ow) * scale),
               dh = static_cast<int64_t>(static_cast<double>(oh) * scale);
    const int64_t eff = std::min(dw * dh, ow * oh);
    const double waste = static_cast<double>(pw * ph - eff);
    if (eff > best_eff || (eff == best_eff && waste < best_waste)) {
      best_eff = eff;
      best_waste = waste;
      best_h = ph;
      best_w = pw;
    }
  }
  AnyresGrid a;
  a.grid_h = best_h / R;
  a.grid_w = best_w / R;
  a.tiles = a.grid_h * a.grid_w + 1;
  // unpad_image on [H, grid_h * side, grid_w * side].
  const int64_t ch = a.grid_h * side, cw = a.grid_w * side;
  a.rows = ch;
  a.cols = cw;
  const double orig_ar = static_cast<double>(ow) / static_cast<double>(oh),
               cur_ar = static_cast<double>(cw) / static_cast<double>(ch);
  if (orig_ar > cur_ar) {
    const int64_t nh = round7_trunc(static_cast<double>(oh) * (static_cast<double>(cw) / static_cast<double>(ow)));
    a.rows = ch - 2 * ((ch - nh) / 2);
  } else {
    const int64_t nw = round7_trunc(static_cast<double>(ow) * (static_cast<double>(ch) / static_cast<double>(oh)));
    a.cols = cw - 2 * ((cw - nw) / 2);
  }
  return a;
}

AnyresGrid run_anyres_grid(const GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t R = s.vision_image_size;
  if (!cfg.image_hw.empty() && cfg.images_per_sample == 0)
    throw InputError("image_hw", "set", "needs images_per_sample > 0 (a text-only run has no image to size)");
  const int64_t oh = cfg.image_hw.empty() ? R : cfg.image_hw[0], ow = cfg.image_hw.empty() ? R : cfg.image_hw[1];
  const AnyresGrid g = anyres_grid(s, oh, ow);
  if (g.grid_h == 0 || g.grid_w == 0)
    throw InputError("image_grid_pinpoints", "set",
                     "picks no tile grid for a " + std::to_string(oh) + " x " + std::to_string(ow) + " image");
  return g;
}

TensorId pack_anyres_image(GraphBuilder& b, const TransformerSpec& s, TensorId f, const AnyresGrid& g,
                           TensorId newline, int64_t elt_bytes, int64_t out_rows, int64_t out_cols) {
  const int64_t H = s.hidden_size, ntok = s.mm_image_tokens, T = g.tiles, side = s.vision_image_size / s.vision_patch_size;
  const int64_t f_bytes = checked_mul(checked_mul(checked_mul(T, ntok, "tiles"), H, "tiles"), elt_bytes, "tiles"),
                rest_bytes = f_bytes / T * (T - 1),
                map_bytes = checked_mul(checked_mul(checked_mul(H, g.grid_h * side, "image_hw"), g.grid_w * side,
                                                    "image_hw"), elt_bytes, "image_hw");
  const TensorId base = b.view_copying_grad(f, {ntok, H}, f_bytes);  // f[0]: SelectBackward's f-sized zeros
  TensorId m = b.view_copying_grad(f, {T - 1, ntok, H}, f_bytes);    // f[1:]: SliceBackward's f-sized zeros
  m = b.view_copying_grad(m, {g.grid_h, g.grid_w, side, side, H}, rest_bytes);  // the gradient arrives permuted
  m = b.contiguous_copy(m, {H, g.grid_h * side, g.grid_w * side});              // permute(...).contiguous()
  m = b.view_copying_grad(m, {H, g.rows, g.cols}, map_bytes);                   // unpad_image's slice
  if (out_rows != g.rows || out_cols != g.cols) {
    m = b.upsample_bilinear2d(b.view(m, {1, H, g.rows, g.cols}), out_rows, out_cols);  // image_feature[None]
    m = b.view(m, {H, out_rows, out_cols});                                          // [0]
  }
  TensorId nl = b.expand(b.view(newline, {H, 1, 1}), {H, out_rows, 1});
  nl = b.to(nl, b.dtype(m));
  m = b.cat("cat", {m, nl}, 2);
  m = b.view(m, {out_rows * (out_cols + 1), H});  // flatten(1, 2).transpose(0, 1)
  // torch.cat promotes: under autocast a resized (fp32) map makes the packed image fp32, and CatBackward's bf16
  // base gradient is a cast copy.
  return b.cat("cat", {base, m}, 0, std::nullopt, /*cast_part_grads=*/true);
}

int64_t deepest_feature_layer(const TransformerSpec& s) {
  int64_t deepest = 0;
  for (int64_t i : s.mm_feature_layers) deepest = std::max(deepest, i);
  return deepest;
}

Projector projector_params(GraphBuilder& b, const TransformerSpec& s, bool with_images) {
  const int64_t H = s.hidden_size,
                F = checked_mul(s.vision_hidden_size, static_cast<int64_t>(s.mm_feature_layers.size()),
                                "vision_feature_layer");
  return {clip::linear_params(b, "multi_modal_projector.linear_1", H, F, s.mm_projector_bias, with_images),
          clip::linear_params(b, "multi_modal_projector.linear_2", H, H, s.mm_projector_bias, with_images)};
}

void decoder_and_loss(GraphBuilder& b, const TransformerSpec& s, TensorId h, int64_t P, TensorId mask,
                      TensorId features, TensorId embed, TensorId ids, TensorId labels, bool image_loss) {
  const TensorId hn = llama_text_model(b, s, h, P, /*batch_aware_eager=*/true);
  for (const char* nm : {"rotary_emb.inv_freq", "rotary_emb.original_inv_freq"}) b.buffer(nm, {s.head_dim / 2}, DType::f32);
  if (mask != kNoTensor) b.drop(mask);  // the model's forward returns
  if (!image_loss) {
    if (features != kNoTensor) b.drop(features);
    causal_lm_tail(b, s, hn, embed, ids);
    return;
  }
  // lm_head over hidden_states[:, slice(0, None)] (a view), ForCausalLMLoss against the labels
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed)
                                              : b.param("lm_head.weight", {s.vocab_size, s.hidden_size});
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);  // the head's own weight before tie_weights()
  b.hold(hn);
  const TensorId logits = b.linear(hn, head);
  b.mark_model_end();
  const TensorId loss = causal_lm_loss(b, logits, labels);
  b.drop(hn);
  b.drop(features);
  b.exit_autocast();
  b.set_loss(loss);
}

void build_tiled_llava(GraphBuilder& b, const TransformerSpec& s, int64_t images, int64_t T, int64_t tokens,
                       const PackImage& pack) {
  const auto& cfg = b.config();
  const bool inf = !b.training(), with_images = images > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, ntok = s.mm_image_tokens, R = s.vision_image_size,
                tiles = checked_mul(images, T, "images_per_sample");
  const int64_t deepest = deepest_feature_layer(s);

  hf_construction_scalar(b);
  // Parameters in __init__ order: model.vision_tower, model.multi_modal_projector, model.image_newline,
  // model.language_model (embed_tokens, layers, norm), lm_head.
  const TowerParams tower = tower_params(b, s, with_images, deepest, false);
  const auto [l1, l2] = projector_params(b, s, with_images);
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
    const std::vector<TensorId> hidden = tower_forward(b, s, tower, flat, true, pooled, dead);
    if (cfg.lora.enabled() && b.training())
      for (int64_t i = deepest; i < static_cast<int64_t>(tower.layers.size()); ++i) {
        const clip::LayerParams& l = tower.layers[static_cast<size_t>(i)];
        for (const clip::Lin* lin : {&l.k, &l.v, &l.q, &l.o, &l.fc1, &l.fc2}) b.unreached_linear(lin->w);
      }
    const TensorId proj = project_features(b, s, hidden, l1, l2, tiles);
    b.hold(proj);  // the split's views, pack_image_features' argument, keep it until pack returns
    const std::vector<TensorId> per_image = b.split(proj, static_cast<int>(images), {T, ntok, H});
    std::vector<TensorId> packed;
    const int64_t elt = b.info(proj).bytes / checked_mul(checked_mul(tiles, ntok, "tiles"), H, "tiles");
    for (TensorId f : per_image) packed.push_back(pack(f, newline, elt));
    b.drop(proj);
    // get_image_features returns; forward takes .pooler_output (the packed list): the output object goes.
    b.drop(flat);
    b.drop(pooled);
    for (TensorId t : hidden) b.drop(t);
    for (TensorId t : dead) b.drop(t);
    features = b.cat_list("cat", packed, 0);  // torch.cat(image_features, dim=0)
    features = b.to(features, b.dtype(h));    // .to(inputs_embeds.dtype)
    b.hold(features);  // image_features: the model's local, then the output's image_hidden_states
    h = scatter_image_features(b, h, ids, features, checked_mul(images, tokens, "images"), mask);
  }
  decoder_and_loss(b, s, h, P, mask, features, embed, ids, labels, !inf && with_images);
}

}  // namespace memplan::llava
