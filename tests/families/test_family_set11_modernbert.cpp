// modernbert (family set 11): importer defaults and refusals, parameter counts of the published checkpoints
// derived by hand, and the measured H200 cases (measured before the builder existed and used to write it).
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

TEST_CASE("modernbert importer: class defaults of transformers 5.17", "[family][set11]") {
  // ModernBertConfig: 50368 / 768 / 1152 / 22 layers / 12 heads, gelu, bias-free norms and projections, a
  // decoder bias, tied; local_attention 128 (half-width 64); every third layer global (0, 3, 6, ...).
  const TransformerSpec s = import(R"({"model_type": "modernbert"})");
  CHECK(s.vocab_size == 50368);
  CHECK(s.hidden_size == 768);
  CHECK(s.intermediate_size == 1152);
  CHECK(s.num_layers == 22);
  CHECK(s.num_heads == 12);
  CHECK(s.head_dim == 64);
  CHECK(s.max_position_embeddings == 8192);
  CHECK(s.hidden_act == "gelu");
  CHECK(s.classifier_activation == "gelu");
  CHECK_FALSE(s.norm_bias);
  CHECK_FALSE(s.attention_bias);
  CHECK_FALSE(s.mlp_bias);
  CHECK_FALSE(s.classifier_bias);
  CHECK(s.decoder_bias);
  CHECK(s.tie_word_embeddings);
  CHECK(s.attn_dropout == 0.0);
  CHECK(s.embd_dropout == 0.0);
  CHECK(s.resid_dropout == 0.0);
  CHECK(s.sliding_window == 64);
  std::vector<uint8_t> pattern(22, 1);
  for (size_t i = 0; i < pattern.size(); i += 3) pattern[i] = 0;
  CHECK(s.sliding_layers == pattern);
  const TransformerSpec every2 = import(R"({"model_type": "modernbert", "num_hidden_layers": 4,
      "global_attn_every_n_layers": 2, "local_attention": 256})");
  CHECK(every2.sliding_layers == std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(every2.sliding_window == 128);
  const TransformerSpec listed = import(R"({"model_type": "modernbert", "num_hidden_layers": 3,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention"], "norm_bias": true})");
  CHECK(listed.sliding_layers == std::vector<uint8_t>{1, 0, 1});
  CHECK(listed.norm_bias);
}

TEST_CASE("modernbert importer: bad values name their field", "[family][set11]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "modernbert", "sparse_prediction": true})", "config.sparse_prediction:"},
      {R"({"model_type": "modernbert", "hidden_activation": "quick_gelu"})", "config.hidden_activation:"},
      {R"({"model_type": "modernbert", "classifier_activation": "tanh"})", "config.classifier_activation:"},
      {R"({"model_type": "modernbert", "hidden_size": 100, "num_attention_heads": 12})", "config.num_attention_heads:"},
      {R"({"model_type": "modernbert", "hidden_size": 60, "num_attention_heads": 20})", "config.num_attention_heads:"},
      {R"({"model_type": "modernbert", "head_dim": 32})", "config.head_dim:"},
      {R"({"model_type": "modernbert", "local_attention": 1})", "config.local_attention:"},
      {R"({"model_type": "modernbert", "local_attention": 0})", "config.local_attention:"},
      {R"({"model_type": "modernbert", "global_attn_every_n_layers": 0})", "config.global_attn_every_n_layers:"},
      {R"({"model_type": "modernbert", "num_hidden_layers": 2, "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "modernbert", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})", "config.layer_types[0]:"},
      {R"({"model_type": "modernbert", "pad_token_id": 50368})", "config.pad_token_id:"},
      {R"({"model_type": "modernbert", "rope_scaling": {"rope_type": "linear", "factor": 2.0}})", "config.rope_scaling:"},
      {R"({"model_type": "modernbert", "rope_parameters": {"full_attention": {"rope_type": "yarn"}}})",
       "config.rope_parameters.full_attention.rope_type:"},
      {R"({"model_type": "modernbert", "attention_dropout": 1.5})", "config.attention_dropout:"},
      {R"({"model_type": "modernbert", "norm_bias": "no"})", "config.norm_bias:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // Inference is one forward (tests/families/test_family_set19_encinf.cpp); generate() is refused naming generate_tokens.
  memplan::RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 1;
  cfg.seq_len = 128;
  cfg.generate_tokens = 4;
  const memplan::ModelSpec m = memplan::load_zoo_model("modernbert-base");
  CHECK(error_of([&] { memplan::estimate(m, cfg); }).rfind("generate_tokens:", 0) == 0);
}

TEST_CASE("modernbert parameter counts: published checkpoints", "[family][set11]") {
  // Derived by hand from the modeling file's registrations (the decoder's weight is the tied embedding):
  //   V*H (tok_embeddings) + H (embeddings.norm, no bias)
  //   + L * (Wqkv 3H*H + Wo H*H + mlp_norm H + Wi 2I*H + Wo I*H) + (L - 1) * H (attn_norm, Identity in layer 0)
  //   + H (final_norm) + H*H (head.dense, no bias) + H (head.norm) + V (decoder.bias).
  //  base:  50368*768 = 38,682,624; layer 1,769,472 + 589,824 + 768 + 1,769,472 + 884,736 = 5,014,272;
  //         38,682,624 + 768 + 22*5,014,272 + 21*768 + 768 + 589,824 + 768 + 50,368 = 149,655,232 (card: 149M)
  //  large: 50368*1024 = 51,576,832; layer 3,145,728 + 1,048,576 + 1,024 + 5,373,952 + 2,686,976 = 12,256,256;
  //         51,576,832 + 1,024 + 28*12,256,256 + 27*1,024 + 1,024 + 1,048,576 + 1,024 + 50,368 = 395,881,664
  //         (card: 395M)
  //  the measured 6-layer width-768 rows: 38,682,624 + 768 + 6*5,014,272 + 5*768 + 768 + 589,824 + 768 + 50,368
  //         = 69,414,592 (their measured sum of p.numel(), checked in check_family_cases too).
  CHECK(memplan::param_count(memplan::load_zoo_model("modernbert-base")) == 149'655'232);
  CHECK(memplan::param_count(memplan::load_zoo_model("modernbert-large")) == 395'881'664);
  CHECK(memplan::param_count(import(R"({"model_type": "modernbert", "num_hidden_layers": 6})")) == 69'414'592);
  // Untied: the decoder's own [V, H] weight.
  CHECK(memplan::param_count(import(R"({"model_type": "modernbert", "num_hidden_layers": 6,
      "tie_word_embeddings": false})")) == 69'414'592 + 50368 * 768);
}

TEST_CASE("modernbert: measured H200 cases of family set 11", "[family][set11]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, and the measured `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f11-modernbert-"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 3);
}
