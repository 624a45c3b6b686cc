// torchvision DenseNet (torchvision/models/densenet.py, memory_efficient=False), training forward + cross entropy.
//   features: conv0 7x7/2, norm0, relu0_, pool0 3x3/2; per dense block, _DenseLayer.bn_function:
//   torch.cat(prev_features, 1) (a fresh copy every layer, even of a single tensor; norm1 saves it, which is what
//   makes DenseNet's activations grow quadratically), norm1 relu1_ conv1 (1x1, bn_size * growth), norm2 relu2_
//   conv2 (3x3, growth); the block's list keeps every layer's output until _DenseBlock.forward cats them all;
//   _Transition: norm relu_ conv 1x1 (half the channels) AvgPool2d(2, 2). Then norm5, F.relu(inplace=True),
//   adaptive_avg_pool2d(1) (a mean), flatten, classifier.
// Inference (Python bindings, vision_parts.h): bn_function's concated_features lives until conv1 returns,
// _DenseLayer.forward's bottleneck_output until conv2 returns; a block's input (features[0]) through the block;
// a transition's input (the block's cat) through its conv and pool; DenseNet.forward's `features` (norm5's
// output) until the classifier returns.
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

using namespace vision;

void build_densenet(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  const int64_t k = s.growth_rate, inner = s.bn_size * s.growth_rate;
  Conv conv0 = make_conv(b, "features.conv0", 3, s.num_init_features, 7, 2, 3);
  Bn norm0 = make_bn(b, "features.norm0", s.num_init_features);
  struct DenseLayer {
    Bn n1;
    Conv c1;
    Bn n2;
    Conv c2;
  };
  struct Transition {
    Bn n;
    Conv c;
  };
  std::vector<std::vector<DenseLayer>> blocks;
  std::vector<Transition> transitions;
  int64_t nf = s.num_init_features;
  for (size_t i = 0; i < s.blocks_per_stage.size(); ++i) {
    const std::string bp = "features.denseblock" + std::to_string(i + 1) + ".denselayer";
    std::vector<DenseLayer> layers;
    for (int64_t j = 0; j < s.blocks_per_stage[i]; ++j) {
      const std::string p = bp + std::to_string(j + 1) + ".";
      const int64_t cin = nf + j * k;
      DenseLayer l;
      l.n1 = make_bn(b, p + "norm1", cin);
      l.c1 = make_conv(b, p + "conv1", cin, inner, 1, 1, 0);
      l.n2 = make_bn(b, p + "norm2", inner);
      l.c2 = make_conv(b, p + "conv2", inner, k, 3, 1, 1);
      layers.push_back(l);
    }
    blocks.push_back(layers);
    nf += s.blocks_per_stage[i] * k;
    if (i + 1 != s.blocks_per_stage.size()) {
      const std::string p = "features.transition" + std::to_string(i + 1) + ".";
      transitions.push_back({make_bn(b, p + "norm", nf), make_conv(b, p + "conv", nf, nf / 2, 1, 1, 0)});
      nf /= 2;
    }
  }
  Bn norm5 = make_bn(b, "features.norm5", nf);
  TensorId fcw = b.param("classifier.weight", {s.num_classes, nf}), fcb = b.param("classifier.bias", {s.num_classes});

  TensorId h = b.inplace("relu_", b.batch_norm(conv(b, conv0, x), norm0.w, norm0.b), true);
  {
    const Shape hs = b.shape(h);
    h = b.max_pool2d(h, {hs[0], hs[1], conv_out(hs[2], 3, 2, 1), conv_out(hs[3], 3, 2, 1)});
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::vector<TensorId> features{h};
    for (size_t j = 0; j < blocks[i].size(); ++j) {
      const DenseLayer& l = blocks[i][j];
      b.begin_layer("features.denseblock" + std::to_string(i + 1) + ".denselayer" + std::to_string(j + 1), false);
      const TensorId cat = b.cat_list("cat", features, 1);
      ModuleCall concated(b, cat);
      TensorId t = b.inplace("relu_", b.batch_norm(cat, l.n1.w, l.n1.b), true);
      const TensorId bottleneck = conv(b, l.c1, t);
      concated.end();
      ModuleCall bottleneck_output(b, bottleneck);
      t = b.inplace("relu_", b.batch_norm(bottleneck, l.n2.w, l.n2.b), true);
      features.push_back(conv(b, l.c2, t));
      bottleneck_output.end();
      b.end_layer();
    }
    h = b.cat_list("cat", features, 1);
    if (i < transitions.size()) {
      const Transition& t = transitions[i];
      ModuleCall transition(b, h);
      h = conv(b, t.c, b.inplace("relu_", b.batch_norm(h, t.n.w, t.n.b), true));
      const Shape hs = b.shape(h);
      h = b.avg_pool2d(h, {hs[0], hs[1], hs[2] / 2, hs[3] / 2});
    }
  }
  h = b.inplace("relu_", b.batch_norm(h, norm5.w, norm5.b), true);
  ModuleCall features_out(b, h);  // DenseNet.forward's `features`
  h = b.view(b.mean_hw(h), {B, nf});
  const TensorId logits = b.linear(h, fcw, fcb);
  features_out.end();
  classification_loss(b, logits, y);
}

}  // namespace memplan
