// olmo3 (family set 17): importer defaults and refusals, parameter counts against the published checkpoints, and
// the measured H200 cases (measured before the builder existed and used to write it; notes-f17/olmo3.md).
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

TEST_CASE("olmo3 importer: class defaults of transformers 5.17", "[family][set17]") {
  // Olmo3Config: 50304 / 4096 / 11008 / 32 layers / 32 heads, kv heads None => heads, head_dim hidden // heads,
  // untied, attention_bias False, max_position_embeddings 2048, sliding_window 4096, layer_types None => layers
  // 0-2 slide, layer 3 is full, and so on.
  const TransformerSpec x = import(R"({"model_type": "olmo3"})");
  CHECK(x.vocab_size == 50304);
  CHECK(x.hidden_size == 4096);
  CHECK(x.intermediate_size == 11008);
  CHECK(x.num_layers == 32);
  CHECK(x.num_heads == 32);
  CHECK(x.num_kv_heads == 32);
  CHECK(x.head_dim == 128);
  CHECK(x.max_position_embeddings == 2048);
  CHECK_FALSE(x.tie_word_embeddings);
  CHECK_FALSE(x.attention_bias);
  CHECK_FALSE(x.qkv_bias);
  CHECK(x.sliding_window == 4096);
  REQUIRE(x.sliding_layers.size() == 32);
  CHECK(x.sliding_layers[0] == 1);
  CHECK(x.sliding_layers[2] == 1);
  CHECK(x.sliding_layers[3] == 0);
  CHECK(x.sliding_layers[30] == 1);
  CHECK(x.sliding_layers[31] == 0);
  // head_dim: getattr(config, "head_dim", hidden // heads), so a config.json key wins.
  const TransformerSpec hd = import(R"({"model_type": "olmo3", "hidden_size": 1024, "num_attention_heads": 8,
      "head_dim": 64})");
  CHECK(hd.head_dim == 64);
  const TransformerSpec x2 = import(R"({"model_type": "olmo3", "num_hidden_layers": 3})");
  CHECK(x2.sliding_layers == std::vector<uint8_t>{1, 1, 1});
  const TransformerSpec x3 = import(R"({"model_type": "olmo3", "num_hidden_layers": 2,
      "layer_types": ["sliding_attention", "full_attention"], "num_key_value_heads": 8, "attention_bias": true})");
  CHECK(x3.sliding_layers == std::vector<uint8_t>{1, 0});
  CHECK(x3.num_kv_heads == 8);
  CHECK(x3.qkv_bias);
  CHECK(x3.o_bias);
  const TransformerSpec x4 = import(R"({"model_type": "olmo3", "num_key_value_heads": null,
      "rope_parameters": {"full_attention": {"rope_type": "yarn", "factor": 8.0},
                          "sliding_attention": {"rope_type": "default"}}})");
  CHECK(x4.num_kv_heads == 32);
}

TEST_CASE("olmo3 importer: bad values name their field", "[family][set17]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "olmo3", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "olmo3", "sliding_window": 0})", "config.sliding_window:"},
      {R"({"model_type": "olmo3", "num_hidden_layers": 2, "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "olmo3", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "olmo3", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "olmo3", "rope_scaling": {"rope_type": "longrope"}})", "config.rope_scaling.rope_type:"},
      {R"({"model_type": "olmo3", "rope_parameters": {"sliding_attention": {"rope_type": "longrope"}}})",
       "config.rope_parameters.sliding_attention.rope_type:"},
      {R"({"model_type": "olmo3", "rope_parameters": {"full_attention": 3}})",
       "config.rope_parameters.full_attention:"},
      {R"({"model_type": "olmo3", "hidden_size": 96, "num_attention_heads": 32})", "config.hidden_size:"},
      {R"({"model_type": "olmo3", "head_dim": 63})", "config.head_dim:"},
      {R"({"model_type": "olmo3", "hidden_size": 16, "num_attention_heads": 32})", "config.num_attention_heads:"},
      {R"({"model_type": "olmo3", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("olmo3 parameter counts: published checkpoints", "[family][set17]") {
  // Derived by hand from the modeling file's registrations (untied head), H hidden, I intermediate, nh / nkv
  // heads, D = H // nh, V vocab, L layers:
  //  olmo3: 2*V*H + L * (H*nh*D + 2*H*nkv*D + nh*D*H (q, k, v, o) + nh*D + nkv*D (q_norm, k_norm) + 3*H*I
  //         + 2*H (post-attention and post-feedforward norms)) + H (norm)
  //   Olmo-3-1025-7B (H 4096, I 11008, 32 / 32 heads, D 128, L 32, V 100278):
  //     821,477,376 + 32 * (67,108,864 + 8,192 + 135,266,304 + 8,192 = 202,391,552) + 4,096
  //     = 7,298,011,136 (the card's "7B", ~7.3 B).
  //   Olmo-3-1125-32B (H 5120, I 27648, 40 / 8 heads, D 128, L 64, V 100278):
  //     1,026,846,720 + 64 * (26,214,400 + 10,485,760 + 26,214,400 + 6,144 + 424,673,280 + 10,240 = 487,604,224)
  //     + 5,120 = 32,233,522,176 (the card's "32B").
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"olmo-3-7b", 7'298'011'136},
      {"olmo-3-32b", 32'233'522'176},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
  // The measured cases: 4 layers of the 7B width 821,477,376 + 4 * 202,391,552 + 4,096 = 1,631,047,680; 2 of the
  // 32B width 1,026,846,720 + 2 * 487,604,224 + 5,120 = 2,002,060,288.
  CHECK(memplan::param_count(memplan::load_zoo_model("olmo-3-7b")) - int64_t{28} * 202'391'552 == 1'631'047'680);
  CHECK(memplan::param_count(memplan::load_zoo_model("olmo-3-32b")) - int64_t{62} * 487'604'224 == 2'002'060'288);
}

TEST_CASE("olmo3: the published pattern slides three layers of four", "[family][set17]") {
  for (const char* name : {"olmo-3-7b", "olmo-3-32b"}) {
    INFO(name);
    const memplan::ModelSpec m = memplan::load_zoo_model(name);
    int64_t sliding = 0;
    for (uint8_t v : m.transformer.sliding_layers) sliding += v;
    CHECK(sliding * 4 == m.transformer.num_layers * 3);
    CHECK(m.transformer.sliding_layers[3] == 0);
    CHECK(m.transformer.sliding_window == 4096);
    CHECK(m.transformer.head_dim == 128);
    CHECK(m.transformer.max_position_embeddings == 65536);
  }
}

TEST_CASE("olmo3: measured H200 cases of family set 17", "[family][set17]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured `params`
  // exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f17-olmo3"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 6);
}
