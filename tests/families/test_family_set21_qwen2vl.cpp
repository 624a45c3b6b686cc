// qwen2_vl / qwen2_5_vl (family set 21): importer defaults and refusals, parameter counts against the published
// checkpoints, image-batch refusals, and the measured H200 cases (measured before the builder existed and used to
// write it; notes-f21/qwen2vl.md).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

}  // namespace

TEST_CASE("qwen2_vl importer: class defaults of transformers 5.17", "[family][set21]") {
  // Qwen2VLTextConfig: 152064 / 8192 / 29568 / 80 layers / 64 heads / 8 KV heads, silu, head_dim = 8192 / 64;
  // q / k / v biased, o not; untied; mrope_section [16, 24, 24]. Qwen2VLVisionConfig: depth 32, embed_dim 1280,
  // 16 heads, mlp_ratio 4 (5120), quick_gelu, 3 channels, patch 14, temporal 2, merge 2, merger to hidden_size 3584
  // (which must then equal the text width: a config giving only the defaults is refused, see below).
  const TransformerSpec x = import(R"({"model_type": "qwen2_vl", "text_config": {"hidden_size": 3584,
      "num_attention_heads": 28, "num_key_value_heads": 4}})");
  CHECK(x.model_type == "qwen2_vl");
  CHECK(x.vocab_size == 152064);
  CHECK(x.hidden_size == 3584);
  CHECK(x.intermediate_size == 29568);
  CHECK(x.num_layers == 80);
  CHECK(x.num_heads == 28);
  CHECK(x.num_kv_heads == 4);
  CHECK(x.head_dim == 128);
  CHECK(x.qkv_bias);
  CHECK_FALSE(x.o_bias);
  CHECK_FALSE(x.mlp_bias);
  CHECK_FALSE(x.tie_word_embeddings);
  CHECK(x.vl_mrope_section == std::vector<int64_t>{16, 24, 24});
  CHECK(x.vl_vision_depth == 32);
  CHECK(x.vl_vision_width == 1280);
  CHECK(x.vl_vision_heads == 16);
  CHECK(x.vl_vision_mlp == 5120);
  CHECK(x.vl_vision_act == "quick_gelu");
  CHECK(x.vl_in_channels == 3);
  CHECK(x.vl_patch == 14);
  CHECK(x.vl_temporal_patch == 2);
  CHECK(x.vl_merge == 2);
  CHECK(x.vl_merger_out == 3584);
  // Qwen2_5_VLVisionConfig: hidden_size (the width) 3584 by default, intermediate 3420, silu, window 112, full
  // attention on (7, 15, 23, 31), out_hidden_size 3584 (set here to the text width; the default is refused below).
  const TransformerSpec y = import(R"({"model_type": "qwen2_5_vl", "text_config": {"hidden_size": 4096,
      "num_attention_heads": 32}, "vision_config": {"hidden_size": 1280, "out_hidden_size": 4096}})");
  CHECK(y.model_type == "qwen2_5_vl");
  CHECK(y.num_kv_heads == 8);
  CHECK(y.vl_vision_width == 1280);
  CHECK(y.vl_vision_mlp == 3420);
  CHECK(y.vl_vision_act == "silu");
  CHECK(y.vl_window_size == 112);
  CHECK(y.vl_fullatt_blocks == std::vector<int64_t>{7, 15, 23, 31});
  CHECK(y.vl_merger_out == 4096);
  // Flat (published) configs carry the text keys at the top level; a text_config's pre-v5 tie flag ties too.
  const TransformerSpec flat = import(R"({"model_type": "qwen2_vl", "hidden_size": 1536, "num_attention_heads": 12,
      "num_key_value_heads": 2, "tie_word_embeddings": true, "vision_config": {"hidden_size": 1536},
      "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})");
  CHECK(flat.hidden_size == 1536);
  CHECK(flat.tie_word_embeddings);
  const TransformerSpec tied = import(R"({"model_type": "qwen2_vl", "text_config": {"hidden_size": 3584,
      "num_attention_heads": 28, "num_key_value_heads": 4, "tie_word_embeddings": true}})");
  CHECK(tied.tie_word_embeddings);
}

TEST_CASE("qwen2_vl importer: bad values name their field", "[family][set21]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "qwen2_vl"})", "config.vision_config.hidden_size:"},  // 3584 merger vs 8192 text
      {R"({"model_type": "qwen2_5_vl", "hidden_size": 2048, "num_attention_heads": 16})",
       "config.vision_config.out_hidden_size:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "hidden_act": "gelu"})",
       "config.hidden_act:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "use_sliding_window": true})",
       "config.use_sliding_window:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 16]}})",
       "config.rope_scaling.mrope_section:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})",
       "config.rope_scaling.rope_type:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 27, "num_key_value_heads": 27})",
       "config.num_attention_heads:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
          "num_key_value_heads": 3})",
       "config.num_key_value_heads:"},
      {R"({"model_type": "qwen2_vl", "text_config": {"hidden_size": 3584, "num_attention_heads": 28,
          "num_key_value_heads": 4,
          "layer_types": ["sliding_attention"]}})",
       "config.text_config.layer_types:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "vision_config": {"num_heads": 24}})",
       "config.vision_config.num_heads:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "vision_config": {"hidden_act": "gelu"}})",
       "config.vision_config.hidden_act:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "vision_config": {"patch_size": [14, 14]}})",
       "config.vision_config.patch_size:"},
      {R"({"model_type": "qwen2_5_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "vision_config": {"window_size": 20}})",
       "config.vision_config.window_size:"},
      {R"({"model_type": "qwen2_5_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "vision_config": {"fullatt_block_indexes": "all"}})",
       "config.vision_config.fullatt_block_indexes:"},
      {R"({"model_type": "qwen2_vl", "text_config": 3})", "config.text_config:"},
      {R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "vision_config": []})",
       "config.vision_config:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("qwen2_vl parameter counts: published checkpoints", "[family][set21]") {
  // Derived by hand from <Type>ForConditionalGeneration's registrations; text H hidden, I intermediate, nh / nkv
  // heads of 128, V vocab, L layers; vision width 1280 (W), 32 blocks, merger 4W -> 4W -> H.
  //   text layer: H*H + H (q) + 2*(nkv*128*H + nkv*128) (k, v) + H*H (o) + 3*H*I + 2*H (norms);
  //   text: V*H (embed) [+ V*H lm_head unless tied] + L*layer + H (norm).
  //   vision: 1176*W (Conv3d 3 x 2 x 14 x 14, no bias) + 32*block + merger (norm + 4W*4W + 4W + H*4W + H).
  //   Qwen2-VL block: 4W (two LayerNorms) + 3W*W + 3W (qkv) + W*W + W (proj) + 4W*W + 4W (fc1) + W*4W + W (fc2)
  //     = 19,677,440; merger norm 2W.
  //   Qwen2.5-VL block: 2W (two RMSNorms) + qkv + proj + 2*(3420*W + 3420) + W*3420 + W = 19,702,200; norm W.
  //  Qwen2-VL-2B (H 1536, I 8960, 12 / 2 heads, V 151936, 28 layers, tied): layer 46,797,824; text 233,373,696 +
  //  1,310,339,072 + 1,536 = 1,543,714,304; vision 1,505,280 + 629,678,080 + 34,087,936 = 665,271,296
  //  => 2,208,985,600.
  //  Qwen2-VL-7B (H 3584, I 18944, 28 / 4 heads, V 152064, 28 layers, untied): layer 233,057,792; text
  //  2 x 544,997,376 + 6,525,618,176 + 3,584 = 7,615,616,512; vision 1,505,280 + 629,678,080 + 44,575,744
  //  => 8,291,375,616.
  //  Qwen2.5-VL-3B (H 2048, I 11008, 16 / 2 heads, V 151936, 36 layers, tied): layer 77,076,992; text 311,164,928 +
  //  2,774,771,712 + 2,048 = 3,085,938,688; vision 1,505,280 + 630,470,400 + 36,708,608 => 3,754,622,976.
  //  Qwen2.5-VL-7B (text as Qwen2-VL-7B): vision 1,505,280 + 630,470,400 + 44,574,464 => 8,292,166,656.
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"qwen2-vl-2b-instruct", 2'208'985'600},
      {"qwen2-vl-7b-instruct", 8'291'375'616},
      {"qwen2.5-vl-3b-instruct", 3'754'622'976},
      {"qwen2.5-vl-7b-instruct", 8'292'166'656},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    const memplan::ModelSpec m = memplan::load_zoo_model(z.name);
    CHECK(memplan::param_count(m) == z.params);
  }
}

TEST_CASE("qwen2_vl: image batches are checked against the config", "[family][set21]") {
  const memplan::ModelSpec m = memplan::load_zoo_model("qwen2-vl-2b-instruct");
  memplan::RunConfig run;
  run.mode = memplan::Mode::training;
  run.batch_size = 1;
  run.seq_len = 512;
  run.precision = memplan::Precision::bf16;
  run.images_per_sample = 1;
  run.image_grid = {1, 20, 24};  // 480 patches, 120 tokens
  CHECK(error_of([&] { memplan::estimate(m, run); }) == "no error");
  run.image_grid = {1, 21, 24};  // h not a multiple of the merge size
  CHECK(error_of([&] { memplan::estimate(m, run); }).rfind("image_grid:", 0) == 0);
  run.image_grid = {1, 40, 60};  // 600 tokens do not fit in 512
  CHECK(error_of([&] { memplan::estimate(m, run); }).rfind("seq_len:", 0) == 0);
  run.image_grid = {};
  CHECK(error_of([&] { memplan::estimate(m, run); }).rfind("image_grid:", 0) == 0);
  run.image_grid = {1, 20, 24};
  run.mode = memplan::Mode::inference;  // served with images since the eighteenth session (family set 23)
  CHECK(error_of([&] { memplan::estimate(m, run); }) == "no error");
  run.image_grid = {1, 40, 60};  // the prompt must hold the images too
  CHECK(error_of([&] { memplan::estimate(m, run); }).rfind("seq_len:", 0) == 0);
  // Qwen3-VL likewise (its patches are 16 px: a 20 x 24 grid is 120 tokens)
  const memplan::ModelSpec q3 = memplan::load_zoo_model("qwen3-vl-4b");
  run.image_grid = {1, 20, 24};
  CHECK(error_of([&] { memplan::estimate(q3, run); }) == "no error");
  run.seq_len = 100;
  CHECK(error_of([&] { memplan::estimate(q3, run); }).rfind("images_per_sample:", 0) == 0);
}

TEST_CASE("qwen2_vl: measured H200 cases of family set 21", "[family][set21]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured `params`
  // exactly (the estimate's count and param_count()). Five tuning rows: Qwen2-VL-2B widths bf16 with one 34 x 50
  // image per sample, fp32 eager with a 20 x 24 image, Qwen2.5-VL-3B bf16 with a 36 x 52 image (windows), the
  // Qwen2.5-VL-7B widths amp fp16 with two images per sample and two micro-batches, and Qwen2-VL-7B text-only
  // generate. The 7B amp checkpointed row failed in the harness (measured later, blind).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f21-q2vl-", "f21-q25vl-", "f22-q2vl-", "f22-q25vl-"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() >= 5);
}
