// mllama (family set 42): MllamaForConditionalGeneration trained with tiled images (the harness plugin
// calibrate/harness_kinds/mllama.py), text only, or serving text-only prompts; MllamaForCausalLM from a text config.
// Written from the modeling file without a device: the importer's class defaults, refusals naming the field, the
// parameter counts derived by hand (the zoo entries and a small config). The held-out rows
// (calibrate/cases/families42-input.jsonl) are predicted in data/validation/predictions/.
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

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
bool starts(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }

RunConfig run(int64_t batch, int64_t seq, int64_t images) {
  RunConfig c;
  c.mode = memplan::Mode::training;
  c.batch_size = batch;
  c.seq_len = seq;
  c.images_per_sample = images;
  return c;
}

// A small mllama: vision 64 wide (2 heads), 2 local + 1 global layers over 4 tiles of 56 x 56 at patch 14 (16 + 1
// = 17 positions a tile, padded to 24), intermediate layers [0, 1] (vision_output_dim 64 * 3 = 192); text 128 wide,
// 4 heads / 2 KV, MLP 256, 3 layers of which layer 1 is a cross-attention layer, vocabulary 1000.
const char* kSmall = R"({"model_type": "mllama", "image_token_index": 1000,
  "text_config": {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 3, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "vocab_size": 1000, "cross_attention_layers": [1, 7], "pad_token_id": 0},
  "vision_config": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_global_layers": 1,
                    "attention_heads": 2, "image_size": 56, "patch_size": 14, "intermediate_layers_indices": [0, -1],
                    "vision_output_dim": 192}})";

}  // namespace

TEST_CASE("mllama importer: class defaults", "[family][set42][importer]") {
  // MllamaConfig(): MllamaTextConfig() and MllamaVisionConfig() (image_size 448 by default, 560 published).
  const TransformerSpec s = import(R"({"model_type": "mllama"})");
  CHECK(s.model_type == "mllama");
  CHECK(s.vocab_size == 128256);
  CHECK(s.hidden_size == 4096);
  CHECK(s.num_layers == 40);
  CHECK(s.num_heads == 32);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.intermediate_size == 14336);
  CHECK(s.mllama_cross_layers == std::vector<int64_t>{3, 8, 13, 18, 23, 28, 33, 38});
  CHECK(s.vision_hidden_size == 1280);
  CHECK(s.vision_num_layers == 32);
  CHECK(s.mllama_global_layers == 8);
  CHECK(s.vision_num_heads == 16);
  CHECK(s.vision_image_size == 448);
  CHECK(s.vision_patch_size == 14);
  CHECK(s.mllama_max_tiles == 4);
  CHECK(s.mllama_aspect_ratios == 8);
  CHECK(s.mllama_intermediate_layers == std::vector<int64_t>{3, 7, 15, 23, 30});
  CHECK_FALSE(s.tie_word_embeddings);
  // Cross-attention indices outside the layers match none (`idx in self.cross_attention_layers`).
  const TransformerSpec small = import(kSmall);
  CHECK(small.mllama_cross_layers == std::vector<int64_t>{1});
  CHECK(small.mllama_intermediate_layers == std::vector<int64_t>{0, 1});
  // MllamaForCausalLM's text config at the top level.
  const TransformerSpec t = import(R"({"model_type": "mllama_text_model", "num_hidden_layers": 4,
                                       "cross_attention_layers": [2]})");
  CHECK(t.model_type == "mllama_text_model");
  CHECK(t.mllama_cross_layers == std::vector<int64_t>{2});
  CHECK(t.vision_hidden_size == 0);
}

TEST_CASE("mllama: refusals name the field", "[family][set42]") {
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "text_config": {"hidden_act": "gelu"}})"); }),
               "config.text_config.hidden_act:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "text_config": {"dropout": 0.1}})"); }),
               "config.text_config.dropout:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "text_config": {"cross_attention_layers": [1.5]}})"); }),
               "config.text_config.cross_attention_layers:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "text_config": {"cross_attention_layers": 3}})"); }),
               "config.text_config.cross_attention_layers:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "text_config": {"num_attention_heads": 3}})"); }),
               "config.text_config."));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "vision_config": {"vision_output_dim": 4096}})"); }),
               "config.vision_config.vision_output_dim:"));
  CHECK(starts(error_of([] {
                 import(R"({"model_type": "mllama", "vision_config": {"intermediate_layers_indices": [32]}})");
               }),
               "config.vision_config.intermediate_layers_indices:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "vision_config": {"num_hidden_layers": 8}})"); }),
               "config.vision_config.num_hidden_layers:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "vision_config": {"max_num_tiles": 6}})"); }),
               "config.vision_config.max_num_tiles:"));
  CHECK(starts(error_of([] {
                 import(R"({"model_type": "mllama", "vision_config": {"supported_aspect_ratios": [[2, 3]]}})");
               }),
               "config.vision_config.supported_aspect_ratios:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "vision_config": {"hidden_act": "relu"}})"); }),
               "config.vision_config.hidden_act:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "vision_config": {"attention_heads": 7}})"); }),
               "config.vision_config.attention_heads:"));
  CHECK(starts(error_of([] { import(R"({"model_type": "mllama", "image_token_index": 128264})"); }),
               "config.image_token_index:"));
  const ModelSpec m = model_of(kSmall);
  RunConfig inf = run(1, 64, 1);
  inf.mode = memplan::Mode::inference;
  CHECK(starts(error_of([&] { memplan::estimate(m, inf); }), "images_per_sample:"));
  CHECK(starts(error_of([&] { memplan::estimate(m, run(1, 2, 1)); }), "seq_len:"));
  CHECK(error_of([&] { memplan::estimate(m, run(1, 3, 1)); }) == "no error");
  RunConfig q = run(1, 64, 1);
  q.lora.r = 16;
  q.lora.target_modules = {"q_proj", "v_proj"};
  q.quant.base = memplan::QuantBase::nf4;
  CHECK(starts(error_of([&] { memplan::estimate(m, q); }), "quantization:"));
  RunConfig lc = run(1, 64, 1);
  lc.lora.r = 16;
  lc.lora.target_modules = {"q_proj", "v_proj"};
  lc.grad_checkpointing = true;
  CHECK(starts(error_of([&] { memplan::estimate(m, lc); }), "grad_checkpointing:"));
  const ModelSpec t = model_of(R"({"model_type": "mllama_text_model", "num_hidden_layers": 2, "hidden_size": 128,
                                   "intermediate_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
                                   "vocab_size": 1000, "pad_token_id": 0, "cross_attention_layers": [1]})");
  CHECK(starts(error_of([&] { memplan::estimate(t, run(1, 64, 1)); }), "images_per_sample:"));
}

TEST_CASE("mllama: runs with images, text only, LoRA and serving", "[family][set42]") {
  const ModelSpec m = model_of(kSmall);
  for (int64_t k : {0, 1, 2}) {
    CAPTURE(k);
    CHECK(error_of([&] { memplan::estimate(m, run(3, 37, k)); }) == "no error");
  }
  RunConfig c = run(2, 40, 1);
  c.lora.r = 8;
  c.lora.alpha = 16;
  c.lora.target_modules = {"q_proj", "v_proj"};
  CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
  RunConfig e = run(1, 40, 1);
  e.attn = memplan::AttnImpl::eager;
  CHECK(error_of([&] { memplan::estimate(m, e); }) == "no error");
  RunConfig k = run(2, 40, 1);
  k.grad_checkpointing = true;
  CHECK(error_of([&] { memplan::estimate(m, k); }) == "no error");
  RunConfig inf = run(2, 40, 0);
  inf.mode = memplan::Mode::inference;
  inf.generate_tokens = 4;
  CHECK(error_of([&] { memplan::estimate(m, inf); }) == "no error");
  // Images cost memory on top of the text-only step.
  CHECK(memplan::estimate(m, run(2, 40, 2)).peak_allocated_bytes() >
        memplan::estimate(m, run(2, 40, 0)).peak_allocated_bytes());
}

TEST_CASE("mllama: parameter counts, derived by hand", "[family][set42]") {
  // Small config. Vision (Hv 64, MLP 128, N = 17 positions, T = 4 tiles, 9 aspect-ratio rows):
  //   patch conv 64*3*14*14 = 37,632; class_embedding 64; gated positions: gate 1, embedding 17*64 = 1,088,
  //   tile_embedding 9 * 4*17*64 = 39,168; pre / post tile embeddings 2 * (9 * 4*64 + 1) = 4,610; layernorm_pre /
  //   _post 256. A layer: q/k/v/o 4 * 64*64 = 16,384, fc1 64*128 + 128 = 8,320, fc2 128*64 + 64 = 8,256, two norms
  //   256 -> 33,216; 3 layers 99,648 and the global layer's two gates 2. Vision 182,469.
  // Projector 192*128 + 128 = 24,704.
  // Text (H 128, 4 heads of 32, 2 KV heads, MLP 256): embed_tokens (1000 + 8) * 128 = 129,024; a self layer: q, o
  //   2 * 128*128 = 32,768, k, v 2 * 64*128 = 16,384, MLP 3 * 128*256 = 98,304, norms 256 -> 147,712; the cross
  //   layer adds q_norm / k_norm 2 * 32 and two gates: 147,778. 2 * 147,712 + 147,778 = 443,202; norm 128; lm_head
  //   1000 * 128 = 128,000. Text 700,354.
  // Total 182,469 + 24,704 + 700,354 = 907,527.
  CHECK(memplan::param_count(model_of(kSmall)) == 907'527);
  // Llama-3.2-11B-Vision. Vision (Hv 1280, MLP 5120, 560 / 14 = 40: N = 1601, T = 4, 9 aspect-ratio rows):
  //   patch conv 1280*3*14*14 = 752,640; class_embedding 1,280; gated positions 1 + 1601*1280 (2,049,280) +
  //   9 * 4*1601*1280 (73,774,080); pre / post tile embeddings 2 * (9 * 5120 + 1) = 92,162; layernorms 5,120.
  //   A layer: q/k/v/o 4 * 1280^2 = 6,553,600, fc1 1280*5120 + 5120 = 6,558,720, fc2 5120*1280 + 1280 =
  //   6,554,880, norms 5,120 -> 19,672,320; 40 layers 786,892,800 and 8 global layers' 16 gates. Vision 863,567,379.
  // Projector 7680*4096 + 4096 = 31,461,376.
  // Text: embed_tokens (128256 + 8) * 4096 = 525,369,344; a self layer: q, o 2 * 4096^2 = 33,554,432, k, v
  //   2 * 1024*4096 = 8,388,608, MLP 3 * 4096*14336 = 176,160,768, norms 8,192 -> 218,112,000; a cross layer
  //   + q_norm / k_norm 256 + two gates = 218,112,258. 32 * 218,112,000 + 8 * 218,112,258 = 8,724,482,064; norm
  //   4,096; lm_head 128256 * 4096 = 525,336,576. Text 9,775,192,080.
  // Total 863,567,379 + 31,461,376 + 9,775,192,080 = 10,670,220,835.
  CHECK(memplan::param_count(memplan::load_zoo_model("llama-3.2-11b-vision")) == 10'670'220'835);
  CHECK(memplan::param_count(memplan::load_zoo_model("llama-3.2-11b-vision-instruct")) == 10'670'220'835);
}
