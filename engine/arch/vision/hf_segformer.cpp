// SegformerForSemanticSegmentation (RunConfig::task semantic_seg) and SegformerForImageClassification (task lm, the
// image classifiers' default), transformers models/segformer/modeling_segformer.py: training forward + loss, and
// the inference forward. Written from the modeling file before any run of it was measured (family set 37, held
// out: data/validation/predictions/families37-holdout.json).
// Copy mirrored: the 5.x file as stored in the index (evalstate/transformers fca4376, "@auto_docstring",
// "capture_outputs", no head_mask, `input_shape = hidden_states.shape[:-1]` head views); to diff against the
// installed 5.17 file: whether the efficient self-attention moved to the attention interface (it is an inline
// matmul + softmax here, no sdpa path: the builder refuses sdpa as transformers does for a class without
// _supports_sdpa), whether SegformerForImageClassification's @capture_outputs adds hooks when no output is asked
// for (modelled: none), and the decode head's statement order.
//
// Stages (B images of R x R; block i of width C, sequence N = H * W, heads h, head size d = C / h):
//   SegformerOverlapPatchEmbeddings: proj Conv2d (kernel k, stride s, padding k // 2, bias) on the block's input
//     (pixel_values, then the previous block's NCHW output: under autocast an fp32 tensor, cast for the conv),
//     flatten(2).transpose(1, 2) (a non-contiguous [B, N, C] view), layer_norm (a contiguous copy of its input
//     made before its outputs, in forward and again in backward; the gradient it receives is contiguous).
//   SegformerLayer: layer_norm_1 -> SegformerAttention -> drop_path -> + input; layer_norm_2 -> Mix-FFN ->
//     drop_path -> + the first sum. Under autocast the residual stream is fp32 (the fp32 LayerNorm output plus a
//     bf16 projection), so every linear casts its input afresh (not cached: not a parameter): the query, key and
//     value each save a cast of their own.
//   SegformerEfficientSelfAttention: query(x).view(B, N, h, d).transpose(1, 2); sr_ratio > 1: x.permute(0, 2, 1)
//     .reshape(B, C, H, W) (a view with channels-last strides), sr Conv2d (kernel = stride = sr: cuDNN in
//     channels-last, a transient channels-last copy of its k x k weight in forward and backward), reshape +
//     permute back (contiguous [B, n, C], n = (H // sr) * (W // sr)), layer_norm; key / value of that (of x itself
//     when sr == 1). scores = matmul(q, k^T) / sqrt(d): matmul's reshape copies the head-split q and k^T views when
//     h > 1 (batch and head dims cannot merge), not when h == 1 (MiT's first block); the bmm output dies at the
//     division. softmax(dim=-1) without a dtype: under bf16 autocast an fp32 copy of the scores first (its
//     fp32_set_opt_dtype policy; fp16's half-to-float kernel copies nothing), fp32 probabilities; dropout
//     (attention_probs_dropout_prob, 0.0: the probabilities themselves); matmul(probs, v) (autocast casts the
//     probabilities back to 16 bits, which the bmm saves; v's view copied when h > 1); permute(0, 2, 1, 3)
//     .contiguous() (a copy when h > 1, the tensor itself when h == 1); view [B, N, C].
//   SegformerSelfOutput: dense, dropout (hidden_dropout_prob, 0.0).
//   SegformerMixFFN: dense1 (C -> M = int(C * mlp_ratio)); SegformerDWConv: transpose(1, 2).view(B, M, H, W)
//     (channels-last strides), the depthwise 3x3 (groups M, bias: cuDNN takes a channels-last depthwise conv),
//     flatten(2).transpose(1, 2) (contiguous again); gelu (saves its input); dropout; dense2; dropout.
//   SegformerDropPath at linspace(0, drop_path_rate, sum(depths))[layer] (nn.Identity at 0: the first layer),
//     in training: rand([B, 1, 1]) + keep_prob, floor_, x.div(keep_prob) * mask (hfbackbone::drop_path).
//   Per block: encoder.layer_norm[i], then reshape(B, H, W, C).permute(0, 3, 1, 2).contiguous(): an NCHW copy
//     (fp32 under autocast), the next block's input.
//   SegformerForSemanticSegmentation runs the model with output_hidden_states=True: the encoder's
//     all_hidden_states tuple holds the four NCHW block outputs until the forward returns. SegformerDecodeHead,
//     for each block i: SegformerMLP (flatten(2).transpose(1, 2), a non-contiguous [B, N_i, C_i]; proj Linear to
//     D = decoder_hidden_size: F.linear of a non-contiguous 3-d input goes through matmul, which in training folds
//     it to 2-d with a reshape copy the mm saves (after autocast's cast, which keeps the strides); in inference no
//     operand needs a gradient and bmm takes the transposed view as it is), permute(0, 2, 1).reshape(B, D, H_i,
//     W_i) (a view, channels-last strides), F.interpolate(bilinear, align_corners=False) to block 0's size (a new
//     tensor even at that size; channels-last in and out; under autocast fp32: torch >= 2.4 lists the upsample
//     ops in the fp32 policy, so the bf16 projection is cast up for the call and the four maps are fp32), kept in
//     all_hidden_states until the head returns. linear_fuse (1x1 Conv2d of cat(reversed, dim=1), no bias: the cat
//     of channels-last tensors is channels-last, so both 1x1 convs are cuDNN channels-last; under autocast the
//     fp32 cat, alive until the conv returns, is cast to bf16, which the conv saves), BatchNorm2d (batch
//     statistics in training, running ones in eval), nn.ReLU() (out of place, saves its output),
//     Dropout(classifier_dropout_prob = 0.1), classifier 1x1 Conv2d (bias) -> logits [B, num_labels, H_0, W_0].
//   Loss (labels [B, R, R] int64): interpolate(logits, size=labels.shape[-2:], bilinear) -> channels-last
//     [B, num_labels, R, R] (fp32 under autocast, as above); CrossEntropyLoss(ignore_index=
//     semantic_loss_ignore_index): cross_entropy_loss (no autocast policy of its own on CUDA) calls
//     log_softmax(x, 1, x.dtype) in x's dtype, whose kernel makes the channels-last input contiguous first (a
//     transient copy), then nll_loss2d (fp32 policy: under amp its input is fp32 already), which saves its input.
//     Backward: nll's zero-filled gradient, log_softmax's, the logits' upsample backward (NCHW, no copy; under
//     autocast cast back to bf16), which the classifier's channels-last cuDNN backward copies to its layout.
//   SegformerForImageClassification: the model without hidden states; sequence_output = last_hidden_state
//     .permute(0, 2, 3, 1).reshape(B, -1, C) (a view), .mean(dim=1), classifier Linear,
//     ForSequenceClassificationLoss (cross entropy); its backward hands each earlier block's final LayerNorm an
//     NCHW gradient permuted to [B, N, C], which layer_norm_backward copies contiguous (the segmentation model's
//     blocks get the decode head's channels-last gradient first, accumulated in place: contiguous there).
// Python bindings that keep a tensor alive past its last use (inference; training keeps what autograd saves):
//   - a module's argument until the module returns (ModuleCall): the embedding's input, each layer's input, the
//     attention's (layer_norm_1's output), the Mix-FFN's (layer_norm_2's), the depthwise conv's (dense1's output);
//   - the encoder's `layer_outputs` tuple keeps each block's last layer output until the next block's first layer
//     returns (the last one until the encoder returns);
//   - SegformerEfficientSelfAttention binds query_layer, the reduced hidden_states, key_layer, value_layer,
//     attention_scores and attention_probs until it returns;
//   - SegformerLayer binds self_attention_outputs (the self-output dense's result) and attention_output (its
//     drop_path) until it returns;
//   - the decode head's all_hidden_states (the four upsampled maps) until it returns; the segmentation forward's
//     `outputs` (the four block outputs), logits and upsampled_logits until it returns, after the loss; the
//     classifier's outputs (last_hidden_state), the pooled mean and logits likewise.
// Parameters and buffers in module order (construction and model.to() agree: every parameter sits in a leaf
// module): segformer.encoder.patch_embeddings.{i} (proj, layer_norm) for every block, then encoder.block.{i}.{j}
// (layer_norm_1, attention.self query / key / value / sr / layer_norm, attention.output.dense, layer_norm_2,
// mlp.dense1, mlp.dwconv.dwconv, mlp.dense2), then encoder.layer_norm.{i}; decode_head.linear_c.{i}.proj,
// linear_fuse, batch_norm (weight, bias, running_mean, running_var, num_batches_tracked), classifier; or the
// image classifier's classifier. No gradient checkpointing (supports_gradient_checkpointing is unset) and no sdpa.
#include "engine/arch/builders.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/vision_parts.h"
#include "engine/errors.h"

namespace memplan {

using namespace vision;

namespace {

struct Ln {
  TensorId w = kNoTensor, b = kNoTensor;
};
Ln make_ln(GraphBuilder& b, const std::string& name, int64_t c) {
  return {b.param(name + ".weight", {c}), b.param(name + ".bias", {c})};
}
struct Lin {
  TensorId w = kNoTensor, b = kNoTensor;
};
Lin make_lin(GraphBuilder& b, const std::string& name, int64_t out, int64_t in) {
  return {b.param(name + ".weight", {out, in}), b.param(name + ".bias", {out})};
}
TensorId apply(GraphBuilder& b, const Lin& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct Layer {
  Ln ln1, ln2, sr_ln;
  Lin q, k, v, o, fc1, fc2;
  Conv sr, dw;
  int64_t heads = 1, sr_ratio = 1;
  double drop_path = 0.0;
};

struct Block {
  Conv patch;
  Ln patch_ln, norm;
  std::vector<Layer> layers;
};

// SegformerEfficientSelfAttention.forward on x [B, N, C] (layer_norm_1's output) of an H x W map; returns the
// context [B, N, C] (before the self-output dense).
TensorId efficient_attention(GraphBuilder& b, const TransformerSpec& s, const Layer& l, TensorId x, int64_t H,
                             int64_t W, TensorId& weights, std::vector<TensorId>& locals) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], N = xs[1], C = xs[2], nh = l.heads, hd = C / nh;
  // `locals`: the function's bindings (query_states, the reduced kv_hidden_states, key_states, value_states), held
  // here and released by the caller once o_proj, the function's last statement, has run (recordings/families45,
  // the checkpointed SDPA row: q_proj's output freed after o_proj's output is allocated).
  auto local = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  // The head split view(B, n, h, d).transpose(1, 2): with h > 1, the bmm gradient matmul's backward returns is
  // contiguous in [B, h, n, d], so the view's backward copies it back to [B, n, C]; with h == 1 it is a view.
  // SDPA's fused backward writes each gradient in its input's layout: a view either way.
  const bool eager = b.config().attn == AttnImpl::eager;
  auto heads = [&](TensorId t, int64_t n) {
    return eager && nh > 1 && n > 1 ? b.view_copying_grad(t, {B, nh, n, hd}) : b.view(t, {B, nh, n, hd});
  };
  const TensorId q = local(heads(apply(b, l.q, x), N));
  TensorId kv = x;
  int64_t n = N;
  if (l.sr_ratio > 1) {
    // permute(0, 2, 1).reshape(B, C, H, W): a view (channels-last strides), the conv's argument; its output has
    // the same layout, so reshape(B, C, -1).permute(0, 2, 1) is a contiguous view and the norm copies nothing.
    const TensorId conv_in = b.view(x, {B, C, H, W});
    const TensorId reduced = conv(b, l.sr, conv_in);
    n = b.shape(reduced)[2] * b.shape(reduced)[3];
    kv = local(b.layer_norm(b.view(reduced, {B, n, C}), l.sr_ln.w, l.sr_ln.b));
  }
  const TensorId k = local(heads(apply(b, l.k, kv), n));
  const TensorId v = local(heads(apply(b, l.v, kv), n));
  if (!eager) {
    // sdpa_attention_forward (5.17's default for this class: _supports_sdpa), not causal, no mask: the fused
    // kernel (16-bit: cuDNN; fp32: memory-efficient) on the head-split views, its output allocated [B, N, h, d], so
    // transpose(1, 2).contiguous() and the reshape are views. It returns no weights (the layer's `_` is None).
    weights = kNoTensor;
    return b.view(b.sdpa(q, k, v, s.attn_dropout, false), {B, N, C});
  }
  const TensorId mm = b.matmul(q, k, {B, nh, N, n}, /*copy_a=*/nh > 1 && N > 1, /*copy_b=*/nh > 1 && n > 1);
  // transformers 5.17 eager_attention_forward (read on the device after set 37 was measured; the copy this was first
  // written from had a softmax without a dtype): attn_weights = matmul * scaling, then
  // softmax(dim=-1, dtype=float32).to(q.dtype) in one statement that rebinds it (the scores die after it): a 16-bit
  // model without autocast now has fp32 probabilities too (the set's pure-bf16 rows, -53.5 / -21.3 % blind). The
  // probabilities are returned and bound as the layer's `_` until it returns.
  const TensorId scores = b.scalar_op("mul_scalar", mm, false);
  b.hold(scores);
  TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(q));
  b.drop(scores);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.matmul(probs, v, {B, nh, N, hd}, false, /*copy_b=*/nh > 1 && n > 1);
  // permute(0, 2, 1, 3).contiguous(): a copy unless h == 1 (then already contiguous). Its gradient, coming back
  // from the [B, N, C] view, is handed on transposed, which the bmm's backward copies contiguous.
  if (nh > 1 && N > 1) ctx = b.contiguous_copy(ctx, {B, N, nh, hd}, /*grad_copied=*/true);
  return b.view(ctx, {B, N, C});
}

// SegformerMixFFN.forward on x [B, N, C] (layer_norm_2's output) of an H x W map.
TensorId mix_ffn(GraphBuilder& b, const TransformerSpec& s, const Layer& l, TensorId x, int64_t H, int64_t W) {
  ModuleCall call(b, x);
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], N = xs[1];
  TensorId h = apply(b, l.fc1, x);
  const int64_t M = b.shape(h)[2];
  {
    ModuleCall dw_call(b, h);  // SegformerDWConv's argument until it returns
    // transpose(1, 2).view(B, M, H, W): channels-last strides; the output keeps them, so flatten(2)
    // .transpose(1, 2) is a contiguous [B, N, M] view.
    h = b.view(conv(b, l.dw, b.view(h, {B, M, H, W})), {B, N, M});
  }
  h = b.unary("gelu", h, true, false);
  h = b.dropout(h, s.resid_dropout);
  h = apply(b, l.fc2, h);
  return b.dropout(h, s.resid_dropout);
}

// SegformerLayer.forward on h [B, N, C].
TensorId segformer_layer(GraphBuilder& b, const TransformerSpec& s, const Layer& l, const std::string& name,
                         bool checkpointed, TensorId h, int64_t H, int64_t W) {
  b.begin_layer(name, checkpointed);  // SegformerLayer is a GradientCheckpointingLayer
  ModuleCall call(b, h);  // the encoder's hidden_states and the layer's argument, until it returns
  const TensorId a = b.layer_norm(h, l.ln1.w, l.ln1.b);
  TensorId o, weights = kNoTensor;
  // `hidden_states = self.layernorm_before(hidden_states)`: the norm's output is bound until the attention returns
  // (after o_proj), in training too: under autocast it is fp32 and the projections save 16-bit casts of it, so
  // only this binding keeps it (recordings/families41: freed after o_proj's output is allocated).
  b.hold(a);
  std::vector<TensorId> locals;
  o = apply(b, l.o, efficient_attention(b, s, l, a, H, W, weights, locals));
  for (TensorId t : locals) b.drop(t);  // SegformerAttention.forward returns after o_proj
  b.drop(a);
  // `hidden_states, _ = self.attention(...)`: o_proj's output is rebound by the dropout and the drop path's sum (no
  // name keeps it); `_` keeps the probabilities until the layer returns.
  // `hidden_states = self.drop_path(hidden_states) + residual`: the dropout's output (o_proj's at p = 0) stays bound
  // until the sum rebinds it; in training the drop path's div saves nothing of it (recordings/families44: freed
  // after the sum, not after the div).
  const TensorId od = b.dropout(o, s.resid_dropout);
  b.hold(od);
  const TensorId h1 = b.add(hfbackbone::drop_path(b, od, l.drop_path), h);
  b.drop(od);
  // `hidden_states = self.layernorm_after(hidden_states)`: bound until the Mix-FFN returns (after fc2), in
  // training too (as the first norm's output above).
  const TensorId a2 = b.layer_norm(h1, l.ln2.w, l.ln2.b);
  b.hold(a2);
  const TensorId m = mix_ffn(b, s, l, a2, H, W);
  b.drop(a2);
  b.hold(m);  // the Mix-FFN's output, bound as hidden_states until the second sum rebinds it
  const TensorId out = b.add(hfbackbone::drop_path(b, m, l.drop_path), h1);
  b.drop(m);
  if (weights != kNoTensor) b.drop(weights);
  call.end();
  b.end_layer();
  return out;
}

// SegformerMLP.forward of block output hs [B, C_i, H_i, W_i], then the decode head's permute / reshape: the
// projected map [B, D, H_i, W_i] (channels-last strides).
TensorId project(GraphBuilder& b, const Lin& proj, TensorId hs) {
  const Shape s = b.shape(hs);
  const int64_t B = s[0], C = s[1], Hi = s[2], Wi = s[3], N = Hi * Wi, D = b.shape(proj.w)[0];
  TensorId x = b.view(hs, {B, N, C});  // flatten(2).transpose(1, 2)
  TensorId y;
  if (b.training() && N > 1 && B > 1) {
    // F.linear -> matmul of a non-contiguous 3-d input and a weight that needs a gradient: folded to 2-d by a
    // reshape that copies (after autocast's cast of the fp32 map, a strided bf16 temporary alive until F.linear
    // returns); the mm saves the copy.
    const TensorId cast = b.autocast_low(x);
    b.hold(cast);
    y = b.view(apply(b, proj, b.contiguous_copy(cast, {B * N, C}, false, /*grad_as_view=*/true)), {B, N, D});
    b.drop(cast);
  } else {
    y = apply(b, proj, x);
  }
  return b.view(y, {B, D, Hi, Wi});
}

}  // namespace

void build_hf_segformer(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool seg = cfg.task == Task::semantic_seg;
  if (cfg.task != Task::lm && !seg)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)),
                     "segformer is modelled as SegformerForImageClassification (lm) or "
                     "SegformerForSemanticSegmentation (semantic_seg)");
  if (!seg && !s.problem_type.empty() && s.problem_type != "single_label_classification")
    throw InputError("config.problem_type", "\"" + s.problem_type + "\"",
                     "is not modelled (SegformerForImageClassification is modelled with cross entropy: "
                     "single_label_classification)");
  const auto& Wd = s.stage_widths;
  const size_t nb = Wd.size();
  if (nb == 0 || s.stage_depths.size() != nb || s.seg_heads.size() != nb || s.seg_mlp.size() != nb ||
      s.seg_sr_ratios.size() != nb || s.seg_patch_sizes.size() != nb || s.seg_strides.size() != nb)
    throw InputError("config.num_encoder_blocks", std::to_string(nb), "needs every per-block list at that length");
  const int64_t B = cfg.batch_size, R = s.image_size, C0 = s.num_channels, NL = s.image_num_labels;
  const int64_t D = s.seg_decoder_hidden_size;
  int64_t total = 0;
  for (int64_t d : s.stage_depths) total += d;

  hf_construction_scalar(b);
  // Registration in transformers 5.17's module order: per stage its patch embeddings, its blocks (layernorm_before,
  // the attention's q / k / v / o_proj and then its sequence reduction, layernorm_after, the Mix-FFN), its norm.
  std::vector<Block> blocks(nb);
  int64_t id = 0;
  for (size_t i = 0; i < nb; ++i) {
    const std::string st = "segformer.stages." + std::to_string(i);
    const int64_t in = i == 0 ? C0 : Wd[i - 1], k = s.seg_patch_sizes[i];
    blocks[i].patch = make_conv(b, st + ".patch_embeddings.proj", in, Wd[i], k, s.seg_strides[i], k / 2, 1, true);
    blocks[i].patch_ln = make_ln(b, st + ".patch_embeddings.layer_norm", Wd[i]);
    const int64_t c = Wd[i], sr = s.seg_sr_ratios[i], M = s.seg_mlp[i];
    for (int64_t j = 0; j < s.stage_depths[i]; ++j, ++id) {
      const std::string p = st + ".blocks." + std::to_string(j) + ".";
      Layer l;
      l.heads = s.seg_heads[i];
      l.sr_ratio = sr;
      l.drop_path = hfbackbone::block_drop_path(s.drop_path_rate, id, total);
      l.ln1 = make_ln(b, p + "layernorm_before", c);
      l.q = make_lin(b, p + "attention.q_proj", c, c);
      l.k = make_lin(b, p + "attention.k_proj", c, c);
      l.v = make_lin(b, p + "attention.v_proj", c, c);
      l.o = make_lin(b, p + "attention.o_proj", c, c);
      if (sr > 1) {
        l.sr = make_conv(b, p + "attention.sequence_reduction.sequence_reduction", c, c, sr, sr, 0, 1, true);
        l.sr.args.channels_last = true;
        l.sr_ln = make_ln(b, p + "attention.sequence_reduction.layer_norm", c);
      }
      l.ln2 = make_ln(b, p + "layernorm_after", c);
      l.fc1 = make_lin(b, p + "mlp.fc1", M, c);
      l.dw = make_conv(b, p + "mlp.dwconv.dwconv", M, M, 3, 1, 1, M, true);
      l.dw.args.channels_last = true;
      l.fc2 = make_lin(b, p + "mlp.fc2", c, M);
      blocks[i].layers.push_back(l);
    }
    blocks[i].norm = make_ln(b, st + ".layer_norm", Wd[i]);
  }
  std::vector<Lin> linear_c;
  Conv fuse, cls_conv;
  Bn bn;
  Lin cls;
  if (seg) {
    for (size_t i = 0; i < nb; ++i)
      linear_c.push_back(make_lin(b, "decode_head.linear_projections." + std::to_string(i) + ".proj", D, Wd[i]));
    fuse = make_conv(b, "decode_head.linear_fuse", D * static_cast<int64_t>(nb), D, 1, 1, 0, 1, false);
    fuse.args.channels_last = true;
    bn = make_bn(b, "decode_head.batch_norm", D);
    cls_conv = make_conv(b, "decode_head.classifier", D, NL, 1, 1, 0, 1, true);
    cls_conv.args.channels_last = true;
  } else {
    cls = make_lin(b, "classifier", NL, Wd.back());
  }

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels (training): one per image for
  // the classifier, one per pixel ([B, R, R], the image's size) for segmentation.
  const TensorId x = b.input({B, C0, R, R}, b.param_dtype());
  const TensorId labels = !b.training() ? kNoTensor : b.input(seg ? Shape{B, R, R} : Shape{B}, DType::i64);

  // ---- SegformerEncoder
  std::vector<TensorId> block_out(nb, kNoTensor);  // the NCHW output of each block
  std::vector<int64_t> side_h(nb), side_w(nb);
  TensorId h = x;
  id = 0;
  for (size_t i = 0; i < nb; ++i) {
    const Block& blk = blocks[i];
    const int64_t c = Wd[i];
    int64_t H, W;
    // SegformerModel.forward's `hidden_states = stage(hidden_states)`: the stage's input (the pixels, then the
    // previous stage's NCHW output) stays bound until the stage returns, in training too (under autocast the conv
    // saves its 16-bit cast, not the fp32 map). A segmentation model's stage outputs are held longer (the recorded
    // hidden states), and releasing them here would end that.
    const TensorId stage_in = seg && i > 0 ? kNoTensor : h;
    if (stage_in != kNoTensor) b.hold(stage_in);
    {
      const TensorId proj = conv(b, blk.patch, h);
      H = b.shape(proj)[2];
      W = b.shape(proj)[3];
      const TensorId flat = b.view(proj, {B, H * W, c});  // flatten(2).transpose(1, 2)
      b.hold(flat);  // `embeddings`, the norm's argument, until it returns
      // native_layer_norm copies the transposed view contiguous before its outputs (freed as it returns) and again
      // in its backward; the gradient it gets back (the first layer's norm and residual) is contiguous.
      h = b.layer_norm(flat, blk.patch_ln.w, blk.patch_ln.b, /*contiguous_copy=*/H * W > 1,
                       /*grad_contiguous=*/true);
      b.drop(flat);
    }
    side_h[i] = H;
    side_w[i] = W;
    // SegformerStage.forward: `hidden_states = block(hidden_states, ...)` for each layer, then
    // `hidden_states = self.layer_norm(hidden_states)` (the last layer's output unbound once the norm returns).
    for (size_t j = 0; j < blk.layers.size(); ++j, ++id)
      h = segformer_layer(b, s, blk.layers[j], "segformer.stages." + std::to_string(i) + ".blocks." + std::to_string(j),
                          layer_checkpointed(cfg, id), h, H, W);
    const TensorId normed = b.layer_norm(h, blk.norm.w, blk.norm.b);
    // reshape(B, H, W, C).permute(0, 3, 1, 2).contiguous(). The classifier's earlier blocks get their gradient
    // back from the next embedding's conv in NCHW order, permuted: the norm's backward copies it contiguous (as a
    // fresh gradient here). The segmentation model's arrive channels-last from the decode head first.
    const bool nchw_grad = !seg && i + 1 < nb;
    const TensorId nhwc = nchw_grad ? b.view_copying_grad(normed, {B, H, W, c}) : b.view(normed, {B, H, W, c});
    h = b.contiguous_copy(nhwc, {B, c, H, W});
    block_out[i] = h;
    if (seg) b.hold(h);  // the recorded hidden states, then the forward's `outputs`, until the forward returns
    if (stage_in != kNoTensor) b.drop(stage_in);  // the stage returns
  }

  if (!seg) {
    // SegformerForImageClassification: permute(0, 2, 3, 1).reshape(B, -1, C) (a view), mean(dim=1) (MeanBackward
    // writes a fresh gradient of the map's size), classifier, the loss.
    const TensorId last = block_out.back();
    const TensorId pooled = b.view(b.mean_hw(last), {B, Wd.back()});
    hfbackbone::classifier_tail(b, {last, pooled}, pooled, cls.w, cls.b, labels);
    return;
  }

  // ---- SegformerDecodeHead
  TensorId logits;
  {
    std::vector<TensorId> upsampled(nb);
    for (size_t i = 0; i < nb; ++i) {
      const TensorId m = project(b, linear_c[i], block_out[i]);
      b.hold(m);  // the loop's encoder_hidden_state until interpolate's result rebinds it
      // interpolate to block 0's size; its backward receives a narrow() of the cat's channels-last gradient.
      upsampled[i] = b.upsample_bilinear2d(m, side_h[0], side_w[0], /*grad_copy=*/true);
      b.drop(m);
      b.hold(upsampled[i]);  // all_hidden_states until the decode head returns
    }
    const std::vector<TensorId> reversed(upsampled.rbegin(), upsampled.rend());
    // The cat is linear_fuse's argument until it returns: under autocast the fp32 cat outlives the 16-bit cast the
    // conv reads and saves.
    const TensorId fused_in = b.cat_list("cat", reversed, 1);
    b.hold(fused_in);
    TensorId f = conv(b, fuse, fused_in);
    b.drop(fused_in);
    f = b.batch_norm(f, bn.w, bn.b);
    f = activation(b, f, Act::relu);
    f = b.dropout(f, s.seg_classifier_dropout);
    logits = conv(b, cls_conv, f);
    for (TensorId t : upsampled) b.drop(t);
  }
  if (!b.training()) {
    for (TensorId t : block_out) b.drop(t);
    forward_output(b, {logits});  // SemanticSegmenterOutput(logits): hidden states were not asked for
    return;
  }
  b.hold(logits);  // the output's logits until the forward returns
  b.mark_model_end();
  // The loss: the logits upsampled to the labels' size (the classifier's channels-last backward copies the NCHW
  // gradient this upsample returns), cross entropy over the class dimension.
  const TensorId up = b.upsample_bilinear2d(b.view_copying_grad(logits, b.shape(logits)), R, R);
  b.hold(up);  // upsampled_logits until the forward returns
  const TensorId lsm_in = b.contiguous_copy(up, {B, NL, R, R});  // log_softmax's input.contiguous()
  const TensorId loss = b.cross_entropy(b.view(lsm_in, {B * R * R, NL}), b.view(labels, {B * R * R}));
  b.drop(up);
  b.drop(logits);
  for (TensorId t : block_out) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
