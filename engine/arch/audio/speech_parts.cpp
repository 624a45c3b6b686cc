// The shared skeleton of the speech encoders (speech_parts.h has the statements it mirrors).
//
// Stages: parameters in Module._apply order (the harness builds on the CPU and moves the model), the batch
// (input_values [B, samples] in the parameters' dtype, then the labels), the conv feature encoder, the feature
// projection, SpecAugment's time mask, the encoder (positional conv, the family's layers), the head and its loss.
#include "engine/arch/audio/speech_parts.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/arch/encoders/bert_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/reduce_workspace.h"

namespace memplan {

namespace {

struct ConvLayerParams {
  TensorId w = kNoTensor, bias = kNoTensor, norm_w = kNoTensor, norm_b = kNoTensor;
};

struct Params {
  std::vector<ConvLayerParams> convs;
  TensorId proj_ln_w = kNoTensor, proj_ln_b = kNoTensor, proj_w = kNoTensor, proj_b = kNoTensor;
  TensorId pos_g = kNoTensor, pos_v = kNoTensor, pos_b = kNoTensor;
  TensorId enc_ln_w = kNoTensor, enc_ln_b = kNoTensor;
  TensorId masked_spec_embed = kNoTensor;
  TensorId head_w = kNoTensor, head_b = kNoTensor;   // lm_head (CTC) or projector (classification)
  TensorId cls_w = kNoTensor, cls_b = kNoTensor;     // classifier (classification)
};

enum class Head { ctc, seq_cls, feature };

// GroupNorm(C, C) over [B, C, L]: native_group_norm runs in fp32 under autocast (fp32 policy); it returns Y and
// the per-(batch, group) mean and rstd in the input's dtype, and saves the input, mean, rstd and weight. Its
// backward computes two [B, C] fp32 partial sums (ds, db) besides the gradients.
TensorId group_norm(GraphBuilder& b, TensorId x, TensorId w, TensorId bias) {
  const TensorId xc = b.autocast_fp32(x);
  const TensorId wc = b.autocast_fp32(w);
  const TensorId bc = b.autocast_fp32(bias);
  const Shape xs = b.shape(xc);
  const int64_t stats = checked_mul(checked_mul(xs[0], xs[1]), 4);
  const auto outs = b.generic({"group_norm",
                               {xc, wc, bc},
                               {{xs, b.dtype(xc)}, {{xs[0], xs[1]}, b.dtype(xc)}, {{xs[0], xs[1]}, b.dtype(xc)}},
                               {0, 1},
                               {1, 2},
                               {},
                               {stats, stats}});
  return outs[0];
}

// nn.Conv1d(in, out, k, stride, padding, groups) on x [B, in, L] (cuDNN): under autocast input, weight and bias
// are cast to the low dtype. A non-contiguous input (a transposed view) is copied contiguous for the kernel, in
// forward and again in backward. Workspaces as GraphBuilder::conv1d's (whisper's measured convs).
// The strided input's contiguous copy is made before the output (whole-run amp fp16 stream of the positional conv:
// copy, output, copy freed).
TensorId conv1d_any(GraphBuilder& b, TensorId x, TensorId w, TensorId bias, int64_t stride, int64_t pad,
                    int64_t groups, bool input_strided, bool grad_transposed = false) {
  if (groups == 1 && !input_strided) return b.conv1d(x, w, bias, stride, pad);
  const TensorId wc = b.autocast_low(w);
  const TensorId xc = b.autocast_low(x);
  const TensorId bc = b.autocast_low(bias);
  const Shape xs = b.shape(xc), ws = b.shape(wc);
  const int64_t len = (xs[2] + 2 * pad - (ws[2] - 1) - 1) / stride + 1;
  if (len < 1) throw InputError("audio_samples", "?", "too short for the model's convolutions");
  const Shape ys{xs[0], ws[0], len};
  const int64_t in_bytes = checked_mul(checked_mul(checked_mul(xs[0], xs[1]), xs[2]), dtype_bytes(b.dtype(xc)));
  TensorId copy = kNoTensor;
  if (input_strided) {
    copy = b.generic_one("conv_input_copy", {}, xs, b.dtype(xc));
    b.hold(copy);
  }
  std::vector<TensorId> reads{xc, wc};
  if (bc != kNoTensor) reads.push_back(bc);
  // cuDNN's workspaces as GraphBuilder::conv1d's (in + out + weight bytes + 147 forward and dgrad, + 16 wgrad:
  // whole-run recordings of the "layer" convs, amp bf16, show the forward one after the output).
  const int64_t io_w = checked_add(checked_add(in_bytes, checked_mul(checked_mul(ys[0], ys[1]), checked_mul(ys[2],
                                   dtype_bytes(b.dtype(xc))))), b.info(wc).bytes > 0 ? b.info(wc).bytes
                                   : checked_mul(checked_mul(ws[0], ws[1]), checked_mul(ws[2], dtype_bytes(b.dtype(wc)))));
  // Backward: the saved strided input copied contiguous again and, when the gradient arrives transposed (a "layer"
  // conv's output feeds the transposed LayerNorm), the gradient too, both kept while dgrad and wgrad run; each of
  // those takes its workspace (recorded amp bf16 stream of the "layer" stack: in copy, grad copy, dgrad, its
  // workspace, wgrad, its workspace).
  std::vector<int64_t> pre;
  if (input_strided) pre.push_back(in_bytes);
  if (grad_transposed) pre.push_back(checked_mul(checked_mul(ys[0], ys[1]), checked_mul(ys[2], dtype_bytes(b.dtype(xc)))));
  GraphBuilder::GenericOp op{"conv1d", reads, {{ys, b.dtype(xc)}}, {0, 1}, {},
                             {checked_add(io_w, 147)}, {checked_add(io_w, 147), checked_add(io_w, 16)}, pre};
  // The grouped positional conv (K 128, 16 groups) takes another algorithm: no forward workspace for a 16-bit
  // input, in + out bytes (+ 0.22 MiB) in fp32 (whole-run recordings: amp fp16 / amp bf16 rows none, the fp32 row
  // 17.78 MiB where in + out is 17.56).
  if (groups > 1)
    op.fwd_temp_bytes = b.dtype(xc) == DType::f32 ? std::vector<int64_t>{checked_add(in_bytes, checked_mul(
                                                        checked_mul(ys[0], ys[1]), checked_mul(ys[2], 4)))}
                                                  : std::vector<int64_t>{};
  const TensorId y = b.generic(op)[0];
  if (copy != kNoTensor) b.drop(copy);
  return y;
}

// nn.LayerNorm over the channels of a conv output's transposed view ("layer" conv layers): the fp32-policy cast
// under autocast, then native_layer_norm's contiguous copy of its strided input (made before the output, freed
// when it returns), the output and the row statistics. Its backward copies both the saved input and the incoming
// gradient contiguous and keeps both while it computes the gradients (whole-run amp bf16 recording of the
// checkpointed wav2vec2-large stack: copy, copy, dX alive together).
TensorId strided_layer_norm(GraphBuilder& b, TensorId x, TensorId w, TensorId bias) {
  const TensorId xc = b.autocast_fp32(x);
  const TensorId wc = b.autocast_fp32(w);
  const TensorId bc = b.autocast_fp32(bias);
  const Shape xs = b.shape(xc);
  const Shape stat(xs.begin(), xs.end() - 1);
  const int64_t bytes = checked_mul(checked_mul(checked_mul(xs[0], xs[1]), xs[2]), dtype_bytes(b.dtype(xc)));
  const TensorId copy = b.generic_one("layer_norm_input_copy", {}, xs, b.dtype(xc));
  b.hold(copy);
  // Over more than 64K rows the gamma / beta gradients are reduced in two stages: two [2048, C] fp32 partial-sum
  // buffers, each then summed by a column reduction with its staging workspace (recording at 120k rows, C 512:
  // 4 + 4 MiB partials, an 8 MiB + 16 B workspace per reduction; none at 60k rows).
  std::vector<int64_t> pre{bytes, bytes}, post;
  const int64_t rows = checked_mul(xs[0], xs[1]), cols = xs[2];
  if (rows > 64 * 1024) {
    const int64_t partial = checked_mul(checked_mul(2048, cols), 4);
    pre.push_back(partial);
    pre.push_back(partial);
    const ReduceWorkspace ws = column_sum_workspace(2048, cols, b.config().gpu_sm_count, b.config().gpu_max_threads_per_sm);
    // The engine frees a node's pre-temporaries before its workspaces: the staging buffer (one at a time in the
    // recording, while both partials live) is kept with them.
    if (ws.buffer_bytes > 0) pre.push_back(ws.buffer_bytes);
  }
  GraphBuilder::GenericOp op{"layer_norm",
                             {xc, wc, bc},
                             {{xs, b.dtype(xc)}, {stat, DType::f32}, {stat, DType::f32}},
                             {0, 1},
                             {1, 2},
                             {},
                             post,
                             pre};
  const TensorId y = b.generic(op)[0];
  b.drop(copy);
  return y;
}

// The feature encoder's first conv, nn.Conv1d(1, C, k, stride) on the raw waveform [B, 1, samples]. cuDNN picks
// another algorithm for this one-channel input than for whisper's convs (GraphBuilder::conv1d): the six whole-run
// recordings show no forward workspace in fp32, and in + out + weight bytes plus 0.069 x the output's bytes for a
// 16-bit input (0.0685 to 0.0691 of it over five batch / length shapes). Its weight-gradient workspace is taken
// as GraphBuilder::conv1d's (in + out + weight + 16). The waveform needs no gradient here (see the note on
// freeze_feature_encoder: the leaf's grad is not modelled), so no dgrad.
TensorId first_conv(GraphBuilder& b, TensorId x, TensorId w, TensorId bias, int64_t stride) {
  const TensorId wc = b.autocast_low(w);
  const TensorId xc = b.autocast_low(x);
  const TensorId bc = b.autocast_low(bias);
  const Shape xs = b.shape(xc), ws = b.shape(wc);
  const int64_t len = (xs[2] - ws[2]) / stride + 1;
  const Shape ys{xs[0], ws[0], len};
  const int64_t es = dtype_bytes(b.dtype(xc));
  const int64_t in_b = checked_mul(checked_mul(xs[0], xs[2]), es);
  const int64_t out_b = checked_mul(checked_mul(checked_mul(ys[0], ys[1]), ys[2]), es);
  const int64_t w_b = checked_mul(checked_mul(ws[0], ws[2]), es);
  const int64_t io_w = checked_add(checked_add(in_b, out_b), w_b);
  std::vector<int64_t> fwd;
  if (b.dtype(xc) != DType::f32) fwd.push_back(checked_add(io_w, static_cast<int64_t>(static_cast<double>(out_b) * 0.069)));
  std::vector<TensorId> reads{xc, wc};
  if (bc != kNoTensor) reads.push_back(bc);
  // Trained (no freeze_feature_encoder), the waveform view requires grad, so the backward also runs dgrad: its
  // [B, 1, samples] output and the forward's workspace again (whole-run amp bf16 streams: 107.86 MiB at b32 1 s, as
  // forward), then wgrad with its own.
  std::vector<int64_t> pre, post{checked_add(io_w, 16)};
  if (b.training() && b.info(w).trainable) {
    pre.push_back(in_b);
    if (!fwd.empty()) post.insert(post.begin(), fwd[0]);
  }
  GraphBuilder::GenericOp op{"conv1d", reads, {{ys, b.dtype(xc)}}, {0, 1}, {}, fwd, post, pre};
  return b.generic(op)[0];
}

Head head_of(const RunConfig& cfg) {
  if (cfg.task == Task::seq_cls) return Head::seq_cls;
  if (cfg.task == Task::feature) return Head::feature;
  return Head::ctc;
}

}  // namespace

std::pair<TensorId, TensorId> speech_norm_params(GraphBuilder& b, const std::string& name, int64_t d, bool train) {
  const TensorId w = b.param(name + ".weight", {d}, train);
  const TensorId bias = b.param(name + ".bias", {d}, train);
  return {w, bias};
}

void build_speech_encoder(GraphBuilder& b, const TransformerSpec& s, const SpeechFamily& fam, SpeechLayers& layers) {
  const auto& cfg = b.config();
  const Head head = head_of(cfg);
  if (cfg.task == Task::token_cls)  // check_task refuses it first (no kTasks row)
    throw InputError("task", "token_cls", s.model_type + " has no token-classification head modelled");
  if (cfg.audio_samples <= 0)
    throw InputError("audio_samples", std::to_string(cfg.audio_samples),
                     "must be set for a speech encoder (" + s.model_type + "): the waveform's samples per example");
  const int64_t B = cfg.batch_size, N = cfg.audio_samples, H = s.hidden_size, V = s.vocab_size;
  const int64_t T = speech_frames(s, N);
  if (T <= 0)
    throw InputError("audio_samples", std::to_string(N), "is too short for the model's conv feature encoder");
  if (cfg.seq_len != 0 && cfg.seq_len != T)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "a speech encoder's frames come from audio_samples (" + std::to_string(T) + " here)");
  const bool train = b.training();
  if (train && head == Head::ctc) {
    const int64_t L = cfg.target_len > 0 ? cfg.target_len : 0;
    if (L <= 0)
      throw InputError("target_len", "0", "must be set for CTC training: the labels' length per example");
    if (L > T)
      throw InputError("target_len", std::to_string(L),
                       "exceeds the " + std::to_string(T) + " frames: CTC needs at least one frame per label");
  }
  if (train && s.speech_spec_augment && s.speech_mask_time_prob > 0.0 && s.speech_mask_time_length > T)
    throw InputError("config.mask_time_length", std::to_string(s.speech_mask_time_length),
                     "exceeds the " + std::to_string(T) + " frames: _compute_mask_indices raises");
  const bool fe_train = train && !cfg.freeze_feature_encoder;
  const std::string base = fam.base + ".";
  const size_t n_conv = s.speech_conv_dim.size();

  hf_construction_scalar(b);
  b.no_input_require_grads();  // main_input_name is input_values: no input-embedding hook
  // ---- parameters (Module._apply order: children before a module's own parameters)
  Params p;
  for (size_t i = 0; i < n_conv; ++i) {
    const int64_t cin = i == 0 ? 1 : s.speech_conv_dim[i - 1], cout = s.speech_conv_dim[i];
    const std::string pre = base + "feature_extractor.conv_layers." + std::to_string(i) + ".";
    ConvLayerParams c;
    c.w = b.param(pre + "conv.weight", {cout, cin, s.speech_conv_kernel[i]}, fe_train);
    if (s.speech_conv_bias) c.bias = b.param(pre + "conv.bias", {cout}, fe_train);
    if (s.speech_layer_norm_convs || i == 0)
      std::tie(c.norm_w, c.norm_b) = speech_norm_params(b, pre + "layer_norm", cout, fe_train);
    p.convs.push_back(c);
  }
  const int64_t C = s.speech_conv_dim.back();
  if (s.speech_feat_proj_layer_norm)
    std::tie(p.proj_ln_w, p.proj_ln_b) = speech_norm_params(b, base + "feature_projection.layer_norm", C, train);
  p.proj_w = b.param(base + "feature_projection.projection.weight", {H, C}, train);
  p.proj_b = b.param(base + "feature_projection.projection.bias", {H}, train);
  const int64_t K = s.speech_pos_conv_kernel, G = s.speech_pos_conv_groups;
  // The weight-normed conv: parametrizations.weight.original0 (g [1, 1, K]) and original1 (v), then its bias.
  p.pos_g = b.param(base + "encoder.pos_conv_embed.conv.parametrizations.weight.original0", {1, 1, K}, train);
  p.pos_v = b.param(base + "encoder.pos_conv_embed.conv.parametrizations.weight.original1", {H, H / G, K}, train);
  p.pos_b = b.param(base + "encoder.pos_conv_embed.conv.bias", {H}, train);
  std::tie(p.enc_ln_w, p.enc_ln_b) = speech_norm_params(b, base + "encoder.layer_norm", H, train);
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.register_layer(b, s, base + "encoder.layers." + std::to_string(i) + ".", i, train && !layer_frozen(cfg, i));
  // masked_spec_embed: the base model's own parameter, after its children. Read only by SpecAugment in training
  // (no gradient otherwise, and AdamW keeps no state for a parameter without one).
  if (s.speech_masked_spec_embed) p.masked_spec_embed = b.param(base + "masked_spec_embed", {H}, train);
  if (head == Head::ctc) {
    p.head_w = b.param("lm_head.weight", {V, H}, train);
    p.head_b = b.param("lm_head.bias", {V}, train);
  } else if (head == Head::seq_cls) {
    const int64_t P = s.speech_classifier_proj_size, NL = cfg.num_labels;
    p.head_w = b.param("projector.weight", {P, H}, train);
    p.head_b = b.param("projector.bias", {P}, train);
    p.cls_w = b.param("classifier.weight", {NL, P}, train);
    p.cls_b = b.param("classifier.bias", {NL}, train);
  }

  // ---- the batch: input_values in the parameters' dtype (fp32 under amp), then the labels
  const TensorId input_values = b.input({B, N}, b.param_dtype());
  TensorId labels = kNoTensor;
  if (train) labels = head == Head::ctc ? b.input({B, cfg.target_len}, DType::i64) : b.input({B}, DType::i64);

  // <Type>ForCTC: `labels.max() >= vocab_size` (a 0-d max, a 0-d bool, read by the host).
  if (train && head == Head::ctc) {
    const TensorId mx = b.generic_one("max", {labels}, {1}, DType::i64);
    b.generic_one("ge", {mx}, {1}, DType::boolean);
  }

  // ---- <Type>FeatureEncoder
  TensorId h = b.view(input_values, {B, 1, N});
  // Each conv layer is a GradientCheckpointingLayer: gradient_checkpointing_enable() checkpoints every one of them
  // along with the encoder layers. Frozen (freeze_feature_encoder), nothing in the stack needs a gradient: the
  // checkpoint saves no input and records nothing, as the frozen stack without it (held-out HuBERT-large ckpt
  // row: after_fwd +457 MiB, the six conv inputs, before this; its peak, in the forward, was exact).
  for (size_t i = 0; i < n_conv; ++i) {
    const ConvLayerParams& c = p.convs[i];
    b.begin_layer(base + "feature_extractor.conv_layers." + std::to_string(i), fe_train && cfg.grad_checkpointing);
    const TensorId layer_in = h;
    b.hold(layer_in);  // the encoder's loop variable (and the module call's argument) until the layer returns
    // A "layer" conv layer's GELU keeps the memory order of the transposed LayerNorm output: the next conv reads a
    // strided input.
    const bool strided_in = s.speech_layer_norm_convs && i > 0;
    TensorId y = i == 0 && s.speech_conv_dim.size() > 0 && b.shape(h)[1] == 1
                     ? first_conv(b, h, c.w, c.bias, s.speech_conv_stride[i])
                     : conv1d_any(b, h, c.w, c.bias, s.speech_conv_stride[i], 0, 1, strided_in, strided_in);
    const int64_t Lc = b.shape(y)[2], Cc = b.shape(y)[1];
    if (s.speech_layer_norm_convs) {
      // transpose(-2, -1) -> LayerNorm over channels (on the strided view: a contiguous copy for the kernel, made
      // before its output) -> transpose back (a view of the contiguous [B, L, C] output). The conv output stays
      // bound (hidden_states, the transposed view the norm is called with) until the norm returns.
      b.hold(y);
      const TensorId t = b.view(y, {B, Lc, Cc});
      const TensorId n = strided_layer_norm(b, t, c.norm_w, c.norm_b);
      b.drop(y);
      y = b.view(n, {B, Cc, Lc});
    } else if (i == 0) {
      y = group_norm(b, y, c.norm_w, c.norm_b);
    }
    h = b.unary("gelu", y, true, false);
    b.drop(layer_in);
    b.end_layer();
  }
  // extract_features.transpose(1, 2): a view [B, T, C]
  const TensorId conv_out = b.view(h, {B, T, C});

  // ---- <Type>FeatureProjection
  TensorId normed = conv_out;
  if (s.speech_feat_proj_layer_norm)
    normed = b.layer_norm(conv_out, p.proj_ln_w, p.proj_ln_b, /*contiguous_copy=*/!s.speech_layer_norm_convs);
  // The model binds extract_features until it returns: the normed features (wav2vec2, wavlm) or the transposed
  // conv output (hubert).
  const TensorId extract_features = fam.projection_returns_norm ? normed : conv_out;
  b.hold(extract_features);
  TensorId hs = b.dropout(b.linear(normed, p.proj_w, p.proj_b), s.speech_feat_proj_dropout);

  // ---- _mask_hidden_states: SpecAugment's time mask (training)
  if (train && s.speech_spec_augment && s.speech_mask_time_prob > 0.0) {
    // torch.tensor(numpy mask, device, bool) [B, T]; masked_spec_embed.to(dtype) (a copy when it differs); the
    // boolean index_put_ (its indices from nonzero: a few masked frames, negligible).
    const TensorId mask = b.generic_one("mask_to_device", {}, {B, T}, DType::boolean);
    const TensorId value = b.to(p.masked_spec_embed, b.dtype(hs));
    hs = b.inplace_fresh_grad("index_put_", hs, {mask, value});
  }
  b.hold(hs);  // the model's hidden_states until the encoder returns

  // ---- <Type>Encoder / <Type>EncoderStableLayerNorm
  // pos_conv_embed: weight = _weight_norm(v, g, dim=2) (fused: dim 2 is v's last; returns the weight and the
  // per-tap norms, fp32 for 16-bit v, and saves v, g and the norms); the conv on the transposed [B, H, T] view
  // (padding K // 2: T + 1 outputs for an even K); SamePad's slice; GELU (a fresh [B, H, T]); transposed back.
  const TensorId wn = b.generic({"weight_norm",
                                 {p.pos_v, p.pos_g},
                                 {{b.shape(p.pos_v), b.dtype(p.pos_v)}, {{1, 1, K}, DType::f32}},
                                 {0, 1},
                                 {1},
                                 {},
                                 {}})[0];
  b.hold(wn);  // self.weight, the conv's argument until it returns
  const TensorId pc = conv1d_any(b, b.view(hs, {B, H, T}), wn, p.pos_b, 1, K / 2, G, /*input_strided=*/true);
  b.drop(wn);
  const int64_t Tp = b.shape(pc)[2];
  const TensorId padded = Tp > T ? b.view(pc, {B, H, T}) : pc;
  const TensorId position_embeddings = b.view(b.unary("gelu", padded, true, false), {B, T, H});
  b.hold(position_embeddings);  // bound until the encoder returns
  TensorId x = b.add(hs, position_embeddings);
  if (!s.speech_stable_layer_norm) x = b.layer_norm(x, p.enc_ln_w, p.enc_ln_b);
  x = b.dropout(x, s.embd_dropout);
  // <Type>ForSequenceClassification's forward is wrapped by filter_output_hidden_states: it forces
  // output_hidden_states, so capture_outputs collects the first layer's input and every layer's output in a tuple
  // the output holds until the wrapper filters it after the forward returns (whole-run amp bf16 stream: twelve
  // [B, T, H] fp32 blocks freed only at the end of the forward).
  std::vector<TensorId> captured;
  if (head == Head::seq_cls) captured.push_back(x);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    x = layers.run_layer(b, s, i, x);
    if (head == Head::seq_cls) captured.push_back(x);
  }
  for (TensorId t : captured) b.hold(t);
  if (s.speech_stable_layer_norm) {
    b.hold(x);
    const TensorId y = b.layer_norm(x, p.enc_ln_w, p.enc_ln_b);
    b.drop(x);
    x = y;
  }
  layers.encoder_end(b);
  b.drop(position_embeddings);
  b.drop(hs);
  const TensorId last_hidden = x;
  b.hold(last_hidden);  // outputs.last_hidden_state until the head's forward returns

  if (head == Head::feature) {  // the bare model: its output (last_hidden_state, extract_features)
    forward_output(b, {last_hidden, extract_features});
    return;
  }
  if (head == Head::seq_cls) {
    check_cls_loss(b, s);
    // projector, mean over frames (MeanBackward: a fresh [B, T, P] gradient), classifier, cross entropy.
    const TensorId proj = b.linear(last_hidden, p.head_w, p.head_b);
    b.hold(proj);  // hidden_states until the forward returns
    const int64_t P = s.speech_classifier_proj_size;
    const TensorId pooled = b.generic({"mean", {proj}, {{{B, P}, b.dtype(proj)}}, {}, {}, {}, {}})[0];
    b.hold(pooled);
    const TensorId logits = b.linear(pooled, p.cls_w, p.cls_b);
    cls_loss(b, logits, labels, {proj, pooled, last_hidden, extract_features});
    for (TensorId t : captured) b.drop(t);
    return;
  }
  // <Type>ForCTC
  const TensorId logits = b.linear(b.dropout(last_hidden, s.speech_final_dropout), p.head_w, p.head_b);
  if (!train) {
    forward_output(b, {logits});
    b.drop(extract_features);
    b.drop(last_hidden);
    return;
  }
  b.mark_model_end();
  b.hold(logits);
  const int64_t L = cfg.target_len;
  // attention_mask = torch.ones_like(input_values, dtype=torch.long): bound until the forward returns
  const TensorId ones = b.generic_one("ones_like", {}, {B, N}, DType::i64);
  b.hold(ones);
  // input_lengths: the row sums, then per conv layer floor((len - k) / s) + 1 (three [B] int64 results each)
  TensorId len = b.generic_one("sum", {ones}, {B}, DType::i64);
  for (size_t i = 0; i < n_conv; ++i) {
    len = b.generic_one("sub", {len}, {B}, DType::i64);
    len = b.generic_one("div_floor", {len}, {B}, DType::i64);
    len = b.generic_one("add", {len}, {B}, DType::i64);
  }
  const TensorId input_lengths = len;
  b.hold(input_lengths);
  const TensorId labels_mask = b.generic_one("ge", {labels}, {B, L}, DType::boolean);
  b.hold(labels_mask);
  const TensorId target_lengths = b.generic_one("sum", {labels_mask}, {B}, DType::i64);
  b.hold(target_lengths);
  const TensorId targets = b.generic_one("masked_select", {labels, labels_mask}, {B * L}, DType::i64);
  b.hold(targets);
  // log_softmax(logits, dim=-1, dtype=float32) (the cast first when the logits are 16-bit), saved for backward
  const TensorId lp_in = b.to(logits, DType::f32);
  const TensorId log_probs = b.generic({"log_softmax", {lp_in}, {{{B, T, V}, DType::f32}}, {}, {0}, {}, {}})[0];
  // native ctc_loss: log_alpha [B, T, 2L + 1] and the per-sample nll [B] (fp32), both saved; its backward makes
  // log_beta (log_alpha's size) and the [T, B, V] gradient.
  const int64_t S2 = 2 * L + 1;
  const int64_t alpha_bytes = checked_mul(checked_mul(checked_mul(B, T), S2), 4);
  const auto ctc = b.generic({"ctc_loss",
                              {log_probs, targets},
                              {{{B}, DType::f32}, {{B, T, S2}, DType::f32}},
                              {0, 1},
                              {0, 1},
                              {checked_mul(B, 8)},
                              {alpha_bytes, checked_mul(B, 8)}});
  TensorId loss;
  if (s.speech_ctc_mean) {
    const TensorId tl = b.generic_one("clamp_min", {target_lengths}, {B}, DType::f32);
    loss = b.generic_one("mean", {b.binary("div", ctc[0], tl, false, true)}, {1}, DType::f32);
  } else {
    loss = b.generic_one("sum", {ctc[0]}, {1}, DType::f32);
  }
  for (TensorId t : {logits, ones, input_lengths, labels_mask, target_lengths, targets, extract_features, last_hidden})
    b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
