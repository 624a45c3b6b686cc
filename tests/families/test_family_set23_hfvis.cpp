// convnext, convnextv2 and swin (family set 23): transformers' ConvNextForImageClassification,
// ConvNextV2ForImageClassification and SwinForImageClassification (engine/arch/vision/hf_convnext.cpp, hf_swin.cpp).
// Importer defaults and refusals, parameter counts of the published checkpoints' shapes derived by hand, and the
// measured H200 cases (measured before the builders existed).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/param_count.h"
#include "models/validation_case.h"

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

memplan::ModelSpec model_of(const TransformerSpec& s) {
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::transformer;
  m.name = "hfvis-test";
  m.transformer = s;
  return m;
}

memplan::RunConfig train_run(const TransformerSpec& s) {
  memplan::RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = memplan::hf_image_tokens(s);
  cfg.image_size = s.image_size;
  cfg.attn = memplan::default_attn(model_of(s));
  return cfg;
}

}  // namespace

TEST_CASE("convnext / convnextv2 importer: class defaults of transformers 5.17", "[family][set23]") {
  for (const char* type : {"convnext", "convnextv2"}) {
    INFO(type);
    const bool v2 = std::string(type) == "convnextv2";
    // ConvNextConfig / ConvNextV2Config: patch 4, 4 stages of (96, 192, 384, 768) x (3, 3, 9, 3), gelu,
    // drop_path_rate 0.0, image 224, 3 channels; V1's layer_scale_init_value 1e-6 (> 0: a layer scale), V2's GRN;
    // two labels (PreTrainedConfig).
    const TransformerSpec s = import(std::string(R"({"model_type": ")") + type + "\"}");
    CHECK(s.model_type == type);
    CHECK(s.stage_widths == std::vector<int64_t>{96, 192, 384, 768});
    CHECK(s.stage_depths == std::vector<int64_t>{3, 3, 9, 3});
    CHECK(s.num_layers == 18);
    CHECK(s.hidden_act == "gelu");
    CHECK(s.drop_path_rate == 0.0);
    CHECK(s.image_size == 224);
    CHECK(s.patch_size == 4);
    CHECK(s.num_channels == 3);
    CHECK(s.image_num_labels == 2);
    CHECK(s.convnext_layer_scale == !v2);
    CHECK(s.convnext_grn == v2);
    // No attention: _supports_sdpa is unset, so from_config resolves to eager.
    CHECK(memplan::default_attn(model_of(s)) == memplan::AttnImpl::eager);
  }
  CHECK_FALSE(import(R"({"model_type": "convnext", "layer_scale_init_value": 0.0})").convnext_layer_scale);
  CHECK(import(R"({"model_type": "convnext", "id2label": {"0": "a", "1": "b", "2": "c"}})").image_num_labels == 3);
  CHECK(import(R"({"model_type": "convnext", "patch_size": [4, 4]})").patch_size == 4);
}

TEST_CASE("swin importer: class defaults of transformers 5.17", "[family][set23]") {
  // SwinConfig: embed 96, depths (2, 2, 6, 2), heads (3, 6, 12, 24), window 7, mlp_ratio 4.0, qkv_bias, dropouts
  // 0.0, drop_path_rate 0.1, gelu, no absolute embeddings, image 224, patch 4, 3 channels; two labels.
  const TransformerSpec s = import(R"({"model_type": "swin"})");
  CHECK(s.model_type == "swin");
  CHECK(s.stage_widths == std::vector<int64_t>{96, 192, 384, 768});
  CHECK(s.stage_depths == std::vector<int64_t>{2, 2, 6, 2});
  CHECK(s.swin_stage_heads == std::vector<int64_t>{3, 6, 12, 24});
  CHECK(s.swin_stage_mlp == std::vector<int64_t>{384, 768, 1536, 3072});
  CHECK(s.swin_window_size == 7);
  CHECK(s.num_layers == 12);
  CHECK(s.qkv_bias);
  CHECK(s.resid_dropout == 0.0);
  CHECK(s.attn_dropout == 0.0);
  CHECK(s.drop_path_rate == 0.1);
  CHECK_FALSE(s.swin_absolute_embeddings);
  CHECK(s.image_size == 224);
  CHECK(s.patch_size == 4);
  CHECK(s.image_num_labels == 2);
  CHECK(memplan::default_attn(model_of(s)) == memplan::AttnImpl::sdpa);
  // int(mlp_ratio * width): 2.5 x 96 = 240.
  CHECK(import(R"({"model_type": "swin", "mlp_ratio": 2.5})").swin_stage_mlp.front() == 240);
}

TEST_CASE("convnext / convnextv2 / swin: refusals name the field", "[family][set23]") {
  const struct {
    std::string config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "convnext", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "convnext", "num_stages": 3})", "config.num_stages:"},
      {R"({"model_type": "convnext", "depths": [3, 3, 9]})", "config.num_stages:"},
      {R"({"model_type": "convnext", "hidden_sizes": [96, 192, 384], "depths": [3, 3, 9], "num_stages": 3,
          "image_size": 16, "patch_size": 8})", "config.image_size:"},
      {R"({"model_type": "convnext", "hidden_sizes": [96, 0, 384, 768]})", "config.hidden_sizes:"},
      {R"({"model_type": "convnextv2", "depths": "3,3,9,3"})", "config.depths:"},
      {R"({"model_type": "convnext", "image_size": [224, 192]})", "config.image_size:"},
      {R"({"model_type": "convnext", "layer_scale_init_value": "small"})", "config.layer_scale_init_value:"},
      {R"({"model_type": "convnextv2", "drop_path_rate": 1.0})", "config.drop_path_rate:"},
      {R"({"model_type": "convnext", "num_labels": 1})", "config.num_labels:"},
      {R"({"model_type": "convnextv2", "problem_type": "multi_label_classification"})", "config.problem_type:"},
      {R"({"model_type": "swin", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "swin", "num_heads": [3, 6, 12]})", "config.num_heads:"},
      {R"({"model_type": "swin", "num_heads": [5, 6, 12, 24]})", "config.num_heads:"},
      {R"({"model_type": "swin", "attention_probs_dropout_prob": 0.1})", "config.attention_probs_dropout_prob:"},
      {R"({"model_type": "swin", "image_size": 226})", "config.image_size:"},
      {R"({"model_type": "swin", "image_size": 192})", "config.image_size:"},  // stage 4: 6 < window 7
      {R"({"model_type": "swin", "window_size": 0})", "config.window_size:"},
      {R"({"model_type": "swin", "mlp_ratio": 0.001})", "config.mlp_ratio:"},
      {R"({"model_type": "swin", "embed_dim": 20000000})", "config.embed_dim:"},
      {R"({"model_type": "swin", "id2label": {"0": "a"}, "num_labels": 2})", "config.num_labels:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // The builders: convnext refuses sdpa (no attention) and gradient checkpointing (unsupported by the class);
  // swin estimates with both attentions, checkpointed or not, and in inference.
  const TransformerSpec c = import(R"({"model_type": "convnext", "depths": [1, 1, 1, 1]})");
  memplan::RunConfig cfg = train_run(c);
  CHECK(error_of([&] { memplan::estimate(model_of(c), cfg); }) == "no error");
  memplan::RunConfig sdpa = cfg;
  sdpa.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(model_of(c), sdpa); }).rfind("attn:", 0) == 0);
  memplan::RunConfig ckpt = cfg;
  ckpt.grad_checkpointing = true;
  CHECK(error_of([&] { memplan::estimate(model_of(c), ckpt); }).rfind("grad_checkpointing:", 0) == 0);
  memplan::RunConfig task = cfg;
  task.task = memplan::Task::seq_cls;
  task.num_labels = 3;
  CHECK(error_of([&] { memplan::estimate(model_of(c), task); }).rfind("task:", 0) == 0);
  const TransformerSpec w = import(R"({"model_type": "swin", "depths": [2, 2, 2, 2], "image_size": 256})");
  for (memplan::AttnImpl a : {memplan::AttnImpl::sdpa, memplan::AttnImpl::eager})
    for (bool ck : {false, true})
      for (memplan::Mode mode : {memplan::Mode::training, memplan::Mode::inference}) {
        memplan::RunConfig r = train_run(w);
        r.attn = a;
        r.grad_checkpointing = ck && mode == memplan::Mode::training;
        r.mode = mode;
        CHECK(error_of([&] { memplan::estimate(model_of(w), r); }) == "no error");
      }
}

TEST_CASE("convnext / convnextv2 / swin cases: the config sets the image, no seq_len or image_size key",
          "[family][set23]") {
  const auto parse = [](const std::string& text) { return memplan::parse_validation_case(nlohmann::json::parse(text)); };
  const std::string model = R"("model": {"source": "huggingface", "model_type": "swin", "config": {"image_size": 256},
      "attn_implementation": "eager"})";
  const auto c = parse(R"({"id": "a", )" + model + R"(, "batch_size": 2, "precision": "fp32"})");
  CHECK(c.run.image_size == 256);
  CHECK(c.run.attn == memplan::AttnImpl::eager);
  CHECK(error_of([&] { parse(R"({"id": "b", )" + model + R"(, "batch_size": 2, "seq_len": 64, "precision": "fp32"})"); })
            .find("seq_len:") != std::string::npos);
  CHECK(error_of([&] {
          parse(R"({"id": "c", )" + model + R"(, "batch_size": 2, "image_size": 224, "precision": "fp32"})");
        }).find("image_size:") != std::string::npos);
}

TEST_CASE("convnext / convnextv2 / swin parameter counts: published checkpoints' shapes", "[family][set23]") {
  // ConvNeXt, per layer of width C: dwconv 49C + C, LayerNorm 2C, pwconv1 4C^2 + 4C, pwconv2 4C^2 + C, layer scale C
  // (V1) or GRN 2 x 4C (V2): 8C^2 + 58C (V1), 8C^2 + 64C (V2). Stem: conv 16 x 3 x C0 + C0, LayerNorm 2C0;
  // downsampler in -> out: LayerNorm 2 in + conv 4 in out + out; final LayerNorm 2C; classifier C x labels + labels.
  // facebook/convnext-tiny-224 (96 / 192 / 384 / 768 x 3 / 3 / 9 / 3, 1000 labels): stem 4,896; layers 3 x 79,296 +
  //   3 x 306,048 + 9 x 1,201,920 + 3 x 4,763,136 = 26,262,720; downsamplers 74,112 + 295,680 + 1,181,184 =
  //   1,550,976; final LayerNorm 1,536; classifier 769,000: 28,589,128 (card: 28.6M).
  CHECK(memplan::param_count(import(R"({"model_type": "convnext", "num_labels": 1000})")) == 28'589'128);
  // facebook/convnext-base-224 (128 / 256 / 512 / 1024 x 3 / 3 / 27 / 3): stem 6,528; layers 3 x 138,496 +
  //   3 x 539,136 + 27 x 2,126,848 + 3 x 8,448,000 = 85,799,304; downsamplers 131,840 + 525,568 + 2,098,176 =
  //   2,755,584; final LayerNorm 2,048; classifier 1,025,000: 88,591,464 (card: 88.6M); -22k's 21,841 labels:
  //   88,591,464 - 1,025,000 + 22,382,025 = 109,953,489.
  const std::string base = R"("hidden_sizes": [128, 256, 512, 1024], "depths": [3, 3, 27, 3])";
  CHECK(memplan::param_count(import(R"({"model_type": "convnext", "num_labels": 1000, )" + base + "}")) == 88'591'464);
  CHECK(memplan::param_count(import(R"({"model_type": "convnext", "num_labels": 21841, )" + base + "}")) ==
        109'953'489);
  // facebook/convnextv2-tiny-1k-224: V2's layer is 8C^2 + 65C (GRN 8C instead of the layer scale's C), 7C more
  //   per layer: 28,589,128 + 7 x (3 x 96 + 3 x 192 + 9 x 384 + 3 x 768 = 6,624) = 28,635,496 (card: 28.6M);
  //   -base-1k-224: 88,591,464 + 7 x (3 x 128 + 3 x 256 + 27 x 512 + 3 x 1024 = 18,048) = 88,717,800 (card: 88.7M).
  CHECK(memplan::param_count(import(R"({"model_type": "convnextv2", "num_labels": 1000})")) == 28'635'496);
  CHECK(memplan::param_count(import(R"({"model_type": "convnextv2", "num_labels": 1000, )" + base + "}")) ==
        88'717'800);
  // Swin, per layer of width C, MLP 4C, heads h, window w: q / k / v / o 4(C^2 + C), relative position table
  // (2w - 1)^2 h, two LayerNorms 4C, MLP 8C^2 + 5C; patch merging C -> 2C: reduction 8C^2, LayerNorm 8C. Stem:
  // conv 16 x 3 x E + E, LayerNorm 2E; final LayerNorm 2C; classifier.
  // microsoft/swin-tiny-patch4-window7-224 (96, 2 / 2 / 6 / 2, heads 3 / 6 / 12 / 24, window 7, table 169 rows):
  //   stem 4,896; layers 2 x 112,347 + 2 x 445,878 + 6 x 1,776,492 + 2 x 7,091,928 = 25,959,258; mergers 74,496 +
  //   296,448 + 1,182,720 = 1,553,664; final LayerNorm 1,536; classifier 769,000: 28,288,354 (card: 28.3M); microsoft/swin-base-patch4-window12-384 (128, 2 / 2 / 18 / 2, heads 4 / 8 / 16 / 32, window 12, 384 px):
  //   87,903,584 (card: 88M); swin-base-patch4-window7-224: 87,768,224.
  CHECK(memplan::param_count(import(R"({"model_type": "swin", "num_labels": 1000})")) == 28'288'354);
  const std::string swin_b = R"("embed_dim": 128, "depths": [2, 2, 18, 2], "num_heads": [4, 8, 16, 32])";
  CHECK(memplan::param_count(import(R"({"model_type": "swin", "num_labels": 1000, "window_size": 12,
      "image_size": 384, )" + swin_b + "}")) == 87'903'584);
  CHECK(memplan::param_count(import(R"({"model_type": "swin", "num_labels": 1000, )" + swin_b + "}")) == 87'768'224);
}

TEST_CASE("convnext / swin: measured H200 cases (family set 23)", "[family][set23]") {
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        // the tuning rows (the blind set-23 leftovers are test_family_set24_holdout.cpp's)
        return !c.holdout && memplan::testing::has_any_prefix(c.id, {"f23-cnx", "f23-swin"});
      },
      [](const std::string& id) {
        // Listed misses (data/validation/notes-f23/hfvis.md):
        //  - reserved, ConvNeXt-T fp32 read -7.2 % until the workspace table learned the channels-last engines
        //    (450.48 MiB fp32 depthwise wgrad at 96 ch 56 x 56, none at the 2x2 downsampling convs) and the
        //    channels-last conv bias gradient its column-sum staging: now -0.03 % (NOTES.md, "Family set 26").
        //  - the checkpointed Swin row: SwinStage and SwinLayer are both GradientCheckpointingLayers (nested
        //    non-reentrant checkpoints); memplan checkpoints the layers only, so between forward and backward it
        //    keeps every layer's input where the run keeps each stage's (after_fwd +147 MiB); the backward peak (the
        //    first stage's last layer, recomputed) is the same stream (+0.3 MiB), but the segments differ: +1.3 %.
        if (id == "f23-swin-b384-bf16-b7-ckpt") return memplan::testing::FamilyBounds{0.001, 0.015};
        return memplan::testing::FamilyBounds{0.001, 0.01};
      });
  CHECK(checked.size() == 5);
}
