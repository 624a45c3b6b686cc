// Qwen3VLForConditionalGeneration and Qwen3VLMoeForConditionalGeneration (transformers 5.17
// models/qwen3_vl/modeling_qwen3_vl.py, models/qwen3_vl_moe/modeling_qwen3_vl_moe.py): a training step with images,
// a text-only training step, and text-prompt inference (prefill, generate()).
//   Qwen3VLModel.forward: inputs_embeds = embed_tokens(input_ids); with pixel_values: the vision tower
//   (get_image_features, Qwen3VLVisionModel below), image_embeds = cat(split(pooler_output)).to(inputs_embeds'
//   dtype), the placeholder masks (input_ids == image_token_id, == video_token_id), inputs_embeds =
//   inputs_embeds.masked_scatter(image_mask, image_embeds), visual_pos_masks = image_mask[..., 0]; the M-RoPE
//   position ids [3, B, L] (get_rope_index, with images); then Qwen3VLTextModel: the causal mask, the interleaved
//   M-RoPE cos / sin [B, L, head_dim], N x decoder layer (Qwen3's: q / k RMSNorm over head_dim before the rotary
//   embedding; qwen3_vl_moe: Qwen3MoeSparseMoeBlock with renormalised top-k), after layer k < len(deepstack) the
//   deepstack features added at the image positions (_deepstack_process: clone, index, add, index_put_), the norm;
//   lm_head and ForCausalLMLoss (causal_lm_tail).
//   Qwen3VLVisionModel.forward: interpolation indices / weights [P, 4] and the 2-D position ids of the grid, the
//   patch Conv3d (kernel = stride = [T, P, P]) -> [patches, hidden], + the learned position table gathered and
//   weighted ([P, 4, hidden] summed over the taps), the 2-D rotary cos / sin [patches, head_dim] (fp32), blocks
//   (LayerNorm, qkv -> per-image attention over cu_seqlens chunks, proj; LayerNorm, fc1, gelu-tanh, fc2), the
//   deepstack mergers after their blocks, the merger.
// Python bindings that decide lifetimes:
//   - Qwen3VLModel.forward binds image_outputs (the tower's last_hidden_state, the split pooler_output, the
//     deepstack features), image_embeds, the placeholder masks and position_ids until it returns, after the whole
//     text model.
//   - The vision blocks' loop variable holds each block's input until the block returns; the interpolation
//     tensors, position ids, pos_embeds (the fp32 [P, hidden] sum) and the rotary cos / sin are the tower's locals
//     until it returns.
#include "engine/arch/vlm/qwen3_vl_parts.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace qwen3vl {

Images images_of(const GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  Images im;
  if (cfg.images_per_sample == 0 || cfg.image_grid.empty()) return im;
  if (cfg.image_grid.size() != 3)
    throw InputError("image_grid", std::to_string(cfg.image_grid.size()) + " entries", "must be [t, h, w]");
  im.t = cfg.image_grid[0];
  im.h = cfg.image_grid[1];
  im.w = cfg.image_grid[2];
  const int64_t m = s.qwen3vl_merge;
  if (im.h % m != 0 || im.w % m != 0)
    throw InputError("image_grid", "[" + std::to_string(im.t) + ", " + std::to_string(im.h) + ", " +
                                       std::to_string(im.w) + "]",
                     "h and w must be multiples of spatial_merge_size (" + std::to_string(m) + ")");
  im.images = checked_mul(cfg.batch_size, cfg.images_per_sample);
  im.patches = checked_mul(im.images, checked_mul(im.t, checked_mul(im.h, im.w)));
  im.tokens = im.patches / (m * m);
  const int64_t per_sample = im.tokens / cfg.batch_size;
  if (per_sample > cfg.seq_len)
    throw InputError("images_per_sample", std::to_string(cfg.images_per_sample),
                     "the images make " + std::to_string(per_sample) + " image tokens per sample, more than seq_len (" +
                         std::to_string(cfg.seq_len) + ")");
  return im;
}

namespace {

Linear linear_params(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool train) {
  Linear l;
  l.w = b.param(name + ".weight", {out, in}, train);
  l.b = b.param(name + ".bias", {out}, train);
  return l;
}

TensorId apply(GraphBuilder& b, const Linear& l, TensorId x) { return b.linear(x, l.w, l.b); }

MergerParams merger_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool postshuffle,
                           bool train) {
  const int64_t Hm = s.qwen3vl_hidden * s.qwen3vl_merge * s.qwen3vl_merge;
  const int64_t norm = postshuffle ? Hm : s.qwen3vl_hidden;
  MergerParams w;
  w.nw = b.param(p + "norm.weight", {norm}, train);
  w.nb = b.param(p + "norm.bias", {norm}, train);
  w.fc1 = linear_params(b, p + "linear_fc1", Hm, Hm, train);
  w.fc2 = linear_params(b, p + "linear_fc2", s.qwen3vl_out_hidden, Hm, train);
  return w;
}

// Qwen3VLVisionPatchMerger.forward: norm (over hidden, or over merge^2 x hidden after the shuffle's view),
// view(-1, merge^2 x hidden), linear_fc1, nn.GELU() (exact), linear_fc2.
TensorId merger(GraphBuilder& b, const TransformerSpec& s, const MergerParams& w, TensorId x, bool postshuffle) {
  const int64_t Hm = s.qwen3vl_hidden * s.qwen3vl_merge * s.qwen3vl_merge;
  const int64_t rows = b.shape(x)[0] / (s.qwen3vl_merge * s.qwen3vl_merge);
  TensorId n = postshuffle ? b.layer_norm(b.view(x, {rows, Hm}), w.nw, w.nb) : b.layer_norm(x, w.nw, w.nb);
  n = b.view(n, {rows, Hm});
  return apply(b, w.fc2, b.unary("gelu", apply(b, w.fc1, n), true, false));
}

// Qwen3VLVisionAttention.forward (not flash): qkv(x).reshape(P, 3, heads, -1).permute(1, 0, 2, 3).unbind(0), the
// 2-D rotary embedding (apply_rotary_pos_emb_vision: q and k in fp32, cast back), transpose(0, 1).unsqueeze(0),
// then per image (torch.split over cu_seqlens' lengths along the sequence) the attention interface, whose outputs
// torch.cat joins; reshape(P, -1), proj.
TensorId vision_attention(GraphBuilder& b, const TransformerSpec& s, const BlockParams& w, TensorId x, TensorId cos,
                          TensorId sin, const Images& im) {
  const int64_t P = im.patches, Hv = s.qwen3vl_hidden, nh = s.qwen3vl_heads, hd = Hv / nh;
  const int64_t chunks = im.images * im.t, n = P / chunks;
  const bool eager = b.config().attn == AttnImpl::eager;
  const TensorId qkv = apply(b, w.qkv, x);
  // unbind's backward stacks the three gradients into a fresh [3, P, heads, hd] tensor, which the permute's
  // reshape back to [P, 3 x hidden] copies.
  const TensorId qkv4 = b.view_copying_grad(qkv, {3, P, nh, hd});
  const std::vector<TensorId> parts = b.split(qkv4, 3, {P, nh, hd});
  const TensorId q = parts[0], k = parts[1], v = parts[2];
  for (TensorId t : {q, k, v}) b.hold(t);  // query / key / value_states until the module returns
  // apply_rotary_pos_emb_vision: `q, k = q.float(), k.float()` (no copy in an fp32 model), cos / sin unsqueezed.
  const TensorId q32 = b.to(q, DType::f32);
  b.hold(q32);
  const TensorId k32 = b.to(k, DType::f32);
  b.hold(k32);
  const TensorId cu = b.view(cos, {P, 1, hd}), su = b.view(sin, {P, 1, hd});
  const TensorId qe32 = rope(b, q32, cu, su);
  b.hold(qe32);
  const TensorId ke32 = rope(b, k32, cu, su);
  b.hold(ke32);
  const TensorId qe = b.to(qe32, b.dtype(q));
  b.hold(qe);
  const TensorId ke = b.to(ke32, b.dtype(k));
  b.hold(ke);
  for (TensorId t : {q32, k32, qe32, ke32})
    if (t != qe && t != ke) b.drop(t);
  // transpose(0, 1).unsqueeze(0): [1, heads, P, hd] views; split into the images' chunks.
  auto chunked = [&](TensorId t) { return b.split(b.view(t, {1, nh, P, hd}), static_cast<int>(chunks), {1, nh, n, hd}); };
  const std::vector<TensorId> qs = chunked(qe), ks = chunked(ke), vs = chunked(v);
  std::vector<TensorId> outs;
  for (int64_t c = 0; c < chunks; ++c) {
    const size_t i = static_cast<size_t>(c);
    if (!eager) {
      // sdpa_attention_forward: not causal, no mask; the kernel's output is [1, n, heads, hd] in memory, so
      // transpose(1, 2).contiguous() is a view.
      outs.push_back(b.view(b.sdpa(qs[i], ks[i], vs[i], 0.0, false), {1, n, nh, hd}));
    } else {
      // eager_attention_forward: matmul(q, k^T) * scaling, softmax(dtype=float32).to(q.dtype), dropout (p 0),
      // matmul with v, transpose(1, 2).contiguous(); the weights ([1] of the returned pair) are dropped at once.
      TensorId scores = b.scalar_op("mul_scalar", b.matmul(qs[i], ks[i], {1, nh, n, n}), false);
      b.hold(scores);
      TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(qs[i]));
      b.drop(scores);
      outs.push_back(b.contiguous_copy(b.matmul(probs, vs[i], {1, nh, n, hd}), {1, n, nh, hd}, /*grad_copied=*/true));
    }
  }
  const TensorId ctx = b.cat_list("cat", outs, 1);
  const TensorId out = apply(b, w.proj, b.view(ctx, {P, Hv}));
  for (TensorId t : {q, k, v, qe, ke}) b.drop(t);
  return out;
}

// Qwen3VLVisionBlock.forward: h + attn(norm1(h)), then + mlp(norm2(.)); checkpointed with the model.
TensorId vision_block(GraphBuilder& b, const TransformerSpec& s, const BlockParams& w, TensorId h, TensorId cos,
                      TensorId sin, const Images& im, const std::string& name) {
  b.begin_layer(name, b.config().grad_checkpointing);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the tower's loop variable until the block returns
  const TensorId n1 = b.layer_norm(h, w.n1w, w.n1b);
  b.hold(n1);  // the attention's argument until it returns
  const TensorId a = vision_attention(b, s, w, n1, cos, sin, im);
  b.drop(n1);
  const TensorId h1 = b.add(h, a);
  b.hold(h1);  // hidden_states until the block returns
  const TensorId n2 = b.layer_norm(h1, w.n2w, w.n2b);
  b.hold(n2);  // the MLP's argument until it returns
  const TensorId m = apply(b, w.fc2, b.unary("gelu", apply(b, w.fc1, n2), true, false));
  b.drop(n2);
  const TensorId out = b.add(h1, m);
  b.drop(h1);
  b.drop(layer_in);
  b.end_layer();
  return out;
}

// A deepstack merger whose features no text layer adds (k >= num_layers): its output never reaches the loss, so on
// the GPU its autograd nodes (and what they saved) die with the output when Qwen3VLModel.forward returns, and its
// parameters get no gradient. Replayed as the same kernels without a backward (its parameters are registered
// untrained): the LayerNorm output (fp32 under autocast), fc1 (the 16-bit weight cast under autocast, which the
// autocast cache keeps until the model's forward ends: `casts`), GELU, fc2 (its cast likewise), each output freed
// once the next kernel has read it.
TensorId unused_merger(GraphBuilder& b, const TransformerSpec& s, const Images& im, std::vector<TensorId>& casts) {
  const int64_t Hm = s.qwen3vl_hidden * s.qwen3vl_merge * s.qwen3vl_merge, rows = im.tokens;
  const DType act = b.autocast() ? b.low_dtype() : b.param_dtype();
  const TensorId n = b.generic_one("layer_norm", {}, {rows, Hm}, b.autocast() ? DType::f32 : b.param_dtype());
  auto lin = [&](TensorId x, int64_t out, int64_t in) {
    if (b.autocast()) {
      const TensorId c = b.generic_one("to_copy", {}, {out, in}, b.low_dtype());
      b.hold(c);
      casts.push_back(c);
      return b.generic_one("addmm", {x, c}, {rows, out}, act);
    }
    return b.generic_one("addmm", {x}, {rows, out}, act);
  };
  const TensorId a = lin(n, Hm, Hm);
  const TensorId g = b.generic_one("gelu", {a}, {rows, Hm}, act);
  return lin(g, s.qwen3vl_out_hidden, Hm);
}

}  // namespace

VisionParams vision_params(GraphBuilder& b, const TransformerSpec& s, const std::string& pre, bool train,
                           int64_t used_deepstack) {
  const int64_t Hv = s.qwen3vl_hidden, Iv = s.qwen3vl_intermediate;
  VisionParams w;
  w.conv_w = b.param(pre + "patch_embed.proj.weight",
                     {Hv, s.qwen3vl_in_channels, s.qwen3vl_temporal_patch, s.qwen3vl_patch, s.qwen3vl_patch}, train);
  w.conv_b = b.param(pre + "patch_embed.proj.bias", {Hv}, train);
  w.pos = b.param(pre + "pos_embed.weight", {s.qwen3vl_num_pos, Hv}, train);
  for (int64_t i = 0; i < s.qwen3vl_depth; ++i) {
    const std::string p = pre + "blocks." + std::to_string(i) + ".";
    BlockParams bl;
    bl.n1w = b.param(p + "norm1.weight", {Hv}, train);
    bl.n1b = b.param(p + "norm1.bias", {Hv}, train);
    bl.n2w = b.param(p + "norm2.weight", {Hv}, train);
    bl.n2b = b.param(p + "norm2.bias", {Hv}, train);
    bl.qkv = linear_params(b, p + "attn.qkv", 3 * Hv, Hv, train);
    bl.proj = linear_params(b, p + "attn.proj", Hv, Hv, train);
    bl.fc1 = linear_params(b, p + "mlp.linear_fc1", Iv, Hv, train);
    bl.fc2 = linear_params(b, p + "mlp.linear_fc2", Hv, Iv, train);
    w.blocks.push_back(bl);
  }
  w.merger = merger_params(b, s, pre + "merger.", false, train);
  for (size_t k = 0; k < s.qwen3vl_deepstack.size(); ++k)
    w.deepstack.push_back(merger_params(b, s, pre + "deepstack_merger_list." + std::to_string(k) + ".", true,
                                        train && static_cast<int64_t>(k) < used_deepstack));
  return w;
}

VisionOut vision_forward(GraphBuilder& b, const TransformerSpec& s, const VisionParams& w, const Images& im,
                         TensorId pixels, TensorId grid, int64_t used_deepstack) {
  const int64_t P = im.patches, Hv = s.qwen3vl_hidden, hd = Hv / s.qwen3vl_heads;
  // The grid's precomputed tensors (vision_utils): interpolation taps [P, 4] int64 and weights [P, 4] fp32, the
  // 2-D position ids [P, 2] int64, cu_seqlens; locals until the tower returns. Their int64 [P] intermediates are
  // not replayed (a few KiB each).
  const TensorId idx = b.generic_one("interp_indices", {grid}, {P, 4}, DType::i64);
  const TensorId wts = b.generic_one("interp_weights", {grid}, {P, 4}, DType::f32);
  const TensorId pos_ids = b.generic_one("vision_position_ids", {grid}, {P, 2}, DType::i64);
  const TensorId cu_seqlens = b.generic_one("cu_seqlens", {grid}, {im.images * im.t + 1}, DType::i32);
  for (TensorId t : {idx, wts, pos_ids, cu_seqlens}) b.hold(t);

  // patch_embed: view(-1, C, T, P, P), .to(weight dtype) (a no-op: pixel_values come in the parameters' dtype),
  // Conv3d (autocast casts input, weight and bias), view(-1, hidden). The conv keeps its input and weight.
  TensorId x = b.view(pixels, {P, s.qwen3vl_in_channels, s.qwen3vl_temporal_patch, s.qwen3vl_patch, s.qwen3vl_patch});
  x = b.autocast_low(x);
  const TensorId cw = b.autocast_low(w.conv_w), cb = b.autocast_low(w.conv_b);
  const TensorId conv = b.generic({"conv3d", {x, cw, cb}, {{{P, Hv, 1, 1, 1}, b.dtype(cw)}}, {0, 1}, {}, {}, {}})[0];
  TensorId h = b.view(conv, {P, Hv});
  // (pos_embed(idx) * weights[:, :, None]).sum(1): the gather in the table's dtype, the product promoted to fp32
  // by the fp32 weights, the sum, then .to(hidden dtype) and the add.
  const TensorId gathered = b.embedding(idx, w.pos);
  const TensorId weighted = b.mul(gathered, b.view(wts, {P, 4, 1}));
  const TensorId summed = b.generic_one("sum_dim1", {weighted}, {P, Hv}, b.dtype(weighted));
  b.hold(summed);  // pos_embeds: a local of the tower's forward until it returns (whole-run bf16 stream)
  h = b.add(h, b.to(summed, b.dtype(h)));

  // Qwen3VLVisionRotaryEmbedding.forward (fp32, autocast off): position_ids[..., None].float() [P, 2, 1],
  // freqs = that * inv_freq [P, 2, hd / 4], cos() * scaling and sin() * scaling; recomposition: cat(h, w) halves,
  // then cat((x, x)) -> [P, hd]; cos first, then sin.
  auto f32 = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::f32}}, {}, {}, {}, {}})[0];
  };
  const TensorId pf = f32("to_copy", {pos_ids}, {P, 2, 1});
  const TensorId freqs = f32("mul", {pf}, {P, 2, hd / 4});
  b.hold(freqs);
  const TensorId c4 = f32("mul_scalar", {f32("cos", {freqs}, {P, 2, hd / 4})}, {P, 2, hd / 4});
  b.hold(c4);
  const TensorId s4 = f32("mul_scalar", {f32("sin", {freqs}, {P, 2, hd / 4})}, {P, 2, hd / 4});
  b.hold(s4);
  b.drop(freqs);
  auto recompose = [&](TensorId f) { return f32("cat", {f32("cat", {f}, {P, hd / 2})}, {P, hd}); };
  const TensorId cos = recompose(c4);
  b.hold(cos);
  b.drop(c4);
  const TensorId sin = recompose(s4);
  b.hold(sin);
  b.drop(s4);

  VisionOut out;
  for (int64_t i = 0; i < s.qwen3vl_depth; ++i) {
    h = vision_block(b, s, w.blocks[static_cast<size_t>(i)], h, cos, sin, im,
                     "visual.blocks." + std::to_string(i));
    const auto it = std::find(s.qwen3vl_deepstack.begin(), s.qwen3vl_deepstack.end(), i);
    if (it != s.qwen3vl_deepstack.end()) {
      const size_t k = static_cast<size_t>(it - s.qwen3vl_deepstack.begin());
      b.hold(h);  // the loop variable, the merger's argument
      const TensorId f = static_cast<int64_t>(k) < used_deepstack ? merger(b, s, w.deepstack[k], h, true)
                                                                   : unused_merger(b, s, im, out.casts);
      b.drop(h);
      b.hold(f);  // deepstack_feature_lists
      out.deepstack.push_back(f);
    }
  }
  b.hold(h);  // hidden_states: returned as last_hidden_state
  out.last = h;
  out.merged = merger(b, s, w.merger, h, false);
  b.hold(out.merged);
  for (TensorId t : {idx, wts, pos_ids, cu_seqlens, summed, cos, sin}) b.drop(t);
  return out;
}

}  // namespace qwen3vl

namespace {

// Qwen3VLTextRotaryEmbedding.forward with position_ids [3, B, S] (fp32, autocast off): position_ids[:, :, None,
// :].float() [3, B, 1, S], inv_freq expanded @ it -> [3, B, hd / 2, S] (transposed: a view), cos() * scaling and
// sin() * scaling [3, B, S, hd / 2]; recomposition_frequencies (sin first): freq[0] takes the H / W sections in
// place, cat((f, f), -1) -> [B, S, hd]; the results .to(x.dtype). The fp32 locals die when it returns.
std::pair<TensorId, TensorId> mrope_cos_sin(GraphBuilder& b, int64_t B, int64_t S, int64_t hd, DType out_dtype) {
  auto f32 = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::f32}}, {}, {}, {}, {}})[0];
  };
  const TensorId positions = f32("to_copy", {}, {3, B, 1, S});
  const TensorId freqs = f32("matmul", {positions}, {3, B, hd / 2, S});
  b.hold(freqs);
  const TensorId c3 = f32("mul_scalar", {f32("cos", {freqs}, {3, B, S, hd / 2})}, {3, B, S, hd / 2});
  b.hold(c3);
  const TensorId s3 = f32("mul_scalar", {f32("sin", {freqs}, {3, B, S, hd / 2})}, {3, B, S, hd / 2});
  b.hold(s3);
  // [B, S, hd], kept as [B, 1, S, hd]: apply_rotary_pos_emb unsqueezes it (a view).
  const TensorId sin32 = f32("cat", {s3}, {B, 1, S, hd});
  b.hold(sin32);
  b.drop(s3);
  const TensorId cos32 = f32("cat", {c3}, {B, 1, S, hd});
  b.hold(cos32);
  b.drop(c3);
  const TensorId cos = b.to(cos32, out_dtype);
  const TensorId sin = b.to(sin32, out_dtype);
  for (TensorId t : {freqs, cos32, sin32})
    if (t != cos && t != sin) b.drop(t);
  return {cos, sin};
}

// Qwen3VLTextModel._deepstack_process: visual_embeds.to(hidden dtype), hidden_states.clone(), local_this =
// hidden_states[mask, :] + visual_embeds, hidden_states[mask, :] = local_this (index_put_ on the clone).
TensorId deepstack_process(GraphBuilder& b, TensorId h, TensorId mask, TensorId feats, int64_t tokens) {
  const Shape hs = b.shape(h);
  const TensorId ve = b.to(feats, b.dtype(h));
  b.hold(ve);
  const TensorId hc = b.add_scalar(h);  // clone(): CloneBackward hands the gradient on
  b.hold(hc);
  // hidden_states[mask, :]: nonzero of the [B, L] mask (int64 [tokens, 2]), then the gather; IndexBackward
  // scatters the gradient into a fresh zero-filled hidden-sized buffer.
  const TensorId sel = b.generic({"index", {hc, mask}, {{{tokens, hs[2]}, b.dtype(h)}}, {1}, {},
                                  {checked_mul(tokens, int64_t{16})}, {checked_mul(tokens, int64_t{16})}})[0];
  const TensorId local = b.add(sel, ve);
  b.hold(local);
  const TensorId out = b.inplace("index_put_", hc, false, {mask, local});
  for (TensorId t : {ve, local, hc}) b.drop(t);
  return out;
}

}  // namespace

void build_qwen3_vl(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (!s.moe_layers.empty() && static_cast<int64_t>(s.moe_layers.size()) != s.num_layers)
    throw InputError("model.moe_layers", std::to_string(s.moe_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (s.qwen3vl_depth <= 0 || s.qwen3vl_heads <= 0 || s.qwen3vl_merge <= 0 || s.qwen3vl_out_hidden != s.hidden_size)
    throw InputError("model.model_type", s.model_type, "needs its vision_config (import it from a config.json)");
  const qwen3vl::Images im = qwen3vl::images_of(b, s);
  // Serving with images: the prompt's forward (the measured prefill, generate()'s first) runs the vision tower;
  // generate() drops pixel_values from the decode steps, which take their positions from the cached rope_deltas.
  const bool images = im.images > 0 && (!inf || b.pass().past_len == 0);
  const bool decode_after_images = inf && im.images > 0 && !images;
  if (!cfg.checkpoint_layers.empty() && im.images > 0)
    throw InputError("grad_checkpointing_layers", "set",
                     "a layer subset is not modelled with images (the vision blocks are checkpointed with the model)");
  const int64_t B = cfg.batch_size, L = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;

  hf_construction_scalar(b);
  // model.visual first (Qwen3VLModel.__init__), then model.language_model, then lm_head (causal_lm_tail).
  // Without images the tower never runs: its parameters get no gradient, so the optimizer keeps no state for them
  // (registered untrained, as dinov2's unread mask_token; still counted and moved to the GPU).
  // Qwen3VLTextModel adds deepstack feature k after text layer k only for k < num_layers: a merger past the last
  // layer runs, but its output never reaches the loss (no gradient, no optimizer state for its parameters).
  const qwen3vl::VisionParams vw = qwen3vl::vision_params(b, s, "visual.", !inf && im.images > 0, s.num_layers);
  const TensorId embed = b.param("embed_tokens.weight", {s.vocab_size, H}, emb_train);
  std::vector<Qwen3Layer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const bool moe = !s.moe_layers.empty() && s.moe_layers[static_cast<size_t>(i)] != 0;
    layers.push_back(qwen3_layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(cfg, i), moe));
  }
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);

  // The batch: input_ids, then (with images) mm_token_type_ids, pixel_values (the parameters' dtype: fp32 under
  // amp) and image_grid_thw (calibrate/harness_kinds/qwen3vl.py); generate() adds its position ids.
  const TensorId ids = b.input({B, L}, DType::i64);
  TensorId pixels = kNoTensor, grid = kNoTensor;
  if (images) {
    b.input({B, L}, DType::i64);
    pixels = b.input({im.patches, s.qwen3vl_in_channels * s.qwen3vl_temporal_patch * s.qwen3vl_patch * s.qwen3vl_patch},
                     b.param_dtype());
    grid = b.input({im.images, 3}, DType::i64);
  }
  if (inf && b.pass().from_generate) b.input({B, L}, DType::i64);
  // generate()'s mm_token_type_ids, grown by a zero column after every forward (_update_model_kwargs_for_generation)
  if (decode_after_images) b.input({B, b.pass().past_len + 1}, DType::i64);

  TensorId h = b.embedding(ids, embed);
  std::vector<TensorId> model_locals;  // bound in Qwen3VLModel.forward until it returns
  qwen3vl::VisionOut vis;
  TensorId visual_mask = kNoTensor;
  if (images) {
    b.hold(h);  // inputs_embeds until masked_scatter rebinds it
    vis = qwen3vl::vision_forward(b, s, vw, im, pixels, grid, s.num_layers);
    // image_embeds = torch.cat(split views, dim=0).to(inputs_embeds' dtype)
    TensorId img = b.cat_list("cat", {vis.merged}, 0);
    b.hold(img);
    const TensorId img_c = b.to(img, b.dtype(h));
    if (img_c != img) {
      b.drop(img);
      b.hold(img_c);
    }
    // get_placeholder_mask: input_ids == image_token_id (and == video_token_id), each [B, L, 1] bool.
    const TensorId image_mask = b.generic_one("eq", {ids}, {B, L, 1}, DType::boolean);
    b.hold(image_mask);
    const TensorId video_mask = b.generic_one("eq", {ids}, {B, L, 1}, DType::boolean);
    b.hold(video_mask);
    // inputs_embeds.masked_scatter(image_mask, image_embeds): a contiguous clone of inputs_embeds, then the CUDA
    // kernel's mask broadcast contiguous (bool, hidden-sized) and its int64 prefix sum over it. Backward:
    // grad.masked_fill(mask, 0) for inputs_embeds, grad.masked_select(mask) for the image embeddings.
    const int64_t n = checked_mul(checked_mul(B, L), H);
    const TensorId scattered =
        b.generic({"masked_scatter", {h, image_mask, img_c}, {{{B, L, H}, b.dtype(h)}}, {1}, {},
                   {n, checked_mul(n, int64_t{8})}, {checked_mul(checked_mul(im.tokens, H), int64_t{24})}})[0];
    b.drop(h);
    h = scattered;
    visual_mask = b.view(image_mask, {B, L});
    // get_rope_index: position_ids [3, B, L] int64 (zeros, filled per sample); generate() computed them before its
    // first forward (_prepare_position_ids_for_generation: the position input above).
    model_locals = {vis.last, vis.merged, img_c, image_mask, video_mask};
    if (!(inf && b.pass().from_generate)) {
      const TensorId position_ids = b.generic_one("rope_index", {ids}, {3, B, L}, DType::i64);
      b.hold(position_ids);
      model_locals.push_back(position_ids);
    }
    for (TensorId f : vis.deepstack) model_locals.push_back(f);
  } else if (!inf) {
    // Qwen3VLTextModel: torch.arange(L) + past_seen_tokens (0), expanded to [4, B, L] (views).
    const TensorId ar = b.generic_one("arange", {}, {L}, DType::i64);
    const TensorId pos = b.generic_one("add_scalar", {ar}, {L}, DType::i64);
    b.hold(pos);
    model_locals.push_back(pos);
  }
  const TensorId inputs_embeds = h;
  b.hold(inputs_embeds);  // the text model's argument, bound until it returns
  // create_causal_mask: SDPA skips a causal mask without padding; eager materialises the float mask.
  TensorId mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, L, L, b.dtype(h));
  } else {
    mask = inference_mask(b, 0, b.dtype(h));
  }
  const std::pair<TensorId, TensorId> cs = mrope_cos_sin(b, B, L, hd, b.dtype(h));
  const TensorId cos = cs.first, sin = cs.second;
  b.hold(cos);
  b.hold(sin);
  // `layer_outputs = decoder_layer(...)` keeps each layer's output bound until the next layer's output rebinds it
  // (or the model returns), past the deepstack rebinding of hidden_states (whole-run stream, 8B amp fp16 row).
  TensorId layer_outputs = kNoTensor;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Qwen3Layer& w = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = rms_norm(b, h, w.in_norm, false);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId a = qwen3_attention(b, s, w, n1, cos, sin, mask, 0, attn_weights);  // Qwen3VLTextAttention
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = rms_norm(b, h1, w.post_norm, false);
    b.hold(n2);
    TensorId m = w.moe ? qwen3_moe_block(b, s, w.ffn, n2) : swiglu_mlp(b, n2, w.ffn.gate, w.ffn.up, w.ffn.down);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
    if (layer_outputs != kNoTensor) b.drop(layer_outputs);
    layer_outputs = h;
    b.hold(layer_outputs);
    if (static_cast<size_t>(i) < vis.deepstack.size())
      h = deepstack_process(b, h, visual_mask, vis.deepstack[static_cast<size_t>(i)], im.tokens);
  }
  b.hold(h);
  const TensorId hn = rms_norm(b, h, norm_w, false);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, layer_outputs})
    if (t != kNoTensor) b.drop(t);
  for (TensorId t : model_locals) b.drop(t);
  for (TensorId t : vis.casts) b.drop(t);  // the autocast cache's entries for the unused mergers (at the loss)
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
