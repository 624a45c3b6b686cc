// glm4 (family set 9): importer defaults and refusals, parameter counts of the published GLM-4-0414 checkpoints,
// LoRA on the attention projections, and the measured H200 cases (measured before the builder existed and used
// to write it).
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

TEST_CASE("glm4 importer: Glm4Config defaults of transformers 5.17", "[family][set9]") {
  // 151552 / 4096 / 13696 / 40 layers / 32 heads / 2 kv heads, head_dim 128, silu, q/k/v biases (o_proj never
  // has one), untied; partial_rotary_factor 0.5 => 64 rotary dimensions of 128.
  const TransformerSpec g = import(R"({"model_type": "glm4"})");
  CHECK(g.model_type == "glm4");
  CHECK(g.vocab_size == 151552);
  CHECK(g.hidden_size == 4096);
  CHECK(g.intermediate_size == 13696);
  CHECK(g.num_layers == 40);
  CHECK(g.num_heads == 32);
  CHECK(g.num_kv_heads == 2);
  CHECK(g.head_dim == 128);
  CHECK(g.rotary_dim == 64);
  CHECK(g.hidden_act == "silu");
  CHECK(g.attention_bias);
  CHECK(g.qkv_bias);
  CHECK_FALSE(g.o_bias);
  CHECK_FALSE(g.mlp_bias);
  CHECK_FALSE(g.tie_word_embeddings);
  CHECK(g.max_position_embeddings == 131072);
  // head_dim is a class field (128), not hidden // heads.
  CHECK(import(R"({"model_type": "glm4", "hidden_size": 2048, "num_attention_heads": 32})").head_dim == 128);
  // The rope dict's partial_rotary_factor wins over the top-level key; the top-level key over the default.
  CHECK(import(R"({"model_type": "glm4", "partial_rotary_factor": 1.0})").rotary_dim == 128);
  CHECK(import(R"({"model_type": "glm4", "partial_rotary_factor": 1.0,
      "rope_parameters": {"rope_type": "default", "rope_theta": 10000, "partial_rotary_factor": 0.25}})")
            .rotary_dim == 32);
  CHECK_FALSE(import(R"({"model_type": "glm4", "attention_bias": false})").qkv_bias);
}

TEST_CASE("glm4 importer: bad values name their field", "[family][set9]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "glm4", "num_key_value_heads": null})", "config.num_key_value_heads:"},
      {R"({"model_type": "glm4", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
      {R"({"model_type": "glm4", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "glm4", "hidden_act": "gelu_new"})", "config.hidden_act:"},
      {R"({"model_type": "glm4", "partial_rotary_factor": 0.01})", "config.partial_rotary_factor:"},
      {R"({"model_type": "glm4", "rope_scaling": {"rope_type": "longrope"}})", "config.rope_scaling.rope_type:"},
      {R"({"model_type": "glm4", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "glm4", "attention_dropout": 1.5})", "config.attention_dropout:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("glm4 parameter counts: published checkpoints", "[family][set9]") {
  // Derived by hand from Glm4ForCausalLM's registrations: embed V*H + L * layer + final norm H + lm_head V*H
  // (untied), layer = q (H * nh*D + nh*D bias) + k, v (H * kv*D + kv*D each) + o (nh*D * H, no bias)
  // + gate_up (H * 2I) + down (I * H) + four RMSNorms 4H.
  //  9B:  q 16,781,312 + k, v 2 x 1,048,832 + o 16,777,216 + MLP 168,296,448 + 16,384 = 203,969,024 per layer;
  //       40 layers 8,158,760,960 + 2 x 151552 x 4096 = 1,241,513,984 + 4096 = 9,400,279,040 (card: 9.4B).
  //  32B (48 heads / 2 kv heads, as the published config): q 37,754,880 + k, v 2 x 1,573,120 + o 37,748,736
  //       + MLP 424,673,280 + 24,576 = 503,347,712 per layer; 61 layers 30,704,210,432 + 2 x 151552 x 6144
  //       = 1,862,270,976 + 6144 = 32,566,487,552 (card: 32B class).
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"glm-4-9b-0414", 9'400'279'040},
      {"glm-4-32b-0414", 32'566'487'552},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("glm4: LoRA adapters on q_proj and v_proj", "[family][set9]") {
  // peft adds lora_A [r, in] and lora_B [out, r] to each targeted linear: per layer r * (H + nh*D) for q_proj and
  // r * (H + kv*D) for v_proj. H 2048, 16 heads / 2 kv of 128, r 16, 3 layers: 3 x (65,536 + 36,864) = 307,200.
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::transformer;
  m.name = "glm4-small";
  m.transformer = import(R"({"model_type": "glm4", "hidden_size": 2048, "intermediate_size": 6912,
      "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 151552})");
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 128;
  cfg.precision = memplan::Precision::bf16;
  const memplan::Estimate full = memplan::estimate(m, cfg);
  cfg.lora.r = 16;
  cfg.lora.alpha = 32;
  cfg.lora.target_modules = {"q_proj", "v_proj"};
  const memplan::Estimate lora = memplan::estimate(m, cfg);
  CHECK(lora.params == full.params + 307'200);
  CHECK(lora.trainable_params == 307'200);
}

TEST_CASE("glm4: measured H200 cases of family set 9", "[family][set9]") {
  // Peak allocated within 0.1 % (all three are exact to the 0.1 MiB printed), reserved within 1 % (exact), the KV
  // cache within 1 %, the measured `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f9-glm4-"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 3);
}
