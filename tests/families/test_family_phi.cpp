// phi3 / gpt_neox / starcoder2: importer defaults and refusals, parameter counts against the measured cases and
// the published checkpoints, and the measured H200 cases of family set 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::InputError;
using memplan::TransformerSpec;
using nlohmann::json;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }


}  // namespace

TEST_CASE("phi importers: class defaults of transformers 5.17", "[family][phi]") {
  // Phi3Config: 32064 / 3072 / 8192 / 32 layers / 32 heads, kv heads None => 32, head_dim 3072 / 32 = 96,
  // silu, untied, no window, partial_rotary_factor 1.0 => rotary over all 96 dims.
  const TransformerSpec p = import(R"({"model_type": "phi3"})");
  CHECK(p.vocab_size == 32064);
  CHECK(p.hidden_size == 3072);
  CHECK(p.intermediate_size == 8192);
  CHECK(p.num_layers == 32);
  CHECK(p.num_kv_heads == 32);
  CHECK(p.head_dim == 96);
  CHECK(p.rotary_dim == 96);
  CHECK(p.sliding_window == 0);
  CHECK_FALSE(p.tie_word_embeddings);
  CHECK(p.hidden_act == "silu");
  // phi-4-mini style: partial_rotary_factor 0.75 of head_dim 128 => 96; from rope_scaling's dict too.
  CHECK(import(R"({"model_type": "phi3", "num_attention_heads": 24, "num_key_value_heads": 8,
      "partial_rotary_factor": 0.75})").rotary_dim == 96);
  CHECK(import(R"({"model_type": "phi3", "num_attention_heads": 24, "rope_scaling": {"rope_type": "longrope",
      "partial_rotary_factor": 0.5, "short_factor": [1], "long_factor": [1]}})").rotary_dim == 64);
  CHECK(import(R"({"model_type": "phi3", "sliding_window": 2047})").sliding_window == 2047);

  // GPTNeoXConfig: 50432 / 6144 / 44 layers / 64 heads / 24576, head 96, rotary_pct 0.25 => 24, parallel
  // residual, attention_bias, untied, gelu.
  const TransformerSpec n = import(R"({"model_type": "gpt_neox"})");
  CHECK(n.vocab_size == 50432);
  CHECK(n.hidden_size == 6144);
  CHECK(n.num_layers == 44);
  CHECK(n.num_kv_heads == 64);
  CHECK(n.head_dim == 96);
  CHECK(n.rotary_dim == 24);
  CHECK(n.parallel_residual);
  CHECK(n.qkv_bias);
  CHECK(n.mlp_bias);
  CHECK_FALSE(n.tie_word_embeddings);
  CHECK(import(R"({"model_type": "gpt_neox", "use_parallel_residual": false, "rotary_pct": 1.0,
      "hidden_dropout": 0.1})").rotary_dim == 96);
  const TransformerSpec nd = import(R"({"model_type": "gpt_neox", "hidden_dropout": 0.1, "attention_bias": false})");
  CHECK(nd.resid_dropout == 0.1);
  CHECK(nd.embd_dropout == 0.1);
  CHECK_FALSE(nd.qkv_bias);

  // Starcoder2Config: 49152 / 3072 / 12288 / 30 layers / 24 heads / 2 kv heads, gelu_pytorch_tanh, biases,
  // tied, no window.
  const TransformerSpec s = import(R"({"model_type": "starcoder2"})");
  CHECK(s.vocab_size == 49152);
  CHECK(s.num_layers == 30);
  CHECK(s.num_kv_heads == 2);
  CHECK(s.head_dim == 128);
  CHECK(s.rotary_dim == 0);
  CHECK(s.hidden_act == "gelu_pytorch_tanh");
  CHECK(s.tie_word_embeddings);
  CHECK(s.qkv_bias);
  CHECK(s.mlp_bias);
  CHECK(s.sliding_window == 0);
}

TEST_CASE("phi importers refuse what the models would reject or the builders do not model", "[family][phi]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "phi3", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
      {R"({"model_type": "phi3", "hidden_act": "gelu_new"})", "config.hidden_act:"},
      {R"({"model_type": "phi3", "partial_rotary_factor": 0})", "config.partial_rotary_factor:"},
      {R"({"model_type": "phi3", "partial_rotary_factor": 0.01})", "config.partial_rotary_factor:"},
      {R"({"model_type": "phi3", "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})",
       "config.rope_scaling.rope_type:"},
      {R"({"model_type": "phi3", "rope_scaling": 3})", "config.rope_scaling:"},
      {R"({"model_type": "phi3", "resid_pdrop": 1.5})", "config.resid_pdrop:"},
      {R"({"model_type": "phi3", "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "gpt_neox", "hidden_size": 100, "num_attention_heads": 3})", "config.num_attention_heads:"},
      {R"({"model_type": "gpt_neox", "rotary_pct": 1.5})", "config.rotary_pct:"},
      {R"({"model_type": "gpt_neox", "rotary_pct": "a"})", "config.rotary_pct:"},
      {R"({"model_type": "gpt_neox", "head_dim": 64})", "config.head_dim:"},
      {R"({"model_type": "gpt_neox", "hidden_act": "quick_gelu"})", "config.hidden_act:"},
      {R"({"model_type": "starcoder2", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
      {R"({"model_type": "starcoder2", "use_bias": 1})", "config.use_bias:"},
      {R"({"model_type": "starcoder2", "sliding_window": -4})", "config.sliding_window:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("phi parameter counts: measured cases and published checkpoints", "[family][phi]") {
  // Published checkpoints, derived by hand (model registration: every nn.Parameter counted once; tied heads
  // once). Each agrees with the figure its model card or paper states.
  //  phi3: V*H (x2 untied) + L * (qkv (nh + 2 nkv) * hd * H + o H^2 + gate_up 2*I*H + down I*H + 2 norms H) + H.
  //  gpt_neox: 2*V*H + L * (2 LayerNorms 4H + qkv 3H^2 + 3H + dense H^2 + H + 4h 2*I*H + I + H) + 2H; the Pythia
  //   paper's totals (1,414,647,808 / 6,857,302,016 / 11,846,072,320) and non-embedding counts match.
  //  starcoder2: V*H (tied) + L * (q, o H^2 + H each, k, v nkv*128*H + nkv*128 each, c_fc / c_proj I*H + I / + H,
  //   2 LayerNorms 4H) + 2H; model cards: 3.03B, 7.17B, "15B".
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"phi-3-mini", 3'821'079'552},     // 2*32064*3072 + 32*113,252,352 + 3072 (card: 3.8B)
      {"phi-3-medium", 13'960'238'080},  // 2*32064*5120 + 40*340,797,440 + 5120 (card: 14B)
      {"phi-4", 14'659'507'200},         // 2*100352*5120 + 40*340,797,440 + 5120 (card: 14.7B)
      {"pythia-1.4b", 1'414'647'808},    // 2*50304*2048 + 24*50,358,272 + 4096
      {"pythia-6.9b", 6'857'302'016},    // 2*50432*4096 + 32*201,379,840 + 8192
      {"pythia-12b", 11'846'072'320},    // 2*50688*5120 + 36*314,639,360 + 10240
      {"starcoder2-3b", 3'030'371'328},  // 49152*3072 + 30*95,979,008 + 6144
      {"starcoder2-7b", 7'173'923'840},  // 49152*4608 + 32*217,106,944 + 9216
      {"starcoder2-15b", 15'655'899'136},  // 49152*6144 + 40*383,847,424 + 12288
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("phi family set 1: measured H200 cases", "[family][phi]") {
  // Peak allocated within 1 % per case, reserved within 5 %, the inference KV figure within 1 %; the measured
  // `params` (sum of p.numel()) exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f1-phi", "f1-neox", "f1-sc2"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.01, 0.05}; });
  CHECK(checked.size() == 9);
}
