// Shared torchvision pieces (engine/arch/vision/vision_parts.h).
#include "engine/arch/vision/vision_parts.h"

#include "engine/errors.h"

namespace memplan::vision {

void classification_loss(GraphBuilder& b, TensorId logits, TensorId y) {
  if (!b.training()) {  // the output, dropped by the caller after the forward returns
    b.hold(logits);
    b.mark_model_end();
    return;
  }
  b.mark_model_end();
  b.hold(logits);
  TensorId loss = b.cross_entropy(logits, y);
  b.drop(logits);
  b.exit_autocast();
  b.set_loss(loss);
}

void add_bn_buffers(GraphBuilder& b, const std::string& bn, int64_t ch) {
  b.buffer(bn + ".running_mean", {ch}, DType::f32);
  b.buffer(bn + ".running_var", {ch}, DType::f32);
  b.buffer(bn + ".num_batches_tracked", {}, DType::i64);
}

std::pair<TensorId, TensorId> image_inputs(GraphBuilder& b) {
  const auto& cfg = b.config();
  TensorId x = b.input({cfg.batch_size, 3, cfg.image_size, cfg.image_size}, b.param_dtype());
  if (!b.training()) return {x, kNoTensor};
  TensorId y = b.input({cfg.batch_size}, DType::i64);
  return {x, y};
}

TensorId activation(GraphBuilder& b, TensorId x, Act a) {
  if (!b.training()) {  // in place without autograd: nothing allocated, nothing saved
    switch (a) {
      case Act::relu_: return b.inplace("relu_", x, false);
      case Act::relu6_: return b.inplace("hardtanh_", x, false);
      case Act::silu_: return b.inplace("silu_", x, false);
      case Act::hardswish_: return b.inplace("hardswish_", x, false);
      default: break;
    }
  }
  switch (a) {
    case Act::none: return x;
    case Act::relu_: return b.inplace("relu_", x, true);
    case Act::relu: return b.unary("relu", x, false, true);
    case Act::relu6_: return b.unary("hardtanh_", x, true, false);  // hardtanh_backward(grad, self): a saved clone
    case Act::silu_: return b.unary("silu_", x, true, false);  // the saved original_self clone
    case Act::hardswish_: return b.unary("hardswish_", x, true, false);
    case Act::gelu: return b.unary("gelu", x, true, false);
    case Act::sigmoid: return b.unary("sigmoid", x, false, true);
    case Act::hardsigmoid: return b.unary("hardsigmoid", x, true, false);
  }
  return x;
}

Bn make_bn(GraphBuilder& b, const std::string& name, int64_t ch) {
  Bn n{b.param(name + ".weight", {ch}), b.param(name + ".bias", {ch})};
  add_bn_buffers(b, name, ch);
  return n;
}

Conv make_conv(GraphBuilder& b, const std::string& name, int64_t in, int64_t out, int64_t k, int64_t stride,
               int64_t pad, int64_t groups, bool bias, int64_t dilation) {
  if (groups < 1 || in % groups != 0 || out % groups != 0)
    throw InputError(name + ".groups", std::to_string(groups), "must divide the conv's in and out channels");
  Conv c;
  c.w = b.param(name + ".weight", {out, in / groups, k, k});
  if (bias) c.b = b.param(name + ".bias", {out});
  c.out = out;
  c.k = k;
  c.args.stride = stride;
  c.args.pad = pad;
  c.args.groups = groups;
  c.args.dilation = dilation;
  return c;
}

TensorId conv(GraphBuilder& b, const Conv& c, TensorId x) { return b.conv2d_ex(x, c.w, c.b, c.args); }

ConvBnAct make_cna(GraphBuilder& b, const std::string& prefix, int64_t in, int64_t out, int64_t k, int64_t stride,
                   int64_t groups, Act act, bool norm, int64_t dilation) {
  ConvBnAct m;
  m.c = make_conv(b, prefix + ".0", in, out, k, stride, (k - 1) / 2 * dilation, groups, !norm, dilation);
  m.has_bn = norm;
  if (norm) m.bn = make_bn(b, prefix + ".1", out);
  m.act = act;
  return m;
}

TensorId cna(GraphBuilder& b, const ConvBnAct& m, TensorId x) {
  ModuleCall call(b, x);  // an nn.Sequential: its input lives through the norm and the activation
  TensorId h = conv(b, m.c, x);
  if (m.has_bn) h = b.batch_norm(h, m.bn.w, m.bn.b);
  return activation(b, h, m.act);
}

SqueezeExcite make_se(GraphBuilder& b, const std::string& prefix, int64_t ch, int64_t squeeze, Act act, Act scale_act) {
  SqueezeExcite m;
  m.fc1 = make_conv(b, prefix + ".fc1", ch, squeeze, 1, 1, 0, 1, true);
  m.fc2 = make_conv(b, prefix + ".fc2", squeeze, ch, 1, 1, 0, 1, true);
  m.act = act;
  m.scale_act = scale_act;
  return m;
}

TensorId se(GraphBuilder& b, const SqueezeExcite& m, TensorId x) {
  TensorId s = b.mean_hw(x);
  s = activation(b, conv(b, m.fc1, s), m.act);
  s = activation(b, conv(b, m.fc2, s), m.scale_act);
  return b.mul(s, x);  // scale * input
}

TensorId stochastic_depth(GraphBuilder& b, TensorId x, double p) {
  if (!b.training() || p <= 0.0 || !b.config().dropout) return x;
  Shape ns(b.shape(x).size(), 1);
  ns[0] = b.shape(x)[0];
  TensorId noise = b.generic({"stochastic_depth_noise", {}, {{ns, b.dtype(x)}}, {}, {}, {}, {}})[0];
  return b.mul(x, noise);
}

TensorId dropout_inplace(GraphBuilder& b, TensorId x, double p) {
  if (!b.training() || p <= 0.0 || !b.config().dropout) return x;
  TensorId noise = b.generic({"dropout_noise", {}, {{b.shape(x), b.dtype(x)}}, {}, {}, {}, {}})[0];
  return b.inplace_fresh_grad("mul_", x, {noise});
}

}  // namespace memplan::vision
