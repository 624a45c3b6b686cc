// ResNetForImageClassification (transformers models/resnet/modeling_resnet.py: microsoft/resnet-18 .. -152),
// training forward + cross entropy, and the inference forward. Written from the modeling file before any run of it
// was measured (family set 34, held out: data/validation/predictions/families34-holdout.json).
// Not torchvision's ResNet (resnet.cpp): other modules, other bindings, out-of-place activations.
//   ResNetConvLayer: convolution (no bias, padding k // 2), BatchNorm2d, activation = nn.ReLU() (ACT2FN "relu":
//     not in place, so it allocates its output and saves it) or nn.Identity (the block's last conv). Each
//     statement rebinds `hidden_state`: the conv output lives on only as batch_norm's saved input, the norm's
//     output dies once the ReLU has made its own.
//   ResNetEmbeddings: ResNetConvLayer(num_channels, embedding_size, 7, stride 2) then MaxPool2d(3, 2, padding 1).
//   ResNetBottleNeckLayer (reduction 4): shortcut = ResNetShortCut (1x1 conv with the block's stride, BatchNorm2d)
//     when in != out or stride != 1, else nn.Identity; layer = Sequential(ConvLayer 1x1 -> width / 4, ConvLayer 3x3
//     (the block's stride there, or in the 1x1 with downsample_in_bottleneck), ConvLayer 1x1 -> out without
//     activation). forward: residual = x; h = layer(x); residual = shortcut(residual); h += residual (in place on
//     the last norm's output); h = ReLU(h). `residual` (the shortcut's output) is bound until the block returns,
//     past the final ReLU's allocation. ResNetBasicLayer: layer = (ConvLayer 3x3 with the stride, ConvLayer 3x3
//     without activation), the same forward.
//   ResNetStage i: depths[i] blocks from hidden_sizes[i - 1] (embedding_size for stage 0) to hidden_sizes[i], the
//     first with stride 2 (stage 0: 1 unless downsample_in_first_stage).
//   ResNetModel: embedding_output bound until it returns; pooler AdaptiveAvgPool2d((1, 1)) (ATen: a mean over H, W).
//   Head: classifier = Sequential(Flatten, Linear(hidden_sizes[-1], num_labels)); the loss is
//     ForImageClassification's cross entropy (mean); outputs (last_hidden_state, pooler_output) and the logits
//     stay bound until the forward returns.
// Parameters and buffers in module order (model.to("cuda") and construction agree): embedder.embedder
// (convolution, normalization), per block shortcut (when present) before layer.0 .. layer.2, each BatchNorm2d's
// weight, bias and its three buffers; classifier.1. No gradient checkpointing (no layer of the model takes it) and
// no attention (no SDPA: transformers refuses attn_implementation="sdpa" for it, as for ConvNeXt).
#include "engine/arch/builders.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/vision_parts.h"
#include "engine/errors.h"

namespace memplan {

using namespace vision;

namespace {

struct ConvLayer {
  Conv c;
  Bn bn;
  bool relu = true;
};
ConvLayer make_layer(GraphBuilder& b, const std::string& name, int64_t in, int64_t out, int64_t k, int64_t stride,
                     bool relu) {
  ConvLayer l;
  l.c = make_conv(b, name + ".convolution", in, out, k, stride, k / 2);
  l.bn = make_bn(b, name + ".normalization", out);
  l.relu = relu;
  return l;
}

// ResNetConvLayer.forward (also ResNetShortCut's, without the activation).
TensorId conv_layer(GraphBuilder& b, const ConvLayer& l, TensorId x) {
  ModuleCall call(b, x);
  const TensorId c = conv(b, l.c, x);
  const TensorId n = b.batch_norm(c, l.bn.w, l.bn.b);
  return l.relu ? activation(b, n, Act::relu) : n;
}

struct Block {
  bool has_shortcut = false;
  ConvLayer shortcut;
  std::vector<ConvLayer> layers;
};

TensorId block(GraphBuilder& b, const Block& blk, const std::string& name, TensorId x) {
  b.begin_layer(name, false);
  ModuleCall call(b, x);  // the stage's loop variable and `residual` hold the block's input until it returns
  TensorId h = x;
  {
    ModuleCall seq(b, x);  // nn.Sequential: its input lives through every child
    for (const ConvLayer& l : blk.layers) h = conv_layer(b, l, h);
  }
  const TensorId residual = blk.has_shortcut ? conv_layer(b, blk.shortcut, x) : x;
  b.hold(residual);  // bound until the block returns
  h = b.inplace("add_", h, false, {residual});  // hidden_state += residual
  h = activation(b, h, Act::relu);
  b.drop(residual);
  call.end();
  b.end_layer();
  return h;
}

}  // namespace

void build_hf_resnet(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)), "resnet is modelled as its image classifier (no other head)");
  if (cfg.attn == AttnImpl::sdpa)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "is not supported by resnet (no attention; _supports_sdpa is unset, so transformers refuses "
                     "attn_implementation=\"sdpa\"): use eager");
  if (cfg.grad_checkpointing || !cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing", "true", "is not modelled for resnet (no layer of the model checkpoints)");
  const auto& W = s.stage_widths;
  const auto& D = s.stage_depths;
  if (W.empty() || W.size() != D.size())
    throw InputError("config.hidden_sizes", std::to_string(W.size()), "needs one width per stage of depths");
  const int64_t B = cfg.batch_size, R = s.image_size, C = s.num_channels, E = s.resnet_embedding_size;
  const int64_t NL = s.image_num_labels;

  hf_construction_scalar(b);
  const ConvLayer stem = make_layer(b, "resnet.embedder.embedder", C, E, 7, 2, true);
  std::vector<std::vector<Block>> stages(W.size());
  for (size_t i = 0; i < W.size(); ++i) {
    const int64_t in = i == 0 ? E : W[i - 1], out = W[i];
    const int64_t stride = i == 0 && !s.resnet_downsample_in_first_stage ? 1 : 2;
    for (int64_t j = 0; j < D[i]; ++j) {
      const std::string p = "resnet.encoder.stages." + std::to_string(i) + ".layers." + std::to_string(j) + ".";
      const int64_t bin = j == 0 ? in : out, bstride = j == 0 ? stride : 1;
      Block blk;
      blk.has_shortcut = bin != out || bstride != 1;
      if (blk.has_shortcut) blk.shortcut = make_layer(b, p + "shortcut", bin, out, 1, bstride, false);
      if (s.resnet_bottleneck) {
        const int64_t red = out / 4;
        const bool first = s.resnet_downsample_in_bottleneck;
        blk.layers.push_back(make_layer(b, p + "layer.0", bin, red, 1, first ? bstride : 1, true));
        blk.layers.push_back(make_layer(b, p + "layer.1", red, red, 3, first ? 1 : bstride, true));
        blk.layers.push_back(make_layer(b, p + "layer.2", red, out, 1, 1, false));
      } else {
        blk.layers.push_back(make_layer(b, p + "layer.0", bin, out, 3, bstride, true));
        blk.layers.push_back(make_layer(b, p + "layer.1", out, out, 3, 1, false));
      }
      stages[i].push_back(std::move(blk));
    }
  }
  const TensorId cls_w = b.param("classifier.1.weight", {NL, W.back()});
  const TensorId cls_b = b.param("classifier.1.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels (training).
  const TensorId x = b.input({B, C, R, R}, b.param_dtype());
  const TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;

  TensorId h;
  {
    ModuleCall embed_call(b, x);
    h = conv_layer(b, stem, x);
    const Shape hs = b.shape(h);
    h = b.max_pool2d(h, {hs[0], hs[1], conv_out(hs[2], 3, 2, 1), conv_out(hs[3], 3, 2, 1)});
  }
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // bound in ResNetModel.forward until it returns
  for (size_t i = 0; i < stages.size(); ++i) {
    ModuleCall stage_call(b, h);  // the encoder's loop variable and the stage's argument, until the stage returns
    for (size_t j = 0; j < stages[i].size(); ++j)
      h = block(b, stages[i][j], "resnet.encoder.stages." + std::to_string(i) + ".layers." + std::to_string(j), h);
    stage_call.end();
  }
  const TensorId last_hidden = h;  // outputs.last_hidden_state, held by classifier_tail until the forward returns
  const TensorId pooled = b.adaptive_avg_pool(last_hidden, {B, W.back(), 1, 1});
  b.drop(embedding_output);
  // classifier: Flatten (a view) then the Linear; outputs (last_hidden_state, pooler_output) and the logits held.
  hfbackbone::classifier_tail(b, {last_hidden, pooled}, b.view(pooled, {B, W.back()}), cls_w, cls_b, labels);
}

}  // namespace memplan
