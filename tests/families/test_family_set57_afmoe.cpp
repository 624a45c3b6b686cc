// afmoe (family set 57): AfmoeForCausalLM (Arcee's Trinity Nano / Mini): gated attention with q / k RMSNorm over
// head_dim, rotary on the sliding layers only, sandwich norms around both blocks, a sigmoid token-choice router with
// an untrained expert_bias, shared experts. Written from the installed 5.17 modeling file without a device: the
// importer's class defaults, refusals naming the field, the layer pattern, the KV cache and the zoo entries'
// parameter counts, each derived by hand. The held-out rows (calibrate/cases/families57-input.jsonl) are predicted
// in data/validation/predictions/families57-holdout.json.
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

TEST_CASE("afmoe importer: class defaults", "[family][set57][importer]") {
  const TransformerSpec s = import(R"({"model_type": "afmoe"})");
  CHECK(s.model_type == "afmoe");
  CHECK(s.vocab_size == 200192);
  CHECK(s.hidden_size == 2048);
  CHECK(s.intermediate_size == 6144);
  CHECK(s.moe_intermediate_size == 1408);
  CHECK(s.num_layers == 32);
  CHECK(s.first_dense_layers == 1);
  CHECK(s.num_heads == 16);
  CHECK(s.num_kv_heads == 16);
  CHECK(s.head_dim == 128);
  CHECK(s.num_experts == 64);
  CHECK(s.num_experts_per_tok == 6);
  CHECK(s.num_shared_experts == 2);
  CHECK(s.sliding_window == 1024);
  CHECK(s.max_position_embeddings == 16384);
  CHECK(s.hidden_act == "silu");
  CHECK_FALSE(s.scale_embedding);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  // layer_types' default: sliding unless (i + 1) % global_attn_every_n_layers (4) == 0.
  REQUIRE(s.sliding_layers.size() == 32);
  for (size_t i = 0; i < 32; ++i) CHECK(s.sliding_layers[i] == ((i + 1) % 4 != 0 ? 1 : 0));
  const TransformerSpec z = import(R"({"model_type": "afmoe", "num_hidden_layers": 3, "global_attn_every_n_layers": 2,
      "mup_enabled": true, "num_key_value_heads": 4})");
  CHECK(z.scale_embedding);
  CHECK(z.num_kv_heads == 4);
  REQUIRE(z.sliding_layers.size() == 3);
  CHECK(z.sliding_layers[0] == 1);
  CHECK(z.sliding_layers[1] == 0);
  CHECK(z.sliding_layers[2] == 1);
  const TransformerSpec t = import(R"({"model_type": "afmoe", "num_hidden_layers": 2,
      "layer_types": ["full_attention", "sliding_attention"]})");
  CHECK(t.sliding_layers[0] == 0);
  CHECK(t.sliding_layers[1] == 1);
}

TEST_CASE("afmoe: refusals name the field", "[family][set57]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "afmoe", "num_hidden_layers": 4, "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "afmoe", "num_hidden_layers": 2, "layer_types": ["full_attention", "conv"]})",
       "config.layer_types[1]:"},
      {R"({"model_type": "afmoe", "num_dense_layers": null})", "config.num_dense_layers:"},
      {R"({"model_type": "afmoe", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "afmoe", "head_dim": 127})", "config.head_dim:"},
      {R"({"model_type": "afmoe", "num_shared_experts": null})", "config.num_shared_experts:"},
      {R"({"model_type": "afmoe", "num_experts": null})", "config.num_experts:"},
      {R"({"model_type": "afmoe", "num_experts_per_tok": 65})", "config.num_experts_per_tok:"},
      {R"({"model_type": "afmoe", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "afmoe", "global_attn_every_n_layers": null})", "config.global_attn_every_n_layers:"},
      {R"({"model_type": "afmoe", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "afmoe", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "afmoe", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // Dense everywhere (num_dense_layers >= layers): no expert key is read.
  CHECK_NOTHROW(import(R"({"model_type": "afmoe", "num_hidden_layers": 2, "num_dense_layers": 2, "num_experts": null})"));
}

TEST_CASE("afmoe: the KV cache of sliding and full layers, derived by hand", "[family][set57]") {
  // K and V [B, nkv, L, D] per layer, bf16; trinity-nano (56 layers, 2 KV heads of 128), B 2, prompt 700 < the
  // 2048 window: every layer keeps the whole prompt. 56 * 2 * 2 * 700 * 2 * 128 * 2 bytes.
  const ModelSpec nano = memplan::load_zoo_model("trinity-nano");
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 700;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(nano, cfg).inference.kv_cache_bytes == int64_t{56} * 2 * 2 * 700 * 2 * 128 * 2);
}

TEST_CASE("afmoe: parameter counts, derived by hand", "[family][set57]") {
  // Trinity-Mini (H 2048, V 200192, 32 heads / 4 KV heads of 128, dense 6144, 128 experts of 1024 top 8 + 1 shared,
  // 2 dense + 30 MoE layers): attention q 4096*2048 = 8,388,608 + k 512*2048 = 1,048,576 + v 1,048,576 + o
  // 8,388,608 + q_norm / k_norm 256 + gate_proj 8,388,608 = 27,263,232; four norms 8,192. Dense MLP 3*2048*6144 =
  // 37,748,736: a dense layer 65,020,160. MoE: router 128*2048 = 262,144, shared 3*2048*1024 = 6,291,456, experts
  // 128*3*1024*2048 = 805,306,368, expert_bias 128: 811,860,096; a MoE layer 839,131,520. 2 * 65,020,160 + 30 *
  // 839,131,520 = 25,303,985,920; embeddings and the untied head 2*200192*2048 = 819,986,432; final norm 2,048.
  CHECK(memplan::param_count(memplan::load_zoo_model("trinity-mini")) == 26'123'974'400);
  // Trinity-Nano (H 1024, 8 heads / 2 KV heads of 128, dense 3072, 128 experts of 256 top 8 + 1 shared, 2 dense +
  // 54 MoE): attention 1,048,576 + 262,144 + 262,144 + 1,048,576 + 256 + 1,048,576 = 3,670,272; norms 4,096; dense
  // 3*1024*3072 = 9,437,184 (a dense layer 13,111,552); MoE 131,072 + 786,432 + 100,663,296 + 128 = 101,580,928 (a
  // MoE layer 105,255,296). 26,223,104 + 5,683,785,984 + 2*200192*1024 = 409,993,216 + 1,024 = 6,120,003,328.
  CHECK(memplan::param_count(memplan::load_zoo_model("trinity-nano")) == 6'120'003'328);
}
