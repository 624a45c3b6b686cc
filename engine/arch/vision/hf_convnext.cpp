// ConvNextForImageClassification and ConvNextV2ForImageClassification (transformers 5.17
// models/convnext/modeling_convnext.py, models/convnextv2/modeling_convnextv2.py: one file's statements with the
// layer scale replaced by GRN), training forward + cross entropy, and the inference forward.
// Not torchvision's ConvNeXt (convnext.cpp): other modules and bindings, and an out-of-place residual add.
//   ConvNextEmbeddings: patch Conv2d (kernel = stride = patch_size, bias), ConvNextLayerNorm channels_first
//     (permute(0, 2, 3, 1), nn.LayerNorm, permute(0, 3, 1, 2)).
//   Stage i: stage 0 has no downsampler (in == out channels, stride 1); later stages start with
//     [ConvNextLayerNorm channels_first, Conv2d 2x2 / 2]. Then depths[i] ConvNextLayers.
//   ConvNextLayer: residual = x; dwconv 7x7 (groups = C, bias); permute(0, 2, 3, 1); LayerNorm (eps 1e-6);
//     pwconv1 Linear(C, 4C); GELU; [V2: GRN]; pwconv2 Linear(4C, C); [V1: layer_scale_parameter * x];
//     permute(0, 3, 1, 2); residual + drop_path(x) (a new tensor).
//   ConvNextV2GRN: g = torch.linalg.vector_norm(x, ord=2, dim=(1, 2), keepdim=True) [B, 1, 1, 4C];
//     n = g / (g.mean(dim=-1, keepdim=True) + 1e-6); weight * (x * n) + bias + x (three full-size results).
//   ConvNextModel: layernorm(last_hidden_state.mean([-2, -1])) (nn.LayerNorm over [B, C_last]).
//   Head: classifier Linear -> ForSequenceClassificationLoss (cross entropy, mean).
// Memory layout (as torchvision's, convnext.cpp): the stem conv's output is contiguous NCHW, so the stem norm's
// permuted input is not contiguous and layer_norm works on a contiguous copy; its output permuted back has
// channels-last strides, and so has everything after it: the depthwise and downsampling convs are channels-last
// cuDNN convs, each block's permute(0, 2, 3, 1) is contiguous.
// Python bindings that decide lifetimes (inference; training keeps what autograd saves):
//   - ConvNextModel.forward binds embedding_output until it returns (after the final layernorm).
//   - ConvNextEncoder's loop variable holds each stage's input until the stage returns; ConvNextStage's argument
//     lives through its downsampler and layers; ConvNextLayer's `residual` (its argument) until it returns.
//   - ConvNextForImageClassification.forward keeps outputs (last_hidden_state, pooler_output) and the logits
//     bound until it returns, after the loss.
// Under autocast the residual stream is fp32 in V1 (the fp32 layer scale times the bf16 pwconv2 output) and in V2
// (GRN's x * n promotes the bf16 GELU output to the fp32 norm; pwconv2 then casts it back), so every dwconv
// casts its input.
#include "engine/arch/builders.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/vision_parts.h"
#include "engine/errors.h"
#include "engine/reduce_workspace.h"

namespace memplan {

using namespace vision;

namespace {

struct Ln {
  TensorId w = kNoTensor, b = kNoTensor;
};
Ln make_ln(GraphBuilder& b, const std::string& name, int64_t c) {
  return {b.param(name + ".weight", {c}), b.param(name + ".bias", {c})};
}

// ConvNextLayerNorm(data_format="channels_first") on [B, C, H, W]; `contiguous_input`: x has channels-last
// strides, so the permute is contiguous (no copy inside layer_norm).
TensorId layer_norm_cf(GraphBuilder& b, const Ln& ln, TensorId x, bool contiguous_input) {
  const Shape s = b.shape(x);
  ModuleCall call(b, x);  // the module's argument, past autocast's fp32 cast of it (inference)
  const TensorId v = b.view(x, {s[0], s[2], s[3], s[1]});
  const TensorId y = b.layer_norm(v, ln.w, ln.b, /*contiguous_copy=*/!contiguous_input && s[2] * s[3] > 1);
  return b.view(y, s);
}

struct Layer {
  Conv dw;
  Ln ln;
  TensorId w1 = kNoTensor, b1 = kNoTensor, w2 = kNoTensor, b2 = kNoTensor;
  TensorId scale = kNoTensor;                    // V1 layer_scale_parameter [C]
  TensorId grn_w = kNoTensor, grn_b = kNoTensor;  // V2 GRN [1, 1, 1, 4C]
  double drop_path = 0.0;
};

struct Stage {
  bool down = false;
  Ln down_ln;
  Conv down_conv;
  std::vector<Layer> layers;
};

// ConvNextV2GRN.forward on the GELU output x [B, H, W, 4C].
TensorId grn(GraphBuilder& b, const Layer& l, TensorId x) {
  const Shape xs = b.shape(x);
  const Shape gs{xs[0], 1, 1, xs[3]};
  // torch.linalg.vector_norm over (1, 2): under autocast an fp32_set_opt_dtype op (fp32 result, no input copy);
  // it saves its input and its result. The reduction runs over H * W inputs per output, not along the fastest
  // dimension: with many pixels per output Reduce.cuh splits each output across CTAs and stages the partial sums
  // in a global buffer for the call (as a column sum of [H * W, B * 4C]; V2-B b21 bf16 at 56 x 56: 136.50 MiB,
  // none at 28 x 28). Backward (norm_backward, p = 2): grad * (self / norm) - the quotient is a full-size
  // temporary in the promoted dtype of x and the norm (fp32 under autocast, x's dtype otherwise: 16.08 MiB bf16
  // pairs in V2-B's stream), alive while x's gradient is written.
  const DType gdt = b.autocast() ? DType::f32 : b.dtype(x);
  const std::vector<int64_t> pre{b.numel(x) * static_cast<int64_t>(dtype_bytes(gdt))};
  const ReduceWorkspace rw = column_sum_workspace(xs[1] * xs[2], xs[0] * xs[3], b.config().gpu_sm_count,
                                                  b.config().gpu_max_threads_per_sm);
  std::vector<int64_t> fwd_temps;
  if (rw.buffer_bytes > 0) fwd_temps = {rw.buffer_bytes, rw.semaphore_bytes};
  const TensorId g = b.generic({"linalg_vector_norm", {x}, {{gs, gdt}}, {0}, {0}, fwd_temps, {}, pre})[0];
  // g.mean(dim=-1, keepdim=True) + 1e-6, then g / that: small [B, 1, 1, *] tensors.
  const TensorId m = b.add_scalar(b.reduce_last("mean", g, false));
  const TensorId n = b.binary("div", g, m, true, true);
  // weight * (x * n) + bias + x: each a full-size result; under autocast x * n promotes to fp32.
  const TensorId xn = b.mul(x, n);
  const TensorId wxn = b.mul(l.grn_w, xn);
  return b.add(b.add(wxn, l.grn_b), x);
}

// `nchw_grads`: the layer is in the last stage, whose gradients arrive in NCHW order (ConvNextModel's
// mean([-2, -1]) backward expands into a contiguous [B, C, H, W]; the residual stream keeps that buffer, and only
// the last stage's downsampling conv hands the stages below channels-last gradients from cuDNN). Its
// permute(0, 3, 1, 2)'s gradient is then a non-contiguous [B, H, W, C], which pwconv2's backward copies
// contiguous (an activation-sized pair per block in the ConvNeXt-T fp32 and V2-T amp fp16 streams).
TensorId convnext_layer(GraphBuilder& b, const Layer& l, const std::string& name, TensorId h, bool nchw_grads) {
  b.begin_layer(name, false);
  ModuleCall call(b, h);  // `residual`, the layer's argument, until it returns
  const TensorId residual = h;
  // Each statement rebinds `features`: its previous value lives until the next statement's call has returned,
  // in training too. That matters where autograd keeps a copy and not the value itself (under autocast the
  // 16-bit casts are saved: the fp16 dwconv output outlives layernorm's fp32 result, the fp32 layernorm output
  // pwconv1's, V2's fp32 GRN output pwconv2's, pwconv2's output the residual add; amp fp16 V2-T stream).
  const auto rebind = [&b](TensorId bound, const auto& call) {
    b.hold(bound);
    const TensorId result = call(bound);
    b.drop(bound);
    return result;
  };
  TensorId o = conv(b, l.dw, h);
  const Shape os = b.shape(o);  // [B, C, H, W], channels-last strides
  {
    const TensorId permuted = b.view(o, {os[0], os[2], os[3], os[1]});
    ModuleCall ln_call(b, permuted);  // nn.LayerNorm's argument, past autocast's fp32 cast of it (inference)
    o = rebind(o, [&](TensorId) { return b.layer_norm(permuted, l.ln.w, l.ln.b); });
  }
  o = rebind(o, [&](TensorId v) { return b.linear(v, l.w1, l.b1); });
  o = b.unary("gelu", o, true, false);
  if (l.grn_w != kNoTensor) o = grn(b, l, o);
  o = rebind(o, [&](TensorId v) { return b.linear(v, l.w2, l.b2); });
  if (l.scale != kNoTensor) {
    // V1 in the last stage: the layer scale's mul hands pwconv2 the non-contiguous gradient, which its backward
    // copies; the scale's own gradient, a sum over (B, H, W) of a product laid out NCHW, reduces the fastest
    // dimensions and stages nothing (ConvNeXt-T fp32 stream: no 13.88 MiB buffer there, one in every other stage).
    if (nchw_grads) o = b.view_copying_grad(o, b.shape(o));
    o = rebind(o, [&](TensorId v) { return b.mul(l.scale, v); });
    if (nchw_grads) b.broadcast_grad_staging(l.scale, /*staged=*/false);
  }
  o = nchw_grads && l.scale == kNoTensor ? b.view_copying_grad(o, os) : b.view(o, os);  // permute(0, 3, 1, 2)
  o = rebind(o, [&](TensorId v) { return b.add(residual, hfbackbone::drop_path(b, v, l.drop_path)); });
  call.end();
  b.end_layer();
  return o;
}

}  // namespace

void build_hf_convnext(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool v2 = s.convnext_grn;
  const std::string type = v2 ? "convnextv2" : "convnext";
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)),
                     type + " is modelled as its image classifier (no other head)");
  if (cfg.attn == AttnImpl::sdpa)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "is not supported by " + type + " (no attention; _supports_sdpa is unset, so transformers "
                     "refuses attn_implementation=\"sdpa\"): use eager");
  if (cfg.grad_checkpointing)
    throw InputError("grad_checkpointing", "true",
                     type + " does not support gradient checkpointing (supports_gradient_checkpointing is unset: "
                     "gradient_checkpointing_enable() raises)");
  const auto& W = s.stage_widths;
  const auto& D = s.stage_depths;
  if (W.empty() || W.size() != D.size())
    throw InputError("config.hidden_sizes", std::to_string(W.size()), "needs one width per stage of depths");
  const int64_t B = cfg.batch_size, R = s.image_size, P = s.patch_size, C = s.num_channels;
  const int64_t NL = s.image_num_labels;
  int64_t total = 0;
  for (int64_t d : D) total += d;
  const std::string pre = type + ".";

  hf_construction_scalar(b);
  // Parameters in ConvNextForImageClassification.__init__ order (Module._apply moves a module's children before
  // its own parameters, which is the same order here: the layer scale is each layer's last).
  Conv stem = make_conv(b, pre + "embeddings.patch_embeddings", C, W[0], P, P, 0, 1, true);
  Ln stem_ln = make_ln(b, pre + "embeddings.layernorm", W[0]);
  std::vector<Stage> stages(W.size());
  int64_t id = 0;
  for (size_t i = 0; i < W.size(); ++i) {
    const std::string p = pre + "encoder.stages." + std::to_string(i) + ".";
    Stage& st = stages[i];
    const int64_t in = i == 0 ? W[0] : W[i - 1], c = W[i];
    st.down = i > 0;  // in != out or stride 2
    if (st.down) {
      st.down_ln = make_ln(b, p + "downsampling_layer.0", in);
      st.down_conv = make_conv(b, p + "downsampling_layer.1", in, c, 2, 2, 0, 1, true);
      st.down_conv.args.channels_last = true;
    }
    for (int64_t j = 0; j < D[i]; ++j, ++id) {
      const std::string q = p + "layers." + std::to_string(j) + ".";
      Layer l;
      l.dw = make_conv(b, q + "dwconv", c, c, 7, 1, 3, c, true);
      l.dw.args.channels_last = true;
      l.ln = make_ln(b, q + "layernorm", c);
      l.w1 = b.param(q + "pwconv1.weight", {4 * c, c});
      l.b1 = b.param(q + "pwconv1.bias", {4 * c});
      if (v2) {
        l.grn_w = b.param(q + "grn.weight", {1, 1, 1, 4 * c});
        l.grn_b = b.param(q + "grn.bias", {1, 1, 1, 4 * c});
      }
      l.w2 = b.param(q + "pwconv2.weight", {c, 4 * c});
      l.b2 = b.param(q + "pwconv2.bias", {c});
      if (!v2 && s.convnext_layer_scale) l.scale = b.param(q + "layer_scale_parameter", {c});
      l.drop_path = hfbackbone::block_drop_path(s.drop_path_rate, id, total);
      st.layers.push_back(l);
    }
  }
  const int64_t last = W.back();
  Ln final_ln = make_ln(b, pre + "layernorm", last);
  const TensorId cls_w = b.param("classifier.weight", {NL, last});
  const TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels (training).
  const TensorId x = b.input({B, C, R, R}, b.param_dtype());
  const TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;

  const TensorId embedding_output = layer_norm_cf(b, stem_ln, conv(b, stem, x), /*contiguous_input=*/false);
  b.hold(embedding_output);  // bound in ConvNextModel.forward until it returns
  TensorId h = embedding_output;
  id = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const Stage& st = stages[i];
    ModuleCall stage_call(b, h);  // the encoder's loop variable and the stage's argument, until the stage returns
    if (st.down)  // downsampling_layer: ConvNextLayerNorm(channels_first), then the 2x2 / 2 conv
      h = conv(b, st.down_conv, layer_norm_cf(b, st.down_ln, h, /*contiguous_input=*/true));
    for (size_t j = 0; j < st.layers.size(); ++j)
      h = convnext_layer(b, st.layers[j], pre + "encoder.stages." + std::to_string(i) + ".layers." + std::to_string(j), h,
                         i + 1 == stages.size());
    stage_call.end();
  }
  // ConvNextModel: layernorm(last_hidden_state.mean([-2, -1])); embedding_output is released when it returns.
  const TensorId last_hidden = h;
  b.hold(last_hidden);  // outputs.last_hidden_state until the classifier's forward returns
  const TensorId mean = b.view(b.mean_hw(last_hidden), {B, last});
  const TensorId pooled = b.layer_norm(mean, final_ln.w, final_ln.b);
  b.drop(embedding_output);
  hfbackbone::classifier_tail(b, {last_hidden, pooled}, pooled, cls_w, cls_b, labels);
}

}  // namespace memplan
