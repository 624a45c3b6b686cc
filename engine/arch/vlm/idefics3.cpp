// Idefics3ForConditionalGeneration (transformers 5.17 models/idefics3/modeling_idefics3.py), and the parts
// SmolVLMForConditionalGeneration runs unchanged (idefics_parts.h), as a training step with images, a text-only
// training step, or one text-only inference pass.
//   Batch (calibrate/harness_kinds/idefics.py): input_ids [B, S], pixel_values [B, N, C, R, R] in the model's dtype
//   (fp32 under amp), pixel_attention_mask [B, N, R, R] float32 (the image processor's), labels = input_ids.
//   Model.forward: inputs_embeds = embed_tokens(input_ids); get_image_features; inputs_merger; the Llama text
//   model on inputs_embeds; lm_head over every position and ForCausalLMLoss.
//   get_image_features: pixel_values.view(B * N, C, R, R); real_images_inds = (pixel_values == 0).sum((-1, -2,
//     -3)) != C * R * R; pixel_values[real_images_inds] (a boolean-index gather: a copy of every real image) and
//     the same for the pixel mask (a float32 copy); the mask's patch sums (unfold views, sum, > 0): the bool patch
//     mask [n, side, side]; the vision transformer; the connector.
//   Vision transformer: patch Conv2d (with bias), flatten(2).transpose(1, 2) (the transposed layout the residual
//     stream keeps, as SigLIP's: every LayerNorm copies its input, clip_parts.h), the fractional position ids
//     (bucketize of the patch grid into the position table's side x side buckets: small int64 tensors; the
//     [n, side^2] ids filled by a boolean index_put_), + position_embedding(position_ids) (a full [n, P, E]
//     gather, not a broadcast); the bidirectional mask (SDPA: None, the patch mask is all true; eager: a bool
//     [n, 1, P, P] and its float [n, 1, P, P]); the SigLIP encoder layers (clip_parts.h encoder_layer, CLIP's
//     registration order); post_layernorm.
//   Connector: pixel_shuffle (two reshapes of permuted views: two [n, P, E] copies, and two in backward), the
//     bias-free modality_projection Linear to the text width.
//   Idefics3's inputs_merger: the placeholder mask (input_ids == image_token_id, [B, S, 1]), the features cast to
//     the embeddings' dtype (an fp32 copy under amp), inputs_embeds.masked_scatter(mask, features) (as Qwen2-VL's:
//     a fresh [B, S, H], the kernel's [B, S, H] int64 prefix sum and bool mask copy; its backward's masked_select).
// Python bindings that decide lifetimes:
//   - Model.forward keeps image_hidden_states (the projected features) bound and returns them in the output, which
//     the ForConditionalGeneration output carries: alive until the harness drops the output, after the loss.
//   - get_image_features keeps the real-images copies of the pixels and of the pixel mask bound until it returns;
//     its BaseModelOutput holds the vision last_hidden_state until forward takes .pooler_output (then it dies).
//   - The vision transformer keeps the embeddings (`hidden_states`) and the encoder's output bound until it returns;
//     the embeddings module keeps the conv output (`patch_embeds`) and position_ids bound until it returns.
//   - inputs_merger keeps the mask and the cast features bound until it returns; the caller's inputs_embeds (the
//     embedding output) is rebound only once it has returned.
#include "engine/arch/vlm/idefics_parts.h"

#include <string>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/vlm/clip_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {
namespace idefics {

namespace {

// A kernel with no gradient: index arithmetic, masks, position ids (small tensors).
TensorId op0(GraphBuilder& b, std::string_view name, std::vector<TensorId> reads, Shape shape, DType dt) {
  return b.generic({name, std::move(reads), {{std::move(shape), dt}}, {}, {}, {}, {}})[0];
}

clip::Tower tower(const TransformerSpec& s) {
  return {s.id3_vision_hidden, s.id3_vision_heads, s.id3_vision_hidden / s.id3_vision_heads, s.id3_vision_mlp,
          s.id3_vision_layers, s.id3_vision_act};
}

struct VisionParams {
  TensorId patch_w = kNoTensor, patch_b = kNoTensor, pos = kNoTensor, post_w = kNoTensor, post_b = kNoTensor;
  std::vector<clip::LayerParams> layers;
  TensorId proj = kNoTensor;  // connector.modality_projection.proj.weight
};

// model.vision_model's and model.connector's parameters in construction order: embeddings (patch_embedding weight,
// bias; position_embedding), each encoder layer as Idefics3EncoderLayer.__init__ registers it (self_attn k, v, q,
// out_proj; layer_norm1; mlp fc1, fc2; layer_norm2), post_layernorm, then the projection. `train`: false for a
// text-only step (no gradient reaches them, so AdamW keeps no state for them).
VisionParams vision_params(GraphBuilder& b, const TransformerSpec& s, bool train) {
  const int64_t E = s.id3_vision_hidden, I = s.id3_vision_mlp, side = s.id3_image_size / s.id3_patch;
  VisionParams w;
  const std::string v = "model.vision_model.";
  w.patch_w = b.param(v + "embeddings.patch_embedding.weight", {E, s.id3_channels, s.id3_patch, s.id3_patch}, train);
  w.patch_b = b.param(v + "embeddings.patch_embedding.bias", {E}, train);
  w.pos = b.param(v + "embeddings.position_embedding.weight", {side * side, E}, train);
  w.layers.reserve(static_cast<size_t>(s.id3_vision_layers));
  for (int64_t i = 0; i < s.id3_vision_layers; ++i) {
    const std::string p = v + "encoder.layers." + std::to_string(i) + ".";
    clip::LayerParams l;
    auto lin = [&](const std::string& n, int64_t out, int64_t in) {
      clip::Lin x;
      x.w = b.param(p + n + ".weight", {out, in}, train);
      x.b = b.param(p + n + ".bias", {out}, train);
      return x;
    };
    l.k = lin("self_attn.k_proj", E, E);
    l.v = lin("self_attn.v_proj", E, E);
    l.q = lin("self_attn.q_proj", E, E);
    l.o = lin("self_attn.out_proj", E, E);
    l.ln1_w = b.param(p + "layer_norm1.weight", {E}, train);
    l.ln1_b = b.param(p + "layer_norm1.bias", {E}, train);
    l.fc1 = lin("mlp.fc1", I, E);
    l.fc2 = lin("mlp.fc2", E, I);
    l.ln2_w = b.param(p + "layer_norm2.weight", {E}, train);
    l.ln2_b = b.param(p + "layer_norm2.bias", {E}, train);
    w.layers.push_back(l);
  }
  w.post_w = b.param(v + "post_layernorm.weight", {E}, train);
  w.post_b = b.param(v + "post_layernorm.bias", {E}, train);
  const int64_t sf = s.id3_scale_factor;
  w.proj = b.param("model.connector.modality_projection.proj.weight", {s.hidden_size, E * sf * sf}, train);
  return w;
}

// Idefics3VisionAttention.forward (SigLIP's) on the normed input x [n, P, E]: as clip_parts' attention. `weights`
// receives eager attention's probabilities (bound to `_` in the layer until it returns).
TensorId vision_attention(GraphBuilder& b, const clip::Tower& t, const clip::LayerParams& w, TensorId x, TensorId mask,
                          TensorId& weights) {
  const Shape xs = b.shape(x);
  const int64_t n = xs[0], P = xs[1], nh = t.heads, hd = t.head_dim;
  const bool eager = b.config().attn == AttnImpl::eager;
  weights = kNoTensor;
  auto heads = [&](const clip::Lin& l) {
    const TensorId p = clip::apply(b, l, x);
    return eager ? b.view_copying_grad(p, {n, nh, P, hd}) : b.view(p, {n, nh, P, hd});
  };
  const TensorId q = heads(w.q);
  const TensorId k = heads(w.k);
  const TensorId v = heads(w.v);
  for (TensorId tt : {q, k, v}) b.hold(tt);  // queries / keys / values until the module returns
  TensorId ctx;
  if (!eager) {
    ctx = b.sdpa(q, k, v, 0.0, false, mask);
  } else {
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {n, nh, P, P}, true, true), false);
    if (mask != kNoTensor) {
      b.hold(scores);
      const TensorId masked = b.add(scores, mask);
      b.drop(scores);
      scores = masked;
    }
    b.hold(scores);
    TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(q));
    b.drop(scores);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, v, {n, nh, P, hd}, false, true), {n, P, nh, hd}, /*grad_copied=*/true);
  }
  const TensorId out = clip::apply(b, w.o, b.view(ctx, {n, P, nh * hd}));
  for (TensorId tt : {q, k, v}) b.drop(tt);
  return out;
}

// Idefics3EncoderLayer.forward (SigLIP's statements, clip_parts.h encoder_layer) on the transposed-layout residual
// stream h: each LayerNorm copies its input in forward (native_layer_norm's expect_contiguous); its output is
// contiguous and reaches a Linear, so the gradient arriving in backward is contiguous and the backward copies only
// the saved input (whole-run amp stream of the Idefics3-8B-width row: one [n, P, E] copy per norm, not two).
TensorId vision_layer(GraphBuilder& b, const clip::Tower& t, const clip::LayerParams& w, const std::string& name,
                      bool checkpointed, TensorId h, TensorId mask) {
  b.begin_layer(name, checkpointed);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the encoder's loop variable and `residual` until the layer returns
  const TensorId a = b.layer_norm(h, w.ln1_w, w.ln1_b, /*contiguous_copy=*/true, /*grad_contiguous=*/true);
  b.hold(a);
  TensorId weights = kNoTensor;
  const TensorId att = vision_attention(b, t, w, a, mask, weights);
  b.drop(a);
  const TensorId h1 = b.add(layer_in, att);
  b.hold(h1);
  const TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b, /*contiguous_copy=*/true, /*grad_contiguous=*/true);
  b.hold(n2);
  const TensorId f1 = clip::apply(b, w.fc1, n2);
  b.hold(f1);
  const TensorId act = clip::activation(b, t.act, f1);
  b.drop(f1);
  b.hold(act);
  const TensorId m = clip::apply(b, w.fc2, act);
  b.drop(act);
  b.drop(n2);
  const TensorId out = b.add(h1, m);
  for (TensorId tt : {h1, weights, layer_in})
    if (tt != kNoTensor) b.drop(tt);
  b.end_layer();
  return out;
}

// Idefics3VisionEmbeddings.forward on the real images px [n, C, R, R] with the bool patch mask pam [n, side,
// side]: conv, the position ids, the embeddings add. Returns the embeddings [n, P, E] (the conv's transposed
// layout).
TensorId vision_embeddings(GraphBuilder& b, const TransformerSpec& s, const VisionParams& w, const Images& im,
                           TensorId px, TensorId pam) {
  const int64_t n = im.count, side = im.side, P = im.patches, E = s.id3_vision_hidden;
  const TensorId conv = b.conv2d(px, w.patch_w, w.patch_b, s.id3_patch, 0, {n, E, side, side});
  b.hold(conv);  // patch_embeds until the module returns
  const TensorId flat = b.view_copying_grad(conv, {n, P, E});  // flatten(2).transpose(1, 2)
  // boundaries (arange), position_ids = full([n, P], 0), the per-image patch counts and fractional coordinates
  // ([n, side] float32 / model dtype), their bucketize (int64 [n, side]), pos_ids [n, side, side] (int64), then
  // position_ids[mask] = pos_ids[mask]: nonzero of the flattened mask [n * P, 2] for each side, a [n * P] gather,
  // and the in-place index_put_.
  op0(b, "arange", {}, {side - 1}, b.param_dtype());
  const TensorId ids = op0(b, "full", {}, {n, P}, DType::i64);
  b.hold(ids);  // position_ids until the module returns
  for (int axis = 0; axis < 2; ++axis) {
    const TensorId cnt = op0(b, "sum", {pam}, {n}, DType::i64);
    const TensorId step = op0(b, "reciprocal", {cnt}, {n}, DType::f32);
    const TensorId idx = op0(b, "arange", {}, {side}, DType::f32);
    const TensorId frac = op0(b, "clamp", {op0(b, "mul", {idx, step}, {n, side}, DType::f32)}, {n, side}, DType::f32);
    b.hold(frac);
    b.drop(frac);
  }
  const TensorId bh = op0(b, "bucketize", {}, {n, side}, DType::i64);
  const TensorId bw = op0(b, "bucketize", {}, {n, side}, DType::i64);
  b.hold(bh);
  b.hold(bw);
  const TensorId pos_ids = op0(b, "add", {op0(b, "mul", {bh}, {n, side, 1}, DType::i64), bw}, {n, side, side}, DType::i64);
  b.hold(pos_ids);
  const int64_t K = checked_mul(n, P, "image patches");
  const TensorId sel = op0(b, "index", {pos_ids, op0(b, "nonzero", {pam}, {K, 2}, DType::i64)}, {K}, DType::i64);
  const TensorId filled = b.inplace("index_put_", ids, false, {op0(b, "nonzero", {pam}, {K, 2}, DType::i64), sel});
  const TensorId pe = b.embedding(filled, w.pos);
  const TensorId e = b.add(flat, pe);
  for (TensorId t : {bh, bw, pos_ids, ids, conv}) b.drop(t);
  return e;
}

// get_image_features from the batch's pixel_values / pixel_attention_mask through the connector: returns the
// projected features [n, T, H] (the connector's output).
TensorId image_features(GraphBuilder& b, const TransformerSpec& s, const VisionParams& w, const Images& im,
                        TensorId pixels, TensorId pmask, Merger merger) {
  const auto& cfg = b.config();
  const int64_t n = im.count, C = s.id3_channels, R = s.id3_image_size, side = im.side, P = im.patches,
                E = s.id3_vision_hidden, sf = s.id3_scale_factor, T = im.tokens;
  const clip::Tower t = tower(s);
  // pixel_values.to(self.dtype) (a no-op: the plugin draws them in the model's dtype) and .view(n, C, R, R).
  const TensorId pv = b.view(b.to(pixels, b.param_dtype()), {n, C, R, R});
  // (pixel_values == 0.0).sum(dim=(-1, -2, -3)): the bool tensor, then the reduction's int64 copy of it (freed
  // after the bool one: whole-run stream), the [n] counts.
  const TensorId zero = op0(b, "eq", {pv}, {n, C, R, R}, DType::boolean);
  const TensorId zero64 = op0(b, "to_copy", {zero}, {n, C, R, R}, DType::i64);
  const TensorId real = op0(b, "ne", {op0(b, "sum", {zero64}, {n}, DType::i64)}, {n}, DType::boolean);
  if (merger == Merger::index_where) {  // real_images_inds[0] |= ~torch.any(real_images_inds)
    op0(b, "or_", {op0(b, "logical_not", {op0(b, "any", {real}, {}, DType::boolean)}, {}, DType::boolean)}, {},
        DType::boolean);
  }
  // pixel_values[real_images_inds].contiguous(): nonzero, then a gather of every real image (a copy).
  const TensorId px = op0(b, "index", {pv, op0(b, "nonzero", {real}, {n, 1}, DType::i64)}, {n, C, R, R}, b.param_dtype());
  b.hold(px);  // get_image_features' pixel_values until it returns (the conv saves it in training anyway)
  const TensorId pm = op0(b, "index", {b.view(pmask, {n, R, R}), op0(b, "nonzero", {real}, {n, 1}, DType::i64)},
                          {n, R, R}, DType::f32);
  b.hold(pm);  // pixel_attention_mask until get_image_features returns
  // unfold twice (views), sum((-1, -2)) [n, side, side] float32, > 0: the bool patch mask.
  const TensorId pam = op0(b, "gt", {op0(b, "sum", {pm}, {n, side, side}, DType::f32)}, {n, side, side},
                           DType::boolean);
  b.hold(pam);

  // ---- Idefics3VisionTransformer.forward
  const TensorId e = vision_embeddings(b, s, w, im, px, pam);
  b.hold(e);  // hidden_states (the embeddings) until the vision model returns
  // patch_attention_mask.view(n, -1); create_bidirectional_mask: SDPA skips it (padding_mask.all()); eager:
  // ones(()) & (q >= 0) [1, 1, P, 1] & padding_mask[b, kv] [n, 1, 1, P] -> bool [n, 1, P, P], then
  // torch.where(mask, 0, min) in the embeddings' dtype.
  TensorId vmask = kNoTensor;
  op0(b, "all", {pam}, {}, DType::boolean);
  if (cfg.attn == AttnImpl::eager) {
    const TensorId q = op0(b, "and", {op0(b, "ge", {}, {1, 1, P, 1}, DType::boolean)}, {1, 1, P, 1}, DType::boolean);
    const TensorId pad = op0(b, "index", {pam}, {n, 1, 1, P}, DType::boolean);
    const TensorId allowed = op0(b, "and", {q, pad}, {n, 1, P, P}, DType::boolean);
    vmask = op0(b, "where", {allowed}, {n, 1, P, P}, b.dtype(e));
    b.hold(vmask);  // the encoder's attention_mask until the vision model returns
  }
  TensorId h = e;
  for (int64_t i = 0; i < s.id3_vision_layers; ++i)
    h = vision_layer(b, t, w.layers[static_cast<size_t>(i)], "model.vision_model.encoder.layers." + std::to_string(i),
                     cfg.grad_checkpointing, h, vmask);
  b.hold(h);  // encoder_outputs until the vision model returns
  const TensorId last = b.layer_norm(h, w.post_w, w.post_b, /*contiguous_copy=*/true, /*grad_contiguous=*/true);
  b.hold(last);  // image_outputs.last_hidden_state until get_image_features returns
  for (TensorId x : {vmask, h, e, pam})
    if (x != kNoTensor) b.drop(x);

  // ---- Idefics3Connector: pixel_shuffle, then modality_projection.
  // x.view(n, side, side, E).view(n, side, side / sf, E * sf): views, whose backward reshapes a permuted gradient
  // (a copy); permute, reshape(n, side / sf, side / sf, E * sf^2): a copy (its backward copies the permuted
  // gradient back too); permute, reshape(n, T, E * sf^2): another copy (a view of the contiguous gradient back).
  const TensorId v1 = b.view_copying_grad(last, {n, side, side / sf, E * sf});
  const TensorId c1 = b.contiguous_copy(v1, {n, side / sf, side / sf, E * sf * sf}, /*grad_copied=*/true);
  const TensorId c2 = b.contiguous_copy(c1, {n, T, E * sf * sf});
  b.hold(c2);  // the shuffled features live until get_image_features returns (whole-run amp stream)
  const TensorId feats = b.linear(c2, w.proj);
  for (TensorId x : {px, pm, c2, last}) b.drop(x);
  return feats;
}

}  // namespace

Images images(const GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  Images im;
  if (!cfg.image_grid.empty())
    throw InputError("image_grid", "set",
                     "is a Qwen-VL / SigLIP 2 key; " + s.model_type + " reads images_per_sample and image_splits");
  if (cfg.images_per_sample == 0) return im;
  if (!b.training())
    throw InputError("images_per_sample", std::to_string(cfg.images_per_sample),
                     "inference with images is not modelled for " + s.model_type + " (text-only prompts are)");
  if (cfg.image_splits.size() != 2)
    throw InputError("image_splits", "absent", "must be [rows, cols] when images_per_sample > 0 ([0, 0]: no tiles)");
  im.rows = cfg.image_splits[0];
  im.cols = cfg.image_splits[1];
  if ((im.rows == 0) != (im.cols == 0))
    throw InputError("image_splits", "[" + std::to_string(im.rows) + ", " + std::to_string(im.cols) + "]",
                     "rows and cols are both 0 (the global image alone) or both positive");
  im.per_sample = cfg.images_per_sample;
  im.sub_per_image = im.rows == 0 ? 1 : checked_mul(im.rows, im.cols, "image_splits") + 1;
  im.count = checked_mul(checked_mul(cfg.batch_size, im.per_sample, "images"), im.sub_per_image, "sub-images");
  im.side = s.id3_image_size / s.id3_patch;
  if (im.side % s.id3_scale_factor != 0)
    throw InputError("config.scale_factor", std::to_string(s.id3_scale_factor),
                     "must divide the patch grid's side (image_size // patch_size = " + std::to_string(im.side) +
                         ") for images: the connector's pixel shuffle views [side, side / scale_factor] and raises");
  im.patches = im.side * im.side;
  im.tokens = im.patches / (s.id3_scale_factor * s.id3_scale_factor);
  // Idefics3Processor's layout: per tile <fake> <row_i_col_j> + tokens, a newline per row, then a newline and
  // <fake> <global-img> + tokens + <fake>; the global image alone: <fake> <global-img> + tokens + <fake>.
  const int64_t global = im.tokens + 3;
  im.tokens_per_image =
      im.rows == 0 ? global
                   : checked_add(checked_mul(im.rows, checked_add(checked_mul(im.cols, im.tokens + 2, "image_splits"),
                                                                  1, "image_splits"),
                                             "image_splits"),
                                 global + 1, "image_splits");
  const int64_t need =
      checked_add(3, checked_mul(im.per_sample, checked_add(im.tokens_per_image, 2, "images"), "images"), "images");
  if (cfg.seq_len < need)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "is too short for " + std::to_string(im.per_sample) + " images of " +
                         std::to_string(im.tokens_per_image) + " tokens each (needs " + std::to_string(need) +
                         ": the harness's layout, calibrate/harness_kinds/idefics.py)");
  return im;
}

void build(GraphBuilder& b, const TransformerSpec& s, Merger merger) {
  const auto& cfg = b.config();
  if (cfg.task != Task::lm)
    throw InputError("task", std::string(task_name(cfg.task)), "is not modelled for " + s.model_type);
  if (cfg.lora.enabled() || cfg.quant.enabled())
    throw InputError("lora", "set", "LoRA / quantization of a " + s.model_type + " model is not modelled");
  if (!cfg.frozen_layers.empty())
    throw InputError("frozen_layers", std::to_string(cfg.frozen_layers.size()) + " layers",
                     "freezing layers of a " + s.model_type + " model is not modelled");
  if (!cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing_layers", std::to_string(cfg.checkpoint_layers.size()) + " layers",
                     "a subset of checkpointed layers is not modelled for " + s.model_type +
                         " (gradient_checkpointing_enable wraps every vision and text layer)");
  const Images im = images(b, s);
  const bool inf = !b.training(), with_images = im.count > 0;
  if (merger == Merger::index_where && with_images && b.autocast())
    throw InputError("precision", std::string(precision_name(cfg.precision)),
                     "raises in SmolVLMModel.inputs_merger with images: `image_embeds[image_mask] = ...` (index_put_) "
                     "gets 16-bit image features for the fp32 embeddings under autocast (transformers 5.17)");
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;

  hf_construction_scalar(b);
  // Parameters in construction order: model.vision_model, model.connector, model.text_model (embed_tokens, layers,
  // norm), then lm_head (causal_lm_tail).
  const VisionParams vp = vision_params(b, s, b.training() && with_images);
  const TensorId embed = b.param("embed_tokens.weight", {s.vocab_size, H}, emb_train);
  std::vector<LlamaDecoderParams> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(llama_decoder_params(b, s, "layers." + std::to_string(i) + ".", true));
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);

  // The batch, as the harness plugin draws it: input_ids, then pixel_values and pixel_attention_mask.
  const TensorId ids = b.input({B, S}, DType::i64);
  TensorId pixels = kNoTensor, pmask = kNoTensor;
  if (with_images) {
    pixels = b.input({B, im.per_sample * im.sub_per_image, s.id3_channels, s.id3_image_size, s.id3_image_size},
                     b.param_dtype());
    pmask = b.input({B, im.per_sample * im.sub_per_image, s.id3_image_size, s.id3_image_size}, DType::f32);
  }
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);  // generate()'s position_ids

  TensorId h = b.embedding(ids, embed);
  TensorId features = kNoTensor;
  if (with_images) {
    features = image_features(b, s, vp, im, pixels, pmask, merger);
    b.hold(features);  // image_hidden_states: returned in the outputs, alive until the loss has been computed
    const int64_t K = checked_mul(im.count, im.tokens, "image tokens");
    const TensorId old = h;
    b.hold(old);  // the forward's inputs_embeds until inputs_merger returns
    if (merger == Merger::masked_scatter) {
      const TensorId mask = op0(b, "eq", {ids}, {B, S}, DType::boolean);
      b.hold(mask);  // special_image_mask until the merger returns
      const TensorId img = b.to(features, b.dtype(h));
      b.hold(img);  // image_hidden_states (cast) until the merger returns
      // As Qwen2-VL's (qwen2_vl.cpp): a fresh [B, S, H]; the kernel's int64 prefix sum and contiguous bool copy of
      // the broadcast mask after the output; its backward's masked_fill and masked_select with index's nonzero.
      const int64_t bsh = checked_mul(checked_mul(B, S, "batch"), H, "batch"), nnz = checked_mul(K, H, "tokens");
      h = b.generic({"masked_scatter", {h, mask, img}, {{{B, S, H}, b.dtype(h)}}, {1}, {}, {}, {},
                     {bsh, checked_mul(nnz, 24, "tokens")}})[0];
      const TensorId prefix = op0(b, "mask_prefix_sum", {}, {bsh}, DType::i64);
      op0(b, "mask_contiguous", {prefix}, {bsh}, DType::boolean);
      b.drop(img);
      b.drop(mask);
    } else {
      // SmolVLMModel.inputs_merger: image_mask [B, S]; per-sample block counts and offsets ([B] int64); row_cum =
      // cumsum [B, S] int64; chunk_idx = (row_cum - 1) // T, local_idx = (row_cum - 1) % T, block_idx =
      // offset + chunk_idx ([B, S] int64 each, bound until it returns); image_embeds = zeros_like(inputs_embeds);
      // image_embeds[mask] = features[block_idx[mask], local_idx[mask], :] (two nonzero + gathers of [K] ids, the
      // [K, H] gather, index_put_ in place); torch.where(mask[..., None], image_embeds, inputs_embeds).
      const TensorId mask = op0(b, "eq", {ids}, {B, S}, DType::boolean);
      b.hold(mask);
      const TensorId cnt = op0(b, "sum", {mask}, {B}, DType::i64);
      b.hold(cnt);
      op0(b, "all", {op0(b, "eq", {op0(b, "remainder", {cnt}, {B}, DType::i64)}, {B}, DType::boolean)}, {},
          DType::boolean);
      const TensorId blocks = op0(b, "floor_divide", {cnt}, {B}, DType::i64);
      const TensorId offsets = op0(b, "pad", {op0(b, "cumsum", {blocks}, {B}, DType::i64)}, {B + 1}, DType::i64);
      const TensorId row_cum = op0(b, "cumsum", {mask}, {B, S}, DType::i64);
      const TensorId chunk = op0(b, "floor_divide", {op0(b, "sub", {row_cum}, {B, S}, DType::i64)}, {B, S}, DType::i64);
      const TensorId local = op0(b, "remainder", {op0(b, "sub", {row_cum}, {B, S}, DType::i64)}, {B, S}, DType::i64);
      const TensorId block = op0(b, "add", {offsets, chunk}, {B, S}, DType::i64);
      std::vector<TensorId> locals{blocks, offsets, row_cum, chunk, local, block};
      for (TensorId x : locals) b.hold(x);
      const TensorId zeros = op0(b, "zeros_like", {}, {B, S, H}, b.dtype(h));
      b.hold(zeros);  // image_embeds until the merger returns
      const TensorId bsel = op0(b, "index", {block, op0(b, "nonzero", {mask}, {K, 2}, DType::i64)}, {K}, DType::i64);
      const TensorId lsel = op0(b, "index", {local, op0(b, "nonzero", {mask}, {K, 2}, DType::i64)}, {K}, DType::i64);
      // IndexBackward keeps the two index tensors; its gradient is a zero-filled [n, T, H] accumulated into.
      const TensorId rows = b.generic_one("index", {features, bsel, lsel}, {K, H}, b.dtype(features), {1, 2});
      const TensorId nz = op0(b, "nonzero", {mask}, {K, 2}, DType::i64);
      const TensorId put = b.inplace("index_put_", zeros, false, {nz, rows});
      h = b.generic({"where", {mask, put, old}, {{{B, S, H}, b.dtype(h)}}, {0}, {}, {}, {}})[0];
      for (TensorId x : locals) b.drop(x);
      for (TensorId x : {zeros, cnt, mask}) b.drop(x);
    }
    b.drop(old);
  }
  const TensorId inputs_embeds = h;
  b.hold(inputs_embeds);  // bound in the outer forward and the text model until they return

  // LlamaModel.forward on inputs_embeds: the causal mask (SDPA skips it in training; eager materialises it), the
  // rotary cos / sin, the decoder layers, the final norm (as build_llama).
  TensorId mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, S, S, b.dtype(h));
  } else {
    mask = inference_mask(b, 0, b.dtype(h));
  }
  if (mask != kNoTensor) b.hold(mask);
  const std::pair<TensorId, TensorId> cs = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cs.first, sin = cs.second;
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const LlamaDecoderParams& d = layers[static_cast<size_t>(i)];
    h = llama_decoder_layer(b, s, i, d, h, inputs_embeds, [&](TensorId x, TensorId& weights) {
      return llama_attention(b, s, d.attn, x, cos, sin, mask, 0, weights);
    });
  }
  b.hold(h);
  const TensorId hn = rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
  if (features != kNoTensor) b.drop(features);
}

}  // namespace idefics

void build_idefics3(GraphBuilder& b, const TransformerSpec& s) {
  idefics::build(b, s, idefics::Merger::masked_scatter);
}

}  // namespace memplan
