// arcee (family set 11): importer defaults and refusals, parameter counts against the published checkpoints, and
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

TEST_CASE("arcee importer: class defaults of transformers 5.17", "[family][set11]") {
  // ArceeConfig: 32000 / 2560 / 18432 / 32 layers / 32 heads, kv None => heads, head_dim hidden // heads, relu2.
  const TransformerSpec a = import(R"({"model_type": "arcee"})");
  CHECK(a.vocab_size == 32000);
  CHECK(a.hidden_size == 2560);
  CHECK(a.intermediate_size == 18432);
  CHECK(a.num_layers == 32);
  CHECK(a.num_kv_heads == 32);
  CHECK(a.head_dim == 80);
  CHECK(a.hidden_act == "relu2");
  CHECK_FALSE(a.tie_word_embeddings);
  CHECK_FALSE(a.mlp_bias);
}

TEST_CASE("arcee importer: bad values name their field", "[family][set11]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "arcee", "hidden_act": "silu"})", "config.hidden_act:"},
      {R"({"model_type": "arcee", "hidden_size": 2560, "num_attention_heads": 24, "head_dim": 128})",
       "config.num_attention_heads:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("arcee parameter counts: published checkpoints", "[family][set11]") {
  // Derived by hand from the modeling files' registrations (tied heads counted once), H hidden, I intermediate,
  // nh / nkv heads, D head_dim, V vocab, L layers:
  //  arcee:     2*V*H + L * (H*nh*D + 2*H*nkv*D + nh*D*H + 2*H*I (up, down) + 2H) + H
  //    afm-4.5b: 2 * 327,690,240 + 36 * (15,728,640 + 94,371,840 + 5120 = 110,105,600) + 2560
  //    = 4,619,184,640 (card: 4.5B; the derivation gives 4.62B).

  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"afm-4.5b", 4'619'184'640},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("arcee: measured H200 cases of family set 11", "[family][set11]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured `params`
  // exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f11-arcee-"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 1);
}
