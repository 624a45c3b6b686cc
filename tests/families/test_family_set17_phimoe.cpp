// phimoe (family set 17): importer defaults and refusals, the published checkpoint's parameter count derived by
// hand, and the measured H200 cases (measured before the builder existed and used to write it;
// data/validation/notes-f17/phimoe.md).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

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

TEST_CASE("phimoe importer: PhimoeConfig defaults of transformers 5.17", "[family][set17]") {
  // vocab 32064, hidden 4096, intermediate 6400 (the experts' width), 32 layers, 32 heads, 8 kv heads, head_dim
  // 4096 / 32 = 128, silu, 131072 positions, 16 experts top 2, no biases, untied, no sliding window, no jitter.
  const TransformerSpec s = import(R"({"model_type": "phimoe"})");
  CHECK(s.model_type == "phimoe");
  CHECK(s.vocab_size == 32064);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 6400);
  CHECK(s.moe_intermediate_size == 6400);
  CHECK(s.num_layers == 32);
  CHECK(s.num_heads == 32);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.hidden_act == "silu");
  CHECK(s.max_position_embeddings == 131072);
  CHECK(s.num_experts == 16);
  CHECK(s.num_experts_per_tok == 2);
  CHECK_FALSE(s.attention_bias);
  CHECK_FALSE(s.qkv_bias);
  CHECK_FALSE(s.o_bias);
  CHECK_FALSE(s.lm_head_bias);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK(s.sliding_window == 0);
  CHECK(s.phimoe_input_jitter_noise == 0.0);
  CHECK(s.phimoe_longrope_original_max == 0);
  CHECK_FALSE(s.generate_without_eos);  // eos_token_id defaults to 2
  // num_key_value_heads None => num_attention_heads; attention_bias sets q / k / v / o together.
  const TransformerSpec m = import(R"({"model_type": "phimoe", "num_key_value_heads": null, "attention_bias": true,
      "lm_head_bias": true, "input_jitter_noise": 0.01, "sliding_window": 2048})");
  CHECK(m.num_kv_heads == 32);
  CHECK(m.qkv_bias);
  CHECK(m.o_bias);
  CHECK(m.lm_head_bias);
  CHECK(m.phimoe_input_jitter_noise == 0.01);
  CHECK(m.sliding_window == 2048);
  // longrope (legacy rope_scaling spelling): its original_max_position_embeddings is kept for generate().
  const TransformerSpec l = import(R"({"model_type": "phimoe", "rope_scaling": {"type": "longrope",
      "short_mscale": 1.24, "long_mscale": 1.24, "original_max_position_embeddings": 4096}})");
  CHECK(l.phimoe_longrope_original_max == 4096);
}

TEST_CASE("phimoe importer: bad values name their field", "[family][set17]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "phimoe", "num_experts_per_tok": 3})", "config.num_experts_per_tok:"},
      {R"({"model_type": "phimoe", "num_local_experts": 1})", "config.num_local_experts:"},
      {R"({"model_type": "phimoe", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "phimoe", "input_jitter_noise": -0.1})", "config.input_jitter_noise:"},
      {R"({"model_type": "phimoe", "hidden_act": "gelu_new"})", "config.hidden_act:"},
      {R"({"model_type": "phimoe", "num_key_value_heads": 7})", "config.num_key_value_heads:"},
      {R"({"model_type": "phimoe", "rope_parameters": {"rope_type": "yarn", "factor": 4.0}})",
       "config.rope_parameters.rope_type:"},
      {R"({"model_type": "phimoe", "rope_parameters": {"rope_type": "longrope", "long_mscale": 1.0,
          "original_max_position_embeddings": 4096}})", "config.rope_parameters.short_mscale:"},
      {R"({"model_type": "phimoe", "rope_scaling": {"type": "longrope", "long_mscale": 1.0, "short_mscale": 1.0}})",
       "config.rope_scaling.original_max_position_embeddings:"},
      {R"({"model_type": "phimoe", "quantization_config": {"quant_method": "fp8"}})", "config.quantization_config:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("phimoe: generate() across a longrope switch point is refused naming generate_tokens", "[family][set17]") {
  memplan::ModelSpec m = memplan::load_zoo_model("phi-3.5-moe-instruct");
  m.transformer.num_layers = 1;
  memplan::RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 1;
  cfg.precision = memplan::Precision::bf16;
  cfg.seq_len = 4000;
  cfg.generate_tokens = 200;  // 4000 + 199 inputs cross 4096: the cache is dropped and the sequence rerun
  CHECK(error_of([&] { memplan::estimate(m, cfg); }).rfind("generate_tokens:", 0) == 0);
  cfg.generate_tokens = 97;  // the last step's input is 4096 tokens long: no switch
  CHECK(error_of([&] { memplan::estimate(m, cfg); }) == "no error");
  cfg.seq_len = 5000;  // a prompt past the switch point: prefill already runs the long factors, nothing is dropped
  cfg.generate_tokens = 200;
  CHECK(error_of([&] { memplan::estimate(m, cfg); }) == "no error");
}

TEST_CASE("phimoe parameter count: the published checkpoint, derived by hand", "[family][set17]") {
  // PhimoeForCausalLM registers, per layer: q_proj [nh * hd, H] and o_proj [H, nh * hd], k_proj and v_proj
  // [nkv * hd, H], each with a bias under attention_bias; mlp.router.weight [E, H] (no bias);
  // mlp.experts.gate_up_proj [E, 2I, H] and mlp.experts.down_proj [E, H, I]; input_layernorm and
  // post_attention_layernorm, nn.LayerNorm with weight and bias [H] each. Model: embed_tokens [V, H], the final
  // nn.LayerNorm (2H), lm_head [V, H] + bias [V] (lm_head_bias), untied. Rotary inv_freq is a buffer.
  //
  // Phi-3.5-MoE-instruct (H 4096, 32 layers, 32 heads, 8 kv heads, hd 128, I 6400, E 16, V 32064, biases):
  //   attention 2 * (16,777,216 + 4,096) + 2 * (4,194,304 + 1,024) = 41,953,280; router 16 * 4096 = 65,536;
  //   experts 16 * 3 * 6400 * 4096 = 1,258,291,200; norms 4 * 4096 = 16,384; a layer 1,300,326,400;
  //   32 * 1,300,326,400 + 131,334,144 (embed) + 8,192 (norm) + 131,334,144 + 32,064 (lm_head)
  //   = 41,610,444,800 + 262,708,544 = 41,873,153,344 (published: 41.9B).
  CHECK(memplan::param_count(memplan::load_zoo_model("phi-3.5-moe-instruct")) == 41'873'153'344);
  // The measured rows' shapes (calibrate/cases/make_families17.py PHIMOE, PHIMOE_S):
  //   PHIMOE, 2 layers: 2 * 1,300,326,400 + 262,708,544 = 2,863,361,344, the sum of p.numel() the H200 harness
  //   recorded for f17-phimoe-*.
  //   PHIMOE_S (H 2048, 3 layers, 16 heads, 4 kv heads, hd 128, I 3200, E 8): attention 2 * (4,194,304 + 2,048) +
  //   2 * (1,048,576 + 512) = 10,490,880; router 16,384; experts 8 * 3 * 3200 * 2048 = 157,286,400; norms 8,192;
  //   a layer 167,801,856; 3 * 167,801,856 + 65,667,072 + 4,096 + 65,667,072 + 32,064 = 634,775,872, recorded for
  //   f17-phimoes-*.
  const char* big = R"({"model_type": "phimoe", "num_hidden_layers": 2, "attention_bias": true, "lm_head_bias": true})";
  CHECK(memplan::param_count(import(big)) == 2'863'361'344);
  const char* small = R"({"model_type": "phimoe", "hidden_size": 2048, "intermediate_size": 3200,
      "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 4, "num_local_experts": 8,
      "attention_bias": true, "lm_head_bias": true})";
  CHECK(memplan::param_count(import(small)) == 634'775'872);
}

TEST_CASE("phimoe: measured H200 cases of family set 17", "[family][set17]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, the measured `params`
  // exactly (data/validation/notes-f17/phimoe.md has the table).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f17-phimoe"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 4);
}
