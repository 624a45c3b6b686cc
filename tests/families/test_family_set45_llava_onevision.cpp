// llava_onevision (family set 45): LlavaOnevisionForConditionalGeneration trained with anyres images, several
// untiled images a sample, text only, or serving text-only prompts (the harness plugin calibrate/harness_kinds/
// llava.py). Written from the modeling file without a device: the importer's class defaults, refusals naming the
// field, each image's token count for several sizes and anyres_max settings (derived by hand below), and the zoo
// entries' parameter counts derived by hand. The held-out rows (calibrate/cases/families45-input.jsonl) are
// predicted in data/validation/predictions/.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "models/hf_config.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::ModelSpec;
using memplan::RunConfig;
using memplan::TransformerSpec;

namespace {

using memplan::testing::starts_with;
TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }
RunConfig run(int64_t batch, int64_t seq, int64_t images, std::vector<int64_t> hw = {}) {
  return memplan::testing::image_training(batch, seq, images, std::move(hw));
}

// A small llava_onevision whose tower keeps the published 384-pixel tiles at 14-pixel patches (27 x 27 = 729
// features a tile under "full"), so the default pinpoints apply; 2 SigLIP layers of 64, 2 Qwen2 layers of 256.
std::string small(const std::string& extra = "") {
  return R"({"model_type": "llava_onevision", )" + extra + R"(
  "text_config": {"model_type": "qwen2", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 152000},
  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64, "intermediate_size": 128,
                    "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 384, "patch_size": 14,
                    "vision_use_head": false}})";
}

}  // namespace

TEST_CASE("llava_onevision importer: class defaults", "[family][set45][importer]") {
  // LlavaOnevisionConfig: Qwen2Config text, a SigLIP tower (a vision_config without model_type is
  // siglip_vision_model: SiglipVisionConfig's 768 x 12 layers), layer -1, "full", anyres_max_9 and the 36
  // pinpoints of multiples of 384.
  const TransformerSpec s = import(R"({"model_type": "llava_onevision",
      "vision_config": {"image_size": 384, "patch_size": 14, "vision_use_head": false}})");
  CHECK(s.model_type == "llava_onevision");
  CHECK(s.mm_text_type == "qwen2");
  CHECK_FALSE(s.mm_vision_clip);
  CHECK(s.vision_hidden_size == 768);
  CHECK(s.vision_num_layers == 12);
  CHECK(s.mm_feature_layers == std::vector<int64_t>{12});  // -1 of 13 hidden states
  CHECK(s.mm_feature_full);
  CHECK(s.mm_image_tokens == 729);  // 27 * 27, no class position
  REQUIRE(s.mm_grid_pinpoints.size() == 72);
  CHECK(s.mm_grid_pinpoints[0] == 384);
  CHECK(s.mm_grid_pinpoints[71] == 2304);
  CHECK(s.mm_grid_pinpoints[2] == 384);  // [384, 768]: height first
  CHECK(s.mm_grid_pinpoints[3] == 768);
  CHECK(s.mm_anyres_max_patches == 9);
  CHECK(s.mm_projector_act == "gelu");
  CHECK(s.mm_projector_bias);
  CHECK_FALSE(s.tie_word_embeddings);
  // vision_config absent: SiglipVisionConfig(1024, 4096, patch 14, image 336, 24 layers) with vision_use_head left
  // to getattr's true: refused naming it.
  CHECK(starts_with(error_of([] { import(R"({"model_type": "llava_onevision"})"); }),
               "config.vision_config.vision_use_head:"));
}

TEST_CASE("llava_onevision: refusals name the field", "[family][set45]") {
  for (const char* bad : {R"("vision_aspect_ratio": "anyres_9",)", R"("vision_aspect_ratio": "anyres_max_0",)",
                          R"("vision_aspect_ratio": "anyres_max_",)", R"("vision_aspect_ratio": 9,)"}) {
    CAPTURE(bad);
    CHECK(starts_with(error_of([&] { import(small(bad)); }), "config.vision_aspect_ratio:"));
  }
  // SigLIP under "default" keeps 728 features a tile, not 27 x 27: pack_image_features raises.
  CHECK(starts_with(error_of([] { import(small(R"("vision_feature_select_strategy": "default",)")); }),
               "config.vision_feature_select_strategy:"));
  CHECK(starts_with(error_of([] { import(small(R"("image_grid_pinpoints": [[384, 500]],)")); }),
               "config.image_grid_pinpoints:"));
  const ModelSpec m = model_of(small());
  CHECK(starts_with(error_of([&] { memplan::estimate(m, run(1, 2000, 0, {768, 768})); }), "image_hw:"));
  RunConfig inf = run(1, 2000, 1);
  inf.mode = memplan::Mode::inference;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, inf); }), "images_per_sample:"));
}

TEST_CASE("llava_onevision: image tokens per image size, derived by hand", "[family][set45]") {
  // The harness lays out 4 text tokens, then each image's n tokens and 3 more: seq_len 4 + k (n + 3) fits, one
  // token fewer is refused naming seq_len. One image a sample: n = 729 (the base tile) + rows' * (cols' + 1) over
  // the unpadded map, resized when ratio = sqrt(rows * cols / (N * 27^2)) > 1.1 to int(rows // ratio) x
  // int(cols // ratio). Pinpoints: every [h, w] of multiples of 384 up to 2304 (select_best_resolution: the most
  // of the image kept, then the least waste, then the first in [h, w] order).
  //  384 x 384 (absent): [384, 384] keeps all and wastes nothing: 1 x 1 grid, 27 x 27, n = 729 + 27 * 28 = 1485.
  //  768 x 768: [768, 768] keeps all, wastes nothing: 2 x 2, 54 x 54, ratio sqrt(2916 / 6561) = 0.67: n = 729 +
  //             54 * 55 = 3699. Under anyres_max_2: ratio sqrt(2916 / 1458) = 1.414, 54 // 1.414 = 38: n = 729 +
  //             38 * 39 = 2211.
  //  500 x 900: every pinpoint of at least 500 x 900 keeps all; the least waste is [768, 1152] (884736 - 450000):
  //             2 x 3, 54 x 81; aspect 1.8 > 1.5: new height int(round(500 * 81 / 900, 7)) = 45, padding (54 - 45) // 2
  //             = 4, 46 rows. Under anyres_max_2: ratio sqrt(46 * 81 / 1458) = 1.598, 46 // 1.598 = 28, 81 // 1.598
  //             = 50: n = 729 + 28 * 51 = 2157 (under anyres_max_9: ratio 0.75, n = 729 + 46 * 82 = 4501).
  //  400 x 700: [768, 768] keeps all (scale min(768/700, 768/400) = 1.097 keeps 280000) with waste 309824, less
  //             than [384, 768]'s (which keeps int(700 * 0.96) * int(400 * 0.96) = 672 * 384 = 258048 only): 2 x 2,
  //             54 x 54; aspect 1.75 > 1: new height int(round(400 * 54 / 700, 7)) = int(30.86) = 30, padding
  //             (54 - 30) // 2 = 12, 30 rows: n = 729 + 30 * 55 = 2379.
  //  1152 x 1536: [1152, 1536] keeps all: 3 x 4, 81 x 108; ratio sqrt(8748 / 6561) = 1.155 > 1.1 under
  //             anyres_max_9: 81 // 1.155 = 70, 108 // 1.155 = 93: n = 729 + 70 * 94 = 7309.
  struct Row {
    std::string extra;
    std::vector<int64_t> hw;
    int64_t n;
  };
  const std::string max2 = R"("vision_aspect_ratio": "anyres_max_2",)";
  for (const Row& r : {Row{"", {}, 1485}, Row{"", {768, 768}, 3699}, Row{max2, {768, 768}, 2211},
                       Row{max2, {500, 900}, 2157}, Row{"", {500, 900}, 4501}, Row{"", {400, 700}, 2379},
                       Row{"", {1152, 1536}, 7309}}) {
    CAPTURE(r.extra, r.hw, r.n);
    const ModelSpec m = model_of(small(r.extra));
    CHECK(error_of([&] { memplan::estimate(m, run(1, 4 + r.n + 3, 1, r.hw)); }) == "no error");
    CHECK(starts_with(error_of([&] { memplan::estimate(m, run(1, 4 + r.n + 2, 1, r.hw)); }), "seq_len:"));
  }
  // Two images a sample: none tiled (batch_num_images), 729 + 1 newline each whatever the size: 4 + 2 (730 + 3).
  const ModelSpec m = model_of(small());
  CHECK(error_of([&] { memplan::estimate(m, run(1, 4 + 2 * 733, 2, {768, 768})); }) == "no error");
  CHECK(starts_with(error_of([&] { memplan::estimate(m, run(1, 4 + 2 * 733 - 1, 2)); }), "seq_len:"));
}

TEST_CASE("llava_onevision: amp resize and LoRA replay", "[family][set45]") {
  const ModelSpec m = model_of(small(R"("vision_aspect_ratio": "anyres_max_2",)"));
  RunConfig c = run(1, 2300, 1, {768, 768});
  c.precision = memplan::Precision::amp_bf16;
  CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
  c.lora.r = 16;
  c.lora.alpha = 32;
  c.lora.target_modules = {"q_proj", "v_proj"};
  CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
}

TEST_CASE("llava_onevision: parameter counts, derived by hand", "[family][set45]") {
  // SigLIP so400m cut to 26 layers (1152 wide, MLP 4304, 384 / 14 -> 729 positions, no head): patch conv
  // 1152*3*14*14 + 1152 = 678,528, positions 729*1152 = 839,808; a layer: q/k/v/out 4*(1152*1152 + 1152) =
  // 5,313,024, fc1 4304*1152 + 4304 = 4,962,512, fc2 1152*4304 + 1152 = 4,959,360, two norms 4,608 -> 15,239,504,
  // x 26 = 396,227,104; post_layernorm 2,304. Tower 397,747,744.
  // 0.5b-ov: projector 1152*896 + 896 = 1,033,088 and 896*896 + 896 = 803,712; image_newline 896. Qwen2-0.5B text
  // (vocabulary 152000, tied): embed_tokens 136,192,000; a layer: q 896*896 + 896 = 803,712, k and v 2*(128*896 +
  // 128) = 229,632, o 802,816, MLP 3*896*4864 = 13,074,432, norms 1,792 -> 14,912,384, x 24 = 357,897,216; norm 896.
  // Text 494,090,112. Total 494,090,112 + 397,747,744 + 1,836,800 + 896 = 893,675,552.
  CHECK(memplan::param_count(memplan::load_zoo_model("llava-onevision-qwen2-0.5b-ov")) == 893'675'552);
  // 7b-ov: projector 1152*3584 + 3584 = 4,132,352 and 3584*3584 + 3584 = 12,848,640; image_newline 3,584. Qwen2-7B
  // text (vocabulary 152128, untied): embed_tokens and lm_head 2*152128*3584 = 1,090,453,504; a layer: q 3584*3584
  // + 3584 = 12,848,640, k and v 2*(512*3584 + 512) = 3,671,040, o 12,845,056, MLP 3*3584*18944 = 203,685,888, norms
  // 7,168 -> 233,057,792, x 28 = 6,525,618,176; norm 3,584. Text 7,616,075,264. Total 7,616,075,264 + 397,747,744
  // + 16,980,992 + 3,584 = 8,030,807,584.
  CHECK(memplan::param_count(memplan::load_zoo_model("llava-onevision-qwen2-7b-ov")) == 8'030'807'584);
}
