// qwen3_next, qwen3_5_text, qwen3_5_moe_text and the qwen3_5 / qwen3_5_moe wrappers (family set 19): importer
// defaults and refusals, parameter counts derived by hand, and the measured H200 cases (measured before the
// builder existed and used to write it; notes-f19/qwen35.md).
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

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
int64_t params_of(const std::string& text) {
  memplan::ModelSpec m;
  m.transformer = import(text);
  return memplan::param_count(m);
}

}  // namespace

TEST_CASE("qwen3_next importer: class defaults of transformers 5.17", "[family][set19]") {
  // Qwen3NextConfig: 151936 / 2048 / 5632 / 48 layers / 16 heads / 2 kv heads / head_dim 256, untied, 512 experts top
  // 10 of 512, shared expert 512, norm_topk_prob True, partial_rotary_factor 0.25 (64 of 256 dims), linear attention
  // 16 key / 32 value heads of 128, conv kernel 4, a full-attention layer every 4th.
  const TransformerSpec x = import(R"({"model_type": "qwen3_next"})");
  CHECK(x.model_type == "qwen3_next");
  CHECK(x.vocab_size == 151936);
  CHECK(x.hidden_size == 2048);
  CHECK(x.num_layers == 48);
  CHECK(x.num_heads == 16);
  CHECK(x.num_kv_heads == 2);
  CHECK(x.head_dim == 256);
  CHECK(x.rotary_dim == 64);
  CHECK_FALSE(x.tie_word_embeddings);
  CHECK(x.num_experts == 512);
  CHECK(x.num_experts_per_tok == 10);
  CHECK(x.moe_intermediate_size == 512);
  CHECK(x.shared_expert_intermediate_size == 512);
  CHECK(x.norm_topk_prob);
  CHECK(x.moe_layers == std::vector<uint8_t>(48, 1));
  CHECK(x.linear_num_key_heads == 16);
  CHECK(x.linear_num_value_heads == 32);
  CHECK(x.linear_key_head_dim == 128);
  CHECK(x.linear_value_head_dim == 128);
  CHECK(x.linear_conv_kernel == 4);
  REQUIRE(x.qwen3_next_linear_layers.size() == 48);
  CHECK(x.qwen3_next_linear_layers[0] == 1);
  CHECK(x.qwen3_next_linear_layers[3] == 0);
  CHECK(x.qwen3_next_linear_layers[47] == 0);
  // full_attention_interval 2; mlp_only_layers and decoder_sparse_step as Qwen2-MoE's.
  const TransformerSpec y = import(R"({"model_type": "qwen3_next", "num_hidden_layers": 4, "full_attention_interval": 2,
      "mlp_only_layers": [0], "partial_rotary_factor": 0.5})");
  CHECK(y.qwen3_next_linear_layers == std::vector<uint8_t>{1, 0, 1, 0});
  CHECK(y.moe_layers == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(y.rotary_dim == 128);
  // layer_types wins over full_attention_interval.
  CHECK(import(R"({"model_type": "qwen3_next", "num_hidden_layers": 2, "full_attention_interval": 2,
      "layer_types": ["full_attention", "linear_attention"]})").qwen3_next_linear_layers == std::vector<uint8_t>{0, 1});
}

TEST_CASE("qwen3_5 importers: class defaults and the wrappers' text_config", "[family][set19]") {
  // Qwen3_5TextConfig (Qwen3.5-9B): 248320 / 4096 / 12288 / 32 layers / 16 heads / 4 kv heads, no experts.
  const TransformerSpec t = import(R"({"model_type": "qwen3_5_text"})");
  CHECK(t.model_type == "qwen3_5_text");
  CHECK(t.vocab_size == 248320);
  CHECK(t.hidden_size == 4096);
  CHECK(t.intermediate_size == 12288);
  CHECK(t.num_layers == 32);
  CHECK(t.num_kv_heads == 4);
  CHECK(t.num_experts == 0);
  CHECK(t.moe_layers.empty());
  CHECK(t.rotary_dim == 64);
  // Qwen3_5MoeTextConfig (Qwen3.5-35B-A3B): 2048 hidden, 40 layers, 2 kv heads, 256 experts top 8, every layer
  // sparse, always renormalised.
  const TransformerSpec m = import(R"({"model_type": "qwen3_5_moe_text"})");
  CHECK(m.hidden_size == 2048);
  CHECK(m.num_layers == 40);
  CHECK(m.num_kv_heads == 2);
  CHECK(m.num_experts == 256);
  CHECK(m.num_experts_per_tok == 8);
  CHECK(m.norm_topk_prob);
  CHECK(m.moe_layers == std::vector<uint8_t>(40, 1));
  // The wrappers: text_config's decoder, built as the text type.
  const TransformerSpec w = import(R"({"model_type": "qwen3_5", "text_config": {"hidden_size": 5120,
      "num_attention_heads": 24, "linear_num_value_heads": 48, "num_hidden_layers": 64}})");
  CHECK(w.model_type == "qwen3_5_text");
  CHECK(w.hidden_size == 5120);
  CHECK(w.head_dim == 256);
  CHECK(w.linear_num_value_heads == 48);
  CHECK(import(R"({"model_type": "qwen3_5_moe"})").model_type == "qwen3_5_moe_text");
}

TEST_CASE("qwen3_next importers: bad values name their field", "[family][set19]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "qwen3_next", "num_hidden_layers": 2, "layer_types": ["linear_attention"]})",
       "config.layer_types:"},
      {R"({"model_type": "qwen3_next", "num_hidden_layers": 1, "layer_types": ["sliding_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "qwen3_next", "full_attention_interval": 0})", "config.full_attention_interval:"},
      {R"({"model_type": "qwen3_next", "linear_num_value_heads": 24})", "config.linear_num_value_heads:"},
      {R"({"model_type": "qwen3_next", "linear_conv_kernel_dim": 0})", "config.linear_conv_kernel_dim:"},
      {R"({"model_type": "qwen3_next", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "qwen3_next", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "qwen3_next", "num_experts_per_tok": 600})", "config.num_experts_per_tok:"},
      {R"({"model_type": "qwen3_next", "partial_rotary_factor": 0.001})", "config.partial_rotary_factor:"},
      {R"({"model_type": "qwen3_next", "attention_dropout": 0.1})", "config.attention_dropout:"},
      {R"({"model_type": "qwen3_next", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "qwen3_next", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
      {R"({"model_type": "qwen3_5_text", "head_dim": 63})", "config.head_dim:"},
      {R"({"model_type": "qwen3_5_moe_text", "num_experts_per_tok": 300})", "config.num_experts_per_tok:"},
      {R"({"model_type": "qwen3_5", "text_config": 3})", "config.text_config:"},
      {R"({"model_type": "qwen3_5", "text_config": {"linear_key_head_dim": -1}})",
       "config.text_config.linear_key_head_dim:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("qwen3_next parameter counts derived by hand", "[family][set19]") {
  // Qwen3-Next-80B-A3B's published widths (H 2048, V 151936 untied, 16 / 2 heads of 256, linear 16 / 32 heads of
  // 128, conv 4, 512 experts of 512, shared expert 512), two layers [linear, full]:
  //  embed + lm_head 2 * 151936 * 2048 = 622,329,856; final norm 2,048
  //  per layer: experts 512 * (2 * 512 * 2048 + 2048 * 512) = 1,610,612,736, router 512 * 2048 = 1,048,576,
  //    shared expert 3 * 512 * 2048 = 3,145,728, shared_expert_gate 2048, two norms 4,096: 1,614,813,184
  //  linear layer: in_proj_qkvz 2048 * (2 * 2048 + 2 * 4096) = 25,165,824, in_proj_ba 2048 * 64 = 131,072,
  //    conv1d 8192 * 4 = 32,768, dt_bias + A_log 64, norm 128, out_proj 4096 * 2048 = 8,388,608: 33,718,464
  //  full layer: q_proj 2048 * 8192 = 16,777,216, k / v 2 * 2048 * 512 = 2,097,152, o_proj 4096 * 2048 =
  //    8,388,608, q / k norms 512: 27,263,488
  //  total 622,329,856 + 2,048 + 2 * 1,614,813,184 + 33,718,464 + 27,263,488 = 3,912,940,224
  CHECK(params_of(R"({"model_type": "qwen3_next", "num_hidden_layers": 2, "intermediate_size": 5120,
      "layer_types": ["linear_attention", "full_attention"]})") == 3'912'940'224);
  // Qwen3.5-9B's widths (H 4096, V 248320, MLP 12288, 16 / 4 heads, linear 16 / 32 heads), four layers (3 + 1):
  //  embed + head 2 * 248320 * 4096 = 2,034,237,440; final norm 4,096
  //  per layer: MLP 3 * 4096 * 12288 = 150,994,944, norms 8,192
  //  linear: in_proj_qkv 4096 * 8192 = 33,554,432, in_proj_z 4096 * 4096 = 16,777,216, in_proj_b / a
  //    2 * 4096 * 32 = 262,144, conv 8192 * 4 = 32,768, dt_bias + A_log 64, norm 128, out_proj 16,777,216:
  //    67,403,968
  //  full: q 4096 * 8192 = 33,554,432, k / v 2 * 4096 * 1024 = 8,388,608, o 4096 * 4096 = 16,777,216, norms 512:
  //    58,720,768
  //  total 2,034,237,440 + 4,096 + 4 * 151,003,136 + 3 * 67,403,968 + 58,720,768 = 2,899,186,752
  CHECK(params_of(R"({"model_type": "qwen3_5_text", "num_hidden_layers": 4})") == 2'899'186'752);
}

TEST_CASE("qwen3_next / qwen3_5: measured H200 cases of family set 19", "[family][set19]") {
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f19-q3n", "f19-q35"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 6);
}
