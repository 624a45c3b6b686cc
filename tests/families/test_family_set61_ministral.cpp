// ministral (family set 61): MinistralForCausalLM (Ministral-8B-Instruct-2410), Qwen2's decoder without biases,
// whose model builds the causal and the sliding-window masks on every forward whatever config.layer_types holds,
// each layer reading its type's mask and keeping its type's cache layer. Not the ministral3 type (Ministral 3: Llama's
// layers with a position-scaled query). Written from the installed 5.17 modeling file without a device: the
// importer's class defaults, refusals naming the field, the KV cache with its sliding layers, the zoo entry's
// parameter count, each derived by hand. The held-out rows (calibrate/cases/families61-input.jsonl) are predicted in
// data/validation/predictions/families61-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

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
using memplan::testing::starts_with;

// Two layers (full, then sliding with a window of 64), 4 heads / 2 KV heads of 64, hidden 256, vocabulary 1000.
const char* kSmall = R"({"model_type": "ministral", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 64, "sliding_window": 64, "layer_types": ["full_attention", "sliding_attention"]})";

}  // namespace

TEST_CASE("ministral importer: class defaults", "[family][set61][importer]") {
  // MinistralConfig(): MistralConfig's fields (vocab 32000, hidden 4096, intermediate 14336, 32 layers, 32 heads /
  // 8 KV heads, 131072 positions, untied, sliding_window 4096) and layer_types None => every layer sliding. head_dim
  // stays None in the class (refused below): given here.
  const TransformerSpec s = import(R"({"model_type": "ministral", "head_dim": 128})");
  CHECK(s.model_type == "ministral");
  CHECK(s.vocab_size == 32000);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 14336);
  CHECK(s.num_layers == 32);
  CHECK(s.num_heads == 32);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 131072);
  CHECK(s.sliding_window == 4096);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.qkv_bias);  // MinistralAttention drops Qwen2's q / k / v biases
  CHECK_FALSE(s.o_bias);
  CHECK(s.sliding_layers == std::vector<uint8_t>(32, 1));
  const TransformerSpec z = memplan::testing::import_config(R"({"model_type": "ministral", "head_dim": 128,
      "num_hidden_layers": 4, "layer_types": ["full_attention", "sliding_attention", "sliding_attention",
      "sliding_attention"]})");
  CHECK(z.sliding_layers == std::vector<uint8_t>{0, 1, 1, 1});
}

TEST_CASE("ministral: refusals name the field", "[family][set61]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "ministral"})", "config.head_dim:"},  // None in the class: the head view fails
      {R"({"model_type": "ministral", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "ministral", "head_dim": 128, "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "ministral", "head_dim": 128, "num_hidden_layers": 2, "layer_types": ["full_attention"]})",
       "config.layer_types:"},
      {R"({"model_type": "ministral", "head_dim": 128, "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "ministral", "head_dim": 128, "num_key_value_heads": 5})", "config.num_key_value_heads:"},
      {R"({"model_type": "ministral", "head_dim": 128, "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "ministral", "head_dim": 128, "quantization_config": {"quant_method": "fp8"}})",
       "config.quantization_config:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("ministral: the KV cache after the prefill, derived by hand", "[family][set61]") {
  // generate() from a 100-token prompt, B 2, bf16. The full layer (DynamicLayer) keeps K and V [2, 2, 100, 64]:
  // 2 x 51,200 bytes. The sliding layer (DynamicSlidingWindowLayer) keeps the last sliding_window - 1 = 63 tokens,
  // but as a slice of the 100-token cat output, whose storage stays allocated: 2 x 51,200 too (the decode steps'
  // cats then hold 63 + 1). Total 204,800.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 4 * 51'200);
}

TEST_CASE("ministral: both masks every forward; parameter counts derived by hand", "[family][set61]") {
  // Eager training builds the causal and the sliding float masks [1, 1, S, S] whatever the layer types: an all-full
  // model costs the same as one with sliding layers (the sliding mask is made either way, read by no layer).
  const char* all_full = R"({"model_type": "ministral", "vocab_size": 1000, "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 64, "sliding_window": 64, "layer_types": ["full_attention", "full_attention"]})";
  RunConfig t;
  t.batch_size = 2;
  t.seq_len = 96;
  t.precision = memplan::Precision::bf16;
  t.attn = memplan::AttnImpl::eager;
  const auto a = memplan::estimate(memplan::testing::model_of_config(kSmall), t);
  const auto f = memplan::estimate(memplan::testing::model_of_config(all_full), t);
  CHECK(a.peak_allocated_bytes() == f.peak_allocated_bytes());
  // kSmall: 2 x 1000 x 256 embeddings / head, per layer q / o 256 x 256, k / v 256 x 128, MLP 3 x 512 x 256, two
  // norms: 196,608 + 393,216 + 512 = 590,336; 512,000 + 2 x 590,336 + 256 = 1,692,928.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'692'928);
  // ministral-8b-instruct-2410 (the model card's 8,019,808,256): 2 x 131072 x 4096 = 1,073,741,824; per layer
  // q / o 4096^2, k / v 4096 x 1024, MLP 3 x 4096 x 12288, two norms: 33,554,432 + 8,388,608 + 150,994,944 + 8,192 =
  // 192,946,176, x 36 = 6,946,062,336; + 4096 final norm = 8,019,808,256.
  CHECK(memplan::param_count(memplan::load_zoo_model("ministral-8b-instruct-2410")) == 8'019'808'256);
}
