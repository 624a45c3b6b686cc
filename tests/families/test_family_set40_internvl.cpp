// internvl (family set 40): InternVLForConditionalGeneration trained with images cut into 448-pixel tiles (the
// harness plugin calibrate/harness_kinds/llava.py), text only, or serving text-only prompts. Written from the 5.17
// modeling file without a device: the importer's class defaults, refusals naming the field, each image's token
// count for several tile counts (derived by hand below), the pixel shuffle's and the projector's widths, and the zoo
// entries' parameter counts derived by hand. The held-out rows (calibrate/cases/families40-input.jsonl) are
// predicted in data/validation/predictions/families40-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "cli/run_flags.h"
#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "models/hf_config.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/validation_case.h"
#include "models/zoo.h"

using memplan::ModelSpec;
using memplan::RunConfig;
using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
bool starts(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }

RunConfig run(int64_t batch, int64_t seq, int64_t images, int64_t tiles = 0) {
  RunConfig c;
  c.mode = memplan::Mode::training;
  c.batch_size = batch;
  c.seq_len = seq;
  c.images_per_sample = images;
  c.image_tiles = tiles;
  return c;
}

// A small internvl keeping the published 448-pixel tiles of 14-pixel patches (32 x 32 patches, 256 tokens a tile
// after the 0.5 pixel shuffle); 2 vision layers of 64, 2 Qwen2 layers of 128.
const char* kSmall = R"({"model_type": "internvl", "tie_word_embeddings": false,
  "text_config": {"model_type": "qwen2", "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
                  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 151674},
  "vision_config": {"model_type": "internvl_vision", "hidden_size": 64, "intermediate_size": 128,
                    "num_hidden_layers": 2, "num_attention_heads": 2, "attention_bias": true,
                    "image_size": [448, 448], "patch_size": [14, 14]}})";

}  // namespace

TEST_CASE("internvl importer: class defaults", "[family][set40][importer]") {
  // InternVLConfig(): a Qwen2Config text model, InternVLVisionConfig() (1024 x 24 layers of 16 heads, 448 / 14,
  // no q / k / v bias, LayerNorm, mean pooling: no final norm), downsample_ratio 0.5, gelu projector, tied.
  const TransformerSpec s = import(R"({"model_type": "internvl"})");
  CHECK(s.model_type == "internvl");
  CHECK(s.mm_text_type == "qwen2");
  CHECK(s.vision_hidden_size == 1024);
  CHECK(s.vision_num_layers == 24);
  CHECK(s.vision_num_heads == 16);
  CHECK(s.vision_intermediate_size == 4096);
  CHECK(s.vision_image_size == 448);
  CHECK(s.vision_patch_size == 14);
  CHECK(s.vision_hidden_act == "gelu");
  CHECK_FALSE(s.ivl_attention_bias);
  CHECK_FALSE(s.ivl_qk_norm);
  CHECK_FALSE(s.ivl_rms_norm);
  CHECK(s.ivl_abs_pos);
  CHECK_FALSE(s.ivl_mask_token);
  CHECK_FALSE(s.ivl_final_norm);
  CHECK(s.ivl_shuffle == 2);
  CHECK(s.mm_image_tokens == 256);  // (448 / 14 * 0.5)^2
  CHECK(s.mm_projector_act == "gelu");
  CHECK(s.tie_word_embeddings);  // the top-level default; the text config's own flag is not read
  CHECK(import(R"({"model_type": "internvl", "tie_word_embeddings": false,
                   "text_config": {"tie_word_embeddings": true}})").tie_word_embeddings == false);
  CHECK(import(R"({"model_type": "internvl", "downsample_ratio": 0.25})").mm_image_tokens == 64);
}

TEST_CASE("internvl: refusals name the field", "[family][set40]") {
  const char* bad[][2] = {
      {R"({"model_type": "internvl", "text_config": {"model_type": "qwen3"}})", "config.text_config.model_type:"},
      {R"({"model_type": "internvl", "vision_config": {"model_type": "clip_vision_model"}})",
       "config.vision_config.model_type:"},
      {R"({"model_type": "internvl", "vision_config": {"num_attention_heads": 7}})",
       "config.vision_config.num_attention_heads:"},
      {R"({"model_type": "internvl", "vision_config": {"hidden_act": "relu"}})", "config.vision_config.hidden_act:"},
      {R"({"model_type": "internvl", "vision_config": {"attention_dropout": 0.1}})",
       "config.vision_config.attention_dropout:"},
      {R"({"model_type": "internvl", "vision_config": {"hidden_dropout_prob": 0.1}})",
       "config.vision_config.hidden_dropout_prob:"},
      {R"({"model_type": "internvl", "vision_config": {"projection_dropout": 0.1}})",
       "config.vision_config.projection_dropout:"},
      {R"({"model_type": "internvl", "vision_config": {"norm_type": "batch_norm"}})",
       "config.vision_config.norm_type:"},
      {R"({"model_type": "internvl", "vision_config": {"image_size": [448, 224]}})",
       "config.vision_config.image_size:"},
      {R"({"model_type": "internvl", "vision_config": {"patch_size": 15}})", "config.vision_config.patch_size:"},
      {R"({"model_type": "internvl", "vision_config": {"layer_scale_init_value": "x"}})",
       "config.vision_config.layer_scale_init_value:"},
      {R"({"model_type": "internvl", "vision_feature_layer": -2})", "config.vision_feature_layer:"},
      {R"({"model_type": "internvl", "vision_feature_select_strategy": "full"})",
       "config.vision_feature_select_strategy:"},
      {R"({"model_type": "internvl", "downsample_ratio": 0.3})", "config.downsample_ratio:"},
      {R"({"model_type": "internvl", "downsample_ratio": 0.2})", "config.downsample_ratio:"},  // 32 % 5
      {R"({"model_type": "internvl", "projector_hidden_act": "tanh"})", "config.projector_hidden_act:"},
      {R"({"model_type": "internvl", "text_config": 3})", "config.text_config:"},
  };
  for (const auto& b : bad) {
    CAPTURE(b[0]);
    CHECK(starts(error_of([&] { import(b[0]); }), b[1]));
  }
  const ModelSpec m = model_of(kSmall);
  // image_tiles without images; images in inference; QLoRA.
  CHECK(starts(error_of([&] { memplan::estimate(m, run(1, 600, 0, 2)); }), "image_tiles:"));
  RunConfig inf = run(1, 600, 1);
  inf.mode = memplan::Mode::inference;
  CHECK(starts(error_of([&] { memplan::estimate(m, inf); }), "images_per_sample:"));
  RunConfig q = run(1, 600, 1);
  q.lora.r = 16;
  q.lora.target_modules = {"q_proj", "v_proj"};
  q.quant.base = memplan::QuantBase::nf4;
  CHECK(error_of([&] { memplan::estimate(m, q); }) != "no error");
  // The case key: a positive integer, on internvl only (the case reader prefixes the case's id).
  auto case_with = [](const std::string& model_type, const std::string& config, const std::string& tiles) {
    return nlohmann::json::parse(R"({"id": "t", "model": {"source": "huggingface", "model_type": ")" + model_type +
                                 R"(", "config": )" + config + R"(, "attn_implementation": "sdpa"},
      "mode": "training", "batch_size": 1, "seq_len": 600, "precision": "bf16", "optimizer": "adamw",
      "images_per_sample": 1, "image_tiles": )" + tiles + "}");
  };
  CHECK(error_of([&] { memplan::parse_validation_case(case_with("internvl", kSmall, "3")); }) == "no error");
  CHECK(starts(error_of([&] { memplan::parse_validation_case(case_with("internvl", kSmall, "0")); }),
               "t: image_tiles:"));
  CHECK(starts(error_of([&] { memplan::parse_validation_case(case_with("internvl", kSmall, "[2]")); }),
               "t: image_tiles:"));
  CHECK(starts(error_of([&] { memplan::parse_validation_case(case_with("llava", "{}", "2")); }),
               "t: image_tiles:"));
}

TEST_CASE("internvl: image tokens per tile count, derived by hand", "[family][set40]") {
  // The harness lays out 4 text tokens, then each image's n tokens and 3 more: seq_len 4 + k (n + 3) fits, one
  // token fewer is refused naming seq_len. n = T tiles * 256 (32 x 32 patches, pixel shuffle 0.5: 16 x 16).
  //  T absent (1): 256.  T 5 (a 2 x 2 grid + the thumbnail): 1280.  T 7 (2 x 3 + thumbnail): 1792.
  const ModelSpec m = model_of(kSmall);
  struct Row {
    int64_t tiles, n;
  };
  for (const Row& r : {Row{0, 256}, Row{1, 256}, Row{5, 1280}, Row{7, 1792}}) {
    CAPTURE(r.tiles, r.n);
    CHECK(error_of([&] { memplan::estimate(m, run(1, 4 + r.n + 3, 1, r.tiles)); }) == "no error");
    CHECK(starts(error_of([&] { memplan::estimate(m, run(1, 4 + r.n + 2, 1, r.tiles)); }), "seq_len:"));
  }
  // Two images of 5 tiles a sample: 4 + 2 (1280 + 3).
  CHECK(error_of([&] { memplan::estimate(m, run(1, 4 + 2 * 1283, 2, 5)); }) == "no error");
  CHECK(starts(error_of([&] { memplan::estimate(m, run(1, 4 + 2 * 1283 - 1, 2, 5)); }), "seq_len:"));
}

TEST_CASE("internvl: more tiles cost more, LoRA replays, eager runs", "[family][set40]") {
  const ModelSpec m = model_of(kSmall);
  const auto one = memplan::estimate(m, run(2, 1300, 1, 1));
  const auto five = memplan::estimate(m, run(2, 1300, 1, 5));
  CHECK(five.peak_allocated_bytes() > one.peak_allocated_bytes());
  RunConfig c = run(1, 600, 1, 2);
  c.lora.r = 16;
  c.lora.alpha = 32;
  c.lora.target_modules = {"q_proj", "v_proj"};
  CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
  RunConfig e = run(3, 600, 1, 2);
  e.attn = memplan::AttnImpl::eager;
  e.precision = memplan::Precision::amp_bf16;
  CHECK(error_of([&] { memplan::estimate(m, e); }) == "no error");
  RunConfig t = run(2, 300, 0);  // text only
  t.grad_checkpointing = true;
  CHECK(error_of([&] { memplan::estimate(m, t); }) == "no error");
}

TEST_CASE("internvl: parameter counts, derived by hand", "[family][set40]") {
  // Vision (InternViT-300M: hidden 1024, MLP 4096, 24 layers, q / k / v biases, 448 / 14 -> 1024 patches + cls):
  // cls_token 1,024, patch conv 1024*3*14*14 + 1024 = 603,136, position_embeddings 1025*1024 = 1,049,600 ->
  // embeddings 1,653,760. A layer: q / k / v / projection_layer 4 * (1024*1024 + 1024) = 4,198,400, fc1
  // 4096*1024 + 4096 = 4,198,400, fc2 1024*4096 + 1024 = 4,195,328, two LayerNorms 4,096, lambda_1 / lambda_2
  // 2,048 -> 12,598,272, x 24 = 302,358,528. No final norm (mean pooling). Tower 304,012,288.
  // InternVL3-1B: projector LayerNorm 2 * 4096 = 8,192, linear_1 4096*896 + 896 = 3,670,912, linear_2
  // 896*896 + 896 = 803,712 -> 4,482,816. Qwen2 text (vocabulary 151674, untied): embed_tokens and lm_head
  // 2 * 151674*896 = 271,799,808; a layer: q 896*896 + 896 = 803,712, k and v 2 * (128*896 + 128) = 229,632, o
  // 896*896 = 802,816, MLP 3 * 896*4864 = 13,074,432, norms 1,792 -> 14,912,384, x 24 = 357,897,216; norm 896.
  // Text 629,697,920. Total 304,012,288 + 4,482,816 + 629,697,920 = 938,193,024 (the model card's 938M).
  CHECK(memplan::param_count(memplan::load_zoo_model("internvl3-1b")) == 938'193'024);
  // InternVL3-2B: projector 8,192 + 4096*1536 + 1536 (6,292,992) + 1536*1536 + 1536 (2,360,832) = 8,662,016.
  // Text: embeddings 2 * 151674*1536 = 465,942,528; a layer: q 1536*1536 + 1536 = 2,360,832, k and v
  // 2 * (256*1536 + 256) = 786,944, o 2,359,296, MLP 3 * 1536*8960 = 41,287,680, norms 3,072 -> 46,797,824, x 28 =
  // 1,310,339,072; norm 1,536. Text 1,776,283,136. Total 304,012,288 + 8,662,016 + 1,776,283,136 = 2,088,957,440.
  CHECK(memplan::param_count(memplan::load_zoo_model("internvl3-2b")) == 2'088'957'440);
}

TEST_CASE("internvl: --image-tiles into RunConfig, refused naming the flag", "[family][set40][cli]") {
  auto field_of = [](const std::function<void()>& fn) -> std::string {
    try {
      fn();
    } catch (const memplan::InputError& e) {
      return e.field();
    }
    return "no error";
  };
  memplan::cli::RunFlags f;
  f.seq_len = 1300;
  f.images_per_sample = 1;
  f.image_tiles = 5;
  const ModelSpec ivl = memplan::load_model("internvl3-1b");
  CHECK(memplan::cli::run_config_from(f, ivl).image_tiles == 5);
  f.image_tiles = -1;
  CHECK(field_of([&] { memplan::cli::run_config_from(f, ivl); }) == "--image-tiles");
  f.image_tiles = 2;  // another image model, a text model
  CHECK(field_of([&] { memplan::cli::run_config_from(f, memplan::load_model("smolvlm-256m-instruct")); }) ==
        "--image-tiles");
  f.images_per_sample = 0;
  CHECK(field_of([&] { memplan::cli::run_config_from(f, memplan::load_model("llama-2-7b")); }) == "--image-tiles");
}
