// cwm (family set 73): CwmForCausalLM (Meta's Code World Model), Llama's decoder layer and MLP with bias-free Qwen2
// attention, whose model builds the causal and the sliding-window masks on every forward whatever config.layer_types
// holds, each layer reading its type's mask and keeping its type's cache layer (MinistralModel's statements:
// both_masks_parts.h). Written from the installed 5.17 modeling file without a device: the importer's class defaults
// (every fourth layer full from layer 0), refusals naming the field, the KV cache with its sliding layers, parameter
// counts, each derived by hand. The held-out rows (calibrate/cases/families73-input.jsonl) are predicted in
// data/validation/predictions/families73-holdout.json.
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
const char* kSmall = R"({"model_type": "cwm", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 64, "sliding_window": 64})";

}  // namespace

TEST_CASE("cwm importer: class defaults", "[family][set73][importer]") {
  // CwmConfig(): the 32B checkpoint's widths (vocab 128256, hidden 6144, intermediate 21504, 64 layers, 48 heads /
  // 8 KV heads of 128, 131072 positions, untied, window 8192) and layer_types None => full where i % 4 == 0.
  const TransformerSpec s = import(R"({"model_type": "cwm"})");
  CHECK(s.model_type == "cwm");
  CHECK(s.vocab_size == 128256);
  CHECK(s.hidden_size == 6144);
  CHECK(s.intermediate_size == 21504);
  CHECK(s.num_layers == 64);
  CHECK(s.num_heads == 48);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 131072);
  CHECK(s.sliding_window == 8192);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.qkv_bias);  // CwmAttention's projections are bias-free, whatever attention_bias says
  CHECK_FALSE(s.o_bias);
  CHECK_FALSE(s.mlp_bias);
  REQUIRE(s.sliding_layers.size() == 64);
  for (size_t i = 0; i < 64; ++i) CHECK(s.sliding_layers[i] == (i % 4 == 0 ? 0 : 1));
  // null => the __post_init__ fallbacks: KV heads = heads, head_dim = hidden // heads; attention_bias unread.
  const TransformerSpec n = import(R"({"model_type": "cwm", "hidden_size": 1024, "num_attention_heads": 16,
      "num_key_value_heads": null, "head_dim": null, "attention_bias": true, "num_hidden_layers": 3,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})");
  CHECK(n.num_kv_heads == 16);
  CHECK(n.head_dim == 64);
  CHECK_FALSE(n.qkv_bias);
  CHECK(n.sliding_layers == std::vector<uint8_t>{1, 0, 1});
  CHECK(import(R"({"model_type": "cwm", "mlp_bias": true})").mlp_bias);
}

TEST_CASE("cwm: refusals name the field", "[family][set73]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "cwm", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "cwm", "sliding_window": 0})", "config.sliding_window:"},
      {R"({"model_type": "cwm", "num_attention_heads": 40})", "config.num_attention_heads:"},  // 6144 % 40
      {R"({"model_type": "cwm", "num_hidden_layers": 2, "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "cwm", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "cwm", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
      {R"({"model_type": "cwm", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "cwm", "rope_parameters": {"rope_type": "longrope", "rope_theta": 1e6}})",
       "config.rope_parameters.rope_type:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("cwm: the KV cache after the prefill, derived by hand", "[family][set73]") {
  // generate() from a 100-token prompt, B 2, bf16. The full layer 0 (DynamicLayer) keeps K and V [2, 2, 100, 64]:
  // 2 x 51,200 bytes. The sliding layer 1 (DynamicSlidingWindowLayer) keeps the last sliding_window - 1 = 63 tokens,
  // as a slice of the 100-token cat output, whose storage stays allocated: 2 x 51,200 too. Total 204,800.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 4 * 51'200);
}

TEST_CASE("cwm: both masks every forward; the ministral build; parameter counts derived by hand", "[family][set73]") {
  // Eager training builds the causal and the sliding float masks [1, 1, S, S] whatever the layer types: an all-full
  // model costs the same as one with sliding layers.
  const char* all_full = R"({"model_type": "cwm", "vocab_size": 1000, "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 64, "sliding_window": 64, "layer_types": ["full_attention", "full_attention"]})";
  // The same model as MinistralForCausalLM (Qwen2's layers without biases, the same two masks): the same figures.
  const char* ministral = R"({"model_type": "ministral", "vocab_size": 1000, "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 64, "sliding_window": 64, "layer_types": ["full_attention", "sliding_attention"]})";
  RunConfig t;
  t.batch_size = 2;
  t.seq_len = 96;
  t.precision = memplan::Precision::bf16;
  t.attn = memplan::AttnImpl::eager;
  const auto a = memplan::estimate(memplan::testing::model_of_config(kSmall), t);
  const auto f = memplan::estimate(memplan::testing::model_of_config(all_full), t);
  const auto m = memplan::estimate(memplan::testing::model_of_config(ministral), t);
  CHECK(a.peak_allocated_bytes() == f.peak_allocated_bytes());
  CHECK(a.peak_allocated_bytes() == m.peak_allocated_bytes());
  // kSmall: 2 x 1000 x 256 embeddings / head, per layer q / o 256 x 256, k / v 256 x 128, MLP 3 x 512 x 256, two
  // norms: 196,608 + 393,216 + 512 = 590,336; 512,000 + 2 x 590,336 + 256 = 1,692,928. mlp_bias adds 512 + 512 + 256
  // per layer (gate, up, down): 2 x 1,280 more, 1,695,488.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'692'928);
  const std::string biased = std::string(kSmall).insert(1, R"("mlp_bias": true, )");
  CHECK(memplan::param_count(memplan::testing::model_of_config(biased)) == 1'695'488);
  // cwm-defaults (the 32B shape): 2 x 128256 x 6144 = 1,576,009,728; per layer q / o 6144^2, k / v 6144 x 1024,
  // MLP 3 x 6144 x 21504, two norms: 75,497,472 + 12,582,912 + 396,361,728 + 12,288 = 484,454,400, x 64 =
  // 31,005,081,600; + 6144 final norm = 32,581,097,472.
  CHECK(memplan::param_count(memplan::load_zoo_model("cwm-defaults")) == 32'581'097'472);
}
