// Swinv2ForImageClassification (transformers 5.17 models/swinv2/modeling_swinv2.py, the installed file), training
// forward + cross entropy, and the inference forward. Not torchvision's Swin V2 (swin.cpp, whose qkv is one Linear)
// and not HF's Swin (hf_swin.cpp: pre-norm, an attention interface with SDPA): Swinv2 has its own eager attention
// only (Swinv2PreTrainedModel sets no _supports_sdpa: from_config(attn_implementation="sdpa") raises).
// Stages:
//   Swinv2Embeddings: Swinv2PatchEmbeddings (no pad: the importer requires image_size % patch_size == 0;
//     projection Conv2d kernel = stride = patch; flatten(2).transpose(1, 2), a non-contiguous view), norm (a
//     contiguous copy inside the LayerNorm), dropout. use_absolute_embeddings is refused by the importer (its
//     [1, num_patches + 1, C] table does not broadcast against the num_patches tokens).
//   Swinv2Encoder: per stage (a GradientCheckpointingLayer: the checkpoint unit is the whole stage, its blocks
//     and its patch merging) the Swinv2Layers, then Swinv2PatchMerging (all but the last stage). No reshaped
//     hidden states unless asked for (unlike 5.17's Swin).
//   Swinv2Layer (window and shift fixed at construction from the config grid // 2^i: window = min(side, window),
//     shift 0 where side <= window), post-norm:
//       shortcut = x; view(B, H, W, C); maybe_pad (F.pad: a copy even with zero padding); torch.roll (shifted);
//       window_partition (transpose + contiguous: a copy); get_attn_mask (shifted: [nW, N, N] in the stream's
//       dtype); Swinv2Attention; window_reverse (a copy); roll back; the crop [:, :H, :W].contiguous() when padded;
//       layernorm_before(attention) ; shortcut + drop_path(that); intermediate (fc1, gelu); output (fc2, dropout);
//       hidden + drop_path(layernorm_after(mlp)).
//   Swinv2SelfAttention: query / key / value Linear (key without bias), each view(BW, N, heads, hd).transpose(1, 2);
//     scaled cosine attention: F.normalize(q) @ F.normalize(k).transpose(-2, -1) (normalize is
//     linalg_vector_norm (under autocast an fp32_set_opt_dtype op: it reads the 16-bit view and writes an fp32
//     [..., 1] norm, saving both), clamp_min (saves the norm), div (saves both operands; bf16 / fp32 promotes to
//     fp32); matmul casts both to the low dtype and its reshape copies each head-split view, as torchvision's
//     measured V2 stream), * exp(clamp(logit_scale)) (a [heads, 1, 1] fp32 parameter: under autocast the
//     product is fp32); continuous_position_bias_mlp (Linear(2, 512), ReLU(inplace), Linear(512, heads, no bias))
//     over the relative_coords_table buffer [1, 2w-1, 2w-1, 2], view(-1, heads), table[index] (a gather),
//     view, permute(2, 0, 1).contiguous() (a copy), 16 * sigmoid (sigmoid saves its output); scores + bias;
//     shifted layers: view(B, nW, heads, N, N) + mask, and + mask once more (the 5.17 code adds it twice: two
//     full-size sums); view; softmax (no dtype: fp32 under autocast since the scores are fp32); dropout (p 0);
//     matmul with v; permute(0, 2, 1, 3).contiguous() (a copy); Swinv2SelfOutput's dense.
//   Swinv2PatchMerging: view, maybe_pad (odd sides), the four strided slices (each two SliceBackward views: their
//     gradients zero-filled copies of the half- and the full-size input), cat(-1), view, reduction(4C -> 2C, no
//     bias), THEN norm(2C) (V1 norms the 4C cat first).
//   Swinv2Model: layernorm; AdaptiveAvgPool1d(1) over sequence_output.transpose(1, 2) (a mean); flatten. Head:
//     classifier -> ForSequenceClassificationLoss (cross entropy, mean).
// Python bindings (each tensor a Python name keeps alive past its last use):
//   - Swinv2Model.forward binds embedding_output and encoder_outputs until it returns.
//   - Swinv2Encoder's loop binds each stage's input (hidden_states) until the stage returns, and the stage's
//     hidden_states_before_downsampling (its last block's output) until the NEXT stage returns (layer_outputs and
//     the loop variable are rebound only then); the last stage's until the encoder returns.
//   - Swinv2Layer.forward binds, until it returns: shortcut, shifted_hidden_states (the roll), hidden_states_windows
//     (the partition copy), attn_mask, attention_output, shifted_windows (the window_reverse copy), attention_windows
//     (the roll back or the crop) and the residual; `hidden_states` keeps the pad copy until layernorm_before's
//     result rebinds it; `layer_output` keeps fc2's output until the last statement rebinds it.
//   - Swinv2SelfAttention.forward binds, until it returns: query / key / value_layer (views of the projections),
//     logit_scale, relative_position_bias_table (the MLP's output), relative_position_bias (16 * sigmoid),
//     attention_scores (the softmax's input: fp32 [BW, heads, N, N] under autocast) and attention_probs.
//   - Swinv2ForImageClassification.forward keeps outputs (sequence_output, pooler_output) and the logits bound
//     until it returns, after the loss.
#include "engine/arch/builders.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/hf_swin_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using hfswin::fresh;
using hfswin::roll2;
using hfswin::shift_mask;

struct Ln {
  TensorId w = kNoTensor, b = kNoTensor;
};
struct Lin {
  TensorId w = kNoTensor, b = kNoTensor;
};
TensorId apply(GraphBuilder& b, const Lin& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct Layer {
  Lin q, k, v, o;
  TensorId logit_scale = kNoTensor;               // [heads, 1, 1]
  Lin cpb1, cpb2;                                 // continuous_position_bias_mlp.0 (2 -> 512), .2 (512 -> heads)
  TensorId coords = kNoTensor, index = kNoTensor;  // buffers: relative_coords_table, relative_position_index
  Ln ln1, ln2;                                    // layernorm_before, layernorm_after
  Lin fc1, fc2;
  int64_t heads = 1, window = 1, shift = 0;        // window and shift as constructed (clamped to the config grid)
  double drop_path = 0.0;
};

struct Stage {
  std::vector<Layer> layers;
  bool merge = false;
  Lin reduction;
  Ln merge_ln;
};

// F.normalize(t, dim=-1): t / t.norm(2, -1, keepdim=True).clamp_min(eps).expand_as(t). Under autocast the norm is
// linalg_vector_norm with dtype=float32 on the 16-bit t (no fp32 copy of t; the fp32 [..., 1] norm and t are
// saved; its backward forms self * (grad / norm) in fp32), as torchvision's V2 builder measured it (swin.cpp).
TensorId normalize_last(GraphBuilder& b, TensorId t) {
  TensorId n;
  if (b.autocast() && b.dtype(t) != DType::f32) {
    Shape ns = b.shape(t);
    ns.back() = 1;
    n = b.generic({"linalg_vector_norm", {t}, {{ns, DType::f32}}, {0}, {0}, {}, {b.numel(t) * 4}})[0];
  } else {
    n = b.reduce_last("linalg_vector_norm", b.autocast_fp32(t), true);
  }
  n = b.scalar_op("clamp_min", n, true);
  return b.binary("div", t, n, true, true);
}

// Swinv2Attention.forward on the windows x [BW, N, C]; `mask` the layer's attn_mask ([nW, N, N]) or kNoTensor.
// Returns the output dense's result.
TensorId swinv2_attention(GraphBuilder& b, const Layer& l, TensorId x, TensorId mask) {
  const Shape xs = b.shape(x);
  const int64_t BW = xs[0], N = xs[1], C = xs[2], nh = l.heads, hd = C / nh, ws = l.window;
  const int64_t T = (2 * ws - 1) * (2 * ws - 1);
  std::vector<TensorId> locals;  // Swinv2SelfAttention.forward's bindings, until it returns
  auto local = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  // The head-split views: their gradients arrive contiguous [BW, heads, N, hd] (the normalize / matmul
  // backwards), so each view's backward copies them back into the projection's layout.
  auto heads = [&](const Lin& p) { return local(b.view_copying_grad(apply(b, p, x), {BW, nh, N, hd})); };
  const TensorId q = heads(l.q);
  const TensorId k = heads(l.k);
  const TensorId v = heads(l.v);
  // Cosine logits: both normalized operands live until the `@` expression returns; the matmul casts them (autocast)
  // and its reshape copies each (they keep the projection's [BW, N, heads, hd] memory order).
  const TensorId nq = normalize_last(b, q);
  b.hold(nq);
  const TensorId nk = normalize_last(b, k);
  b.hold(nk);
  TensorId scores = b.matmul(nq, nk, {BW, nh, N, N}, true, true);
  b.drop(nq);
  b.drop(nk);
  // logit_scale = torch.clamp(self.logit_scale, max=log(100)).exp(): clamp saves its input, exp its output.
  const TensorId ls = local(b.unary("exp", b.scalar_op("clamp", l.logit_scale, true), false, true, true));
  scores = b.mul(scores, ls);
  b.hold(scores);  // attention_scores until the bias sum rebinds it
  // The continuous position bias: the MLP over the coords buffer, the gather, the permuted copy, 16 * sigmoid.
  TensorId m = apply(b, l.cpb1, l.coords);
  m = b.inplace("relu_", m, true);
  const TensorId table = local(b.view(apply(b, l.cpb2, m), {T, nh}));
  const TensorId g = b.generic({"index", {table, l.index}, {{{N * N, nh}, b.dtype(table)}}, {1}, {}, {}, {}})[0];
  TensorId bias = b.contiguous_copy(b.view(g, {nh, N, N}), {1, nh, N, N});
  bias = b.unary("sigmoid", bias, false, true);
  bias = local(b.scalar_op("mul_scalar", bias, false));
  TensorId s = b.add(scores, bias);
  b.drop(scores);
  if (mask != kNoTensor) {
    // attention_scores.view(BW / nW, nW, heads, N, N) + mask.unsqueeze(1).unsqueeze(0), then + the mask again.
    const int64_t nW = b.shape(mask)[0];
    const TensorId mv = b.view(mask, {1, nW, 1, N, N});
    b.hold(s);
    const TensorId s1 = b.add(b.view(s, {BW / nW, nW, nh, N, N}), mv);
    b.drop(s);
    b.hold(s1);
    const TensorId s2 = b.add(s1, mv);
    b.drop(s1);
    s = b.view(s2, {BW, nh, N, N});
  }
  local(s);  // attention_scores, the softmax's input, until the function returns
  // softmax, then dropout at attention_probs_dropout_prob (the importer refuses anything but 0: it returns its input).
  const TensorId probs = local(b.softmax_last(s));
  // matmul(probs, v) (v's head-split view copied by the reshape), permute(0, 2, 1, 3).contiguous() (a copy; its
  // gradient comes back as a view the bmm's backward cannot take as it is), view(BW, N, C).
  TensorId ctx = b.contiguous_copy(b.matmul(probs, v, {BW, nh, N, hd}, false, true), {BW, N, nh, hd},
                                   /*grad_copied=*/true);
  ctx = b.view(ctx, {BW, N, C});
  for (TensorId t : locals) b.drop(t);
  // Swinv2Attention.forward: self_outputs (the context) until it returns, after the output dense.
  b.hold(ctx);
  const TensorId out = apply(b, l.o, ctx);
  b.drop(ctx);
  return out;
}

// Swinv2Layer.forward on h [B, H * W, C] (H, W the stage's run-time sides); returns the layer's output.
TensorId swinv2_layer(GraphBuilder& b, const TransformerSpec& s, const Layer& l, TensorId h, int64_t H, int64_t W) {
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], C = hs[2], ws = l.window, shift = l.shift;
  const int64_t pad_r = (ws - W % ws) % ws, pad_b = (ws - H % ws) % ws;
  const int64_t pH = H + pad_b, pW = W + pad_r, nW = (pH / ws) * (pW / ws), N = ws * ws, BW = B * nW;
  std::vector<TensorId> locals;  // Swinv2Layer.forward's bindings, until it returns
  auto local = [&](TensorId t) {
    if (t != kNoTensor) {
      b.hold(t);
      locals.push_back(t);
    }
    return t;
  };
  const TensorId shortcut = local(h);
  // maybe_pad: F.pad always runs (constant_pad_nd copies even with zero padding); `hidden_states` keeps the copy
  // until layernorm_before's result rebinds it.
  const TensorId padded = fresh(b, "constant_pad_nd", b.view(h, {B, H, W, C}), {B, pH, pW, C});
  b.hold(padded);
  const TensorId shifted = shift > 0 ? local(roll2(b, padded)) : padded;
  // window_partition: view, transpose(2, 3).contiguous() (its gradient comes back transposed: the view's backward
  // copies it), view(-1, N, C).
  const TensorId windows = local(b.contiguous_copy(shifted, {BW, N, C}, /*grad_copied=*/true));
  const TensorId mask = shift > 0 ? local(shift_mask(b, pH, pW, ws, b.dtype(padded))) : kNoTensor;
  const TensorId att = local(swinv2_attention(b, l, windows, mask));
  // window_reverse: view, transpose(2, 3).contiguous() (a copy; its gradient copied back as the partition's).
  TensorId o = local(b.contiguous_copy(att, {B, pH, pW, C}, /*grad_copied=*/true));
  if (shift > 0) o = local(roll2(b, o));
  if (pad_r > 0 || pad_b > 0) {
    // [:, :H, :W, :].contiguous(): two slices (views) and a copy. Backward: each SliceBackward writes the
    // gradient into a zero-filled block of its input's size: [B, H, pW, C], then [B, pH, pW, C]. The crop
    // rebinds attention_windows: the roll's result (when shifted) goes with the statement.
    const int64_t dt = dtype_bytes(b.dtype(o));
    const TensorId rows = b.view_copying_grad(o, {B, H, pW, C}, B * pH * pW * C * dt);
    const TensorId cols = b.view_copying_grad(rows, {B, H, W, C}, B * H * pW * C * dt);
    const TensorId cropped = b.contiguous_copy(cols, {B, H, W, C});
    if (shift > 0) {
      b.drop(o);
      locals.pop_back();
    }
    o = local(cropped);
  }
  const TensorId attention_windows = b.view(o, {B, H * W, C});
  TensorId x = b.layer_norm(attention_windows, l.ln1.w, l.ln1.b);
  b.drop(padded);  // hidden_states rebound
  const TensorId hidden = local(b.add(shortcut, hfbackbone::drop_path(b, x, l.drop_path)));
  // Swinv2Intermediate (fc1, gelu), Swinv2Output (fc2, dropout); `layer_output` keeps fc2's output until the
  // residual statement rebinds it (under autocast layernorm_after saves its own fp32 copy).
  TensorId mlp = apply(b, l.fc2, b.unary("gelu", apply(b, l.fc1, hidden), true, false));
  mlp = b.dropout(mlp, s.resid_dropout);
  b.hold(mlp);
  const TensorId out = b.add(hidden, hfbackbone::drop_path(b, b.layer_norm(mlp, l.ln2.w, l.ln2.b), l.drop_path));
  b.drop(mlp);
  for (TensorId t : locals) b.drop(t);
  return out;
}

// Swinv2PatchMerging.forward on x [B, H * W, C]: view, maybe_pad (odd sides), the four strided slices, cat(-1),
// view, reduction (4C -> 2C), norm(2C).
TensorId patch_merging(GraphBuilder& b, const Stage& st, TensorId x, int64_t H, int64_t W) {
  b.hold(x);  // the module's argument (and the stage's hidden_states_before_downsampling) until it returns
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], C = xs[2];
  TensorId f = b.view(x, {B, H, W, C});
  int64_t pH = H, pW = W;
  if (H % 2 == 1 || W % 2 == 1) {
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
  c = apply(b, st.reduction, c);
  const TensorId out = b.layer_norm(c, st.merge_ln.w, st.merge_ln.b);
  b.drop(x);
  return out;
}

}  // namespace

void build_hf_swinv2(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)),
                     "swinv2 is modelled as its image classifier (no other head)");
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "Swinv2 has only its own eager attention in transformers 5.17 (no SDPA support: from_config "
                     "with attn_implementation=\"sdpa\" raises): use eager");
  const auto& D = s.stage_depths;
  if (D.empty() || s.stage_widths.size() != D.size() || s.swin_stage_heads.size() != D.size() ||
      s.swin_stage_mlp.size() != D.size() || s.swin_window_size <= 0)
    throw InputError("config.depths", std::to_string(D.size()), "needs widths, heads and MLP widths per stage");
  const int64_t B = cfg.batch_size, R = s.image_size, P = s.patch_size, C = s.num_channels, NL = s.image_num_labels;
  const int64_t E = s.stage_widths[0], G = R / P, cws = s.swin_window_size;
  int64_t total = 0;
  for (int64_t d : D) total += d;

  hf_construction_scalar(b);
  // Parameters in the order they reach the GPU. Built on the device: construction order (Swinv2SelfAttention
  // registers logit_scale, the MLP, its two buffers, then query / key / value). Moved by model.to("cuda")
  // (Module._apply): a module's children before its own parameters and buffers (the MLP, query, key, value, then
  // logit_scale, then the buffers).
  const bool built_on_device = cfg.weights_load == WeightsLoad::on_device;
  const DType pd = b.param_dtype();
  const TensorId proj_w = b.param("swinv2.embeddings.patch_embeddings.projection.weight", {E, C, P, P});
  const TensorId proj_b = b.param("swinv2.embeddings.patch_embeddings.projection.bias", {E});
  const Ln emb_ln{b.param("swinv2.embeddings.norm.weight", {E}), b.param("swinv2.embeddings.norm.bias", {E})};
  std::vector<Stage> stages(D.size());
  int64_t id = 0;
  for (size_t i = 0; i < D.size(); ++i) {
    const int64_t c = s.stage_widths[i], nh = s.swin_stage_heads[i], mlp = s.swin_stage_mlp[i];
    // Swinv2Layer._compute_window_shift on the construction resolution grid // 2^i.
    const int64_t side = G >> i;
    const int64_t ws = std::min(side, cws);
    const std::string p = "swinv2.encoder.layers." + std::to_string(i) + ".";
    for (int64_t j = 0; j < D[i]; ++j, ++id) {
      const std::string q = p + "blocks." + std::to_string(j) + ".";
      const std::string a = q + "attention.self.";
      Layer l;
      l.heads = nh;
      l.window = ws;
      l.shift = (j % 2 == 0 || side <= ws) ? 0 : cws / 2;
      l.drop_path = hfbackbone::block_drop_path(s.drop_path_rate, id, total);
      auto lin = [&](const std::string& name, int64_t out, int64_t in, bool bias) {
        Lin r;
        r.w = b.param(name + ".weight", {out, in});
        if (bias) r.b = b.param(name + ".bias", {out});
        return r;
      };
      auto buffers = [&] {
        l.coords = b.buffer(a + "relative_coords_table", {1, 2 * ws - 1, 2 * ws - 1, 2}, pd);
        l.index = b.buffer(a + "relative_position_index", {ws * ws, ws * ws}, DType::i64);
      };
      if (built_on_device) l.logit_scale = b.param(a + "logit_scale", {nh, 1, 1});
      l.cpb1 = lin(a + "continuous_position_bias_mlp.0", 512, 2, true);
      l.cpb2 = lin(a + "continuous_position_bias_mlp.2", nh, 512, false);
      if (built_on_device) buffers();
      l.q = lin(a + "query", c, c, s.qkv_bias);
      l.k = lin(a + "key", c, c, false);
      l.v = lin(a + "value", c, c, s.qkv_bias);
      if (!built_on_device) {
        l.logit_scale = b.param(a + "logit_scale", {nh, 1, 1});
        buffers();
      }
      l.o = lin(q + "attention.output.dense", c, c, true);
      l.ln1 = {b.param(q + "layernorm_before.weight", {c}), b.param(q + "layernorm_before.bias", {c})};
      l.fc1 = lin(q + "intermediate.dense", mlp, c, true);
      l.fc2 = lin(q + "output.dense", c, mlp, true);
      l.ln2 = {b.param(q + "layernorm_after.weight", {c}), b.param(q + "layernorm_after.bias", {c})};
      stages[i].layers.push_back(l);
    }
    if (i + 1 < D.size()) {
      stages[i].merge = true;
      stages[i].reduction.w = b.param(p + "downsample.reduction.weight", {2 * c, 4 * c});
      stages[i].merge_ln = {b.param(p + "downsample.norm.weight", {2 * c}), b.param(p + "downsample.norm.bias", {2 * c})};
    }
  }
  const int64_t F = s.stage_widths.back();
  const Ln final_ln{b.param("swinv2.layernorm.weight", {F}), b.param("swinv2.layernorm.bias", {F})};
  const TensorId cls_w = b.param("classifier.weight", {NL, F});
  const TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels (training).
  const TensorId x = b.input({B, C, R, R}, pd);
  const TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;

  // Swinv2Embeddings. The conv output's transposed view is what the norm reads (and saves).
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
  h = b.dropout(h, s.embd_dropout);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // Swinv2Model.forward's binding, until it returns

  int64_t Hs = G, Ws = G;
  TensorId prev_before = kNoTensor;  // the encoder's hidden_states_before_downsampling of the previous stage
  for (size_t i = 0; i < stages.size(); ++i) {
    const Stage& st = stages[i];
    const TensorId stage_in = h;  // the encoder's loop variable and the stage's argument, until the stage returns
    b.hold(stage_in);
    b.begin_layer("swinv2.encoder.layers." + std::to_string(i), layer_checkpointed(cfg, static_cast<int64_t>(i)));
    for (const Layer& l : st.layers) h = swinv2_layer(b, s, l, h, Hs, Ws);
    const TensorId before = h;  // hidden_states_before_downsampling
    b.hold(before);
    int64_t h2 = Hs, w2 = Ws;
    if (st.merge) {
      h = patch_merging(b, st, before, Hs, Ws);
      h2 = (Hs + 1) / 2;
      w2 = (Ws + 1) / 2;
    }
    b.end_layer();
    // The encoder rebinds layer_outputs, hidden_states and hidden_states_before_downsampling.
    if (prev_before != kNoTensor) b.drop(prev_before);
    b.drop(stage_in);
    prev_before = before;
    Hs = h2;
    Ws = w2;
  }
  // Swinv2Model: layernorm, then the pooler: AdaptiveAvgPool1d(1) of sequence_output.transpose(1, 2) is a mean
  // over the tokens ([B, C, 1, L] -> [B, C, 1, 1]); flatten(1). encoder_outputs (the last stage's output, also its
  // hidden_states_before_downsampling) until Swinv2Model.forward returns.
  const TensorId last_hidden = h;
  b.hold(last_hidden);
  const TensorId seq = b.layer_norm(last_hidden, final_ln.w, final_ln.b);
  const int64_t L = Hs * Ws;
  const TensorId pooled = b.view(b.mean_hw(b.view(seq, {B, F, 1, L})), {B, F});
  if (prev_before != kNoTensor) b.drop(prev_before);
  b.drop(embedding_output);
  b.drop(last_hidden);
  hfbackbone::classifier_tail(b, {seq, pooled}, pooled, cls_w, cls_b, labels);
}

}  // namespace memplan
