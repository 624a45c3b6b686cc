// Vision inference (family set 19): torchvision classifiers and transformers' image classifiers served as the
// harness runs them (model.eval(), torch.inference_mode(), autocast under amp, one forward of random images; the
// output dropped). The eval-mode mechanisms of the vision builders, hand-derived on small graphs, the refusals,
// and the measured H200 rows (measured before the builders' inference path existed).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/vision/vision_parts.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "engine/graph_builder.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/torchvision.h"

using namespace memplan;

namespace {

RunConfig infer_run(int64_t batch, int64_t image, Precision p) {
  RunConfig cfg;
  cfg.mode = Mode::inference;
  cfg.batch_size = batch;
  cfg.image_size = image;
  cfg.seq_len = 0;
  cfg.precision = p;
  return cfg;
}

ModelSpec tv(const std::string& name) {
  ModelSpec m;
  m.kind = ModelSpec::Kind::vision;
  m.name = name;
  m.vision = vision_spec_for(name, 1000);
  return m;
}

std::string error_of(const std::function<void()>& fn) { return testing::input_error_of(fn); }

int count_inputs(const Graph& g) {
  return static_cast<int>(std::count_if(g.tensors.begin(), g.tensors.end(),
                                        [](const TensorInfo& t) { return t.kind == TensorKind::input; }));
}

}  // namespace

TEST_CASE("vision inference: BatchNorm2d in eval allocates its output only (cuDNN)", "[family][set19]") {
  // cudnn_batch_norm with training=False: save_mean / save_var / reserve are empty ({0}) tensors, which take no
  // allocator block. x [8, 64, 56, 56] bf16: the output alone, 8 * 64 * 56 * 56 * 2 = 3211264 B.
  GraphBuilder b(infer_run(8, 224, Precision::bf16));
  const TensorId x = b.input({8, 64, 56, 56}, DType::bf16);
  const TensorId w = b.param("bn.weight", {64}), bias = b.param("bn.bias", {64});
  const TensorId y = b.batch_norm(x, w, bias);
  const Graph g = b.finish();
  REQUIRE(g.ops.size() == 1);
  REQUIRE(g.ops[0].outs.size() == 1);
  CHECK(g.ops[0].outs[0] == y);
  CHECK(g.tensors[static_cast<size_t>(y)].bytes == 3211264);
}

TEST_CASE("vision inference: pure fp16 BatchNorm2d runs the native kernel, two [C] fp32 stats", "[family][set19]") {
  // fp16 input with fp16 weights fails cuDNN's condition; batch_norm_cuda allocates the output, then save_mean and
  // save_invstd [64] fp32 (256 B each), dropped when batch_norm returns: released at the op that made them.
  GraphBuilder b(infer_run(8, 224, Precision::fp16));
  const TensorId x = b.input({8, 64, 56, 56}, DType::f16);
  const TensorId w = b.param("bn.weight", {64}), bias = b.param("bn.bias", {64});
  b.batch_norm(x, w, bias);
  const Graph g = b.finish();
  REQUIRE(g.ops.size() == 1);
  REQUIRE(g.ops[0].outs.size() == 3);
  CHECK(g.tensors[static_cast<size_t>(g.ops[0].outs[0])].bytes == 3211264);
  for (size_t i : {1, 2}) {
    const auto t = static_cast<size_t>(g.ops[0].outs[i]);
    CHECK(g.tensors[t].bytes == 256);
    CHECK(g.tensors[t].dtype == DType::f32);
    CHECK(g.py_release_op[t] == 0);
  }
}

TEST_CASE("vision inference: in-place activations alias their input", "[family][set19]") {
  // Without autograd silu_ / hardtanh_ / hardswish_ / relu_ save no clone: each result is a view of x's storage.
  for (auto a : {vision::Act::relu_, vision::Act::relu6_, vision::Act::silu_, vision::Act::hardswish_}) {
    GraphBuilder b(infer_run(2, 32, Precision::fp32));
    const TensorId x = b.input({2, 8, 4, 4}, DType::f32);
    const TensorId y = vision::activation(b, x, a);
    CHECK(b.info(y).storage == x);
    CHECK(b.info(y).bytes == 0);
  }
}

TEST_CASE("vision inference: a Conv2dNormActivation's input lives until the block returns", "[family][set19]") {
  // nn.Sequential(conv, bn, act) called as `input = module(input)`: the argument stays referenced until the module
  // returns, past its last read (the conv). Ops: an outer conv (0) makes h; the CNA's conv (1) reads it last, then
  // its bn (2) and relu_ (3): h is released after op 3, not op 1.
  GraphBuilder b(infer_run(2, 32, Precision::fp32));
  const TensorId x = b.input({2, 3, 32, 32}, DType::f32);
  const vision::Conv c0 = vision::make_conv(b, "c0", 3, 8, 3, 1, 1);
  const vision::ConvBnAct m = vision::make_cna(b, "cna", 8, 8, 3, 1, 1, vision::Act::relu_);
  const TensorId h = vision::conv(b, c0, x);
  vision::cna(b, m, h);
  const Graph g = b.finish();
  REQUIRE(g.ops.size() == 4);
  CHECK(g.py_release_op[static_cast<size_t>(h)] == 3);
  // Training keeps the builders' measured lifetimes: no hold (the norm saves what it needs).
  RunConfig train = infer_run(2, 32, Precision::fp32);
  train.mode = Mode::training;
  GraphBuilder bt(train);
  const TensorId xt = bt.input({2, 3, 32, 32}, DType::f32);
  const vision::Conv t0 = vision::make_conv(bt, "c0", 3, 8, 3, 1, 1);
  const vision::ConvBnAct mt = vision::make_cna(bt, "cna", 8, 8, 3, 1, 1, vision::Act::relu_);
  const TensorId ht = vision::conv(bt, t0, xt);
  vision::cna(bt, mt, ht);
  const Graph gt = bt.finish();
  CHECK(gt.py_release_op[static_cast<size_t>(ht)] == 1);
}

TEST_CASE("vision inference: the graph has the images alone, no labels, no loss", "[family][set19]") {
  for (const char* name : {"resnet50", "efficientnet_b0", "convnext_tiny", "swin_t", "densenet121", "vgg16_bn",
                           "mobilenet_v3_large", "mobilenet_v2", "regnet_y_400mf"}) {
    INFO(name);
    const Graph g = build_inference_graph(tv(name), infer_run(4, 224, Precision::amp_bf16), InferencePass{});
    CHECK(count_inputs(g) == 1);
    CHECK(g.loss == kNoTensor);
  }
}

TEST_CASE("vision inference: refusals name the field", "[family][set19]") {
  // torchvision ViT without autocast takes nn.MultiheadAttention's fast path (eval, no grad, even heads):
  // torch._native_multi_head_attention, not modelled.
  const std::string e = error_of([] {
    build_inference_graph(tv("vit_b_16"), infer_run(4, 224, Precision::fp32), InferencePass{});
  });
  CHECK(e.find("precision") != std::string::npos);
  CHECK(e.find("fast path") != std::string::npos);
  CHECK(error_of([] {
          build_inference_graph(tv("vit_b_16"), infer_run(4, 224, Precision::amp_bf16), InferencePass{});
        }) == "no error");
}

TEST_CASE("vision inference: measured H200 rows", "[family][set19][fidelity]") {
  // Six tuning rows measured with whole-run recordings before the builders' inference path existed
  // (data/validation/notes-f19/visinf.md). Peak allocated within 0.1 %, peak reserved within 1 %.
  const auto checked = testing::check_family_cases(
      [](const ValidationCase& c) { return c.id.rfind("f19-vi-", 0) == 0; },
      [](const std::string&) { return testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 6);
}
