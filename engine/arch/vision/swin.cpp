// torchvision Swin Transformer V1 / V2 (torchvision/models/swin_transformer.py), training forward + cross entropy.
//   features.0: Conv2d 4x4/4 (bias), Permute(0, 2, 3, 1) (not contiguous: LayerNorm works on a copy), LayerNorm.
//   Stages of SwinTransformerBlock(V2) with PatchMerging(V2) between them; norm, Permute(0, 3, 1, 2),
//   AdaptiveAvgPool2d(1) (a mean), Flatten, head.
//   V1 block: x = x + sd(attn(norm1(x))); x = x + sd(mlp(norm2(x))) (out-of-place adds).
//   V2 block: x = x + sd(norm1(attn(x))); x = x + sd(norm2(mlp(x))).
//   MLP (torchvision.ops.MLP): Linear 4x, GELU, Dropout(0) (returns its input), Linear, Dropout(0).
//   shifted_window_attention: F.pad (constant_pad_nd clones even with zero padding; its backward pads the
//   gradient back: a fresh copy); torch.roll when shifted (a new tensor; backward rolls back: fresh); the window
//   partition view/permute/reshape (a copy; its gradient comes back permuted, so the view's backward copies it);
//   qkv Linear; q, k, v are views of it. V1: q * scale (new), q @ k^T (matmul copies k's transposed view);
//   V2: F.normalize(q), F.normalize(k) (norm fp32-policy, clamp_min, div), cosine logits, * exp(clamp(
//   logit_scale)). + relative position bias [1, nH, N, N] (an fp32 parameter gather: under autocast the sum is
//   fp32), + the shifted-window mask [nW, N, N] (fp32), softmax, attn @ v, transpose + reshape (a copy), proj
//   Linear, the window-merge permute + reshape (a copy), roll back, the crop (`.contiguous()` of the whole
//   tensor when nothing was padded: no copy).
//   Relative position bias: V1 table[index] (a gather), view, permute + contiguous (a copy); V2 cpb_mlp
//   (Linear 2 -> 512, ReLU(inplace), Linear 512 -> nH) over the coords table, the same gather, 16 * sigmoid.
//   PatchMerging: F.pad (clone), four strided slices, torch.cat (-1), then V1 norm(4C) + reduction, V2 reduction
//   + norm(2C).
// Inference (Python bindings, vision_parts.h): shifted_window_attention's locals q (V1: the scaled copy), k and
// v (views of qkv), the final attn (the softmax output), attn_mask, the V2 qkv_bias clone and the relative
// position bias (ShiftedWindowAttention.forward's argument) all live until the function returns, as does its
// input (the module's argument); a block's input lives through the block (the stage's nn.Sequential holds it),
// a stage's input through the stage, PatchMerging's input through its norm and reduction.
#include <cmath>

#include "engine/arch/vision/vision_parts.h"

namespace memplan {

using namespace vision;

namespace {
struct Ln {
  TensorId w, b;
};
Ln make_ln(GraphBuilder& b, const std::string& name, int64_t c) {
  return {b.param(name + ".weight", {c}), b.param(name + ".bias", {c})};
}
// nn.LayerNorm: its argument lives until it returns, past autocast's fp32 cast of it (inference: the stem's permuted
// conv output stays allocated through the norm, whole-run amp_fp16 stream).
TensorId ln(GraphBuilder& b, const Ln& l, TensorId x, bool copy = false) {
  ModuleCall call(b, x);
  return b.layer_norm(x, l.w, l.b, copy);
}

struct Attn {
  TensorId qkv_w, qkv_b, proj_w, proj_b;
  TensorId table = kNoTensor;                    // v1 relative_position_bias_table
  TensorId logit_scale = kNoTensor, cpb1_w = kNoTensor, cpb1_b = kNoTensor, cpb2_w = kNoTensor;  // v2
  TensorId coords = kNoTensor, index = kNoTensor;  // buffers
};

struct Block {
  Ln n1, n2;
  Attn a;
  TensorId m1w, m1b, m2w, m2b;
  int64_t heads = 1, shift = 0;
  double sd = 0;
};

// A new tensor of `shape` computed from x alone, backward a fresh x-sized gradient (roll, pad, index gathers).
TensorId fresh(GraphBuilder& b, const char* name, TensorId x, Shape shape, std::vector<int> saved = {}) {
  return b.generic({name, {x}, {{std::move(shape), b.dtype(x)}}, std::move(saved), {}, {}, {}})[0];
}

// `x = torch.roll(x, shifts=(a, b), dims=(1, 2))`. ATen rolls a multi-dim shift one dim at a time: the first
// dim's result is a full-size intermediate, alive until the second roll has written the output; x is freed
// when the statement rebinds it, after both. Inference only: the training builder keeps the single roll its
// measured rows were matched with (the intermediate is transient there too, not modelled).
TensorId roll2(GraphBuilder& b, TensorId x) {
  const Shape s = b.shape(x);
  if (b.training()) return fresh(b, "roll", x, s);
  ModuleCall rebind(b, x);
  const TensorId first = fresh(b, "roll", x, s);
  return fresh(b, "roll", first, s);
}

// The relative position bias [1, nH, N, N] of one attention module.
TensorId position_bias(GraphBuilder& b, const Attn& a, bool v2, int64_t ws, int64_t heads) {
  const int64_t N = ws * ws, T = (2 * ws - 1) * (2 * ws - 1);
  TensorId table = a.table;
  if (v2) {
    TensorId h = b.linear(a.coords, a.cpb1_w, a.cpb1_b);
    h = b.inplace("relu_", h, true);
    table = b.view(b.linear(h, a.cpb2_w), {T, heads});
  }
  // table[index]: index is an int64 [N*N] buffer; IndexBackward scatters into a zero table-sized gradient.
  TensorId g = b.generic({"index", {table, a.index}, {{{N * N, heads}, b.dtype(table)}}, {1}, {}, {}, {}})[0];
  TensorId bias = b.contiguous_copy(b.view(g, {heads, N, N}), {1, heads, N, N});
  if (v2) {
    bias = b.unary("sigmoid", bias, false, true);
    bias = b.scalar_op("mul_scalar", bias, false);
  }
  return bias;
}

// Inference: the statements that build attn_mask, each allocation as it happens (small-pool blocks, which set how
// many 2 MiB segments the small pool needs): x.new_zeros((pH, pW)); the window permute + reshape to [nW, N] (a copy;
// the zeros die on the rebind); the unsqueeze difference [nW, N, N] (the copy dies); then
// `attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0)`: a bool mask, an out-of-place
// fill (its clone), the first bool dropped, a second bool, the second fill; the first fill and the second bool die
// with the statement, the difference on the rebind. The training builder keeps the one [nW, N, N] tensor its rows
// were matched with.
TensorId shift_mask(GraphBuilder& b, int64_t pH, int64_t pW, int64_t ws, DType dt) {
  const int64_t nW = (pH / ws) * (pW / ws), N = ws * ws;
  const TensorId zeros = b.generic_one("new_zeros", {}, {pH, pW}, dt);
  const TensorId rows = b.generic_one("reshape_copy", {zeros}, {nW, N}, dt);
  const TensorId diff = b.generic_one("sub", {rows}, {nW, N, N}, dt);
  ModuleCall statement(b, diff);  // bound to attn_mask until the statement rebinds it
  const TensorId ne = b.generic_one("ne", {diff}, {nW, N, N}, DType::boolean);
  const TensorId fill1 = b.generic_one("masked_fill", {diff, ne}, {nW, N, N}, dt);
  const TensorId eq = b.generic_one("eq", {diff}, {nW, N, N}, DType::boolean);
  return b.generic_one("masked_fill", {fill1, eq}, {nW, N, N}, dt);
}

TensorId window_attention(GraphBuilder& b, const Attn& a, TensorId x, bool v2, int64_t ws, int64_t heads,
                          int64_t shift_cfg) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], H = xs[1], W = xs[2], C = xs[3], hd = C / heads;
  const int64_t pad_r = (ws - W % ws) % ws, pad_b = (ws - H % ws) % ws;
  const int64_t pH = H + pad_b, pW = W + pad_r;
  int64_t shift_h = ws >= pH ? 0 : shift_cfg, shift_w = ws >= pW ? 0 : shift_cfg;
  const bool shifted = shift_h + shift_w > 0;
  const int64_t nW = (pH / ws) * (pW / ws), N = ws * ws, BW = B * nW;
  ModuleCall call(b, x);  // the attention module's argument
  std::vector<TensorId> locals;  // inference: shifted_window_attention's locals, alive until it returns
  const auto local = [&](TensorId t) {
    if (!b.training()) {
      b.hold(t);
      locals.push_back(t);
    }
    return t;
  };
  TensorId bias = local(position_bias(b, a, v2, ws, heads));
  TensorId h = fresh(b, "constant_pad_nd", x, {B, pH, pW, C});
  if (shifted) h = roll2(b, h);
  h = b.contiguous_copy(h, {BW, N, C}, /*grad_copied=*/true);
  // shifted_window_attention binds the partitioned windows to x until `x = attn.matmul(v)...` rebinds it (under
  // autocast the linear saves its bf16 cast, so the fp32 windows outlive it only through the variable).
  b.hold(h);
  TensorId qkv_b = a.qkv_b;
  if (v2) qkv_b = local(fresh(b, "clone", a.qkv_b, b.shape(a.qkv_b)));  // qkv_bias.clone(), middle third zeroed
  TensorId qkv = local(b.linear(h, a.qkv_w, qkv_b));  // k and v, its views, are never rebound
  std::vector<TensorId> parts = b.split(qkv, 3, {BW, heads, N, hd});
  TensorId q = parts[0], k = parts[1], v = parts[2];
  TensorId attn;
  if (v2) {
    const auto normalize = [&](TensorId t) {
      TensorId n;
      if (b.autocast() && b.dtype(t) != DType::f32) {
        // F.normalize -> Tensor.norm -> linalg_vector_norm, an autocast fp32_set_opt_dtype op: it reads the
        // bf16 / fp16 q (a view of qkv) with dtype=float32, so no fp32 copy of q exists; the fp32 [..., 1] norm
        // and the input are saved (whole-run stream vreq-swin_v2_t amp: two 0.75 MiB norms per attention, no
        // q-sized cast). Its backward forms self * (grad / norm) in fp32 before the cast to q's dtype.
        Shape ns = b.shape(t);
        ns.back() = 1;
        n = b.generic({"linalg_vector_norm", {t}, {{ns, DType::f32}}, {0}, {0}, {}, {b.numel(t) * 4}})[0];
      } else {
        n = b.reduce_last("linalg_vector_norm", b.autocast_fp32(t), true);
      }
      n = b.scalar_op("clamp_min", n, true);
      return b.binary("div", t, n, true, true);
    };
    TensorId nq = normalize(q), nk = normalize(k);
    // Both normalized temporaries live until the `@` expression returns (the stream frees them after the
    // matmul's own casts).
    b.hold(nq);
    b.hold(nk);
    attn = b.matmul(nq, nk, {BW, heads, N, N}, true, true);
    b.drop(nq);
    b.drop(nk);
    TensorId ls = local(b.unary("exp", b.scalar_op("clamp", a.logit_scale, true), false, true, true));
    attn = b.mul(attn, ls);
  } else {
    q = local(b.scalar_op("mul_scalar", q, false));
    attn = b.matmul(q, k, {BW, heads, N, N}, true, true);
  }
  attn = b.add(attn, bias);
  if (shifted) {
    // attn_mask: built from x.new_zeros in x's dtype, [nW, N, N] after the unsqueeze difference and two
    // masked_fills; added batch- and head-broadcast.
    TensorId m = b.training() ? b.generic({"attn_mask", {}, {{{nW, N, N}, b.dtype(h)}}, {}, {}, {}, {}})[0]
                              : local(shift_mask(b, pH, pW, ws, b.dtype(h)));
    attn = b.view(b.add(b.view(attn, {B, nW, heads, N, N}), b.view(m, {1, nW, 1, N, N})), {BW, heads, N, N});
  }
  attn = local(b.softmax_last(attn));
  TensorId o = b.matmul(attn, v, {BW, heads, N, hd}, false, true);
  o = b.contiguous_copy(o, {BW, N, C});
  b.drop(h);
  o = b.linear(o, a.proj_w, a.proj_b);
  o = b.contiguous_copy(o, {B, pH, pW, C}, /*grad_copied=*/true);
  if (shifted) o = roll2(b, o);
  if (pad_r > 0 || pad_b > 0) o = b.contiguous_copy(o, {B, H, W, C});
  for (TensorId t : locals) b.drop(t);
  call.end();
  return o;
}

TensorId patch_merging(GraphBuilder& b, TensorId x, const Ln& norm, TensorId red, bool v2) {
  ModuleCall call(b, x);  // its input lives through the norm and the reduction
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], H = xs[1], W = xs[2], C = xs[3];
  const int64_t pH = H + H % 2, pW = W + W % 2;
  TensorId p = fresh(b, "constant_pad_nd", x, {B, pH, pW, C});
  TensorId q = b.view(p, {B, pH / 2, pW / 2, C});  // the four strided slices are views
  TensorId c = b.cat("cat", {q, q, q, q}, -1);
  if (v2) return ln(b, norm, b.linear(c, red));
  return b.linear(ln(b, norm, c), red);
}
}  // namespace

void build_swin(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  const bool v2 = s.v2;
  const int64_t E = s.stage_channels.at(0), ws = s.window_size, nst = static_cast<int64_t>(s.blocks_per_stage.size());
  if (s.stage_heads.size() != s.blocks_per_stage.size())
    throw InputError("model.stage_heads", std::to_string(s.stage_heads.size()), "needs one head count per stage");
  TensorId stem_w = b.param("features.0.0.weight", {E, 3, 4, 4}), stem_b = b.param("features.0.0.bias", {E});
  Ln stem_ln = make_ln(b, "features.0.2", E);
  int64_t total = 0;
  for (int64_t d : s.blocks_per_stage) total += d;
  std::vector<std::vector<Block>> stages;
  std::vector<std::pair<Ln, TensorId>> merges;  // norm, reduction weight
  const int64_t N = ws * ws, T = (2 * ws - 1) * (2 * ws - 1);
  int64_t id = 0, idx = 1;
  for (int64_t st = 0; st < nst; ++st, ++idx) {
    const int64_t dim = E << st, heads = s.stage_heads[static_cast<size_t>(st)];
    std::vector<Block> blocks;
    for (int64_t j = 0; j < s.blocks_per_stage[static_cast<size_t>(st)]; ++j, ++id) {
      const std::string p = "features." + std::to_string(idx) + "." + std::to_string(j) + ".";
      Block blk;
      blk.heads = heads;
      blk.shift = j % 2 == 0 ? 0 : ws / 2;
      blk.sd = total > 1 ? s.stochastic_depth_prob * static_cast<double>(id) / static_cast<double>(total - 1) : 0;
      blk.n1 = make_ln(b, p + "norm1", dim);
      Attn& a = blk.a;
      a.qkv_w = b.param(p + "attn.qkv.weight", {3 * dim, dim});
      a.qkv_b = b.param(p + "attn.qkv.bias", {3 * dim});
      a.proj_w = b.param(p + "attn.proj.weight", {dim, dim});
      a.proj_b = b.param(p + "attn.proj.bias", {dim});
      if (v2) {
        a.coords = b.buffer(p + "attn.relative_coords_table", {1, 2 * ws - 1, 2 * ws - 1, 2}, DType::f32);
        a.index = b.buffer(p + "attn.relative_position_index", {N * N}, DType::i64);
        a.logit_scale = b.param(p + "attn.logit_scale", {heads, 1, 1});
        a.cpb1_w = b.param(p + "attn.cpb_mlp.0.weight", {512, 2});
        a.cpb1_b = b.param(p + "attn.cpb_mlp.0.bias", {512});
        a.cpb2_w = b.param(p + "attn.cpb_mlp.2.weight", {heads, 512});
      } else {
        a.table = b.param(p + "attn.relative_position_bias_table", {T, heads});
        a.index = b.buffer(p + "attn.relative_position_index", {N * N}, DType::i64);
      }
      blk.n2 = make_ln(b, p + "norm2", dim);
      blk.m1w = b.param(p + "mlp.0.weight", {4 * dim, dim});
      blk.m1b = b.param(p + "mlp.0.bias", {4 * dim});
      blk.m2w = b.param(p + "mlp.3.weight", {dim, 4 * dim});
      blk.m2b = b.param(p + "mlp.3.bias", {dim});
      blocks.push_back(blk);
    }
    stages.push_back(blocks);
    if (st + 1 < nst) {
      ++idx;
      const std::string p = "features." + std::to_string(idx) + ".";
      TensorId red = b.param(p + "reduction.weight", {2 * dim, 4 * dim});
      merges.push_back({make_ln(b, p + "norm", v2 ? 2 * dim : 4 * dim), red});
    }
  }
  const int64_t F = E << (nst - 1);
  Ln norm = make_ln(b, "norm", F);
  TensorId hw = b.param("head.weight", {s.num_classes, F}), hb = b.param("head.bias", {s.num_classes});

  GraphBuilder::Conv2dArgs stem_args;
  stem_args.stride = 4;
  TensorId h = b.conv2d_ex(x, stem_w, stem_b, stem_args);
  {
    const Shape hs = b.shape(h);
    h = ln(b, stem_ln, b.view(h, {hs[0], hs[2], hs[3], hs[1]}), /*copy=*/true);
  }
  for (int64_t st = 0; st < nst; ++st) {
    ModuleCall stage_call(b, h);  // features.<2 st + 1> (an nn.Sequential): its input lives through the stage
    for (size_t j = 0; j < stages[static_cast<size_t>(st)].size(); ++j) {
      const Block& blk = stages[static_cast<size_t>(st)][j];
      b.begin_layer("features." + std::to_string(2 * st + 1) + "." + std::to_string(j), false);
      ModuleCall block_call(b, h);  // the block's input, until it returns
      TensorId a = v2 ? ln(b, blk.n1, window_attention(b, blk.a, h, true, ws, blk.heads, blk.shift))
                      : window_attention(b, blk.a, ln(b, blk.n1, h), false, ws, blk.heads, blk.shift);
      h = b.add(h, stochastic_depth(b, a, blk.sd));
      TensorId m = v2 ? h : ln(b, blk.n2, h);
      {
        ModuleCall mlp_call(b, m);  // the MLP's argument (V1: norm2's output) lives through the MLP
        m = b.linear(b.unary("gelu", b.linear(m, blk.m1w, blk.m1b), true, false), blk.m2w, blk.m2b);
      }
      if (v2) m = ln(b, blk.n2, m);
      h = b.add(h, stochastic_depth(b, m, blk.sd));
      block_call.end();
      b.end_layer();
    }
    stage_call.end();
    if (st + 1 < nst) h = patch_merging(b, h, merges[static_cast<size_t>(st)].first, merges[static_cast<size_t>(st)].second, v2);
  }
  h = ln(b, norm, h);
  const Shape hs = b.shape(h);
  h = b.mean_hw(b.view(h, {hs[0], hs[3], hs[1], hs[2]}));
  classification_loss(b, b.linear(b.view(h, {B, F}), hw, hb), y);
}

}  // namespace memplan
