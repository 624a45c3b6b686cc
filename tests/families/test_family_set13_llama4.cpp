// llama4_text (family set 13): importer defaults and refusals (Llama4TextConfig and the composite Llama4Config),
// the published checkpoints' text parameter counts derived by hand, the chunked mask's mechanism, and the measured
// H200 cases (measured before the builder existed and used to write it).
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

// The measured rows' shape: Scout's width with 4 layers and 8 experts.
const char* kSmall = R"({"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "num_hidden_layers": 4, "num_attention_heads": 40, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 202048, "num_local_experts": 8)";

}  // namespace

TEST_CASE("llama4_text importer: Llama4TextConfig defaults of transformers 5.17", "[family][set13]") {
  const TransformerSpec s = import(R"({"model_type": "llama4_text"})");
  CHECK(s.model_type == "llama4_text");
  CHECK(s.vocab_size == 202048);
  CHECK(s.hidden_size == 5120);
  CHECK(s.intermediate_size == 8192);
  CHECK(s.moe_intermediate_size == 8192);
  CHECK(s.intermediate_size_mlp == 16384);
  CHECK(s.num_layers == 48);
  CHECK(s.num_heads == 40);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.num_experts == 16);
  CHECK(s.num_experts_per_tok == 1);
  CHECK(s.max_position_embeddings == 131072);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK(s.l2_qk_norm);
  CHECK(s.attn_temperature_tuning);
  CHECK(s.chunked_attention);
  CHECK(s.sliding_window == 8192);  // attention_chunk_size: the cache's window of the chunked layers
  // interleave_moe_layer_step 1: every layer MoE; no_rope_layer_interval 4: layers 3, 7, ... NoPE, and
  // layer_types: the RoPE layers chunked, the NoPE layers full.
  CHECK(s.moe_layers == std::vector<uint8_t>(48, 1));
  for (int64_t i = 0; i < 48; ++i) {
    INFO(i);
    CHECK(s.rope_layers[static_cast<size_t>(i)] == ((i + 1) % 4 != 0 ? 1 : 0));
    CHECK(s.sliding_layers[static_cast<size_t>(i)] == s.rope_layers[static_cast<size_t>(i)]);
  }
  // interleave 2: layers 1, 3, ...; moe_layers overrides it; an empty no_rope_layers is falsy (the default).
  const TransformerSpec m = import(R"({"model_type": "llama4_text", "num_hidden_layers": 4,
      "interleave_moe_layer_step": 2, "no_rope_layers": [], "attention_chunk_size": 512, "use_qk_norm": false})");
  CHECK(m.moe_layers == std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(m.rope_layers == std::vector<uint8_t>{1, 1, 1, 0});
  CHECK(m.sliding_window == 512);
  CHECK_FALSE(m.l2_qk_norm);
  const TransformerSpec e = import(R"({"model_type": "llama4_text", "num_hidden_layers": 4, "moe_layers": [0],
      "interleave_moe_layer_step": 2, "no_rope_layers": [0, 1, 1, 1], "layer_types": ["full_attention",
      "full_attention", "chunked_attention", "full_attention"], "num_key_value_heads": null, "head_dim": null,
      "hidden_size": 1024, "num_attention_heads": 16})");
  CHECK(e.moe_layers == std::vector<uint8_t>{1, 0, 0, 0});
  CHECK(e.rope_layers == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(e.sliding_layers == std::vector<uint8_t>{0, 0, 1, 0});
  CHECK(e.num_kv_heads == 16);
  CHECK(e.head_dim == 64);
}

TEST_CASE("llama4 importer: the composite config models its text_config's decoder", "[family][set13]") {
  const TransformerSpec s = import(R"({"model_type": "llama4", "text_config": {"num_hidden_layers": 2,
      "num_local_experts": 4}, "vision_config": {"hidden_size": 1408}})");
  CHECK(s.model_type == "llama4_text");
  CHECK(s.num_layers == 2);
  CHECK(s.num_experts == 4);
  CHECK(s.modelled_part.find("vision tower") != std::string::npos);
  // text_config absent: Llama4TextConfig's defaults.
  CHECK(import(R"({"model_type": "llama4"})").num_layers == 48);
  CHECK(error_of([] { import(R"({"model_type": "llama4", "text_config": {"hidden_act": "gelu"}})"); })
            .rfind("config.text_config.hidden_act:", 0) == 0);
}

TEST_CASE("llama4_text importer: bad values name their field", "[family][set13]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "llama4_text", "attention_chunk_size": null})", "config.attention_chunk_size:"},
      {R"({"model_type": "llama4_text", "attention_chunk_size": 0})", "config.attention_chunk_size:"},
      {R"({"model_type": "llama4_text", "num_experts_per_tok": 17})", "config.num_experts_per_tok:"},
      {R"({"model_type": "llama4_text", "num_local_experts": 0})", "config.num_local_experts:"},
      {R"({"model_type": "llama4_text", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "llama4_text", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "llama4_text", "head_dim": 127})", "config.head_dim:"},
      {R"({"model_type": "llama4_text", "num_key_value_heads": 7})", "config.num_key_value_heads:"},
      {R"({"model_type": "llama4_text", "num_hidden_layers": 4, "no_rope_layers": [1, 1]})", "config.no_rope_layers:"},
      {R"({"model_type": "llama4_text", "num_hidden_layers": 2, "layer_types": ["full_attention", "sliding_attention"]})",
       "config.layer_types[1]:"},
      {R"({"model_type": "llama4_text", "moe_layers": "all"})", "config.moe_layers:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("llama4 parameter counts: the published checkpoints' text models, derived by hand", "[family][set13]") {
  // Llama4ForCausalLM per layer, H = 5120, 40 heads / 8 kv heads of 128, no biases:
  //   attention q + k + v + o = 5120*5120 + 2 * 1024*5120 + 5120*5120 = 62,914,560; two RMSNorms 10,240.
  //   MoE layer (E experts of I = 8192): experts.gate_up_proj E*5120*16384 + experts.down_proj E*8192*5120 =
  //   E * 125,829,120; router E * 5120; shared expert 3 * 5120 * 8192 = 125,829,120.
  //   Dense layer: Llama4TextMLP of 16384: 3 * 5120 * 16384 = 251,658,240.
  // Model: embed_tokens 202048 * 5120 = 1,034,485,760, the untied lm_head the same, the final norm 5120:
  // 2,068,976,640.
  // Scout (16 experts on all 48 layers): 48 * (62,914,560 + 10,240 + 16 * 125,829,120 + 16 * 5120 + 125,829,120)
  // = 48 * 2,202,101,760 = 105,700,884,480, plus 2,068,976,640 = 107,769,861,120 (~107.8 B; the 109 B published
  // includes the vision tower and projector, not modelled).
  CHECK(memplan::param_count(memplan::load_zoo_model("llama-4-scout-17b-16e")) == 107'769'861'120);
  // Maverick (128 experts on the 24 odd layers, dense on the 24 even ones): 24 * (62,924,800 + 128 * 125,829,120 +
  // 128 * 5120 + 125,829,120) = 24 * 16,295,536,640 = 391,092,879,360; 24 * (62,924,800 + 251,658,240) =
  // 7,549,992,960; plus 2,068,976,640 = 400,711,848,960 (~400.7 B text; ~400 B published).
  CHECK(memplan::param_count(memplan::load_zoo_model("llama-4-maverick-17b-128e")) == 400'711'848'960);
  CHECK(memplan::load_zoo_model("llama-4-scout-17b-16e").transformer.modelled_part.find("text decoder") == 0);
  // The measured rows' shape (4 layers, 8 experts, all MoE): 4 * (62,924,800 + 8 * 125,829,120 + 8 * 5120 +
  // 125,829,120) + 2,068,976,640 = 4 * 1,195,427,840 + 2,068,976,640 = 6,850,688,000.
  CHECK(memplan::param_count(import(std::string(kSmall) + "}")) == 6'850'688'000);
}

TEST_CASE("llama4_text: the chunked mask exists only once the sequence reaches the chunk", "[family][set13]") {
  // SDPA training: create_chunked_causal_mask returns None while kv < attention_chunk_size (is_causal); from the
  // chunk size on it materialises a [B, 1, S, S] bool mask, and the chunked layers then run SDPA with it, which
  // copies K and V to every head (repeat_kv) and keeps an additive bias for backward: more memory after the
  // forward at the same shapes.
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::transformer;
  m.name = "llama4";
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 1024;
  cfg.precision = memplan::Precision::bf16;
  const std::string small = R"({"model_type": "llama4_text", "hidden_size": 512, "intermediate_size": 256,
      "intermediate_size_mlp": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
      "head_dim": 64, "vocab_size": 1000, "num_local_experts": 2)";
  m.transformer = import(small + R"(, "attention_chunk_size": 1025})");
  const auto skipped = memplan::estimate(m, cfg);
  m.transformer = import(small + R"(, "attention_chunk_size": 1024})");
  const auto masked = memplan::estimate(m, cfg);
  REQUIRE_FALSE(skipped.replay.steps.empty());
  CHECK(masked.replay.steps[0].after_fwd > skipped.replay.steps[0].after_fwd);
}

TEST_CASE("llama4_text: measured H200 cases of family set 13", "[family][set13]") {
  // Peak allocated within 0.1 % per case (all three exact: 65406.0, 77928.2, 14417.5 MiB), reserved within 1 %
  // (+2 MiB on the bf16 row: freq_cis.conj() replayed after the rotary gradient instead of before it, see
  // data/validation/notes-f13/llama4.md; the amp chunk-512 row and the generate row exact), the KV cache within
  // 1 %, the measured `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f13-llama4"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 3);
}
