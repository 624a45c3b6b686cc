// glm4_moe (family set 15): importer defaults and refusals, the published checkpoints' parameter counts derived by
// hand, and the measured H200 cases (measured before the builder existed and used to write it;
// data/validation/notes-f15/glm4moe.md).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

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

// The shape of the measured rows (calibrate/cases/make_families15.py GLM4MOE).
const char* kSmallBody = R"("hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 768,
    "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
    "n_routed_experts": 32, "num_experts_per_tok": 8, "n_shared_experts": 1, "first_k_dense_replace": 1,
    "vocab_size": 151552, "attention_bias": true, "partial_rotary_factor": 0.5)";

}  // namespace

TEST_CASE("glm4_moe importer: Glm4MoeConfig defaults of transformers 5.17", "[family][set15]") {
  // The class defaults alone: head_dim = hidden // heads = 4096 // 96 = 42 (the class has no head_dim field), whose
  // rotary dimension int(42 * 0.5) = 21 is odd: refused naming the factor.
  CHECK(error_of([] { import(R"({"model_type": "glm4_moe"})"); }).rfind("config.partial_rotary_factor:", 0) == 0);
  // With the published head_dim: 151552 / 4096 / intermediate 10944 / 46 layers / 96 heads / 8 kv heads, rotary 64
  // of 128, moe_intermediate_size 1408, 128 routed experts top 8, 1 shared, first_k_dense_replace 1, n_group 1,
  // topk_group 1, norm_topk_prob true, no qk norm, no attention bias, untied, 131072 positions.
  const TransformerSpec s = import(R"({"model_type": "glm4_moe", "head_dim": 128})");
  CHECK(s.model_type == "glm4_moe");
  CHECK(s.vocab_size == 151552);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 10944);
  CHECK(s.num_layers == 46);
  CHECK(s.num_heads == 96);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.rotary_dim == 64);
  CHECK(s.moe_intermediate_size == 1408);
  CHECK(s.num_experts == 128);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.num_shared_experts == 1);
  CHECK(s.first_dense_layers == 1);
  CHECK(s.moe_n_group == 1);
  CHECK(s.moe_topk_group == 1);
  CHECK(s.moe_topk_method == "noaux_tc");
  CHECK(s.moe_norm_topk_prob);
  CHECK_FALSE(s.qk_head_rms_norm);
  CHECK_FALSE(s.attention_bias);
  CHECK_FALSE(s.qkv_bias);
  CHECK_FALSE(s.o_bias);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK(s.hidden_act == "silu");
  CHECK(s.max_position_embeddings == 131072);
  // eos_token_id defaults to None: generate() builds no MinNewTokensLengthLogitsProcessor.
  CHECK(s.generate_without_eos);
  CHECK_FALSE(import(R"({"model_type": "glm4_moe", "head_dim": 128, "eos_token_id": [151329, 151336]})")
                  .generate_without_eos);
  // getattr(config, "head_dim", hidden // heads) floors: 2048 // 24 = 85 -> rotary int(42.5) = 42.
  CHECK(import(R"({"model_type": "glm4_moe", "hidden_size": 2048, "num_attention_heads": 24, "num_key_value_heads": 8})")
            .head_dim == 85);
  // attribute_map: num_local_experts spells n_routed_experts; use_qk_norm; a rope dict's factor wins.
  const TransformerSpec q = import(R"({"model_type": "glm4_moe", "head_dim": 128, "num_local_experts": 64,
      "use_qk_norm": true, "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.25}})");
  CHECK(q.num_experts == 64);
  CHECK(q.qk_head_rms_norm);
  CHECK(q.rotary_dim == 32);
}

TEST_CASE("glm4_moe importer: bad values name their field", "[family][set15]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "glm4_moe", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "num_experts_per_tok": null})", "config.num_experts_per_tok:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "n_group": 128})", "config.n_group:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "n_group": 4, "topk_group": 5})", "config.topk_group:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "n_group": 8, "topk_group": 1, "num_experts_per_tok": 17})",
       "config.num_experts_per_tok:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "n_shared_experts": 0})", "config.n_shared_experts:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "hidden_act": "gelu_new"})", "config.hidden_act:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "num_key_value_heads": 7})", "config.num_key_value_heads:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "rope_parameters": {"rope_type": "longrope"}})",
       "config.rope_parameters.rope_type:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "partial_rotary_factor": 1.5})", "config.partial_rotary_factor:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "glm4_moe", "head_dim": 128, "quantization_config": {"quant_method": "fp8"}})",
       "config.quantization_config:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // All layers dense: no router, so the group constraints do not apply.
  CHECK(error_of([] { import(R"({"model_type": "glm4_moe", "head_dim": 128, "num_hidden_layers": 2,
      "first_k_dense_replace": 2, "n_group": 3})"); }) == "no error");
}

TEST_CASE("glm4_moe parameter count: the published checkpoints, derived by hand", "[family][set15]") {
  // Glm4MoeForCausalLM registers, per layer: q_proj [96 * 128, H] + bias [12288], k_proj and v_proj [8 * 128, H]
  // + bias [1024] each, o_proj [H, 12288] (no bias), q_norm / k_norm [128] each with use_qk_norm,
  // input_layernorm and post_attention_layernorm [H]; a dense layer's mlp gate / up [I, H] and down [H, I]; a MoE
  // layer's experts.gate_up_proj [E, 2 * Im, H], experts.down_proj [E, H, Im], gate.weight [E, H] (its
  // e_score_correction_bias is a buffer) and shared_experts gate / up / down (Im * 1 wide). Model: embed_tokens
  // [151552, H], the final norm [H], lm_head [151552, H] (untied). The MTP layer (num_nextn_predict_layers 1) is
  // not built by from_config, so the counts are below the published totals, which include it.
  //
  // GLM-4.5-Air (H 4096, 46 layers, I 10944, Im 1408, E 128, first_k_dense_replace 1, no qk norm):
  //   attention 50,331,648 + 12,288 + 2 * (4,194,304 + 1,024) + 50,331,648 = 109,066,240; norms 8,192;
  //   dense MLP 3 * 4096 * 10944 = 134,479,872; MoE 128 * 2816 * 4096 + 128 * 4096 * 1408 + 128 * 4096 +
  //   3 * 4096 * 1408 = 1,476,395,008 + 738,197,504 + 524,288 + 17,301,504 = 2,232,418,304;
  //   46 * 109,074,432 + 134,479,872 + 45 * 2,232,418,304 + 2 * 620,756,992 + 4,096
  //   = 5,017,423,872 + 134,479,872 + 100,458,823,680 + 1,241,513,984 + 4,096 = 106,852,245,504
  //   (published: 106B total with the MTP layer; what from_config builds is 106.85B without it).
  CHECK(memplan::param_count(memplan::load_zoo_model("glm-4.5-air")) == 106'852'245'504);
  // GLM-4.5 (H 5120, 92 layers, I 12288, Im 1536, E 160, first_k_dense_replace 3, qk norm):
  //   attention 62,914,560 + 12,288 + 2 * (5,242,880 + 1,024) + 62,914,560 = 136,329,216; qk norms 256; norms
  //   10,240; dense MLP 3 * 5120 * 12288 = 188,743,680; MoE 160 * 3072 * 5120 + 160 * 5120 * 1536 + 160 * 5120 +
  //   3 * 5120 * 1536 = 2,516,582,400 + 1,258,291,200 + 819,200 + 23,592,960 = 3,799,285,760;
  //   92 * 136,339,712 + 3 * 188,743,680 + 89 * 3,799,285,760 + 2 * 775,946,240 + 5,120
  //   = 12,543,253,504 + 566,231,040 + 338,136,432,640 + 1,551,892,480 + 5,120 = 352,797,814,784
  //   (published: 355B with the MTP layer, about one more MoE layer).
  CHECK(memplan::param_count(memplan::load_zoo_model("glm-4.5")) == 352'797'814'784);
  // GLM-4.6: GLM-4.5's shapes with 202752 positions (rotary cos / sin are computed per step: no parameters).
  CHECK(memplan::param_count(memplan::load_zoo_model("glm-4.6")) == 352'797'814'784);
  // The measured rows' shape (H 2048, 3 layers, 16 heads, 4 kv heads, head_dim 128, I 5632, Im 768, E 32):
  //   attention 4,194,304 + 2,048 + 2 * (1,048,576 + 512) + 4,194,304 = 10,488,832; norms 4,096; dense MLP
  //   3 * 2048 * 5632 = 34,603,008; MoE 32 * 1536 * 2048 + 32 * 2048 * 768 + 32 * 2048 + 3 * 2048 * 768 =
  //   155,779,072; 3 * 10,492,928 + 34,603,008 + 2 * 155,779,072 + 2 * 310,378,496 + 2,048 = 998,398,976, the sum
  //   of p.numel() the H200 harness recorded for f15-glm4moe-*; with use_qk_norm 3 * 2 * 128 = 768 more.
  const std::string small = std::string(R"({"model_type": "glm4_moe", )") + kSmallBody;
  CHECK(memplan::param_count(import(small + "}")) == 998'398'976);
  CHECK(memplan::param_count(import(small + R"(, "use_qk_norm": true})")) == 998'399'744);
}

TEST_CASE("glm4_moe: measured H200 cases of family set 15", "[family][set15]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, the measured `params`
  // exactly (data/validation/notes-f15/glm4moe.md has the table).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f15-glm4moe"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 4);
}
