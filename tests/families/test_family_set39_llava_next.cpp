// llava_next (family set 39): LlavaNextForConditionalGeneration trained with anyres images (the harness plugin
// calibrate/harness_kinds/llava.py), text only, or serving text-only prompts. Written from the modeling file without a
// device: the importer's class defaults, refusals naming the field, each image's token count for several sizes (derived
// by hand below from select_best_resolution and unpad_image), and the zoo entries' parameter counts derived by hand.
// The held-out rows (calibrate/cases/families39-input.jsonl) are predicted in data/validation/predictions/.
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

// A small llava_next whose tower keeps the published 336-pixel tiles at 14-pixel patches (24 x 24 = 576 features a
// tile under "default"), so the default pinpoints apply; 2 CLIP layers of 64, 2 Llama layers of 256.
const char* kSmall = R"({"model_type": "llava_next",
  "text_config": {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                  "num_attention_heads": 4, "vocab_size": 33000},
  "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64, "intermediate_size": 128,
                    "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 336, "patch_size": 14}})";

}  // namespace

TEST_CASE("llava_next importer: class defaults", "[family][set39][importer]") {
  // LlavaNextConfig(): LlavaConfig's defaults (LlamaConfig text, CLIP ViT-L/14-336, layer -2, "default") and the
  // five default pinpoints.
  const TransformerSpec s = import(R"({"model_type": "llava_next"})");
  CHECK(s.model_type == "llava_next");
  CHECK(s.mm_text_type == "llama");
  CHECK(s.mm_vision_clip);
  CHECK(s.vision_image_size == 336);
  CHECK(s.vision_patch_size == 14);
  CHECK(s.vision_num_layers == 24);
  CHECK(s.mm_feature_layers == std::vector<int64_t>{23});  // -2 of 25 hidden states
  CHECK_FALSE(s.mm_feature_full);
  CHECK(s.mm_image_tokens == 576);  // 24 * 24 + 1 class position - 1 ("default")
  CHECK(s.mm_grid_pinpoints == std::vector<int64_t>{336, 672, 672, 336, 672, 672, 1008, 336, 336, 1008});
  CHECK(s.mm_projector_act == "gelu");
  CHECK(s.mm_projector_bias);
  CHECK_FALSE(s.tie_word_embeddings);
}

TEST_CASE("llava_next: refusals name the field", "[family][set39]") {
  CHECK(starts_with(error_of([] {
                 import(R"({"model_type": "llava_next", "vision_config": {"model_type": "siglip_vision_model",
                            "vision_use_head": false}})");
               }),
               "config.vision_config.model_type:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "llava_next", "image_grid_pinpoints": [[336, 500]]})"); }),
               "config.image_grid_pinpoints:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "llava_next", "image_grid_pinpoints": []})"); }),
               "config.image_grid_pinpoints:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "llava_next", "image_grid_pinpoints": [[336]]})"); }),
               "config.image_grid_pinpoints:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "llava_next", "vision_feature_select_strategy": "cls"})"); }),
               "config.vision_feature_select_strategy:"));
  const ModelSpec m = model_of(kSmall);
  // image_hw without images; images in inference.
  CHECK(starts_with(error_of([&] { memplan::estimate(m, run(1, 2000, 0, {672, 672})); }), "image_hw:"));
  RunConfig inf = run(1, 2000, 1);
  inf.mode = memplan::Mode::inference;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, inf); }), "images_per_sample:"));
  RunConfig q = run(1, 2000, 1);
  q.lora.r = 16;
  q.lora.target_modules = {"q_proj", "v_proj"};
  q.quant.base = memplan::QuantBase::nf4;
  CHECK(error_of([&] { memplan::estimate(m, q); }) != "no error");  // QLoRA: not replayed
  // image_hw on llava (one square image): refused.
  const ModelSpec lv = model_of(std::string(kSmall).replace(std::string(kSmall).find("llava_next"), 10, "llava"));
  CHECK(starts_with(error_of([&] { memplan::estimate(lv, run(1, 2000, 1, {672, 672})); }), "image_hw:"));
}

TEST_CASE("llava_next: image tokens per image size, derived by hand", "[family][set39]") {
  // The harness lays out 4 text tokens, then each image's n tokens and 3 more: seq_len 4 + k (n + 3) fits, one
  // token fewer is refused naming seq_len. n = 576 (the base tile) + rows * (cols + 1) over the unpadded map.
  // select_best_resolution([h, w], pinpoints [ph, pw]): scale = min(pw / w, ph / h), effective =
  // min(int(w scale) * int(h scale), w h); the largest effective wins, ties the least ph pw - effective, then the
  // first. Feature map: (ph / 336) * 24 rows x (pw / 336) * 24 columns; unpad crops the side the aspect ratio pads.
  //  672 x 672:  (336,672) 0.5 -> 336*336 = 112896; (672,672) 1.0 -> 451584 (all of it): 2 x 2 grid, 48 x 48, same
  //              aspect: new width round(672 * 48 / 672) = 48, no crop. n = 576 + 48 * 49 = 2928.
  //  336 x 1008: (336,672) min(0.667, 1) -> 672 * 224 = 150528; (336,1008) 1.0 -> 338688 (all): 1 x 3, 24 x 72,
  //              aspect 3 = 3: new width 72, no crop. n = 576 + 24 * 73 = 2328.
  //  500 x 400:  (672,336) min(0.84, 1.344) -> 336 * 420 = 141120; (672,672) 1.344 -> min(537 * 672, 200000) =
  //              200000 (all): 2 x 2, 48 x 48; aspect 0.8 < 1: new width int(round(400 * 48 / 500)) = 38, padding
  //              (48 - 38) / 2 = 5, 38 columns. n = 576 + 48 * 39 = 2448.
  //  336 x 336:  (336,672) and (672,336) both keep all 112896 and waste 112896; (672,672) wastes more: the first,
  //              1 x 2, 24 x 48; aspect 1 < 2: new width 24, padding 12, 24 columns. n = 576 + 24 * 25 = 1176.
  //  1008 x 336: (1008,336) 1.0 keeps all: 3 x 1, 72 x 24; aspect 1/3 = 1/3: no crop. n = 576 + 72 * 25 = 2376.
  const ModelSpec m = model_of(kSmall);
  struct Row {
    std::vector<int64_t> hw;
    int64_t n;
  };
  for (const Row& r : {Row{{672, 672}, 2928}, Row{{336, 1008}, 2328}, Row{{500, 400}, 2448}, Row{{}, 1176},
                       Row{{1008, 336}, 2376}}) {
    CAPTURE(r.hw, r.n);
    CHECK(error_of([&] { memplan::estimate(m, run(1, 4 + r.n + 3, 1, r.hw)); }) == "no error");
    CHECK(starts_with(error_of([&] { memplan::estimate(m, run(1, 4 + r.n + 2, 1, r.hw)); }), "seq_len:"));
  }
  // Two images a sample: 4 + 2 (2928 + 3).
  CHECK(error_of([&] { memplan::estimate(m, run(1, 4 + 2 * 2931, 2, {672, 672})); }) == "no error");
  CHECK(starts_with(error_of([&] { memplan::estimate(m, run(1, 4 + 2 * 2931 - 1, 2, {672, 672})); }), "seq_len:"));
}

TEST_CASE("llava_next: LoRA replays, llava still refuses it", "[family][set39]") {
  const ModelSpec m = model_of(kSmall);
  RunConfig c = run(1, 3000, 1, {672, 672});
  c.lora.r = 16;
  c.lora.alpha = 32;
  c.lora.target_modules = {"q_proj", "v_proj"};
  CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
  const ModelSpec lv = model_of(std::string(kSmall).replace(std::string(kSmall).find("llava_next"), 10, "llava"));
  RunConfig l = run(1, 700, 1);
  l.lora = c.lora;
  CHECK(starts_with(error_of([&] { memplan::estimate(lv, l); }), "lora:"));
}

TEST_CASE("llava_next: parameter counts, derived by hand", "[family][set39]") {
  // Vision (CLIPVisionModel, ViT-L/14-336): class_embedding 1,024, bias-free patch conv 1024*3*14*14 = 602,112,
  // positions 577*1024 = 590,848, pre_layrnorm 2,048; a layer: q/k/v/out 4*(1024*1024 + 1024) = 4,198,400, fc1
  // 4096*1024 + 4096 = 4,198,400, fc2 1024*4096 + 1024 = 4,195,328, two norms 4,096 -> 12,596,224, x 24 =
  // 302,309,376; post_layernorm 2,048. Tower 303,507,456.
  // Projector: 1024*4096 + 4096 = 4,198,400 and 4096*4096 + 4096 = 16,781,312 -> 20,979,712. image_newline 4,096.
  // Mistral-7B text (vocabulary 32064): embed_tokens and lm_head 2 * 32064*4096 = 262,668,288; a layer: q, o
  // 2 * 4096*4096 = 33,554,432, k, v 2 * 1024*4096 = 8,388,608, MLP 3 * 4096*14336 = 176,160,768, norms 8,192 ->
  // 218,112,000, x 32 = 6,979,584,000; norm 4,096. Text 7,242,256,384.
  // Total 7,242,256,384 + 303,507,456 + 20,979,712 + 4,096 = 7,566,747,648: the model card's count.
  CHECK(memplan::param_count(memplan::load_zoo_model("llava-v1.6-mistral-7b")) == 7'566'747'648);
  // Vicuna-7B text (Llama-2-7B shape, vocabulary 32064): embeddings 262,668,288; a layer 4 * 16,777,216 +
  // 3 * 4096*11008 (135,266,304) + 8,192 = 202,383,360, x 32 = 6,476,267,520; norm 4,096 -> 6,738,939,904.
  // Total 6,738,939,904 + 303,507,456 + 20,979,712 + 4,096 = 7,063,431,168 (llava-1.5-7b's 7,063,427,072 plus the
  // image_newline).
  CHECK(memplan::param_count(memplan::load_zoo_model("llava-v1.6-vicuna-7b")) == 7'063'431'168);
}
