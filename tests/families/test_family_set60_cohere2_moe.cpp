// cohere2_moe (family set 60): Cohere2MoeForCausalLM (Command A+), Cohere2's parallel layer (one norm, attention and
// MLP both reading it) with Mixtral's experts behind a router that takes the top k of the logits before its softmax
// (or sigmoid), optional shared experts averaged or summed in, a dense prefix (first_k_dense_replace) whose full
// attention still rotates (force_rope), and RMSNorm in place of the LayerNorm when rms_norm_eps is set. Written from
// the installed 5.17 modeling file without a device: the importer's class defaults, the per-layer patterns it
// derives, refusals naming the field, parameter counts and the KV cache derived by hand. The held-out rows
// (calibrate/cases/families60-input.jsonl) are predicted in data/validation/predictions/families60-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "engine/arch/decoders/moe/cohere2_moe_fields.h"
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

// Four layers: one dense prefix layer (MLP 192), three sparse ones (4 experts of 64, top 2, one shared expert), 4
// heads / 2 KV heads of 32, hidden 128, vocabulary 1000, tied, sliding_window 16.
const char* kSmall = R"({"model_type": "cohere2_moe", "vocab_size": 1000, "hidden_size": 128,
    "intermediate_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 32, "num_experts": 4, "num_experts_per_tok": 2, "num_shared_experts": 1, "first_k_dense_replace": 1,
    "prefix_dense_intermediate_size": 192, "sliding_window": 16, "rms_norm_eps": 1e-5})";

}  // namespace

TEST_CASE("cohere2_moe importer: class defaults", "[family][set60][importer]") {
  // Cohere2MoeConfig(): vocab 256000, hidden 8192, 40 layers of 64 heads (KV None => 64) of head_dim 128, 8 experts
  // of 22528, top 2, softmax router, no shared experts, every layer sparse, LayerNorm, window 4096 on three layers
  // of four (the fourth, eighth, ... full, unrotated), tied.
  const TransformerSpec s = import(R"({"model_type": "cohere2_moe"})");
  CHECK(s.model_type == "cohere2_moe");
  CHECK(s.vocab_size == 256000);
  CHECK(s.hidden_size == 8192);
  CHECK(s.num_layers == 40);
  CHECK(s.num_heads == 64);
  CHECK(s.num_kv_heads == 64);
  CHECK(s.head_dim == 128);
  CHECK(s.moe_intermediate_size == 22528);
  CHECK(s.num_experts == 8);
  CHECK(s.num_experts_per_tok == 2);
  CHECK(s.num_shared_experts == 0);
  CHECK(s.shared_expert_intermediate_size == 0);
  CHECK_FALSE(memplan::family_fields<memplan::Cohere2MoeFields>(s).sigmoid_router);  // expert_selection_fn "softmax"
  CHECK_FALSE(memplan::family_fields<memplan::Cohere2MoeFields>(s).shared_sum);      // shared_expert_combination_strategy "average"
  CHECK(s.norm_topk_prob);
  CHECK_FALSE(memplan::family_fields<memplan::Cohere2MoeFields>(s).rms_norm);
  CHECK(s.sliding_window == 4096);
  CHECK(s.max_position_embeddings == 8192);
  CHECK(s.tie_word_embeddings);
  REQUIRE(s.sliding_layers.size() == 40);
  for (size_t i = 0; i < 40; ++i) {
    CAPTURE(i);
    CHECK(s.sliding_layers[i] == ((i + 1) % 4 != 0 ? 1 : 0));
    CHECK(s.rope_layers[i] == s.sliding_layers[i]);  // no dense layer: only the sliding ones rotate
    CHECK(s.moe_layers[i] == 1);
  }
}

TEST_CASE("cohere2_moe importer: first_k_dense_replace, force_rope and the shifted sliding pattern",
          "[family][set60][importer]") {
  // first_k_dense_replace 1: layer 0 is dense and, with prefix_dense_sliding_window_pattern 1, full attention
  // ((0 + 1) % 1 == 0) yet rotated (force_rope); the sparse layers count from 0 again: j = 0, 1, 2 slide.
  const TransformerSpec s = import(kSmall);
  CHECK(s.sliding_layers == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(s.moe_layers == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(s.rope_layers == std::vector<uint8_t>{1, 1, 1, 1});
  CHECK(s.intermediate_size == 192);      // the dense prefix's MLP
  CHECK(s.moe_intermediate_size == 64);   // each routed expert
  CHECK(s.shared_expert_intermediate_size == 64);
  CHECK(memplan::family_fields<memplan::Cohere2MoeFields>(s).rms_norm);
  // prefix pattern 2: the dense layer slides ((0 + 1) % 2 != 0) and no longer forces the rotation (it rotates as a
  // sliding layer).
  const TransformerSpec p2 = import(R"({"model_type": "cohere2_moe", "num_hidden_layers": 6, "first_k_dense_replace": 2,
      "prefix_dense_sliding_window_pattern": 2})");
  CHECK(p2.sliding_layers == std::vector<uint8_t>{1, 0, 1, 1, 1, 0});
  CHECK(p2.rope_layers == std::vector<uint8_t>{1, 0, 1, 1, 1, 0});
  CHECK(p2.moe_layers == std::vector<uint8_t>{0, 0, 1, 1, 1, 1});
  CHECK(p2.intermediate_size == 22528);  // prefix_dense_intermediate_size None => intermediate_size
  const TransformerSpec sig = import(R"({"model_type": "cohere2_moe", "num_shared_experts": 2,
      "expert_selection_fn": "sigmoid", "shared_expert_combination_strategy": "sum", "intermediate_size": 100})");
  CHECK(memplan::family_fields<memplan::Cohere2MoeFields>(sig).sigmoid_router);
  CHECK(memplan::family_fields<memplan::Cohere2MoeFields>(sig).shared_sum);
  CHECK(sig.shared_expert_intermediate_size == 200);
}

TEST_CASE("cohere2_moe: refusals name the field", "[family][set60]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "cohere2_moe", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "cohere2_moe", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "cohere2_moe", "expert_selection_fn": "relu"})", "config.expert_selection_fn:"},
      {R"({"model_type": "cohere2_moe", "num_shared_experts": 1, "shared_expert_combination_strategy": "max"})",
       "config.shared_expert_combination_strategy:"},
      {R"({"model_type": "cohere2_moe", "num_experts": 4, "num_experts_per_tok": 5})", "config.num_experts_per_tok:"},
      {R"({"model_type": "cohere2_moe", "num_hidden_layers": 2, "mlp_layer_types": ["dense"]})",
       "config.mlp_layer_types:"},
      {R"({"model_type": "cohere2_moe", "num_hidden_layers": 2, "layer_types": ["full_attention"]})",
       "config.layer_types:"},
      {R"({"model_type": "cohere2_moe", "sliding_window_pattern": null})", "config.sliding_window_pattern:"},
      {R"({"model_type": "cohere2_moe", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "cohere2_moe", "logit_scale": "big"})", "config.logit_scale:"},
      {R"({"model_type": "cohere2_moe", "num_hidden_layers": 2, "first_k_dense_replace": 3})",
       "config.first_k_dense_replace:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // An all-dense model never reaches the router or the combination: neither is checked.
  CHECK_NOTHROW(import(R"({"model_type": "cohere2_moe", "num_hidden_layers": 2, "mlp_layer_types": ["dense", "dense"],
      "expert_selection_fn": "relu"})"));
}

TEST_CASE("cohere2_moe: parameter counts and the KV cache, derived by hand", "[family][set60]") {
  // kSmall: embeddings 1000 x 128 = 128,000 (tied). Attention q / o 128 x 128, k / v 128 x 64: 49,152 a layer.
  // Layer 0: MLP 3 x 192 x 128 = 73,728, norm 128: 123,008. Sparse layers: router 4 x 128 = 512, experts
  // 4 x 3 x 64 x 128 = 98,304, shared 3 x 64 x 128 = 24,576, norm 128: 172,672 each, x 3 = 518,016.
  // 128,000 + 123,008 + 518,016 + 128 (final norm) = 769,152.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  CHECK(memplan::param_count(m) == 769'152);
  // cohere2-moe-defaults (Cohere2MoeConfig()): 256000 x 8192 = 2,097,152,000; per layer 4 x 8192^2 = 268,435,456
  // attention, 8 x 3 x 22528 x 8192 = 4,429,185,024 experts, 65,536 router, 8192 norm: 4,697,694,208, x 40 =
  // 187,907,768,320; + 8192 final norm = 190,004,928,512.
  CHECK(memplan::param_count(memplan::load_zoo_model("cohere2-moe-defaults")) == 190'004'928'512);
  // generate() from a 10-token prompt, B 2, bf16: every layer holds K and V [2, 2, 10, 32] (the prompt is below the
  // window of 16): 2 x 2,560 bytes x 4 layers = 20,480.
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 10;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 20'480);
  // Every precision and both attention implementations build, training and checkpointed.
  RunConfig t;
  t.batch_size = 2;
  t.seq_len = 40;  // above the window: the sliding mask is materialised
  for (auto prec : {memplan::Precision::amp_bf16, memplan::Precision::bf16, memplan::Precision::fp32}) {
    t.precision = prec;
    t.attn = memplan::AttnImpl::sdpa;
    CHECK_NOTHROW(memplan::estimate(m, t));
    t.attn = memplan::AttnImpl::eager;
    CHECK_NOTHROW(memplan::estimate(m, t));
  }
}
