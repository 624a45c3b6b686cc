// nemotron (family set 9): importer defaults and refusals, parameter counts of the published Minitron
// checkpoints, NemotronLayerNorm1P under autocast, and the measured H200 cases (measured before the builder
// existed and used to write it).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

}  // namespace

TEST_CASE("nemotron importer: NemotronConfig defaults of transformers 5.17", "[family][set9]") {
  // 256000 / 6144 / 24576 / 32 layers / 48 heads, head_dim None => 6144 // 48 = 128, relu2, no biases, untied;
  // partial_rotary_factor 0.5 => 64 rotary dimensions. num_key_value_heads has no usable default (None).
  const TransformerSpec n = import(R"({"model_type": "nemotron", "num_key_value_heads": 8})");
  CHECK(n.model_type == "nemotron");
  CHECK(n.vocab_size == 256000);
  CHECK(n.hidden_size == 6144);
  CHECK(n.intermediate_size == 24576);
  CHECK(n.num_layers == 32);
  CHECK(n.num_heads == 48);
  CHECK(n.num_kv_heads == 8);
  CHECK(n.head_dim == 128);
  CHECK(n.rotary_dim == 64);
  CHECK(n.hidden_act == "relu2");
  CHECK_FALSE(n.attention_bias);
  CHECK_FALSE(n.o_bias);
  CHECK_FALSE(n.mlp_bias);
  CHECK_FALSE(n.tie_word_embeddings);
  CHECK(n.max_position_embeddings == 4096);
  // head_dim = hidden // heads is a floor division (heads need not divide hidden): 100 // 3 = 33, rotary
  // int(33 * 0.5) = 16.
  const TransformerSpec odd = import(R"({"model_type": "nemotron", "hidden_size": 100, "num_attention_heads": 3,
      "num_key_value_heads": 1})");
  CHECK(odd.head_dim == 33);
  CHECK(odd.rotary_dim == 16);
  const TransformerSpec b = import(R"({"model_type": "nemotron", "num_key_value_heads": 8, "attention_bias": true,
      "mlp_bias": true})");
  CHECK(b.qkv_bias);
  CHECK(b.o_bias);
  CHECK(b.mlp_bias);
}

TEST_CASE("nemotron importer: bad values name their field", "[family][set9]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "nemotron"})", "config.num_key_value_heads:"},
      {R"({"model_type": "nemotron", "num_key_value_heads": null})", "config.num_key_value_heads:"},
      {R"({"model_type": "nemotron", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
      {R"({"model_type": "nemotron", "num_key_value_heads": 8, "hidden_act": "gelu_new"})", "config.hidden_act:"},
      {R"({"model_type": "nemotron", "num_key_value_heads": 8, "partial_rotary_factor": 0})",
       "config.partial_rotary_factor:"},
      {R"({"model_type": "nemotron", "num_key_value_heads": 8, "rope_parameters": {"rope_type": "longrope"}})",
       "config.rope_parameters.rope_type:"},
      {R"({"model_type": "nemotron", "hidden_size": 16, "num_attention_heads": 32, "num_key_value_heads": 8})",
       "config.num_attention_heads:"},
      {R"({"model_type": "nemotron", "num_key_value_heads": 8, "sliding_window": 512})", "config.sliding_window:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("nemotron parameter counts: published checkpoints", "[family][set9]") {
  // Derived by hand from NemotronForCausalLM's registrations: embed V*H + L * layer + final LayerNorm1P 2H +
  // lm_head V*H (untied), layer = q (H * nh*D) + k, v (H * kv*D each) + o (nh*D * H) + up (H * I) + down (I * H)
  // + two LayerNorm1P (weight and bias) 4H, no biases.
  //  4B: q, o 2 x 9,437,184 + k, v 2 x 3,145,728 + MLP 2 x 28,311,552 + 12,288 = 81,801,216 per layer; 32 layers
  //      2,617,638,912 + 2 x 256000 x 3072 = 1,572,864,000 + 6144 = 4,190,509,056 (card: 4.19B).
  //  8B: nh*D = 6144 > H = 4096: q, o 2 x 25,165,824 + k, v 2 x 4,194,304 + MLP 2 x 67,108,864 + 16,384 =
  //      192,954,368 per layer; 32 layers 6,174,539,776 + 2 x 256000 x 4096 = 2,097,152,000 + 8192 =
  //      8,271,699,968 (card: 8.27B).
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"minitron-4b", 4'190'509'056},
      {"minitron-8b", 8'271'699'968},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("nemotron: measured H200 cases of family set 9", "[family][set9]") {
  // Peak allocated within 0.1 % (all three exact to the 0.1 MiB printed), reserved within 1 % (exact), the KV
  // cache within 1 %, the measured `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f9-nemotron-"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 3);
}
