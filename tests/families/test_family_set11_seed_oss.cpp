// seed_oss (family set 11): importer defaults and refusals, parameter counts against the published checkpoints, and
// the measured H200 cases (measured before the builder existed and used to write it; notes-f11/llamalikes.md).
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

TEST_CASE("seed_oss importer: class defaults of transformers 5.17", "[family][set11]") {
  // SeedOssConfig: 155136 / 4096 / 27648 / 64 layers / 80 heads / 8 kv / head_dim 128, q/k/v biases, no o bias,
  // attention and residual dropout 0.1, untied.
  const TransformerSpec s = import(R"({"model_type": "seed_oss"})");
  CHECK(s.vocab_size == 155136);
  CHECK(s.hidden_size == 4096);
  CHECK(s.num_layers == 64);
  CHECK(s.num_heads == 80);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.qkv_bias);
  CHECK_FALSE(s.o_bias);
  CHECK_FALSE(s.mlp_bias);
  CHECK(s.attn_dropout == 0.1);
  CHECK(s.resid_dropout == 0.1);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK(import(R"({"model_type": "seed_oss", "attention_out_bias": true})").o_bias);
}

TEST_CASE("seed_oss importer: bad values name their field", "[family][set11]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "seed_oss", "residual_dropout": 1.5})", "config.residual_dropout:"},
      {R"({"model_type": "seed_oss", "attention_dropout": -0.1})", "config.attention_dropout:"},
      {R"({"model_type": "seed_oss", "hidden_act": "gelu"})", "config.hidden_act:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("seed_oss parameter counts: published checkpoints", "[family][set11]") {
  // Derived by hand from the modeling files' registrations (tied heads counted once), H hidden, I intermediate,
  // nh / nkv heads, D head_dim, V vocab, L layers:
  //  seed_oss:  2*V*H + L * (H*nh*D + nh*D + 2*(H*nkv*D + nkv*D) + nh*D*H + 3*H*I + 2H) + H
  //    seed-oss-36b: 2 * 794,296,320 + 64 * (115,355,648 + 424,673,280 + 10,240 = 540,039,168) + 5120
  //    = 36,151,104,512 (card: 36B).
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"seed-oss-36b", 36'151'104'512},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("seed_oss: measured H200 cases of family set 11", "[family][set11]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured `params`
  // exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f11-seed-"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 1);
}
