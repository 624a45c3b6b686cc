// Qwen2VLForConditionalGeneration (transformers 5.17 models/qwen2_vl/modeling_qwen2_vl.py), and the parts
// Qwen2_5_VLForConditionalGeneration shares (qwen_vl_parts.h), as a training step with images, a text-only training
// step, or one text-only inference pass.
//   Qwen2VLModel.forward: inputs_embeds = embed_tokens(input_ids); with pixel_values, the vision tower
//     (Qwen2VisionTransformerPretrainedModel), its merged tokens split per image and torch.cat'ed back (.to the
//     embeddings' dtype: an fp32 copy under amp), the placeholder masks (input_ids == image / video token id), and
//     inputs_embeds.masked_scatter(image_mask, image_embeds); get_rope_index's 3-D positions [3, B, S] (int64);
//     then the text model (Qwen2's decoder layers with M-RoPE) and lm_head + ForCausalLMLoss.
//   Vision tower: PatchEmbed (Conv3d, kernel = stride = temporal x patch x patch, no bias) -> [N, width];
//     2-D rotary cos / sin [N, head_dim] fp32 (autocast off); depth x block (pre-norm attention with the rotary in
//     fp32 and one attention call per image frame (cu_seqlens), then the MLP); PatchMerger (norm, view [N / m^2,
//     m^2 * width], Linear, GELU, Linear).
//   Text: M-RoPE cos / sin [B, S, head_dim] from positions [3, B, S] (each third of the frequencies from the
//     temporal, height or width positions), then LlamaDecoderLayer's statements (llama_parts.h), the final norm.
// Python bindings that decide lifetimes:
//   - Qwen2VLModel.forward keeps image_embeds, image_mask, the video mask (`_`), inputs_embeds and position_ids
//     bound until it returns (after the text model); the first inputs_embeds (the embedding's output) is rebound
//     by masked_scatter, which saves only the mask.
//   - The vision forward keeps position_embeddings (cos, sin), cu_seqlens and the loop variable bound; each block
//     binds norm1's output until the attention returns; VisionAttention binds q / k / v, the per-frame outputs'
//     list and the cat until it returns; value_states is a view of qkv's output, so that output lives on.
#include "engine/arch/vlm/qwen_vl_parts.h"

#include <algorithm>
#include <string>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {
namespace qwenvl {

namespace {

// A kernel with no gradient: index arithmetic, masks, rotary tables (small tensors).
TensorId op0(GraphBuilder& b, std::string_view name, std::vector<TensorId> reads, Shape shape, DType dt) {
  return b.generic({name, std::move(reads), {{std::move(shape), dt}}, {}, {}, {}, {}})[0];
}

struct VisionBlockParams {
  TensorId n1w = kNoTensor, n1b = kNoTensor, n2w = kNoTensor, n2b = kNoTensor;
  TensorId qkv = kNoTensor, qkv_b = kNoTensor, proj = kNoTensor, proj_b = kNoTensor;
  // Qwen2-VL: fc1 / fc2 in gate / down (up unused); Qwen2.5-VL: gate / up / down.
  TensorId gate = kNoTensor, gate_b = kNoTensor, up = kNoTensor, up_b = kNoTensor, down = kNoTensor,
           down_b = kNoTensor;
};
struct VisionParams {
  TensorId patch = kNoTensor;
  std::vector<VisionBlockParams> blocks;
  TensorId ln_w = kNoTensor, ln_b = kNoTensor, fc1 = kNoTensor, fc1_b = kNoTensor, fc2 = kNoTensor,
           fc2_b = kNoTensor;
};

// model.visual's parameters in registration order: patch_embed.proj, each block (norm1, norm2, attn.qkv,
// attn.proj, mlp), merger (ln_q, mlp.0, mlp.2). `train`: false for a text-only step (no gradient reaches them, so
// AdamW keeps no state for them).
VisionParams vision_params(GraphBuilder& b, const TransformerSpec& s, const VisionVariant& v, bool train) {
  const int64_t E = s.vl_vision_width, I = s.vl_vision_mlp, m2 = s.vl_merge * s.vl_merge;
  VisionParams w;
  w.patch = b.param("visual.patch_embed.proj.weight",
                    {E, s.vl_in_channels, s.vl_temporal_patch, s.vl_patch, s.vl_patch}, train);
  w.blocks.reserve(static_cast<size_t>(s.vl_vision_depth));
  for (int64_t i = 0; i < s.vl_vision_depth; ++i) {
    const std::string p = "visual.blocks." + std::to_string(i) + ".";
    VisionBlockParams k;
    k.n1w = b.param(p + "norm1.weight", {E}, train);
    if (!v.v25) k.n1b = b.param(p + "norm1.bias", {E}, train);
    k.n2w = b.param(p + "norm2.weight", {E}, train);
    if (!v.v25) k.n2b = b.param(p + "norm2.bias", {E}, train);
    k.qkv = b.param(p + "attn.qkv.weight", {3 * E, E}, train);
    k.qkv_b = b.param(p + "attn.qkv.bias", {3 * E}, train);
    k.proj = b.param(p + "attn.proj.weight", {E, E}, train);
    k.proj_b = b.param(p + "attn.proj.bias", {E}, train);
    if (v.v25) {
      k.gate = b.param(p + "mlp.gate_proj.weight", {I, E}, train);
      k.gate_b = b.param(p + "mlp.gate_proj.bias", {I}, train);
      k.up = b.param(p + "mlp.up_proj.weight", {I, E}, train);
      k.up_b = b.param(p + "mlp.up_proj.bias", {I}, train);
      k.down = b.param(p + "mlp.down_proj.weight", {E, I}, train);
      k.down_b = b.param(p + "mlp.down_proj.bias", {E}, train);
    } else {
      k.gate = b.param(p + "mlp.fc1.weight", {I, E}, train);
      k.gate_b = b.param(p + "mlp.fc1.bias", {I}, train);
      k.down = b.param(p + "mlp.fc2.weight", {E, I}, train);
      k.down_b = b.param(p + "mlp.fc2.bias", {E}, train);
    }
    w.blocks.push_back(k);
  }
  w.ln_w = b.param("visual.merger.ln_q.weight", {E}, train);
  if (!v.v25) w.ln_b = b.param("visual.merger.ln_q.bias", {E}, train);
  w.fc1 = b.param("visual.merger.mlp.0.weight", {m2 * E, m2 * E}, train);
  w.fc1_b = b.param("visual.merger.mlp.0.bias", {m2 * E}, train);
  w.fc2 = b.param("visual.merger.mlp.2.weight", {s.vl_merger_out, m2 * E}, train);
  w.fc2_b = b.param("visual.merger.mlp.2.bias", {s.vl_merger_out}, train);
  return w;
}

// The attention segments (cu_seqlens / cu_window_seqlens) in patches, in the order the tower's rows hold them.
// Full attention: one per image frame (h * w). Qwen2.5-VL windows: per frame, the merged grid (h / m x w / m) cut
// into windows of `win` merged tokens a side (the last row / column of windows shorter), each window's merged
// tokens x m^2 patches; get_vision_window_index reorders the rows window by window.
std::vector<int64_t> segments(const TransformerSpec& s, const ImageBatch& ib, bool windows) {
  std::vector<int64_t> seg;
  const int64_t frames = ib.images * ib.t, m = s.vl_merge;
  if (!windows) {
    seg.assign(static_cast<size_t>(frames), ib.h * ib.w);
    return seg;
  }
  const int64_t win = s.vl_window_size / m / s.vl_patch, lh = ib.h / m, lw = ib.w / m;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t i = 0; i < lh; i += win)
      for (int64_t j = 0; j < lw; j += win) seg.push_back(std::min(win, lh - i) * std::min(win, lw - j) * m * m);
  return seg;
}

// quick_gelu (QuickGELUActivation): x * sigmoid(1.702 * x).
TensorId quick_gelu(GraphBuilder& b, TensorId x) {
  TensorId t = b.scalar_op("mul_scalar", x, false);
  TensorId sg = b.unary("sigmoid", t, false, true);
  return b.mul(x, sg);
}

// VisionAttention.forward (both variants) on the normed rows x [N, E] with one attention call per segment.
TensorId vision_attention(GraphBuilder& b, const TransformerSpec& s, const VisionBlockParams& w, TensorId x,
                          TensorId cos, TensorId sin, const std::vector<int64_t>& seg) {
  const int64_t N = b.shape(x)[0], E = s.vl_vision_width, nh = s.vl_vision_heads, hd = E / nh;
  const bool eager = b.config().attn == AttnImpl::eager;
  // qkv(x).reshape(N, 3, nh, hd).permute(1, 0, 2, 3).unbind(0): views; in backward unbind stacks the three
  // gradients (a fresh qkv-sized buffer) and the reshape copies the permuted stack back (another).
  const TensorId qkv = b.linear(x, w.qkv, w.qkv_b);
  const TensorId qkv4 = b.view_copying_grad(qkv, {N, 3, nh, hd});
  const auto parts = b.split(qkv4, 3, {N, nh, hd});
  TensorId q = parts[0], k = parts[1], v = parts[2];
  b.hold(v);  // value_states until the module returns
  b.hold(q);  // query_states / key_states until apply_rotary_pos_emb_vision returns
  b.hold(k);
  // apply_rotary_pos_emb_vision: q.float(), k.float() (copies unless fp32), then q_embed, k_embed in fp32,
  // each cast back to the input dtype; the fp32 locals die when it returns.
  const DType dt = b.dtype(q);
  const TensorId q32 = b.to(q, DType::f32), k32 = b.to(k, DType::f32);
  b.hold(q32);
  b.hold(k32);
  const TensorId qe32 = rope(b, q32, cos, sin);
  b.hold(qe32);
  const TensorId ke32 = rope(b, k32, cos, sin);
  b.hold(ke32);
  // `q_embed = q_embed.to(orig_q_dtype)` rebinds at once: the fp32 q_embed goes before k_embed's cast.
  const TensorId qe = b.to(qe32, dt);
  b.hold(qe);
  if (qe32 != qe) b.drop(qe32);
  const TensorId ke = b.to(ke32, dt);
  b.hold(ke);
  if (ke32 != ke) b.drop(ke32);
  for (TensorId t : {q32, k32, q, k})
    if (t != qe && t != ke) b.drop(t);
  // transpose(0, 1).unsqueeze(0): [1, nh, N, hd] views; torch.split over the segments (views whose backward
  // concatenates the gradients into a fresh full-size tensor).
  std::vector<Shape> shapes;
  for (int64_t n : seg) shapes.push_back({1, nh, n, hd});
  const auto qs = b.split(b.view(qe, {1, nh, N, hd}), shapes);
  const auto ks = b.split(b.view(ke, {1, nh, N, hd}), shapes);
  const auto vs = b.split(b.view(v, {1, nh, N, hd}), shapes);
  std::vector<TensorId> outs;
  outs.reserve(seg.size());
  for (size_t i = 0; i < seg.size(); ++i) {
    const int64_t n = seg[i];
    TensorId o;
    if (!eager) {
      // sdpa_attention_forward: not causal, no mask; the kernel's output is [1, n, nh, hd] in memory, so the
      // transpose(1, 2).contiguous() is a view.
      o = b.view(b.sdpa(qs[i], ks[i], vs[i], 0.0, false), {1, n, nh, hd});
    } else {
      // eager_attention_forward: matmul(q, k^T) * scaling (the [1, nh, n, hd] views reshape to bmm operands in
      // place), softmax(dtype=float32).to(q.dtype) in one statement, dropout(p=0) returns its input, matmul with
      // v, transpose(1, 2).contiguous() copies.
      TensorId scores = b.scalar_op("mul_scalar", b.matmul(qs[i], ks[i], {1, nh, n, n}), false);
      b.hold(scores);
      TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(qs[i]));
      b.drop(scores);
      // The [1, nh, n, hd] context's batch dim is 1: the gradient of the copy reaches the bmm as a view it takes
      // as it is (whole-run fp32 eager stream: no gradient copy).
      o = b.contiguous_copy(b.matmul(probs, vs[i], {1, nh, n, hd}), {1, n, nh, hd});
    }
    b.hold(o);  // attn_outputs (the list) until the module returns
    outs.push_back(o);
  }
  const TensorId cat = b.cat_list("cat", outs, 1);
  // attn_output.reshape(N, -1).contiguous(): a view; proj.
  const TensorId out = b.linear(b.view(cat, {N, E}), w.proj, w.proj_b);
  for (TensorId t : outs) b.drop(t);
  b.drop(qe);
  b.drop(ke);
  b.drop(v);
  return out;
}

// One vision block as layer `name`: h + attn(norm1(h)), then h + mlp(norm2(h)).
TensorId vision_block(GraphBuilder& b, const TransformerSpec& s, const VisionVariant& var, const VisionBlockParams& w,
                      const std::string& name, TensorId h, TensorId cos, TensorId sin,
                      const std::vector<int64_t>& seg) {
  b.begin_layer(name, b.config().grad_checkpointing);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the tower's loop variable until the block returns
  auto norm = [&](TensorId x, TensorId nw, TensorId nb) {
    return var.v25 ? rms_norm(b, x, nw) : b.layer_norm(x, nw, nb);
  };
  const TensorId n1 = norm(h, w.n1w, w.n1b);
  b.hold(n1);  // the attention's argument until it returns
  const TensorId a = vision_attention(b, s, w, n1, cos, sin, seg);
  b.drop(n1);
  const TensorId h1 = b.add(h, a);
  b.hold(h1);
  const TensorId n2 = norm(h1, w.n2w, w.n2b);
  b.hold(n2);  // the MLP's argument until it returns
  TensorId m;
  if (var.v25) {
    m = swiglu_mlp(b, n2, w.gate, w.up, w.down, w.gate_b, w.up_b, w.down_b);
  } else {
    m = b.linear(quick_gelu(b, b.linear(n2, w.gate, w.gate_b)), w.down, w.down_b);
  }
  b.drop(n2);
  const TensorId out = b.add(h1, m);
  b.drop(h1);
  b.drop(layer_in);
  b.end_layer();
  return out;
}

// get_vision_position_ids and get_vision_attention_seqlens: per image two aranges, the flattened block-major
// h / w positions (copies), their stack and its repeat over the frames, then the cat [N, 2]; the segment lengths'
// cumsum (int32) padded by one. Small int64 / int32 tensors; only the positions and cu_seqlens stay bound.
std::pair<TensorId, TensorId> vision_positions(GraphBuilder& b, const ImageBatch& ib, int64_t segments_count) {
  std::vector<TensorId> per_image;
  const int64_t hw = ib.h * ib.w;
  for (int64_t i = 0; i < ib.images; ++i) {
    TensorId ah = op0(b, "arange", {}, {ib.h}, DType::i64);
    TensorId aw = op0(b, "arange", {}, {ib.w}, DType::i64);
    TensorId hp = op0(b, "flatten", {ah}, {hw}, DType::i64);
    TensorId wp = op0(b, "flatten", {aw}, {hw}, DType::i64);
    TensorId st = op0(b, "stack", {hp, wp}, {hw, 2}, DType::i64);
    per_image.push_back(op0(b, "repeat", {st}, {ib.t * hw, 2}, DType::i64));
  }
  TensorId pos = b.cat_list("cat", per_image, 0);
  TensorId prod = op0(b, "mul", {}, {ib.images}, DType::i64);
  TensorId rep = op0(b, "repeat_interleave", {prod}, {segments_count}, DType::i64);
  TensorId cum = op0(b, "cumsum", {rep}, {segments_count}, DType::i32);
  TensorId cu = op0(b, "pad", {cum}, {segments_count + 1}, DType::i32);
  return {pos, cu};
}

// Qwen2VLVisionRotaryEmbedding.forward (autocast off): positions[..., None].float() [N, 2, 1], freqs = positions *
// inv_freq [N, 2, hd / 4], cos = freqs.cos() * scaling, sin likewise, each recomposed as cat(cat(h, w), cat(h, w))
// [N, hd] fp32 (cos first); returned in fp32.
std::pair<TensorId, TensorId> vision_rotary(GraphBuilder& b, TensorId pos, int64_t N, int64_t hd) {
  const int64_t q = hd / 4;
  TensorId pf = op0(b, "to_copy", {pos}, {N, 2, 1}, DType::f32);
  TensorId freqs = op0(b, "mul", {pf}, {N, 2, q}, DType::f32);
  b.hold(pf);
  b.hold(freqs);
  TensorId c0 = op0(b, "mul_scalar", {op0(b, "cos", {freqs}, {N, 2, q}, DType::f32)}, {N, 2, q}, DType::f32);
  b.hold(c0);
  TensorId s0 = op0(b, "mul_scalar", {op0(b, "sin", {freqs}, {N, 2, q}, DType::f32)}, {N, 2, q}, DType::f32);
  b.hold(s0);
  auto recompose = [&](TensorId f) {
    TensorId hw = op0(b, "cat", {f}, {N, 2 * q}, DType::f32);
    return op0(b, "cat", {hw}, {N, 4 * q}, DType::f32);
  };
  TensorId cos = recompose(c0);
  b.drop(c0);
  TensorId sin = recompose(s0);
  b.drop(s0);
  b.drop(freqs);
  b.drop(pf);
  return {cos, sin};
}

// The vision tower on pixel rows [N, C * T * P * P]: returns pooler_output, the merged tokens [tokens, H] in the
// image order (Qwen2.5-VL: after the reverse window permutation).
TensorId vision_tower(GraphBuilder& b, const TransformerSpec& s, const VisionVariant& var, const VisionParams& w,
                      TensorId pixels, const ImageBatch& ib) {
  const int64_t N = ib.patches, E = s.vl_vision_width, hd = E / s.vl_vision_heads, m2 = s.vl_merge * s.vl_merge;
  const std::vector<int64_t> full = segments(s, ib, false);
  const std::vector<int64_t> windows = var.v25 ? segments(s, ib, true) : std::vector<int64_t>{};
  auto [pos, cu] = vision_positions(b, ib, static_cast<int64_t>(full.size()));
  b.hold(pos);
  b.hold(cu);
  TensorId cu_win = kNoTensor, win_index = kNoTensor;
  if (var.v25) {  // get_vision_window_index: the index on the host, cu_window_seqlens copied to the device
    cu_win = op0(b, "tensor", {}, {static_cast<int64_t>(windows.size()) + 1}, DType::i32);
    cu_win = op0(b, "unique_consecutive", {cu_win}, {static_cast<int64_t>(windows.size()) + 1}, DType::i32);
    b.hold(cu_win);
  }
  // PatchEmbed: view(-1, C, T, P, P), .to(weight dtype) (no-op: the pixels come in the model's dtype), Conv3d
  // with kernel = stride (one output per patch), view(-1, E). Under autocast the pixels and the weight are cast.
  const TensorId xw = b.autocast_low(w.patch);
  const TensorId xc = b.autocast_low(pixels);
  // The weight gradient (the pixels need none) runs a cuDNN kernel whose workspace, allocated after the gradient
  // and freed at once, the whole-run streams give to the byte for 16-bit models with the published patch
  // geometry (3 x 2 x 14 x 14 -> 1280): 24,092,495 + 6272 x N bytes (N = 3400, 3744 bf16; 2816 fp16). Other
  // geometries and fp32 (one recorded point, another kernel) are left without it (notes-f21/qwen2vl.md).
  std::vector<int64_t> wgrad_ws;
  const bool published_patch = s.vl_in_channels == 3 && s.vl_temporal_patch == 2 && s.vl_patch == 14 && E == 1280;
  if (published_patch && b.dtype(xc) != DType::f32) wgrad_ws.push_back(checked_add(24092495, checked_mul(6272, N)));
  // cuDNN runs it, not cuBLAS: the forward thread's cuBLAS workspace comes at the first vision linear (whole-run
  // streams), so it is not a matmul op here (the step-time model costs it by its bytes).
  TensorId h = b.generic({"conv3d", {xc, xw}, {{{N, E}, b.dtype(xc)}}, {0, 1}, {}, {}, wgrad_ws})[0];
  if (var.v25) {  // permute_input_for_window_attn: a gather of merge-block rows by the window index
    win_index = op0(b, "to_device", {}, {N / m2}, DType::i64);
    h = b.generic_one("index", {h, win_index}, {N, E}, b.dtype(h), {1});
  }
  auto [cos, sin] = vision_rotary(b, pos, N, hd);
  if (var.v25) {  // a new tuple of the two gathers: the old one (cos, sin) is rebound only once both exist
    b.hold(cos);
    b.hold(sin);
    TensorId idx_c = op0(b, "to_device", {}, {N / m2}, DType::i64);
    TensorId c2 = op0(b, "index", {cos, idx_c}, {N, hd}, DType::f32);
    TensorId idx_s = op0(b, "to_device", {}, {N / m2}, DType::i64);
    TensorId s2 = op0(b, "index", {sin, idx_s}, {N, hd}, DType::f32);
    b.drop(cos);
    b.drop(sin);
    cos = c2;
    sin = s2;
  }
  b.hold(cos);  // position_embeddings until the tower returns
  b.hold(sin);
  const TensorId cos3 = b.view(cos, {N, 1, hd}), sin3 = b.view(sin, {N, 1, hd});  // unsqueeze(-2)
  for (int64_t i = 0; i < s.vl_vision_depth; ++i) {
    const bool full_att = !var.v25 || std::find(s.vl_fullatt_blocks.begin(), s.vl_fullatt_blocks.end(), i) !=
                                          s.vl_fullatt_blocks.end();
    h = vision_block(b, s, var, w.blocks[static_cast<size_t>(i)], "visual.blocks." + std::to_string(i), h, cos3,
                     sin3, full_att ? full : windows);
  }
  // PatchMerger: ln_q(x).view(-1, m^2 * E), Linear, GELU, Linear.
  b.hold(h);  // hidden_states (last_hidden_state) until the tower returns
  const TensorId ln = var.v25 ? rms_norm(b, h, w.ln_w) : b.layer_norm(h, w.ln_w, w.ln_b);
  // nn.Sequential.forward binds its argument (the norm's output viewed [N / m^2, m^2 * E]) until it returns
  // (whole-run amp stream: the fp32 norm output outlives the merger's two linears).
  const TensorId ln_view = b.view(ln, {N / m2, m2 * E});
  b.hold(ln_view);
  const TensorId mid = b.unary("gelu", b.linear(ln_view, w.fc1, w.fc1_b), true, false);
  TensorId merged = b.linear(mid, w.fc2, w.fc2_b);
  b.drop(ln_view);
  if (var.v25) {  // merged[argsort(window_index)]: the reverse gather (the index sorted on the host, then copied)
    TensorId rev = op0(b, "to_device", {}, {N / m2}, DType::i64);
    merged = b.generic_one("index", {merged, rev}, b.shape(merged), b.dtype(merged), {1});
  }
  for (TensorId t : {h, cos, sin, pos, cu, cu_win})
    if (t != kNoTensor) b.drop(t);
  return merged;
}

// Qwen2VLTextModel's rotary embedding (M-RoPE, autocast off): position_ids[:, :, None, :].float() [3, P, 1, S],
// inv_freq @ positions [3, P, hd / 2, S] (transposed: a view), cos = freqs.cos() * scaling and sin likewise, then
// sin and cos each recomposed (cat of the sections' slices [P, S, hd / 2], then cat with itself [P, S, hd]) and
// returned .to(x.dtype), cos first. Returns cos / sin viewed [P, 1, S, hd] (apply_rotary_pos_emb's unsqueeze).
std::pair<TensorId, TensorId> mrope_cos_sin(GraphBuilder& b, int64_t P, int64_t S, int64_t hd, DType out_dtype,
                                            TensorId positions) {
  const int64_t half = hd / 2;
  std::vector<TensorId> none;
  TensorId pf = op0(b, "to_copy", positions == kNoTensor ? none : std::vector<TensorId>{positions}, {3, P, 1, S},
                    DType::f32);
  TensorId freqs = op0(b, "matmul", {pf}, {3, P, half, S}, DType::f32);
  b.hold(pf);
  b.hold(freqs);
  TensorId c0 = op0(b, "mul_scalar", {op0(b, "cos", {freqs}, {3, P, S, half}, DType::f32)}, {3, P, S, half},
                    DType::f32);
  b.hold(c0);
  TensorId s0 = op0(b, "mul_scalar", {op0(b, "sin", {freqs}, {3, P, S, half}, DType::f32)}, {3, P, S, half},
                    DType::f32);
  b.hold(s0);
  auto recompose = [&](TensorId f) {
    TensorId sec = op0(b, "cat", {f}, {P, S, half}, DType::f32);
    return op0(b, "cat", {sec}, {P, S, hd}, DType::f32);
  };
  TensorId sin = recompose(s0);
  b.drop(s0);
  b.hold(sin);
  TensorId cos = recompose(c0);
  b.drop(c0);
  b.hold(cos);
  TensorId cos_o = b.to(cos, out_dtype);
  TensorId sin_o = b.to(sin, out_dtype);
  for (TensorId t : {pf, freqs, cos, sin})
    if (t != cos_o && t != sin_o) b.drop(t);
  return {b.view(cos_o, {P, 1, S, hd}), b.view(sin_o, {P, 1, S, hd})};
}

// get_rope_index for the harness's layout: zeros [3, B, S], then per sample the text runs' aranges [3, n] and
// each image's [3, tokens] positions, their cat [3, S] copied into the sample's row, and the deltas.
TensorId rope_index(GraphBuilder& b, const ImageBatch& ib, int64_t per_sample) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len;
  TensorId pos = op0(b, "zeros", {}, {3, B, S}, DType::i64);
  const int64_t tok = ib.tokens / std::max<int64_t>(ib.images, 1);
  std::vector<TensorId> deltas;
  for (int64_t i = 0; i < B; ++i) {
    std::vector<TensorId> runs;
    int64_t used = 0;
    // text run (prefix + vision_start), then per image: its positions and the text after it
    for (int64_t k = 0; k < per_sample; ++k) {
      const int64_t text = 4;  // the 3 prefix tokens + vision_start; then vision_end + 2 text + the next start
      runs.push_back(op0(b, "add", {op0(b, "arange", {}, {text}, DType::i64)}, {3, text}, DType::i64));
      runs.push_back(op0(b, "stack", {op0(b, "arange", {}, {tok}, DType::i64)}, {3, tok}, DType::i64));
      used += text + tok;
    }
    if (S > used)
      runs.push_back(op0(b, "add", {op0(b, "arange", {}, {S - used}, DType::i64)}, {3, S - used}, DType::i64));
    TensorId row = b.cat_list("cat", runs, 1);
    b.generic({"copy_", {pos, row}, {}, {}, {}, {}, {}});  // position_ids[:, i] = llm_positions (in place)
    deltas.push_back(op0(b, "max", {row}, {}, DType::i64));
  }
  TensorId d = op0(b, "tensor", deltas, {B}, DType::i64);
  b.hold(d);  // self.rope_deltas: kept by the model (until the next forward replaces it)
  return pos;
}

// Qwen2VLAttention.forward on the normed input x: q_proj, k_proj and v_proj first, then their head views
// (`.view(B, S, -1, hd).transpose(1, 2)`), where Llama's statements interleave projection and view: the views'
// backward nodes, newer than every projection's, run first (whole-run streams: q's gradient copy comes before the
// k / v projections' backward). Then Llama's rotary, attention and o_proj (llama_parts.h).
TensorId text_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x, TensorId cos,
                        TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = s.head_dim;
  const TensorId qp = b.linear(x, w.q, w.qb);
  const TensorId kp = b.linear(x, w.k, w.kb);
  const TensorId vp = b.linear(x, w.v, w.vb);
  // As llama_qkv_views: v's gradient arrives in its layout from the fused SDPA kernel only.
  const bool math_sdpa = b.dtype(qp) == DType::f32 && s.num_kv_heads != s.num_heads;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa;
  const TensorId q = b.view_copying_grad(qp, {B, s.num_heads, S, hd});
  const TensorId k = b.view_copying_grad(kp, {B, s.num_kv_heads, S, hd});
  const Shape vs{B, s.num_kv_heads, S, hd};
  const TensorId v = v_grad_in_layout ? b.view(vp, vs) : b.view_copying_grad(vp, vs);
  b.hold(v);  // value_states until the module returns (or the cache update rebinds it)
  b.hold(q);
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);
  // Eager: eager_attention_forward with torch.matmul's batch-1 views (llama_parts.h eager_attention_o_proj).
  if (cfg.attn == AttnImpl::eager) return eager_attention_o_proj(b, s, qe, ke, v, v, mask, 0, w.o, w.ob, weights);
  return attention_o_proj(b, s, qe, ke, v, v, mask, 0, w.o, w.ob, weights);
}

}  // namespace

ImageBatch image_batch(const GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  ImageBatch ib;
  if (cfg.images_per_sample == 0) return ib;
  if (cfg.image_grid.size() != 3)
    throw InputError("image_grid", "absent", "must be [t, h, w] when images_per_sample > 0");
  ib.t = cfg.image_grid[0];
  ib.h = cfg.image_grid[1];
  ib.w = cfg.image_grid[2];
  const int64_t m = s.vl_merge;
  if (ib.h % m != 0 || ib.w % m != 0)
    throw InputError("image_grid", "[" + std::to_string(ib.t) + ", " + std::to_string(ib.h) + ", " +
                                       std::to_string(ib.w) + "]",
                     "h and w must be multiples of spatial_merge_size (" + std::to_string(m) + ")");
  ib.images = checked_mul(cfg.batch_size, cfg.images_per_sample, "images");
  ib.patches = checked_mul(ib.images, checked_mul(ib.t, checked_mul(ib.h, ib.w, "image_grid"), "image_grid"),
                           "images x image_grid");
  ib.tokens = ib.patches / (m * m);
  const int64_t per_image = ib.t * ib.h * ib.w / (m * m);
  const int64_t need = 3 + cfg.images_per_sample * (per_image + 4);
  if (cfg.seq_len < need)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "is too short for " + std::to_string(cfg.images_per_sample) + " images of " +
                         std::to_string(per_image) + " tokens each (needs " + std::to_string(need) +
                         ": the harness's layout, calibrate/harness_kinds/qwen2vl.py)");
  return ib;
}

void build_qwen_vl(GraphBuilder& b, const TransformerSpec& s, const VisionVariant& var) {
  const auto& cfg = b.config();
  if (cfg.task != Task::lm)
    throw InputError("task", std::string(task_name(cfg.task)), "is not modelled for " + s.model_type);
  if (!cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing_layers", "set",
                     "is not modelled for " + s.model_type + " (the harness cannot find its decoder layers)");
  const ImageBatch ib = image_batch(b, s);
  // Serving with images: the prompt's forward (the measured prefill, generate()'s first) runs the vision tower;
  // generate() drops pixel_values from the decode steps (MULTIMODAL_INPUTS_TO_DROP_OUTSIDE_PREFILL), which take
  // their M-RoPE positions from the cached rope_deltas.
  const bool inf = !b.training(), images = ib.images > 0 && (!inf || b.pass().past_len == 0);
  const bool decode_after_images = inf && ib.images > 0 && !images;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;

  hf_construction_scalar(b);
  // Parameters in registration order: model.visual, model.language_model (embed_tokens, layers, norm), lm_head.
  const VisionParams vp = vision_params(b, s, var, b.training() && images);
  const TensorId embed = b.param("embed_tokens.weight", {s.vocab_size, H}, emb_train);
  std::vector<LlamaDecoderParams> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(llama_decoder_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(cfg, i)));
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);

  // The batch, as the harness plugin draws it: input_ids, then mm_token_type_ids, pixel_values, image_grid_thw.
  const TensorId ids = b.input({B, S}, DType::i64);
  TensorId pixels = kNoTensor;
  if (images) {
    b.input({B, S}, DType::i64);
    pixels = b.input({ib.patches, s.vl_in_channels * s.vl_temporal_patch * s.vl_patch * s.vl_patch},
                     b.param_dtype());
    b.input({ib.images, 3}, DType::i64);
  }
  const bool gen = inf && b.pass().from_generate;
  if (gen) b.input({4, B, S}, DType::i64);  // generate()'s [4, B, S] position_ids (text row + M-RoPE rows)
  // generate()'s mm_token_type_ids, grown by a zero column after every forward (_update_model_kwargs_for_generation)
  if (decode_after_images) b.input({B, b.pass().past_len + 1}, DType::i64);

  TensorId h = b.embedding(ids, embed);
  std::vector<TensorId> model_locals;
  TensorId positions = kNoTensor;
  if (images) {
    const TensorId merged = vision_tower(b, s, var, vp, pixels, ib);
    // torch.split per image (views), torch.cat back (a copy), .to(inputs_embeds.dtype).
    std::vector<Shape> per;
    for (int64_t i = 0; i < ib.images; ++i) per.push_back({ib.tokens / ib.images, H});
    const auto splits = b.split(merged, per);
    TensorId img = b.cat_list("cat", splits, 0);
    img = b.to(img, b.dtype(h));
    b.hold(img);
    model_locals.push_back(img);
    // get_placeholder_mask: input_ids == image_token_id and == video_token_id (bool [B, S]), their counts.
    const TensorId im = op0(b, "eq", {ids}, {B, S}, DType::boolean);
    b.hold(im);
    op0(b, "sum", {im}, {}, DType::i64);
    const TensorId vm = op0(b, "eq", {ids}, {B, S}, DType::boolean);
    b.hold(vm);
    op0(b, "sum", {vm}, {}, DType::i64);
    model_locals.push_back(im);
    model_locals.push_back(vm);
    // inputs_embeds.masked_scatter(image_mask, image_embeds): a fresh [B, S, H]; saves the mask. The CUDA kernel
    // takes an int64 prefix sum over the broadcast mask [B, S, H] and a contiguous bool copy of it, freed before
    // the statement rebinds inputs_embeds (whole-run streams: 8 + 1 bytes per element after the output). Its
    // backward writes grad.masked_fill(mask, 0) for the embeddings, then masked_select's [tokens * H] for the
    // image rows, whose index() runs nonzero over the broadcast mask: a bool copy and the int64 [tokens * H, 3]
    // coordinates, alive while the gradients are computed.
    const TensorId old = h;
    b.hold(old);
    const int64_t bsh = checked_mul(checked_mul(B, S, "batch"), H, "batch"), nnz = checked_mul(ib.tokens, H, "tokens");
    h = b.generic({"masked_scatter", {h, im, img}, {{{B, S, H}, b.dtype(h)}}, {1}, {}, {}, {},
                   {bsh, checked_mul(nnz, 24, "tokens")}})[0];
    const TensorId prefix = op0(b, "mask_prefix_sum", {}, {bsh}, DType::i64);
    op0(b, "mask_contiguous", {prefix}, {bsh}, DType::boolean);
    b.drop(old);
    if (!gen) {  // compute_3d_position_ids -> get_rope_index; generate() computed them before its first forward
      positions = rope_index(b, ib, cfg.images_per_sample);
      b.hold(positions);
      model_locals.push_back(positions);
    }
  }
  const TensorId inputs_embeds = h;
  b.hold(inputs_embeds);  // bound in Qwen2VLModel.forward and the text model until they return

  TensorId mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, S, S, b.dtype(h));
  } else {
    mask = inference_mask(b, 0, b.dtype(h));
  }
  if (mask != kNoTensor) b.hold(mask);
  const int64_t P = B;  // M-RoPE positions are [3, B, S]: expanded from one arange, or get_rope_index's
  const std::pair<TensorId, TensorId> cs = mrope_cos_sin(b, P, S, hd, b.dtype(h), positions);
  const TensorId cos = cs.first, sin = cs.second;
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const LlamaDecoderParams& d = layers[static_cast<size_t>(i)];
    h = llama_decoder_layer(b, s, i, d, h, inputs_embeds, [&](TensorId x, TensorId& weights) {
      return text_attention(b, s, d.attn, x, cos, sin, mask, weights);
    });
  }
  b.hold(h);
  const TensorId hn = rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  for (TensorId t : model_locals) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace qwenvl

void build_qwen2_vl(GraphBuilder& b, const TransformerSpec& s) { qwenvl::build_qwen_vl(b, s, {false}); }

}  // namespace memplan
