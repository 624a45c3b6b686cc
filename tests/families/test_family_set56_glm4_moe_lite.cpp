// glm4_moe_lite (family set 56): Glm4MoeLiteForCausalLM (GLM-4.7-Flash), DeepSeek-V3's multi-head latent attention
// decoder whose MoE layers follow config.mlp_layer_types. Written from the installed 5.17 modeling file without a
// device: the importer's class defaults, refusals naming the field, the layer pattern, the latent KV cache and the
// zoo entry's parameter count, each derived by hand, and the builder's identity with DeepSeek-V3's at the same
// widths. The held-out rows (calibrate/cases/families56-input.jsonl) are predicted in
// data/validation/predictions/families56-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

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

}  // namespace

TEST_CASE("glm4_moe_lite importer: class defaults", "[family][set56][importer]") {
  // Glm4MoeLiteConfig(): GLM-4.7-Flash's widths.
  const TransformerSpec s = import(R"({"model_type": "glm4_moe_lite"})");
  CHECK(s.model_type == "glm4_moe_lite");
  CHECK(s.vocab_size == 154880);
  CHECK(s.hidden_size == 2048);
  CHECK(s.intermediate_size == 10240);
  CHECK(s.moe_intermediate_size == 1536);
  CHECK(s.num_layers == 47);
  CHECK(s.num_heads == 20);
  CHECK(s.num_kv_heads == 20);
  CHECK(s.num_shared_experts == 1);
  CHECK(s.num_experts == 64);
  CHECK(s.num_experts_per_tok == 4);
  CHECK(s.kv_lora_rank == 512);
  CHECK(s.q_lora_rank == 768);
  CHECK(s.qk_rope_head_dim == 64);
  CHECK(s.qk_nope_head_dim == 192);
  CHECK(s.v_head_dim == 256);
  CHECK(s.head_dim == 256);
  CHECK(s.moe_n_group == 1);
  CHECK(s.moe_topk_group == 1);
  CHECK(s.moe_topk_method == "noaux_tc");
  CHECK(s.moe_norm_topk_prob);
  CHECK(s.rope_interleave);
  CHECK(s.max_position_embeddings == 202752);
  CHECK(s.hidden_act == "silu");
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK(s.attn_dropout == 0.0);
  // mlp_layer_types' default: ["dense"] + ["sparse"] * 46.
  REQUIRE(s.moe_layers.size() == 47);
  CHECK(s.moe_layers[0] == 0);
  for (size_t i = 1; i < 47; ++i) CHECK(s.moe_layers[i] == 1);
  // q_lora_rank None: a plain q_proj. first_k_dense_replace is not read; mlp_layer_types is, longer lists too.
  const TransformerSpec z = import(R"({"model_type": "glm4_moe_lite", "q_lora_rank": null, "num_hidden_layers": 3,
      "first_k_dense_replace": 3, "mlp_layer_types": ["sparse", "dense", "sparse", "dense"]})");
  CHECK(z.q_lora_rank == 0);
  REQUIRE(z.moe_layers.size() == 3);
  CHECK(z.moe_layers[0] == 1);
  CHECK(z.moe_layers[1] == 0);
  CHECK(z.moe_layers[2] == 1);
}

TEST_CASE("glm4_moe_lite: refusals name the field", "[family][set56]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "glm4_moe_lite", "num_hidden_layers": 4, "mlp_layer_types": ["dense", "sparse"]})",
       "config.mlp_layer_types:"},
      {R"({"model_type": "glm4_moe_lite", "num_hidden_layers": 2, "mlp_layer_types": ["dense", 1]})",
       "config.mlp_layer_types[1]:"},
      {R"({"model_type": "glm4_moe_lite", "mlp_layer_types": "sparse"})", "config.mlp_layer_types:"},
      {R"({"model_type": "glm4_moe_lite", "kv_lora_rank": null})", "config.kv_lora_rank:"},
      {R"({"model_type": "glm4_moe_lite", "n_group": null})", "config.n_group:"},
      {R"({"model_type": "glm4_moe_lite", "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "glm4_moe_lite", "n_group": 8, "topk_group": 9})", "config.topk_group:"},
      {R"({"model_type": "glm4_moe_lite", "num_experts_per_tok": 65})", "config.num_experts_per_tok:"},
      {R"({"model_type": "glm4_moe_lite", "qk_rope_head_dim": 63})", "config.qk_rope_head_dim:"},
      {R"({"model_type": "glm4_moe_lite", "partial_rotary_factor": 0.5})", "config.partial_rotary_factor:"},
      {R"({"model_type": "glm4_moe_lite", "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.5}})",
       "config.rope_parameters.partial_rotary_factor:"},
      {R"({"model_type": "glm4_moe_lite", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "glm4_moe_lite", "num_key_value_heads": 7})", "config.num_key_value_heads:"},
      {R"({"model_type": "glm4_moe_lite", "quantization_config": {"quant_method": "fp8"}})", "config.quantization_config:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // GQA passes the importer (num_attention_heads % num_key_value_heads) but not the MLA builder.
  const ModelSpec m = memplan::testing::model_of_config(
      R"({"model_type": "glm4_moe_lite", "num_hidden_layers": 2, "num_key_value_heads": 10, "vocab_size": 1000})");
  RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 64;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "config.num_key_value_heads:"));
}

TEST_CASE("glm4_moe_lite: DeepSeek-V3's decoder at the same widths, the latent KV cache by hand", "[family][set56]") {
  // The same widths as a deepseek_v3 config (one dense layer, n_group 1): the modeling files differ in no statement
  // that allocates (the fp32 e_score_correction_bias buffer both carry), so the replays agree byte for byte.
  const std::string widths = R"("hidden_size": 512, "intermediate_size": 1024, "moe_intermediate_size": 256,
      "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 8, "n_routed_experts": 16,
      "n_shared_experts": 1, "num_experts_per_tok": 4, "n_group": 1, "topk_group": 1, "kv_lora_rank": 128,
      "q_lora_rank": 192, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 96, "vocab_size": 4000,
      "max_position_embeddings": 4096)";
  const ModelSpec lite = memplan::testing::model_of_config(R"({"model_type": "glm4_moe_lite", )" + widths + "}");
  const ModelSpec v3 =
      memplan::testing::model_of_config(R"({"model_type": "deepseek_v3", "first_k_dense_replace": 1, )" + widths + "}");
  for (auto p : {memplan::Precision::bf16, memplan::Precision::amp_bf16}) {
    for (auto attn : {memplan::AttnImpl::sdpa, memplan::AttnImpl::eager}) {
      RunConfig cfg;
      cfg.batch_size = 3;
      cfg.seq_len = 300;
      cfg.precision = p;
      cfg.attn = attn;
      const auto a = memplan::estimate(lite, cfg), b = memplan::estimate(v3, cfg);
      CHECK(a.peak_allocated_bytes() == b.peak_allocated_bytes());
      CHECK(a.run_peak_reserved_bytes() == b.run_peak_reserved_bytes());
    }
  }
  // The DynamicCache holds the normed latent [B, 1, L, kv_lora_rank] and the rotated rope key [B, 1, L,
  // qk_rope_head_dim] per layer: glm-4.7-flash, bf16, B 2, prompt 700: 47 * 2 * 700 * (512 + 64) * 2 bytes.
  const ModelSpec flash = memplan::load_zoo_model("glm-4.7-flash");
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 700;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(flash, cfg).inference.kv_cache_bytes == int64_t{47} * 2 * 700 * (512 + 64) * 2);
}

TEST_CASE("glm4_moe_lite: parameter count, derived by hand", "[family][set56]") {
  // GLM-4.7-Flash (H 2048, V 154880, 20 heads, q_lora 768, kv_lora 512, nope 192, rope 64, v 256):
  // attention q_a 768*2048 = 1,572,864 + q_a_layernorm 768 + q_b 20*256*768 = 3,932,160 + kv_a (512+64)*2048 =
  // 1,179,648 + kv_a_layernorm 512 + kv_b 20*(192+256)*512 = 4,587,520 + o 2048*20*256 = 10,485,760: 21,759,232;
  // two norms 4,096. Layer 0 dense MLP 3*2048*10240 = 62,914,560: 84,677,888. MoE layer: experts 64*2*1536*2048 +
  // 64*2048*1536 = 603,979,776, router 64*2048 = 131,072, shared 3*2048*1536 = 9,437,184: 613,548,032; a layer
  // 635,311,360, x 46 = 29,224,322,560. Embeddings and the untied head 2*154880*2048 = 634,388,480, final norm
  // 2,048. Total 29,943,390,976 (the e_score_correction_bias buffers are not parameters).
  CHECK(memplan::param_count(memplan::load_zoo_model("glm-4.7-flash")) == 29'943'390'976);
}
