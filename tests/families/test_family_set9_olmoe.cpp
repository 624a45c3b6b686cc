// olmoe (family set 9): importer defaults and refusals, the published checkpoint's parameter count derived by
// hand, the clip_qkv mechanism, and the measured H200 cases (measured before the builder existed and used to
// write it).
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

// The shape of the measured rows (2 layers of OLMoE-1B-7B's width).
const char* kSmall = R"({"model_type": "olmoe", "hidden_size": 2048, "intermediate_size": 1024,
    "num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 64,
    "num_experts_per_tok": 8, "vocab_size": 50304)";

}  // namespace

TEST_CASE("olmoe importer: OlmoeConfig defaults of transformers 5.17", "[family][set9]") {
  // 50304 / 2048 / intermediate 2048 (each expert's width) / 16 layers / 16 heads, kv None => heads, 8 of 64
  // experts, no renormalisation, clip_qkv None, untied, 4096 positions; every layer sparse.
  const TransformerSpec s = import(R"({"model_type": "olmoe"})");
  CHECK(s.vocab_size == 50304);
  CHECK(s.hidden_size == 2048);
  CHECK(s.intermediate_size == 2048);
  CHECK(s.moe_intermediate_size == 2048);
  CHECK(s.num_layers == 16);
  CHECK(s.num_heads == 16);
  CHECK(s.num_kv_heads == 16);
  CHECK(s.head_dim == 128);
  CHECK(s.num_experts == 64);
  CHECK(s.num_experts_per_tok == 8);
  CHECK_FALSE(s.norm_topk_prob);
  CHECK_FALSE(s.clip_qkv);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK(s.max_position_embeddings == 4096);
  CHECK(s.moe_layers == std::vector<uint8_t>(16, 1));
  // num_local_experts is OlmoeConfig's alias of num_experts; clip_qkv null is None; GQA keeps the heads.
  const TransformerSpec a = import(R"({"model_type": "olmoe", "num_local_experts": 32, "clip_qkv": null,
      "num_key_value_heads": 4, "norm_topk_prob": true, "intermediate_size": 512})");
  CHECK(a.num_experts == 32);
  CHECK_FALSE(a.clip_qkv);
  CHECK(a.num_kv_heads == 4);
  CHECK(a.norm_topk_prob);
  CHECK(a.moe_intermediate_size == 512);
  CHECK(import(R"({"model_type": "olmoe", "clip_qkv": 8.0})").clip_qkv);
}

TEST_CASE("olmoe importer: bad values name their field", "[family][set9]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      // q_norm is over hidden_size: heads * head_dim must equal it.
      {R"({"model_type": "olmoe", "head_dim": 64})", "config.head_dim:"},
      {R"({"model_type": "olmoe", "hidden_size": 2050})", "config.num_attention_heads:"},
      {R"({"model_type": "olmoe", "num_experts_per_tok": 65})", "config.num_experts_per_tok:"},
      {R"({"model_type": "olmoe", "num_experts": 0})", "config.num_experts:"},
      {R"({"model_type": "olmoe", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "olmoe", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "olmoe", "clip_qkv": "8"})", "config.clip_qkv:"},
      {R"({"model_type": "olmoe", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "olmoe", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("olmoe parameter count: the published checkpoint, derived by hand", "[family][set9]") {
  // OlmoeForCausalLM registers, per layer: q, k, v, o [H, H] (no biases) = 4 * 2048^2 = 16,777,216;
  // q_norm [H] and k_norm [(H / heads) * kv] = 2048 + 2048; the router mlp.gate [E, H] = 64 * 2048 = 131,072;
  // experts gate_up_proj [E, 2I, H] + down_proj [E, H, I] = 64 * 3 * 1024 * 2048 = 402,653,184;
  // input_layernorm and post_attention_layernorm 2 * 2048: 419,569,664 per layer.
  // Model: embed_tokens V*H = 50304 * 2048 = 103,022,592, the untied lm_head the same, the final norm 2048.
  // allenai/OLMoE-1B-7B-0924 (16 layers): 2 * 103,022,592 + 16 * 419,569,664 + 2048 = 6,919,161,856 (the brief
  // quoted 6,919,157,760 from memory, 4096 fewer; the derivation from the config is what the test holds).
  CHECK(memplan::param_count(memplan::load_zoo_model("olmoe-1b-7b")) == 6'919'161'856);
  // The measured rows' shape (2 layers): 2 * 103,022,592 + 2 * 419,569,664 + 2048 = 1,045,186,560, the sum of
  // p.numel() the H200 harness recorded (check_family_cases checks it against the measurement as well).
  CHECK(memplan::param_count(import(std::string(kSmall) + "}")) == 1'045'186'560);
}

TEST_CASE("olmoe clip_qkv: each in-place clamp_ saves a clone of its input for backward", "[family][set9]") {
  // In a bf16 training step with MHA, clip_qkv adds per layer three [B, S, H] bf16 clones (query, key, value
  // before the clamp) that live from the forward to their ClampBackward: after the forward, 3 * L * B * S * H * 2
  // bytes more are allocated than without it; inference allocates nothing for the in-place clamps.
  memplan::ModelSpec plain, clipped;
  plain.kind = clipped.kind = memplan::ModelSpec::Kind::transformer;
  plain.transformer = import(std::string(kSmall) + "}");
  clipped.transformer = import(std::string(kSmall) + R"(, "clip_qkv": 8.0})");
  plain.name = clipped.name = "olmoe";
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 2048;
  cfg.precision = memplan::Precision::bf16;
  const auto with = memplan::estimate(clipped, cfg), without = memplan::estimate(plain, cfg);
  REQUIRE(with.replay.steps.size() == without.replay.steps.size());
  REQUIRE_FALSE(with.replay.steps.empty());
  const int64_t clones = int64_t{3} * 2 * 1 * 2048 * 2048 * 2;
  for (size_t i = 0; i < with.replay.steps.size(); ++i)
    CHECK(with.replay.steps[i].after_fwd - without.replay.steps[i].after_fwd == clones);
  cfg.mode = memplan::Mode::inference;
  cfg.generate_tokens = 4;
  CHECK(memplan::estimate(clipped, cfg).torch_peak_allocated_bytes() ==
        memplan::estimate(plain, cfg).torch_peak_allocated_bytes());
}

TEST_CASE("olmoe: measured H200 cases of family set 9", "[family][set9]") {
  // Peak allocated within 0.1 % per case (bf16 and amp + checkpointing exact; the inference row -0.07 %: the two
  // [B, V] fp32 score tensors generate()'s second logits processor keeps, shared generate() code, see
  // data/validation/notes-f9/olmoe.md), reserved within 1 % (all 0.00 %), the KV cache within 1 %, the measured
  // `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f9-olmoe-"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 3);
}
