// Pieces the torchvision 0.26 classification builders share (engine/arch/<family>.cpp, one per model file).
//
// Mechanisms (torch 2.11 autograd; the whole-run recordings in data/validation/recordings/families1/):
//  - Models are built under `with torch.device("cuda")`: parameters and buffers are allocated in __init__ order,
//    so each helper registers them in the order the module constructor creates them (a conv's weight then bias,
//    a BatchNorm's weight, bias, running_mean, running_var, num_batches_tracked).
//  - Conv2dNormActivation (torchvision/ops/misc.py): conv, norm, activation(inplace=True).
//      ReLU in place: relu_ saves its result (threshold_backward(grad, result)).
//      ReLU6 (hardtanh_), SiLU, Hardswish in place: their derivative needs the input, so autograd's in-place
//      codegen saves a clone of the input taken before the op (original_self): one input-sized allocation, saved
//      for backward (mobilenet_v2 recording: conv 98 MiB, BN 98 MiB, then a third 98 MiB block per ReLU6). That is
//      the allocation pattern of the out-of-place op saving its input, which is how they are recorded here.
//  - StochasticDepth (torchvision/ops/stochastic_depth.py, "row" mode, training, p > 0): an [N, 1, ..., 1] noise
//    tensor in the input's dtype (bernoulli_, div_ in place), then input * noise: a new input-sized tensor; the
//    product saves only the noise. p == 0 (the first block) returns the input itself.
//  - nn.Dropout(inplace=True) (ATen _dropout_impl<inplace>): an input-sized noise tensor in the input's dtype
//    (empty_like, bernoulli_, div_), then input.mul_(noise), which saves the noise. nn.Dropout(inplace=False)
//    runs the fused native_dropout (GraphBuilder::dropout: bool mask + output).
//  - F.adaptive_avg_pool2d(x, 1) is x.mean((-1, -2), keepdim=True) (GraphBuilder::mean_hw).
// Inference (model.eval() under torch.inference_mode(), the harness's _infer_forward; RunConfig::mode inference):
//  - Nothing is saved: each tensor dies when its last Python reference goes. An nn.Module's tensor arguments are
//    referenced by Module._call_impl's args tuple (and by the caller's variable) until the module returns, so a
//    module's input outlives its last read whenever the module allocates after that read (Conv2dNormActivation:
//    the input lives through the norm; nn.Sequential: its input lives through every child; a residual block:
//    its input lives through the block even where no residual reads it). ModuleCall holds them.
//  - In-place activations (relu_, hardtanh_, silu_, hardswish_) allocate nothing: no clone is saved without
//    autograd. BatchNorm2d normalises with its running statistics (GraphBuilder::batch_norm: cuDNN allocates the
//    output only). Dropout and StochasticDepth return their input.
//  - The classifier's logits are the output: held until the forward returns, no labels, no loss.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>

#include "engine/arch/builders.h"
#include "engine/errors.h"

namespace memplan::vision {

inline int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation = 1) {
  return (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
}

// torchvision's _make_divisible (models/_utils.py): round to the nearest multiple of `divisor`, not below
// min_value (default divisor), never more than 10 % down.
inline int64_t make_divisible(double v, int64_t divisor, int64_t min_value = 0) {
  if (min_value <= 0) min_value = divisor;
  int64_t nv = std::max<int64_t>(min_value, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(nv) < 0.9 * v) nv += divisor;
  return nv;
}

// F.cross_entropy(model(x), y): the logits argument lives until the call returns; autocast exits after it.
// Inference: the logits are the model's output (held until the forward returns); `y` is kNoTensor.
void classification_loss(GraphBuilder& b, TensorId logits, TensorId y);

// An nn.Module call in inference: `x` (its tensor argument) stays referenced until end() (the module returns).
// Nested calls on the same tensor are fine: the last end() decides. Training: no effect (the graph's saved
// tensors and the training builders' own lifetimes stay as measured).
class ModuleCall {
 public:
  ModuleCall(GraphBuilder& b, TensorId x) : b_(b), x_(b.training() ? kNoTensor : x) {
    if (x_ != kNoTensor) b_.hold(x_);
  }
  void end() {
    if (x_ != kNoTensor) b_.drop(x_);
    x_ = kNoTensor;
  }
  ~ModuleCall() { end(); }
  ModuleCall(const ModuleCall&) = delete;
  ModuleCall& operator=(const ModuleCall&) = delete;

 private:
  GraphBuilder& b_;
  TensorId x_;
};
void add_bn_buffers(GraphBuilder& b, const std::string& bn, int64_t ch);

// The images and labels of a classification step: x [B, 3, R, R] in the model's dtype, y [B] int64 (inference:
// the images only, y = kNoTensor).
std::pair<TensorId, TensorId> image_inputs(GraphBuilder& b);

enum class Act : uint8_t { none, relu_, relu, relu6_, silu_, hardswish_, gelu, sigmoid, hardsigmoid };
// One activation as the module calls it (see the header comment for what each saves).
TensorId activation(GraphBuilder& b, TensorId x, Act a);

// A BatchNorm2d's parameters and buffers (registered on construction).
struct Bn {
  TensorId w = kNoTensor, b = kNoTensor;
};
Bn make_bn(GraphBuilder& b, const std::string& name, int64_t ch);

// nn.Conv2d's parameters: weight [out, in / groups, k, k], bias [out] when `bias`.
struct Conv {
  TensorId w = kNoTensor, b = kNoTensor;
  int64_t out = 0, k = 1;
  GraphBuilder::Conv2dArgs args;
};
Conv make_conv(GraphBuilder& b, const std::string& name, int64_t in, int64_t out, int64_t k, int64_t stride,
               int64_t pad, int64_t groups = 1, bool bias = false, int64_t dilation = 1);
TensorId conv(GraphBuilder& b, const Conv& c, TensorId x);

// Conv2dNormActivation with BatchNorm2d: `<prefix>.0` conv (bias only without a norm), `<prefix>.1` norm,
// padding (k - 1) / 2 * dilation as torchvision computes it.
struct ConvBnAct {
  Conv c;
  Bn bn;
  bool has_bn = true;
  Act act = Act::none;
};
ConvBnAct make_cna(GraphBuilder& b, const std::string& prefix, int64_t in, int64_t out, int64_t k, int64_t stride,
                   int64_t groups, Act act, bool norm = true, int64_t dilation = 1);
TensorId cna(GraphBuilder& b, const ConvBnAct& m, TensorId x);

// torchvision.ops.SqueezeExcitation: `<prefix>.fc1`, `<prefix>.fc2` (1x1 convs with bias). Returns scale * x.
struct SqueezeExcite {
  Conv fc1, fc2;
  Act act = Act::relu, scale_act = Act::sigmoid;
};
SqueezeExcite make_se(GraphBuilder& b, const std::string& prefix, int64_t ch, int64_t squeeze, Act act, Act scale_act);
TensorId se(GraphBuilder& b, const SqueezeExcite& m, TensorId x);

// StochasticDepth(p, "row") in training (returns x when p == 0 or outside training).
TensorId stochastic_depth(GraphBuilder& b, TensorId x, double p);
// nn.Dropout(p, inplace=True) in training.
TensorId dropout_inplace(GraphBuilder& b, TensorId x, double p);

}  // namespace memplan::vision

namespace memplan {
// One builder per torchvision model file (each engine/arch/<file>.cpp); build_vision dispatches on the family.
void build_convnext(GraphBuilder& b, const VisionSpec& s);      // convnext.py
void build_efficientnet(GraphBuilder& b, const VisionSpec& s);  // efficientnet.py (b0..b7, v2_s/m/l)
void build_mobilenet_v2(GraphBuilder& b, const VisionSpec& s);  // mobilenetv2.py
void build_mobilenet_v3(GraphBuilder& b, const VisionSpec& s);  // mobilenetv3.py
void build_swin(GraphBuilder& b, const VisionSpec& s);          // swin_transformer.py (v1 and v2)
void build_densenet(GraphBuilder& b, const VisionSpec& s);      // densenet.py
void build_vgg(GraphBuilder& b, const VisionSpec& s);           // vgg.py
void build_regnet(GraphBuilder& b, const VisionSpec& s);        // regnet.py
}  // namespace memplan
