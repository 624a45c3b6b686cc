// solar_open (family set 65): SolarOpenForCausalLM (Upstage Solar Open), Glm4MoeModel with LlamaAttention (full
// rotary, no qk norm, o_proj without bias) and Glm4MoeMoE in every layer. Written from the installed 5.17 modeling
// file without a device: the importer's class defaults (SolarOpenConfig's own, and the Glm4MoeConfig fields it
// deletes), refusals naming the field, the KV cache, the parameter counts, each derived by hand. The held-out rows
// (calibrate/cases/families65-input.jsonl) are predicted in data/validation/predictions/families65-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

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

// Two layers, 4 heads x 32 over 2 KV heads, 4 experts of 64 (top 2) + 1 shared, vocabulary 1000.
const char* kSmall = R"({"model_type": "solar_open", "vocab_size": 1000, "hidden_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "moe_intermediate_size": 64,
    "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1, "n_group": 1, "topk_group": 1})";

}  // namespace

TEST_CASE("solar_open importer: class defaults", "[family][set65][importer]") {
  // SolarOpenConfig(): Solar Open 100B's widths; head_dim 128 is a field (Glm4MoeConfig has none); partial rotary
  // 1.0 (the subclass's setdefault runs before Glm4MoeConfig's 0.5); eos_token_id None.
  const TransformerSpec s = import(R"({"model_type": "solar_open"})");
  CHECK(s.model_type == "solar_open");
  CHECK(s.vocab_size == 196608);
  CHECK(s.hidden_size == 4096);
  CHECK(s.num_layers == 48);
  CHECK(s.num_heads == 64);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.rotary_dim == 128);
  CHECK(s.moe_intermediate_size == 1280);
  CHECK(s.num_experts == 128);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.num_shared_experts == 1);
  CHECK(s.moe_n_group == 1);
  CHECK(s.moe_topk_group == 1);
  CHECK(s.moe_topk_method == "noaux_tc");
  CHECK(s.moe_norm_topk_prob);
  CHECK(s.first_dense_layers == 0);
  CHECK(s.max_position_embeddings == 131072);
  CHECK_FALSE(s.attention_bias);
  CHECK_FALSE(s.qk_head_rms_norm);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK(s.generate_without_eos);
  // The deleted Glm4MoeConfig fields are unread: first_k_dense_replace 2 still gives MoE in every layer.
  CHECK(import(R"({"model_type": "solar_open", "first_k_dense_replace": 2, "use_qk_norm": true})").first_dense_layers == 0);
}

TEST_CASE("solar_open: refusals name the field", "[family][set65]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "solar_open", "partial_rotary_factor": 0.5})", "config.partial_rotary_factor:"},
      {R"({"model_type": "solar_open", "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.5}})",
       "config.rope_parameters.partial_rotary_factor:"},
      {R"({"model_type": "solar_open", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "solar_open", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "solar_open", "hidden_act": "gelu_new"})", "config.hidden_act:"},
      {R"({"model_type": "solar_open", "quantization_config": {"bits": 4}})", "config.quantization_config:"},
      {R"({"model_type": "solar_open", "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "solar_open", "num_key_value_heads": 7})", "config.num_key_value_heads:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("solar_open: the KV cache, derived by hand", "[family][set65]") {
  // Per layer key_states and value_states [B, 2, L, 32] (LlamaAttention caches the rotated keys). B 2, prompt 100,
  // bf16: 2 x 25,600 bytes a layer, x 2 layers = 102,400.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 102'400);
}

TEST_CASE("solar_open: parameter counts, derived by hand", "[family][set65]") {
  // kSmall per layer: q 256 x 128 = 32,768, k and v 256 x 64 = 16,384 each, o 128 x 256 = 32,768 (no bias): 98,304;
  // experts 4 x 3 x 256 x 64 = 196,608, router 4 x 256 = 1,024, shared 3 x 256 x 64 = 49,152: 246,784; norms 512.
  // 2 x 345,600 + 2 x 1000 x 256 (embedding, untied lm_head) + 256 = 1,203,456.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'203'456);
  // solar-open-100b: 48 x (75,497,472 attention (q 4096 x 8192, k / v 4096 x 1024, o 8192 x 4096) + 2,029,518,848
  // MoE (experts 128 x 3 x 4096 x 1280, router 128 x 4096, shared 3 x 4096 x 1280) + 8,192 norms) + 2 x 196608 x
  // 4096 + 4,096 = 102,651,793,408.
  CHECK(memplan::param_count(memplan::load_zoo_model("solar-open-100b")) == 102'651'793'408);
  // Training builds with every attention and precision path the cases use.
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 64;
  cfg.precision = memplan::Precision::amp_bf16;
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.attn = memplan::AttnImpl::eager;
  cfg.grad_checkpointing = true;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
}
