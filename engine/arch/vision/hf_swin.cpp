// SwinForImageClassification (transformers 5.17 models/swin/modeling_swin.py), training forward + cross entropy,
// and the inference forward. Not torchvision's Swin (swin.cpp): separate q / k / v projections, the attention
// interface (eager or sdpa) over a combined bias + shift mask, other Python bindings.
//   SwinEmbeddings: SwinPatchEmbeddings (no pad: the importer requires image_size % patch_size == 0; projection
//     Conv2d kernel = stride = patch; flatten(2).transpose(1, 2), a non-contiguous view), norm (LayerNorm on that
//     view: a contiguous copy inside), [+ position_embeddings], dropout.
//   SwinStage: SwinLayers, then SwinPatchMerging (all but the last stage), then get_reshaped_hidden_states: a
//     view(B, h, w, C).permute(0, 3, 1, 2).contiguous() copy of the stage's output, made whether or not hidden
//     states are asked for; SwinEncoder binds it (reshaped_hidden_state) until the next stage returns.
//   SwinLayer: window and shift clamped to the side when the side <= window_size (shift 0); shortcut = x;
//     layernorm_before; view(B, H, W, C); maybe_pad (F.pad, a copy even with zero padding; `hidden_states` keeps it
//     until the first residual sum rebinds it); window_partition(cyclic_shift(...)) (torch.roll over two dims: a
//     full-size intermediate, then the result; the partition transpose + contiguous, a copy); get_attn_mask (shifted
//     layers: [nW, N, N] in the stream's dtype from a few small index tensors); SwinAttention; dropout;
//     window_reverse (a copy); roll back; the crop [:, :H, :W].contiguous() when padded (a copy); shortcut +
//     drop_path(x); residual = x; layernorm_after; SwinMLP (fc1, gelu, fc2); dropout + residual.
//   SwinAttention: q / k / v projections (each viewed [BW, N, heads, hd].transpose(1, 2)); the relative position
//     bias table[index] (a gather), view, permute + contiguous (a copy) [1, heads, N, N]; shifted layers: the mask
//     unsqueezed, expanded to the batch and reshaped to [BW, 1, N, N] (a copy, bound until the attention returns),
//     combined_mask = bias + mask [BW, heads, N, N] (the bias alone otherwise); eager_attention_forward or
//     sdpa_attention_forward with that float mask; reshape; o_proj.
//   SwinModel: layernorm; AdaptiveAvgPool1d(1) over sequence_output.transpose(1, 2) (a mean); flatten. Head:
//     classifier -> ForSequenceClassificationLoss (cross entropy, mean).
// Python bindings (each tensor a Python name keeps alive past its last use):
//   - SwinModel.forward binds embedding_output until it returns; SwinEncoder's loop binds each stage's input until
//     the stage returns, and reshaped_hidden_state until the next stage returns.
//   - SwinStage.forward binds hidden_states_before_downsampling (its last layer's output) until it returns.
//   - SwinLayer.forward binds, until it returns: its input (shortcut), hidden_states_windows (the partition copy),
//     attn_mask, attention_output (o_proj's output), attn_weights (eager's probabilities), attention_windows (the
//     last of window_reverse / roll / crop) and residual.
//   - SwinAttention.forward binds query / key / value_states, relative_position_bias, the expanded mask and
//     combined_mask until it returns, after o_proj.
//   - SwinForImageClassification.forward keeps outputs (sequence_output, pooler_output) and the logits bound until
//     it returns, after the loss.
#include "engine/arch/builders.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/hf_swin_parts.h"
#include "engine/arch/vision/vision_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace hfswin {

// A new tensor of `shape` computed from x alone, whose backward writes a fresh x-sized gradient (pad, roll).
TensorId fresh(GraphBuilder& b, const char* name, TensorId x, Shape shape) {
  return b.generic({name, {x}, {{std::move(shape), b.dtype(x)}}, {}, {}, {}, {}})[0];
}

// torch.roll over dims (1, 2): ATen rolls one dim at a time, so the first dim's result is a full-size
// intermediate alive until the second roll has written the output, and the input lives until the call returns
// (whole-run checkpointed stream: input, intermediate, output, then the intermediate and the input freed);
// RollBackward rolls the gradient back the same way: intermediate, gradient, the intermediate freed, then the
// incoming gradient (the intermediate is replayed as an op of its own without a backward, the roll's
// backward intermediate as a pre-temporary).
TensorId roll2(GraphBuilder& b, TensorId x) {
  const Shape s = b.shape(x);
  b.hold(x);
  const TensorId first = b.generic_one("roll", {}, s, b.dtype(x));
  const TensorId out =
      b.generic({"roll", {x, first}, {{s, b.dtype(x)}}, {}, {}, {}, {}, {b.numel(x) * dtype_bytes(b.dtype(x))}})[0];
  b.drop(x);
  return out;
}

// get_attn_mask(height_pad, width_pad): the [nW, N, N] shift mask in `dt`, built from small index tensors. Each
// statement's temporaries die with it; only the result is returned.
TensorId shift_mask(GraphBuilder& b, int64_t pH, int64_t pW, int64_t ws, DType dt) {
  const int64_t nW = (pH / ws) * (pW / ws), N = ws * ws;
  auto op = [&](const char* name, std::vector<TensorId> reads, Shape s, DType d) {
    return b.generic_one(name, std::move(reads), std::move(s), d);
  };
  // h_region / w_region: arange, two comparisons (bool), .long() each, their sum.
  auto region = [&](int64_t n) {
    const TensorId idx = op("arange", {}, {n}, DType::i64);
    const TensorId a = op("long", {op("ge", {idx}, {n}, DType::boolean)}, {n}, DType::i64);
    const TensorId c = op("long", {op("ge", {idx}, {n}, DType::boolean)}, {n}, DType::i64);
    return op("add", {a, c}, {n}, DType::i64);
  };
  const TensorId hr = region(pH);
  const TensorId wr = region(pW);
  // (h_region[None, :, None, None] * 3 + w_region[None, None, :, None]).to(dtype)
  const TensorId h3 = op("mul_scalar", {hr}, {1, pH, 1, 1}, DType::i64);
  const TensorId img = op("to", {op("add", {h3, wr}, {1, pH, pW, 1}, DType::i64)}, {1, pH, pW, 1}, dt);
  // window_partition (a copy), view(-1, N), the unsqueeze difference.
  const TensorId windows = op("contiguous", {img}, {nW, N}, dt);
  const TensorId diff = op("sub", {windows}, {nW, N, N}, dt);
  // attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0): the difference stays bound to
  // attn_mask until the statement rebinds it.
  b.hold(diff);
  const TensorId ne = op("ne", {diff}, {nW, N, N}, DType::boolean);
  const TensorId fill1 = op("masked_fill", {diff, ne}, {nW, N, N}, dt);
  const TensorId eq = op("eq", {diff}, {nW, N, N}, DType::boolean);
  const TensorId out = op("masked_fill", {fill1, eq}, {nW, N, N}, dt);
  b.drop(diff);
  return out;
}

}  // namespace hfswin

namespace {

using hfswin::fresh;
using hfswin::roll2;
using hfswin::shift_mask;


struct Ln {
  TensorId w = kNoTensor, b = kNoTensor;
};
Ln make_ln(GraphBuilder& b, const std::string& name, int64_t c) {
  return {b.param(name + ".weight", {c}), b.param(name + ".bias", {c})};
}
struct Lin {
  TensorId w = kNoTensor, b = kNoTensor;
};
Lin make_lin(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool bias) {
  Lin l;
  l.w = b.param(name + ".weight", {out, in});
  if (bias) l.b = b.param(name + ".bias", {out});
  return l;
}
TensorId apply(GraphBuilder& b, const Lin& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct Layer {
  Lin q, k, v, o;
  TensorId table = kNoTensor, index = kNoTensor;  // relative_position_bias_table [T, heads], index buffer [N * N]
  Ln ln1, ln2;
  Lin fc1, fc2;
  int64_t heads = 1, shift = 0;  // shift as constructed (window_size // 2 on odd layers)
  double drop_path = 0.0;
};

struct Stage {
  std::vector<Layer> layers;
  bool merge = false;
  Lin reduction;
  Ln merge_ln;
};

// The fused SDPA of a float mask (memory-efficient attention: the kernel taking an additive bias, which may need
// a gradient): q, k, v [BW, heads, N, hd] and mask [M, heads or 1, N, N] broadcast to the query's batch.
// Training: the output and fp32 logsumexp; the node keeps q, k, v, the output, the logsumexp and the bias; its
// backward writes dq, dk, dv and, when the bias needs a gradient, a full [BW, heads, N, N] bias gradient (the add
// that made the mask reduces it back to the table), with the delta rows and a grad-output sized scratch.
TensorId sdpa_bias(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId mask) {
  // Autocast's casts are the call's arguments: the mask's 16-bit copy lives until the kernel returns.
  const TensorId mask_in = mask;
  mask = b.autocast_low(mask);
  const TensorId mask_cast = mask != mask_in ? mask : kNoTensor;
  if (mask_cast != kNoTensor) b.hold(mask_cast);
  v = b.autocast_low(v);
  k = b.autocast_low(k);
  q = b.autocast_low(q);
  const Shape qs = b.shape(q);
  const int64_t BW = qs[0], nh = qs[1], N = qs[2], hd = qs[3];
  const bool grad = b.training() && (b.info(q).requires_grad || b.info(k).requires_grad ||
                                     b.info(v).requires_grad || b.info(mask).requires_grad);
  if (grad) {
    // The top-level SDPA's preprocess_mask for this kernel: a bias whose row stride is not a multiple of 8
    // elements is padded (at::pad to the next multiple of 8, then sliced back: a copy the kernel reads and the
    // node keeps; not measured: the recorded window 12 has 144-element rows), then expanded to [BW, heads, N, N].
    // The backward writes the bias gradient at that expanded size (the non-shifted layers' [1, heads, N, N] bias
    // too: a full [BW, heads, N, N] block in the recording), which ExpandBackward sums back.
    if (N % 8 != 0) {
      Shape padded = b.shape(mask);
      padded.back() = (N + 7) / 8 * 8;
      const Shape ms = b.shape(mask);
      mask = b.view(b.generic_one("pad_bias", {mask}, padded, b.dtype(mask)), ms);
    }
    mask = b.expand(mask, {BW, nh, N, N});
  }
  GraphBuilder::GenericOp op{"sdpa_efficient", {q, k, v, mask}, {{{BW, nh, N, hd}, b.dtype(q)}}, {}, {}, {}, {}};
  if (grad) {
    // The logsumexp rows are padded to a multiple of 32 (kAlignLSE).
    op.outs.push_back({{BW, nh, (N + 31) / 32 * 32}, DType::f32});
    op.saved_reads = {0, 1, 2, 3};
    op.saved_outs = {0, 1};
    // Backward: dq, dk, dv, the bias gradient, then the delta rows [BW, heads, N] fp32 and the kernel's workspace.
    // 16-bit: an fp32 dq accumulator per (window, head) of ceil(N / 64) * 64 rows by the head dim rounded up to
    // 64, plus 48 B (whole-run bf16 stream, N 144, head dim 32: 88,166,400 B for 1,792 windows x heads, the same
    // 49,200 B each at every stage). fp32 (not measured with a bias): a grad-output sized scratch.
    const int64_t bh = BW * nh;
    const int64_t ws = b.dtype(q) == DType::f32 ? bh * N * hd * 4 + 24576
                                                : bh * ((N + 63) / 64 * 64 * ((hd + 63) / 64 * 64) * 4 + 48);
    op.bwd_temp_bytes = {bh * N * 4, ws};
  }
  const auto outs = b.generic(op);
  if (mask_cast != kNoTensor) b.drop(mask_cast);
  return outs[0];
}

// SwinAttention.forward on the windows x [BW, N, C]; `mask` the layer's attn_mask ([nW, N, N]) or kNoTensor.
// Returns o_proj's output; `weights` receives eager attention's probabilities (kNoTensor for sdpa).
TensorId swin_attention(GraphBuilder& b, const Layer& l, TensorId x, TensorId mask, TensorId& weights) {
  const bool eager = b.config().attn == AttnImpl::eager;
  const Shape xs = b.shape(x);
  const int64_t BW = xs[0], N = xs[1], C = xs[2], nh = l.heads, hd = C / nh;
  std::vector<TensorId> locals;  // bound until the attention returns
  auto local = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  auto heads = [&](const Lin& p) {
    const TensorId t = apply(b, p, x);
    return local(eager ? b.view_copying_grad(t, {BW, nh, N, hd}) : b.view(t, {BW, nh, N, hd}));
  };
  const TensorId q = heads(l.q);
  const TensorId k = heads(l.k);
  const TensorId v = heads(l.v);
  // relative_position_bias(): table[index] (IndexBackward scatters into a zero table-sized gradient), view,
  // permute(2, 0, 1).contiguous() (a copy), unsqueeze(0).
  const TensorId g = b.generic({"index", {l.table, l.index}, {{{N * N, nh}, b.dtype(l.table)}}, {1}, {}, {}, {}})[0];
  const TensorId bias = local(b.contiguous_copy(b.view(g, {nh, N, N}), {1, nh, N, N}));
  TensorId combined = bias;
  if (mask != kNoTensor) {
    // unsqueeze(1).unsqueeze(0).expand(B, ...).reshape(-1, 1, N, N): reshaping the expanded view copies it.
    const TensorId expanded = local(b.generic_one("reshape_copy", {mask}, {BW, 1, N, N}, b.dtype(mask)));
    combined = local(b.add(bias, expanded));
  }
  TensorId ctx;
  weights = kNoTensor;
  if (!eager) {
    // sdpa_attention_forward: F.scaled_dot_product_attention(q, k, v, attn_mask=combined, scale), then
    // transpose(1, 2).contiguous(): the memory-efficient kernel allocates its output [BW, N, heads, hd] and returns
    // it transposed, so the contiguous() is a view (whole-run bf16 checkpointed stream: no copy between the kernel's
    // output and o_proj's in the recompute).
    ctx = b.view(sdpa_bias(b, q, k, v, combined), {BW, N, nh, hd});
  } else {
    // eager_attention_forward: matmul(q, k.transpose(2, 3)) * scaling (matmul copies both head-split views),
    // + mask, softmax(dtype=float32).to(q.dtype), dropout (p = 0), matmul with v, transpose(1, 2).contiguous().
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {BW, nh, N, N}, true, true), false);
    b.hold(scores);  // attn_weights until the next statement rebinds it
    TensorId masked = b.add(scores, combined);
    b.drop(scores);
    b.hold(masked);  // attn_weights until the softmax statement rebinds it
    TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(q));
    b.drop(masked);
    weights = probs;
    b.hold(weights);  // returned to the layer (attn_weights)
    ctx = b.contiguous_copy(b.matmul(probs, v, {BW, nh, N, hd}, false, true), {BW, N, nh, hd}, /*grad_copied=*/true);
  }
  // attn_output.reshape(BW, N, -1).contiguous(): a view of the contiguous context; o_proj.
  const TensorId out = apply(b, l.o, b.view(ctx, {BW, N, C}));
  for (TensorId t : locals) b.drop(t);
  return out;
}

// SwinLayer.forward on h [B, H * W, C]; returns the layer's output. `weights_out`: eager's probabilities, which the
// stage keeps bound (last_attn_weights) until the next layer returns.
TensorId swin_layer(GraphBuilder& b, const TransformerSpec& s, const Layer& l, const std::string& name, bool ckpt,
                    TensorId h, int64_t H, int64_t W, TensorId& weights_out) {
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], C = hs[2];
  int64_t ws = s.swin_window_size, shift = l.shift;
  if (std::min(H, W) <= ws) {  // set_shift_and_window_size
    shift = 0;
    ws = std::min(H, W);
  }
  const int64_t pad_r = (ws - W % ws) % ws, pad_b = (ws - H % ws) % ws;
  const int64_t pH = H + pad_b, pW = W + pad_r, nW = (pH / ws) * (pW / ws), N = ws * ws, BW = B * nW;
  b.begin_layer(name, ckpt);
  std::vector<TensorId> locals;  // SwinLayer.forward's bindings, until it returns
  auto local = [&](TensorId t) {
    if (t != kNoTensor) {
      b.hold(t);
      locals.push_back(t);
    }
    return t;
  };
  const TensorId shortcut = local(h);
  TensorId x = b.view(b.layer_norm(h, l.ln1.w, l.ln1.b), {B, H, W, C});
  // maybe_pad: F.pad always runs (constant_pad_nd copies even with zero padding); `hidden_states` keeps the copy
  // until the first residual sum rebinds it.
  const TensorId padded = fresh(b, "constant_pad_nd", x, {B, pH, pW, C});
  b.hold(padded);
  x = shift > 0 ? roll2(b, padded) : padded;
  // window_partition: view, transpose(2, 3).contiguous() (its gradient comes back transposed: the view's backward
  // copies it), view(-1, N, C).
  const TensorId windows = local(b.contiguous_copy(x, {BW, N, C}, /*grad_copied=*/true));
  const TensorId mask = shift > 0 ? local(shift_mask(b, pH, pW, ws, b.dtype(padded))) : kNoTensor;
  TensorId weights = kNoTensor;
  const TensorId att = local(swin_attention(b, l, windows, mask, weights));
  local(weights);
  TensorId o = b.dropout(att, s.resid_dropout);
  // window_reverse: view, transpose(2, 3).contiguous() (a copy; its gradient copied back as the partition's).
  o = b.contiguous_copy(o, {B, pH, pW, C}, /*grad_copied=*/true);
  if (shift > 0) o = roll2(b, o);
  if (pad_r > 0 || pad_b > 0) {
    // [:, :H, :W, :].contiguous(): two slices (views) and a copy. Backward: the copy hands its gradient on, each
    // SliceBackward writes it into a zero-filled block of its input's size: [B, H, pW, C], then [B, pH, pW, C].
    const int64_t dt = dtype_bytes(b.dtype(o));
    const TensorId rows = b.view_copying_grad(o, {B, H, pW, C}, B * pH * pW * C * dt);
    const TensorId cols = b.view_copying_grad(rows, {B, H, W, C}, B * H * pW * C * dt);
    o = b.contiguous_copy(cols, {B, H, W, C});
  }
  const TensorId attention_windows = local(b.view(o, {B, H * W, C}));
  TensorId h1 = b.add(shortcut, hfbackbone::drop_path(b, attention_windows, l.drop_path));
  b.drop(padded);  // hidden_states rebound
  local(h1);       // residual
  TensorId m = b.layer_norm(h1, l.ln2.w, l.ln2.b);
  {
    const TensorId arg = m;  // SwinMLP's argument until it returns (in a checkpointed forward nothing else keeps it)
    b.hold(arg);
    m = apply(b, l.fc2, b.unary("gelu", apply(b, l.fc1, m), true, false));
    b.drop(arg);
  }
  m = b.dropout(m, s.resid_dropout);
  const TensorId out = b.add(m, h1);
  for (TensorId t : locals)
    if (t != weights) b.drop(t);
  b.end_layer();
  weights_out = weights;
  return out;
}

// SwinPatchMerging.forward on x [B, H * W, C] (H, W even: the importer's sides are halved exactly or padded
// below): view, the four strided slices (each two SliceBackward views: their gradients are zero-filled copies of
// the half- and then the full-size input), cat(-1), view, norm(4C), reduction.
TensorId patch_merging(GraphBuilder& b, const Stage& st, TensorId x, int64_t H, int64_t W) {
  b.hold(x);  // the module's argument (and the stage's hidden_states_before_downsampling) until it returns
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], C = xs[2];
  TensorId f = b.view(x, {B, H, W, C});
  int64_t pH = H, pW = W;
  if (H % 2 == 1 || W % 2 == 1) {  // maybe_pad
    pH = H + H % 2;
    pW = W + W % 2;
    f = fresh(b, "constant_pad_nd", f, {B, pH, pW, C});
  }
  const int64_t dt = dtype_bytes(b.dtype(f));
  std::vector<TensorId> parts;
  for (int i = 0; i < 4; ++i) {
    const TensorId rows = b.view_copying_grad(f, {B, pH / 2, pW, C}, B * pH * pW * C * dt);
    parts.push_back(b.view_copying_grad(rows, {B, pH / 2, pW / 2, C}, B * (pH / 2) * pW * C * dt));
  }
  TensorId c = b.cat_list("cat", parts, -1);
  c = b.view(c, {B, (pH / 2) * (pW / 2), 4 * C});
  c = b.layer_norm(c, st.merge_ln.w, st.merge_ln.b);
  const TensorId out = apply(b, st.reduction, c);
  b.drop(x);
  return out;
}

}  // namespace

void build_hf_swin(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)), "swin is modelled as its image classifier (no other head)");
  const auto& D = s.stage_depths;
  if (D.empty() || s.stage_widths.size() != D.size() || s.swin_stage_heads.size() != D.size() ||
      s.swin_stage_mlp.size() != D.size() || s.swin_window_size <= 0)
    throw InputError("config.depths", std::to_string(D.size()), "needs widths, heads and MLP widths per stage");
  const int64_t B = cfg.batch_size, R = s.image_size, P = s.patch_size, C = s.num_channels, NL = s.image_num_labels;
  const int64_t E = s.stage_widths[0], G = R / P, ws = s.swin_window_size;
  int64_t total = 0;
  for (int64_t d : D) total += d;

  hf_construction_scalar(b);
  // Parameters in the order they reach the GPU: model.to("cuda") (Module._apply) moves a module's children before
  // its own parameters, so SwinEmbeddings' position table follows its norm; built on the GPU it precedes it.
  const bool built_on_device = cfg.weights_load == WeightsLoad::on_device;
  const TensorId proj_w = b.param("swin.embeddings.patch_embeddings.projection.weight", {E, C, P, P});
  const TensorId proj_b = b.param("swin.embeddings.patch_embeddings.projection.bias", {E});
  TensorId pos = kNoTensor;
  if (s.swin_absolute_embeddings && built_on_device) pos = b.param("swin.embeddings.position_embeddings", {1, G * G, E});
  const Ln emb_ln = make_ln(b, "swin.embeddings.norm", E);
  if (s.swin_absolute_embeddings && !built_on_device) pos = b.param("swin.embeddings.position_embeddings", {1, G * G, E});
  std::vector<Stage> stages(D.size());
  int64_t id = 0;
  for (size_t i = 0; i < D.size(); ++i) {
    const int64_t c = s.stage_widths[i], nh = s.swin_stage_heads[i], mlp = s.swin_stage_mlp[i];
    const int64_t T = (2 * ws - 1) * (2 * ws - 1);
    const std::string p = "swin.encoder.layers." + std::to_string(i) + ".";
    for (int64_t j = 0; j < D[i]; ++j, ++id) {
      const std::string q = p + "blocks." + std::to_string(j) + ".";
      Layer l;
      l.heads = nh;
      l.shift = j % 2 == 0 ? 0 : ws / 2;
      l.drop_path = hfbackbone::block_drop_path(s.drop_path_rate, id, total);
      l.q = make_lin(b, q + "attention.q_proj", c, c, s.qkv_bias);
      l.k = make_lin(b, q + "attention.k_proj", c, c, s.qkv_bias);
      l.v = make_lin(b, q + "attention.v_proj", c, c, s.qkv_bias);
      l.o = make_lin(b, q + "attention.o_proj", c, c, true);
      l.table = b.param(q + "attention.relative_position_bias.relative_position_bias_table", {T, nh});
      l.index = b.buffer(q + "attention.relative_position_bias.relative_position_index", {ws * ws * ws * ws}, DType::i64);
      l.ln1 = make_ln(b, q + "layernorm_before", c);
      l.ln2 = make_ln(b, q + "layernorm_after", c);
      l.fc1 = make_lin(b, q + "mlp.fc1", mlp, c, true);
      l.fc2 = make_lin(b, q + "mlp.fc2", c, mlp, true);
      stages[i].layers.push_back(l);
    }
    if (i + 1 < D.size()) {
      stages[i].merge = true;
      stages[i].reduction = make_lin(b, p + "downsample.reduction", 2 * c, 4 * c, false);
      stages[i].merge_ln = make_ln(b, p + "downsample.norm", 4 * c);
    }
  }
  const int64_t F = s.stage_widths.back();
  const Ln final_ln = make_ln(b, "swin.layernorm", F);
  const TensorId cls_w = b.param("classifier.weight", {NL, F});
  const TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels (training).
  const TensorId x = b.input({B, C, R, R}, b.param_dtype());
  const TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;

  // SwinEmbeddings. The conv output's transposed view is what the norm reads (and saves).
  GraphBuilder::Conv2dArgs pa;
  pa.stride = P;
  const TensorId conv = b.conv2d_ex(x, proj_w, proj_b, pa);
  TensorId h;
  {
    const TensorId flat = b.view(conv, {B, G * G, E});
    b.hold(flat);  // the norm's argument until it returns
    h = b.layer_norm(flat, emb_ln.w, emb_ln.b, /*contiguous_copy=*/G * G > 1);
    b.drop(flat);
  }
  if (pos != kNoTensor) h = b.add(h, pos);
  h = b.dropout(h, s.embd_dropout);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // SwinModel.forward's binding, until it returns

  int64_t Hs = G, Ws = G;
  TensorId reshaped = kNoTensor;  // SwinEncoder's reshaped_hidden_state of the previous stage
  TensorId prev_weights = kNoTensor;
  id = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const Stage& st = stages[i];
    const TensorId stage_in = h;  // the encoder's loop variable and the stage's argument, until the stage returns
    b.hold(stage_in);
    TensorId weights = kNoTensor;
    for (size_t j = 0; j < st.layers.size(); ++j, ++id) {
      TensorId w = kNoTensor;
      h = swin_layer(b, s, st.layers[j], "swin.encoder.layers." + std::to_string(i) + ".blocks." + std::to_string(j),
                     layer_checkpointed(cfg, id), h, Hs, Ws, w);
      if (weights != kNoTensor) b.drop(weights);  // last_attn_weights rebound
      weights = w;
    }
    const TensorId before = h;  // hidden_states_before_downsampling, until the stage returns
    b.hold(before);
    int64_t h2 = Hs, w2 = Ws;
    if (st.merge) {
      h = patch_merging(b, st, before, Hs, Ws);
      h2 = (Hs + 1) / 2;
      w2 = (Ws + 1) / 2;
    }
    // get_reshaped_hidden_states: view(B, h, w, C).permute(0, 3, 1, 2).contiguous() of the stage's output.
    const int64_t cw = b.shape(h)[2];
    const TensorId r = b.contiguous_copy(b.view(h, {B, h2, w2, cw}), {B, cw, h2, w2});
    b.drop(before);
    b.drop(stage_in);
    if (reshaped != kNoTensor) b.drop(reshaped);  // the encoder's reshaped_hidden_state rebound
    if (prev_weights != kNoTensor) b.drop(prev_weights);  // the encoder's `_` rebound
    reshaped = r;
    b.hold(reshaped);
    prev_weights = weights;
    Hs = h2;
    Ws = w2;
  }
  // SwinModel: layernorm, then the pooler: AdaptiveAvgPool1d(1) of sequence_output.transpose(1, 2) is a mean
  // over the tokens ([B, C, 1, L] -> [B, C, 1, 1]); flatten(1). The encoder's outputs go when it returns.
  const TensorId last_hidden = h;
  b.hold(last_hidden);  // encoder_outputs until SwinModel.forward returns
  const TensorId seq = b.layer_norm(last_hidden, final_ln.w, final_ln.b);
  const int64_t L = Hs * Ws;
  const TensorId pooled = b.view(b.mean_hw(b.view(seq, {B, F, 1, L})), {B, F});
  b.drop(reshaped);
  if (prev_weights != kNoTensor) b.drop(prev_weights);
  b.drop(embedding_output);
  b.drop(last_hidden);
  hfbackbone::classifier_tail(b, {seq, pooled}, pooled, cls_w, cls_b, labels);
}

}  // namespace memplan
