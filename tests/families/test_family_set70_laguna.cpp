// laguna (family set 70): LagunaForCausalLM (poolside Laguna), per-layer query heads over shared KV heads, q / k
// RMSNorms, partial rotary per layer type, a softplus output gate per head (or per channel), full and sliding-window
// layers, a dense first layer and a sigmoid top-k router with a shared expert. Written from the installed 5.17
// modeling file without a device: the importer's class defaults, refusals naming the field, the KV cache and the
// parameter counts, each derived by hand. The held-out rows (calibrate/cases/families70-input.jsonl) are predicted in
// data/validation/predictions/families70-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/moe/laguna_fields.h"
#include "engine/arch/family_fields.h"
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

// Two layers of 256 (full + dense, sliding + sparse, window 64), 4 / 8 query heads of 32 over 2 KV heads, 4 experts
// of 64 (top 2) and a shared expert of 32, vocabulary 1000.
constexpr const char* kSmall =
    R"({"model_type": "laguna", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
        "num_attention_heads_per_layer": [4, 8], "layer_types": ["full_attention", "sliding_attention"],
        "sliding_window": 64, "moe_intermediate_size": 64, "shared_expert_intermediate_size": 32, "num_experts": 4,
        "num_experts_per_tok": 2})";

}  // namespace

TEST_CASE("laguna importer: class defaults", "[family][set70][importer]") {
  // LagunaConfig(): layer_types None => every layer full; mlp_layer_types None => dense then sparse; per-layer heads
  // None => num_attention_heads; rope_parameters None => full 0.5 (64 of 128), sliding 1.0.
  const TransformerSpec s = import(R"({"model_type": "laguna"})");
  CHECK(s.model_type == "laguna");
  CHECK(s.vocab_size == 100352);
  CHECK(s.hidden_size == 2048);
  CHECK(s.intermediate_size == 8192);
  CHECK(s.num_layers == 40);
  CHECK(s.num_heads == 48);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 131072);
  CHECK(s.sliding_window == 512);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  REQUIRE(s.sliding_layers.size() == 40);
  for (uint8_t t : s.sliding_layers) CHECK(t == 0);
  REQUIRE(s.moe_layers.size() == 40);
  CHECK(s.moe_layers[0] == 0);
  CHECK(s.moe_layers[39] == 1);
  CHECK(s.num_experts == 256);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.moe_intermediate_size == 512);
  CHECK(s.generate_without_eos);
  const auto& f = memplan::family_fields<memplan::LagunaFields>(s);
  CHECK(f.heads_per_layer == std::vector<int64_t>(40, 48));
  CHECK(f.gate_per_head);
  CHECK(f.router_softcap == 0.0);
  CHECK(f.shared_intermediate == 512);
  CHECK(f.full_rotary_dim == 64);
  // gating strings and booleans; per-type rope dicts default to factor 1.0.
  CHECK_FALSE(memplan::family_fields<memplan::LagunaFields>(import(R"({"model_type": "laguna", "gating": "per-element"})"))
                  .gate_per_head);
  CHECK_FALSE(memplan::family_fields<memplan::LagunaFields>(import(R"({"model_type": "laguna", "gating": false})"))
                  .gate_per_head);
  const TransformerSpec t = import(R"({"model_type": "laguna", "num_hidden_layers": 2,
      "layer_types": ["full_attention", "sliding_attention"],
      "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5e5},
                          "sliding_attention": {"rope_type": "default", "partial_rotary_factor": 0.5}}})");
  CHECK(memplan::family_fields<memplan::LagunaFields>(t).full_rotary_dim == 128);
  CHECK(memplan::family_fields<memplan::LagunaFields>(t).sliding_rotary_dim == 64);
  CHECK(memplan::default_attn(memplan::load_zoo_model("laguna-defaults")) == memplan::AttnImpl::sdpa);
}

TEST_CASE("laguna: refusals name the field", "[family][set70]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "laguna", "num_key_value_heads": 7})", "config.num_key_value_heads:"},
      {R"({"model_type": "laguna", "num_hidden_layers": 2, "num_attention_heads_per_layer": [48]})",
       "config.num_attention_heads_per_layer:"},
      {R"({"model_type": "laguna", "num_hidden_layers": 2, "num_attention_heads_per_layer": [48, 0]})",
       "config.num_attention_heads_per_layer[1]:"},
      {R"({"model_type": "laguna", "num_hidden_layers": 2, "layer_types": ["full_attention", "conv"]})",
       "config.layer_types[1]:"},
      {R"({"model_type": "laguna", "num_hidden_layers": 2, "mlp_layer_types": ["dense", "moe"]})",
       "config.mlp_layer_types[1]:"},
      {R"({"model_type": "laguna", "gating": "per-token"})", "config.gating:"},
      {R"({"model_type": "laguna", "moe_apply_router_weight_on_input": true})",
       "config.moe_apply_router_weight_on_input:"},
      {R"({"model_type": "laguna", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "laguna", "rope_parameters": {"rope_type": "default"}})",
       "config.rope_parameters.full_attention:"},
      {R"({"model_type": "laguna", "rope_parameters": {"full_attention": {"partial_rotary_factor": 0.29}}})",
       "config.rope_parameters.full_attention.partial_rotary_factor:"},
      {R"({"model_type": "laguna", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "laguna", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "laguna", "num_experts_per_tok": 300})", "config.num_experts_per_tok:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // Builds with both attention implementations, every precision, checkpointing and per-element gates.
  ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  for (const auto a : {memplan::AttnImpl::sdpa, memplan::AttnImpl::eager})
    for (const auto p : {memplan::Precision::fp32, memplan::Precision::bf16, memplan::Precision::amp_bf16}) {
      cfg.attn = a;
      cfg.precision = p;
      CHECK_NOTHROW(memplan::estimate(m, cfg));
    }
  cfg.grad_checkpointing = true;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  const ModelSpec e = memplan::testing::model_of_config(
      R"({"model_type": "laguna", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
          "gating": "per-element", "moe_router_logit_softcapping": 30.0, "moe_intermediate_size": 64,
          "shared_expert_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2})");
  CHECK_NOTHROW(memplan::estimate(e, cfg));
}

TEST_CASE("laguna: the KV cache, derived by hand", "[family][set70]") {
  // kSmall, B 2, prompt 50 (inside the 64-token window), bf16: per layer K and V [2, 2, 50, 32] = 12,800 bytes each,
  // x 2 x 2 layers = 51,200 (the query heads per layer change no cache).
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 50;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 51'200);
}

TEST_CASE("laguna: parameter counts, derived by hand", "[family][set70]") {
  // kSmall. Layer 0 (4 heads, full, dense): q 256 x 128 = 32,768, k and v 256 x 64 = 16,384 each, o 128 x 256 =
  // 32,768, q_norm / k_norm 64, g_proj 4 x 256 = 1,024; gate / up / down 3 x 256 x 512 = 393,216; norms 512: 493,120.
  // Layer 1 (8 heads, sliding, sparse): q 256 x 256 = 65,536, k / v 16,384 each, o 65,536, q / k norms 64, g_proj 2,048;
  // experts 4 x 3 x 256 x 64 = 196,608, router 1,024, e_score_correction_bias 4, shared 3 x 256 x 32 = 24,576; norms
  // 512: 388,676. Embedding and untied lm_head 2 x 1000 x 256 = 512,000, final norm 256: 1,394,052.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'394'052);
  // laguna-defaults: 2 x 100352 x 2048 = 411,041,792; 40 layers x (29,458,688 attention (q 2048 x 6144, k / v 2048 x
  // 1024, o 6144 x 2048, norms 256, g_proj 48 x 2048) + 4,096 norms); the dense MLP 3 x 2048 x 8192 = 50,331,648; 39
  // MoE layers x 808,976,640 (256 x 3 x 2048 x 512 experts, 256 x 2048 router, 256 bias, shared 3 x 2048 x 512);
  // + 2,048: 33,189,975,808.
  CHECK(memplan::param_count(memplan::load_zoo_model("laguna-defaults")) == 33'189'975'808);
}
