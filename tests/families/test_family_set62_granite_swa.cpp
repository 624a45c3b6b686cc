// granite_swa (family set 62): GraniteSWAForCausalLM, Granite's multipliers on Llama's layer with sliding-window
// layers and a learnable sink per head. Written from the installed 5.17 modeling file without a device: the
// importer's class defaults, refusals naming the field, eager-only attention, the sliding layers' KV cache and
// parameter counts derived by hand. The held-out rows (calibrate/cases/families62-input.jsonl) are predicted in
// data/validation/predictions/families62-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

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
using memplan::testing::starts_with;

// Four layers of 256 with 4 heads and 2 KV heads of 64: layer 0 full, 1 .. 3 sliding (window 128).
constexpr const char* kSmall =
    R"({"model_type": "granite_swa", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000})";

}  // namespace

TEST_CASE("granite_swa importer: class defaults", "[family][set62][importer]") {
  // GraniteSWAConfig(): 2560 x 24 layers, 20 heads and 4 KV heads of 128, intermediate 8192, vocabulary 100352,
  // tied, window 128; layer_types None => full attention where i % 4 == 0; layer_rope_theta None => one table.
  const TransformerSpec s = import(R"({"model_type": "granite_swa"})");
  CHECK(s.model_type == "granite_swa");
  CHECK(s.vocab_size == 100352);
  CHECK(s.hidden_size == 2560);
  CHECK(s.intermediate_size == 8192);
  CHECK(s.num_layers == 24);
  CHECK(s.num_heads == 20);
  CHECK(s.num_kv_heads == 4);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 8192);
  CHECK(s.hidden_act == "silu");
  CHECK(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK_FALSE(s.mlp_bias);
  CHECK(s.sliding_window == 128);
  REQUIRE(s.sliding_layers.size() == 24);
  CHECK(s.sliding_layers[0] == 0);
  CHECK(s.sliding_layers[1] == 1);
  CHECK(s.sliding_layers[3] == 1);
  CHECK(s.sliding_layers[4] == 0);
  CHECK(s.granite_swa_rope_tables == 1);
  REQUIRE(s.granite_swa_nope_layers.size() == 24);
  for (uint8_t l : s.granite_swa_nope_layers) CHECK(l == 0);
  // num_key_value_heads None => num_attention_heads (__post_init__), not the class's 4.
  CHECK(import(R"({"model_type": "granite_swa", "num_key_value_heads": null})").num_kv_heads == 20);
  // layer_rope_theta: 0 is a NoPE layer; one rotary table per distinct non-zero theta.
  const TransformerSpec t = import(
      R"({"model_type": "granite_swa", "num_hidden_layers": 4, "layer_rope_theta": [10000, 0, 500000.0, 10000.0]})");
  CHECK(t.granite_swa_rope_tables == 2);
  CHECK(t.granite_swa_nope_layers == std::vector<uint8_t>{0, 1, 0, 0});
  // The default attention is eager (_supports_sdpa is False).
  CHECK(memplan::default_attn(memplan::load_zoo_model("granite-swa-defaults")) == memplan::AttnImpl::eager);
}

TEST_CASE("granite_swa: refusals name the field", "[family][set62]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "granite_swa", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "granite_swa", "sliding_window": 0})", "config.sliding_window:"},
      {R"({"model_type": "granite_swa", "num_hidden_layers": 2, "layer_types": ["full_attention"]})",
       "config.layer_types:"},
      {R"({"model_type": "granite_swa", "num_hidden_layers": 2, "layer_types": ["full_attention", "conv"]})",
       "config.layer_types[1]:"},
      {R"({"model_type": "granite_swa", "num_hidden_layers": 2, "layer_rope_theta": [10000.0]})",
       "config.layer_rope_theta:"},
      {R"({"model_type": "granite_swa", "num_hidden_layers": 2, "layer_rope_theta": [10000.0, "x"]})",
       "config.layer_rope_theta[1]:"},
      {R"({"model_type": "granite_swa", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "granite_swa", "logits_scaling": 0})", "config.logits_scaling:"},
      {R"({"model_type": "granite_swa", "residual_multiplier": "x"})", "config.residual_multiplier:"},
      {R"({"model_type": "granite_swa", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // SDPA: from_config(attn_implementation="sdpa") raises; eager builds, with and without NoPE layers.
  ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 200;
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "attn:"));
  cfg.attn = memplan::AttnImpl::eager;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  m.transformer.granite_swa_nope_layers = {1, 0, 1, 0};
  m.transformer.granite_swa_rope_tables = 1;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
}

TEST_CASE("granite_swa: the KV cache, derived by hand", "[family][set62]") {
  // kSmall, B 2, prompt 100 (inside the 128-token window: the sliding layers keep every token too), bf16: per layer
  // K and V [2, 2, 100, 64] = 51,200 bytes each, x 2 x 4 layers = 409,600.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.attn = memplan::AttnImpl::eager;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 409'600);
}

TEST_CASE("granite_swa: parameter counts, derived by hand", "[family][set62]") {
  // granite-swa-defaults (H 2560, 24 layers, 20 heads and 4 KV heads of 128, I 8192, V 100352, tied). A layer: q and o
  // 2560 x 2560 = 6,553,600 each, k and v 2560 x 512 = 1,310,720 each: 15,728,640; sinks 20; gate, up, down
  // 3 x 2560 x 8192 = 62,914,560; two norms 5,120: 78,648,340, x 24 = 1,887,560,160. The embedding 256,901,120
  // (lm_head tied), the final norm 2,560: 2,144,463,840.
  const ModelSpec g = memplan::load_zoo_model("granite-swa-defaults");
  CHECK(memplan::param_count(g) == 2'144'463'840);
  // The same widths as a Granite (no window, no sinks): 20 x 24 = 480 parameters fewer.
  ModelSpec granite = g;
  granite.transformer.model_type = "granite";
  granite.transformer.sliding_window = 0;
  CHECK(memplan::param_count(g) - memplan::param_count(granite) == 480);
}
