// granitemoe_swa (family set 63): GraniteMoeSWAForCausalLM, granite_swa's model and sink attention around
// granitemoe's MoE block and granitemoeshared's shared MLP. Written from the installed 5.17 modeling file without a
// device: the importer's class defaults, refusals naming the field, the shared MLP and parameter counts derived by
// hand. The held-out rows (calibrate/cases/families63-input.jsonl) are predicted in
// data/validation/predictions/families63-holdout.json.
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

// Four layers of 256, 4 heads and 2 KV heads of 64, 8 experts of 128 top 2, tied.
constexpr const char* kSmall =
    R"({"model_type": "granitemoe_swa", "hidden_size": 256, "intermediate_size": 128, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "tie_word_embeddings": true})";

}  // namespace

TEST_CASE("granitemoe_swa importer: class defaults", "[family][set63][importer]") {
  // GraniteMoeSWAConfig(): 4096 x 32 layers, 32 heads (num_key_value_heads None => heads), 8 experts of 11008 top 2,
  // vocabulary 32000, untied, window 128 where i % 4 != 0, no shared MLP.
  const TransformerSpec s = import(R"({"model_type": "granitemoe_swa"})");
  CHECK(s.model_type == "granitemoe_swa");
  CHECK(s.vocab_size == 32000);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 11008);
  CHECK(s.moe_intermediate_size == 11008);
  CHECK(s.num_layers == 32);
  CHECK(s.num_heads == 32);
  CHECK(s.num_kv_heads == 32);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 2048);
  CHECK(s.num_experts == 8);
  CHECK(s.num_experts_per_tok == 2);
  CHECK(s.granite_shared_intermediate_size == 0);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK(s.sliding_window == 128);
  REQUIRE(s.sliding_layers.size() == 32);
  CHECK(s.sliding_layers[0] == 0);
  CHECK(s.sliding_layers[2] == 1);
  CHECK(s.sliding_layers[8] == 0);
  CHECK(s.granite_swa_rope_tables == 1);
  CHECK(import(R"({"model_type": "granitemoe_swa", "shared_intermediate_size": 1024})")
            .granite_shared_intermediate_size == 1024);
  CHECK(memplan::default_attn(memplan::load_zoo_model("granitemoe-swa-defaults")) == memplan::AttnImpl::eager);
}

TEST_CASE("granitemoe_swa: refusals name the field", "[family][set63]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "granitemoe_swa", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "granitemoe_swa", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "granitemoe_swa", "num_experts_per_tok": 9})", "config.num_experts_per_tok:"},
      {R"({"model_type": "granitemoe_swa", "shared_intermediate_size": -1})", "config.shared_intermediate_size:"},
      {R"({"model_type": "granitemoe_swa", "num_hidden_layers": 2, "layer_rope_theta": [0]})",
       "config.layer_rope_theta:"},
      {R"({"model_type": "granitemoe_swa", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "granitemoe_swa", "attention_multiplier": [1]})", "config.attention_multiplier:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 200;
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "attn:"));
  cfg.attn = memplan::AttnImpl::eager;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
}

TEST_CASE("granitemoe_swa: parameter counts, derived by hand", "[family][set63]") {
  // granitemoe-swa-defaults (H 4096, 32 layers, 32 heads of 128, 8 experts of 11008, V 32000, untied). A layer:
  // q, k, v, o 4 x 4096 x 4096 = 67,108,864; sinks 32; two norms 8,192; router 8 x 4096 = 32,768; gate_up
  // 8 x 22016 x 4096 = 721,420,288; down 8 x 4096 x 11008 = 360,710,144: 1,149,280,288, x 32 = 36,776,969,216.
  // embed_tokens and lm_head 2 x 131,072,000, the final norm 4,096: 37,039,117,312.
  const ModelSpec g = memplan::load_zoo_model("granitemoe-swa-defaults");
  CHECK(memplan::param_count(g) == 37'039'117'312);
  // A shared MLP of 1024: input_linear [2048, 4096] and output_linear [4096, 1024], 3 x 1024 x 4096 = 12,582,912 a
  // layer, x 32 = 402,653,184.
  ModelSpec shared = g;
  shared.transformer.granite_shared_intermediate_size = 1024;
  CHECK(memplan::param_count(shared) - memplan::param_count(g) == 402'653'184);
  // The same widths as a GraniteMoe (no window, no sinks): 32 x 32 = 1,024 parameters fewer.
  ModelSpec gm = g;
  gm.transformer.model_type = "granitemoe";
  gm.transformer.sliding_window = 0;
  CHECK(memplan::param_count(g) - memplan::param_count(gm) == 1'024);
  // kSmall's shared MLP runs in training and inference.
  ModelSpec small = memplan::testing::model_of_config(kSmall);
  small.transformer.granite_shared_intermediate_size = 64;
  RunConfig cfg;
  cfg.attn = memplan::AttnImpl::eager;
  cfg.batch_size = 2;
  cfg.seq_len = 150;
  CHECK_NOTHROW(memplan::estimate(small, cfg));
  cfg.mode = memplan::Mode::inference;
  cfg.generate_tokens = 4;
  CHECK_NOTHROW(memplan::estimate(small, cfg));
}
