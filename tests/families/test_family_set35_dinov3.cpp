// dinov3_vit (family set 35): DINOv3ViTModel, the bare backbone's inference forward. The importer's class defaults,
// refusals naming the field or option, and parameter counts derived by hand from modeling_dinov3_vit.py; the held-out
// rows, predicted blind at 52b65ff (data/validation/predictions/families35-holdout.json) and measured on an H100 in
// the twenty-seventh session (data/validation/h100-families.jsonl), after the builder was corrected against them.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "models/hf_config.h"

using memplan::ModelSpec;
using memplan::RunConfig;
using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }

RunConfig feature(const ModelSpec& m, int64_t batch) {
  RunConfig c;
  c.mode = memplan::Mode::inference;
  c.task = memplan::Task::feature;
  c.batch_size = batch;
  c.seq_len = memplan::hf_image_tokens(m.transformer);
  return c;
}

}  // namespace

TEST_CASE("dinov3_vit: the importer's class defaults", "[family][set35]") {
  // DINOv3ViTConfig (ViT-S/16): hidden 384, intermediate 1536, 12 layers, 6 heads, gelu, patch 16, image 224,
  // query / value / proj / mlp biases but no key bias, no gated MLP, no register tokens.
  const TransformerSpec s = import(R"({"model_type": "dinov3_vit"})");
  CHECK(s.hidden_size == 384);
  CHECK(s.intermediate_size == 1536);
  CHECK(s.num_layers == 12);
  CHECK(s.num_heads == 6);
  CHECK(s.head_dim == 64);
  CHECK(s.hidden_act == "gelu");
  CHECK(s.image_size == 224);
  CHECK(s.patch_size == 16);
  CHECK(s.dinov3_query_bias);
  CHECK_FALSE(s.dinov3_key_bias);
  CHECK(s.dinov3_value_bias);
  CHECK(s.dinov3_proj_bias);
  CHECK(s.mlp_bias);
  CHECK_FALSE(s.dinov3_gated_mlp);
  CHECK(s.image_extra_tokens == 0);
  CHECK(memplan::hf_image_tokens(s) == 197);  // (224 / 16)^2 patches + the cls token
  CHECK(memplan::hf_image_tokens(import(R"({"model_type": "dinov3_vit", "num_register_tokens": 4})")) == 201);
}

TEST_CASE("dinov3_vit: bad values and unmodelled settings name their field", "[family][set35]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "dinov3_vit", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "dinov3_vit", "hidden_size": 391})", "config.num_attention_heads:"},
      {R"({"model_type": "dinov3_vit", "hidden_size": 60, "num_attention_heads": 6})", "config.hidden_size:"},
      {R"({"model_type": "dinov3_vit", "patch_size": 300})", "config.patch_size:"},
      {R"({"model_type": "dinov3_vit", "num_register_tokens": -1})", "config.num_register_tokens:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  const ModelSpec m = model_of(R"({"model_type": "dinov3_vit", "num_hidden_layers": 2})");
  CHECK(error_of([&] { memplan::estimate(m, feature(m, 2)); }) == "no error");
  RunConfig lm = feature(m, 2);
  lm.task = memplan::Task::lm;
  CHECK(error_of([&] { memplan::estimate(m, lm); }).rfind("task:", 0) == 0);
  RunConfig train = feature(m, 2);
  train.mode = memplan::Mode::training;
  train.task = memplan::Task::lm;
  CHECK(error_of([&] { memplan::estimate(m, train); }).rfind("mode:", 0) == 0);
}

TEST_CASE("dinov3_vit: parameter counts derived by hand", "[family][set35]") {
  // ViT-S/16 with 4 register tokens: patch conv 384 x 3 x 16 x 16 + 384 = 295,296; cls, mask 384 each; registers
  // 4 x 384 = 1,536; per layer norm1 768, q / v / o 147,840 each and k 147,456 (no bias), layer_scale1 384, norm2 768,
  // up 384 x 1536 + 1536 = 591,360, down 1536 x 384 + 384 = 590,208, layer_scale2 384: 1,774,848, x 12 = 21,298,176;
  // final norm 768: 21,596,544. With the gated MLP (the ViT-H+ shape: 1280 wide, 32 layers, 20 heads, 5120, silu):
  //   patch 1280 x 768 + 1280 = 984,320; tokens 1280 x (1 + 1 + 4) = 7,680; per layer norm1 2,560, q / v / o
  //   3 x (1,638,400 + 1,280) = 4,919,040, k 1,638,400, ls1 1,280, norm2 2,560, gate and up 2 x (6,553,600 + 5,120)
  //   = 13,117,440, down 6,553,600 + 1,280 = 6,554,880, ls2 1,280: 26,237,440, x 32 = 839,598,080; norm 2,560:
  //   840,592,640.
  const struct {
    const char* config;
    int64_t params;
  } rows[] = {
      {R"({"model_type": "dinov3_vit", "num_register_tokens": 4})", 21'596'544},
      {R"({"model_type": "dinov3_vit", "num_register_tokens": 4, "hidden_size": 1280, "intermediate_size": 5120,
           "num_hidden_layers": 32, "num_attention_heads": 20, "use_gated_mlp": true, "hidden_act": "silu"})",
       840'592'640},
  };
  for (const auto& r : rows) {
    INFO(r.config);
    const ModelSpec m = model_of(r.config);
    CHECK(memplan::estimate(m, feature(m, 1)).params == r.params);
  }
}

TEST_CASE("family set 35, held out: DINOv3ViTModel after the corrections the measured rows taught",
          "[family][set35][holdout]") {
  // Blind at 52b65ff allocated was -16.7 .. -0.1 % (the non-amp rows short by the embeddings' output and the layer
  // input the encoder's loop variable keeps; the eager probabilities dropped early); corrected (not blind):
  // allocated within 0.10 %, reserved within 1.7 %.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return c.holdout && c.id.rfind("f35-", 0) == 0; },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.0012, 0.017}; }, "h100-families.jsonl");
  CHECK(checked.size() == 6);
}
