// mimo_v2_flash (family set 69): MiMoV2FlashForCausalLM (Xiaomi MiMo-V2-Flash), full and sliding-window layers (the
// sliding ones with twice the KV heads and a learnable sink per head), query / key heads wider than the value heads,
// partial rotary per layer type, a dense first layer and DeepSeek-V3's noaux_tc router without shared experts. Written
// from the installed 5.17 modeling file without a device: the importer's class defaults, refusals naming the field,
// eager-only attention, the KV cache and the parameter counts, each derived by hand. The held-out rows
// (calibrate/cases/families69-input.jsonl) are predicted in data/validation/predictions/families69-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/moe/mimo_v2_flash_fields.h"
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

// Two layers of 256 (the class's default pattern: layer 0 full + dense, layer 1 sliding + sparse), 4 heads of 32
// over 1 KV head (2 on the sliding layer), values of 16, window 64, 4 experts of 64 (top 2), vocabulary 1000.
constexpr const char* kSmall =
    R"({"model_type": "mimo_v2_flash", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 32, "v_head_dim": 16,
        "sliding_window": 64, "moe_intermediate_size": 64, "n_routed_experts": 4, "num_experts_per_tok": 2})";

}  // namespace

TEST_CASE("mimo_v2_flash importer: class defaults", "[family][set69][importer]") {
  // MiMoV2FlashConfig(): MiMo-V2-Flash's widths; layer_types None => full at layer 0 and where (i + 1) % 6 == 0;
  // mlp_layer_types None => dense then sparse; rope_parameters None => factor 0.334 for both types (64 of 192).
  const TransformerSpec s = import(R"({"model_type": "mimo_v2_flash"})");
  CHECK(s.model_type == "mimo_v2_flash");
  CHECK(s.vocab_size == 152576);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 16384);
  CHECK(s.num_layers == 48);
  CHECK(s.num_heads == 64);
  CHECK(s.num_kv_heads == 4);
  CHECK(s.head_dim == 192);
  CHECK(s.max_position_embeddings == 131072);
  CHECK(s.hidden_act == "silu");
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK(s.sliding_window == 128);
  REQUIRE(s.sliding_layers.size() == 48);
  for (size_t i = 0; i < 48; ++i) {
    CAPTURE(i);
    CHECK(s.sliding_layers[i] == ((i == 0 || (i + 1) % 6 == 0) ? 0 : 1));
  }
  REQUIRE(s.moe_layers.size() == 48);
  CHECK(s.moe_layers[0] == 0);
  CHECK(s.moe_layers[1] == 1);
  CHECK(s.moe_layers[47] == 1);
  CHECK(s.num_experts == 256);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.moe_intermediate_size == 2048);
  CHECK(s.num_shared_experts == 0);
  CHECK(s.moe_topk_method == "noaux_tc");
  CHECK(s.moe_n_group == 1);
  CHECK(s.moe_topk_group == 1);
  CHECK(s.moe_norm_topk_prob);
  CHECK(s.generate_without_eos);
  const auto& f = memplan::family_fields<memplan::MiMoV2FlashFields>(s);
  CHECK(f.v_head_dim == 128);
  CHECK(f.full_rotary_dim == 64);
  CHECK(f.sliding_rotary_dim == 64);
  // Per-type rope_parameters: each type its own factor; num_local_experts is n_routed_experts' alias.
  const TransformerSpec t = import(R"({"model_type": "mimo_v2_flash", "num_local_experts": 16,
      "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5e6, "partial_rotary_factor": 0.5},
                          "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})");
  CHECK(t.num_experts == 16);
  CHECK(memplan::family_fields<memplan::MiMoV2FlashFields>(t).full_rotary_dim == 96);
  CHECK(memplan::family_fields<memplan::MiMoV2FlashFields>(t).sliding_rotary_dim == 64);
  // The hub's remote-code keys are unread by the 5.17 class: its derived defaults stand.
  const TransformerSpec h = import(R"({"model_type": "mimo_v2_flash", "num_hidden_layers": 2,
      "hybrid_layer_pattern": [1, 1], "moe_layer_freq": [1, 1], "swa_num_key_value_heads": 2})");
  CHECK(h.sliding_layers == std::vector<uint8_t>{0, 1});
  CHECK(h.moe_layers == std::vector<uint8_t>{0, 1});
  // The default attention is eager (_supports_sdpa is False).
  CHECK(memplan::default_attn(memplan::load_zoo_model("mimo-v2-flash")) == memplan::AttnImpl::eager);
}

TEST_CASE("mimo_v2_flash: refusals name the field", "[family][set69]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "mimo_v2_flash", "num_key_value_heads": 48})", "config.num_key_value_heads:"},
      // a sliding layer's 2 x 4 KV heads do not divide 4 query heads
      {R"({"model_type": "mimo_v2_flash", "num_attention_heads": 4})", "config.num_key_value_heads:"},
      {R"({"model_type": "mimo_v2_flash", "num_hidden_layers": 2, "layer_types": ["full_attention"]})",
       "config.layer_types:"},
      {R"({"model_type": "mimo_v2_flash", "num_hidden_layers": 2, "layer_types": ["full_attention", "conv"]})",
       "config.layer_types[1]:"},
      {R"({"model_type": "mimo_v2_flash", "num_hidden_layers": 2, "mlp_layer_types": ["dense", "moe"]})",
       "config.mlp_layer_types[1]:"},
      {R"({"model_type": "mimo_v2_flash", "num_hidden_layers": 2, "mlp_layer_types": ["dense"]})",
       "config.mlp_layer_types:"},
      {R"({"model_type": "mimo_v2_flash", "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}})",
       "config.rope_parameters.full_attention:"},
      {R"({"model_type": "mimo_v2_flash", "rope_parameters": {"full_attention": {"partial_rotary_factor": 0.34},
          "sliding_attention": {}}})",
       "config.rope_parameters.full_attention.partial_rotary_factor:"},
      {R"({"model_type": "mimo_v2_flash", "rope_parameters": {"full_attention": {},
          "sliding_attention": {"rope_type": "longrope"}}})",
       "config.rope_parameters.sliding_attention.rope_type:"},
      {R"({"model_type": "mimo_v2_flash", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "mimo_v2_flash", "v_head_dim": null})", "config.v_head_dim:"},
      {R"({"model_type": "mimo_v2_flash", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "mimo_v2_flash", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "mimo_v2_flash", "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "mimo_v2_flash", "num_experts_per_tok": 300})", "config.num_experts_per_tok:"},
      {R"({"model_type": "mimo_v2_flash", "quantization_config": {"quant_method": "fp8"}})",
       "config.quantization_config:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // SDPA: from_config(attn_implementation="sdpa") raises; eager builds in every precision and with checkpointing.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "attn:"));
  cfg.attn = memplan::AttnImpl::eager;
  for (const auto p : {memplan::Precision::fp32, memplan::Precision::bf16, memplan::Precision::amp_bf16}) {
    cfg.precision = p;
    CHECK_NOTHROW(memplan::estimate(m, cfg));
  }
  cfg.grad_checkpointing = true;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
}

TEST_CASE("mimo_v2_flash: the KV cache, derived by hand", "[family][set69]") {
  // kSmall, B 2, prompt 50 (inside the 64-token window: the sliding layer keeps every token too), bf16. The full
  // layer caches K [2, 1, 50, 32] = 6,400 bytes and V [2, 1, 50, 16] = 3,200; the sliding layer, with 2 KV heads,
  // K [2, 2, 50, 32] = 12,800 and V [2, 2, 50, 16] = 6,400; each a block of whole 512-byte units: 6,656 + 3,584 +
  // 12,800 + 6,656 = 29,696.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.attn = memplan::AttnImpl::eager;
  cfg.batch_size = 2;
  cfg.seq_len = 50;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 29'696);
}

TEST_CASE("mimo_v2_flash: parameter counts, derived by hand", "[family][set69]") {
  // kSmall. Layer 0 (full, dense): q 256 x 128 = 32,768, k 256 x 32 = 8,192, v 256 x 16 = 4,096, o 64 x 256 =
  // 16,384; gate / up / down 3 x 256 x 512 = 393,216; norms 512: 455,168. Layer 1 (sliding, sparse): q 32,768, k 256 x
  // 64 = 16,384, v 256 x 32 = 8,192, o 16,384, sinks 4; experts 4 x 3 x 256 x 64 = 196,608, router 4 x 256 = 1,024;
  // norms 512: 271,876. Embedding and untied lm_head 2 x 1000 x 256 = 512,000, final norm 256: 1,239,300.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'239'300);
  // mimo-v2-flash: 2 x 152576 x 4096 = 1,249,902,592; 9 full layers x 89,128,960 (q 4096 x 12288, k 4096 x 768, v 4096
  // x 512, o 8192 x 4096); 39 sliding layers x 94,371,904 (k 4096 x 1536, v 4096 x 1024, sinks 64); the dense MLP 3 x
  // 4096 x 16384 = 201,326,592; 47 MoE layers x 6,443,499,520 (256 x 3 x 4096 x 2048 experts, 256 x 4096 router);
  // 48 x 8,192 norms + 4,096: 308,778,768,832 (the card's "309B total").
  CHECK(memplan::param_count(memplan::load_zoo_model("mimo-v2-flash")) == 308'778'768'832);
}
