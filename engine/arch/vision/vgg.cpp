// torchvision VGG (torchvision/models/vgg.py), training forward + F.cross_entropy(model(x), y).
//   features (make_layers): per cfg entry a 3x3 conv (padding 1, bias) [+ BatchNorm2d] + ReLU(inplace=True), or a
//   2x2/2 max pool; avgpool AdaptiveAvgPool2d((7, 7)) (a kernel of its own whose backward takes the input);
//   torch.flatten; classifier Linear(512*7*7, 4096) ReLU_ Dropout Linear(4096, 4096) ReLU_ Dropout Linear.
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

using namespace vision;

void build_vgg(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  struct Layer {
    bool pool;
    Conv c;
    Bn bn;
  };
  std::vector<Layer> layers;
  int64_t in = 3, idx = 0;
  for (int64_t v : s.vgg_cfg) {  // module indices as nn.Sequential numbers them
    if (v == 0) {
      layers.push_back({true, {}, {}});
      ++idx;
      continue;
    }
    Layer l{false, make_conv(b, "features." + std::to_string(idx), in, v, 3, 1, 1, 1, true), {}};
    if (s.batch_norm) l.bn = make_bn(b, "features." + std::to_string(idx + 1), v);
    layers.push_back(l);
    idx += s.batch_norm ? 3 : 2;
    in = v;
  }
  TensorId fc1w = b.param("classifier.0.weight", {4096, in * 49}), fc1b = b.param("classifier.0.bias", {4096});
  TensorId fc2w = b.param("classifier.3.weight", {4096, 4096}), fc2b = b.param("classifier.3.bias", {4096});
  TensorId fc3w = b.param("classifier.6.weight", {s.num_classes, 4096});
  TensorId fc3b = b.param("classifier.6.bias", {s.num_classes});
  TensorId h = x;
  for (const Layer& l : layers) {
    if (l.pool) {
      const Shape hs = b.shape(h);
      if (hs[2] < 2 || hs[3] < 2)  // torch: max_pool2d's output size would be 0
        throw InputError("image_size", std::to_string(b.config().image_size), "too small for vgg's five 2x2 max pools");
      h = b.max_pool2d(h, {hs[0], hs[1], conv_out(hs[2], 2, 2, 0), conv_out(hs[3], 2, 2, 0)});
      continue;
    }
    h = conv(b, l.c, h);
    if (s.batch_norm) h = b.batch_norm(h, l.bn.w, l.bn.b);
    h = b.inplace("relu_", h, true);
  }
  h = b.adaptive_avg_pool(h, {B, in, 7, 7});
  h = b.view(h, {B, in * 49});
  ModuleCall head_call(b, h);  // the classifier (an nn.Sequential): its input lives through every Linear
  h = b.inplace("relu_", b.linear(h, fc1w, fc1b), true);
  h = b.dropout(h, s.dropout);
  h = b.inplace("relu_", b.linear(h, fc2w, fc2b), true);
  h = b.dropout(h, s.dropout);
  const TensorId logits = b.linear(h, fc3w, fc3b);
  head_call.end();
  classification_loss(b, logits, y);
}

}  // namespace memplan
