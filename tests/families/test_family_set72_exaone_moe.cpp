// exaone_moe (family set 72): ExaoneMoeForCausalLM (LG K-EXAONE), Exaone4Attention (qk-normed heads, rotary on the
// sliding layers only) in OlmoeDecoderLayer's pre-norm layer, with ExaoneMoeMLP where mlp_layer_types says "dense"
// and DeepseekV3MoE (noaux_tc router, grouped_mm experts, shared experts) where it says "sparse". Written from the
// installed 5.17 modeling file without a device: the importer's class defaults, refusals naming the field, the KV
// cache and the parameter counts, each derived by hand. The held-out rows (calibrate/cases/families72-input.jsonl)
// are predicted in data/validation/predictions/families72-holdout.json.
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

// Four layers (sliding, sliding, sliding, full by the default pattern 4; dense, sparse, sparse, sparse by the
// default first_k_dense_replace 1), 4 heads x 32 over 2 KV heads, dense intermediate 512, 4 experts of 64 (top 2)
// + 1 shared, window 128, vocabulary 1000.
const char* kSmall = R"({"model_type": "exaone_moe", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
    "moe_intermediate_size": 64, "num_experts": 4, "num_experts_per_tok": 2, "num_shared_experts": 1,
    "sliding_window": 128})";

}  // namespace

TEST_CASE("exaone_moe importer: class defaults", "[family][set72][importer]") {
  // ExaoneMoeConfig(): Exaone4Config's fields (102400 / 4096 / 16384 / 32 layers / 32 heads / 32 kv, head_dim
  // hidden // heads, window 4096 on three layers of four), 64 experts of 1024 top 8, one shared expert, noaux_tc
  // over n_group 1 / topk_group 1, norm_topk_prob, first_k_dense_replace 1 (layer 0 dense), eos 53.
  const TransformerSpec s = import(R"({"model_type": "exaone_moe"})");
  CHECK(s.model_type == "exaone_moe");
  CHECK(s.vocab_size == 102400);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 16384);
  CHECK(s.num_layers == 32);
  CHECK(s.num_heads == 32);
  CHECK(s.num_kv_heads == 32);
  CHECK(s.head_dim == 128);
  CHECK(s.sliding_window == 4096);
  REQUIRE(s.sliding_layers.size() == 32);
  CHECK(s.sliding_layers[0] == 1);
  CHECK(s.sliding_layers[3] == 0);
  CHECK(s.moe_intermediate_size == 1024);
  CHECK(s.num_experts == 64);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.num_shared_experts == 1);
  CHECK(s.moe_topk_method == "noaux_tc");
  CHECK(s.moe_n_group == 1);
  CHECK(s.moe_topk_group == 1);
  CHECK(s.moe_norm_topk_prob);
  REQUIRE(s.moe_layers.size() == 32);
  CHECK(s.moe_layers[0] == 0);
  CHECK(s.moe_layers[1] == 1);
  CHECK(s.moe_layers[31] == 1);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.generate_without_eos);
  // first_k_dense_replace, and mlp_layer_types over it; a pattern string with layer_types given (K-EXAONE's).
  CHECK(import(R"({"model_type": "exaone_moe", "num_hidden_layers": 3, "first_k_dense_replace": 2})").moe_layers ==
        std::vector<uint8_t>{0, 0, 1});
  CHECK(import(R"({"model_type": "exaone_moe", "num_hidden_layers": 3, "first_k_dense_replace": 2,
      "mlp_layer_types": ["sparse", "dense", "sparse"]})").moe_layers == std::vector<uint8_t>{1, 0, 1});
  CHECK(import(R"({"model_type": "exaone_moe", "num_hidden_layers": 2, "sliding_window_pattern": "LG",
      "layer_types": ["sliding_attention", "full_attention"]})").sliding_layers == std::vector<uint8_t>{1, 0});
}

TEST_CASE("exaone_moe: refusals name the field", "[family][set72]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "exaone_moe", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "exaone_moe", "sliding_window_pattern": "LLLG"})", "config.sliding_window_pattern:"},
      {R"({"model_type": "exaone_moe", "num_experts": null})", "config.num_experts:"},
      {R"({"model_type": "exaone_moe", "num_shared_experts": 0})", "config.num_shared_experts:"},
      {R"({"model_type": "exaone_moe", "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "exaone_moe", "num_experts_per_tok": 65})", "config.num_experts_per_tok:"},
      {R"({"model_type": "exaone_moe", "num_hidden_layers": 2, "mlp_layer_types": ["dense"]})",
       "config.mlp_layer_types:"},
      {R"({"model_type": "exaone_moe", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "exaone_moe", "quantization_config": {"bits": 4}})", "config.quantization_config:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("exaone_moe: the KV cache, derived by hand", "[family][set72]") {
  // Per layer key_states and value_states [B, 2, L, 32] (the full layer caches the unrotated keys, the sliding ones
  // the rotated keys: same size); the prompt (100) is inside the window (128), so every layer keeps it all. B 2,
  // bf16: 2 x 25,600 bytes a layer, x 4 layers = 204,800.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 204'800);
}

TEST_CASE("exaone_moe: parameter counts, derived by hand", "[family][set72]") {
  // kSmall per layer: q 256 x 128 = 32,768, k and v 256 x 64 = 16,384 each, o 128 x 256 = 32,768, q_norm / k_norm
  // 2 x 32, norms 2 x 256: 98,880; layer 0's MLP 3 x 256 x 512 = 393,216; each sparse layer's experts
  // 4 x 3 x 256 x 64 = 196,608, router 4 x 256 = 1,024, shared 3 x 256 x 64 = 49,152: 246,784.
  // 4 x 98,880 + 393,216 + 3 x 246,784 + 2 x 1000 x 256 (untied) + 256 = 2,041,344.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 2'041'344);
  // k-exaone-236b-a23b: 48 x (113,246,208 attention (q 6144 x 8192, k / v 6144 x 1024, o 8192 x 6144) + 256 qk
  // norms + 12,288 norms) + 339,738,624 (layer 0's MLP, 3 x 6144 x 18432) + 47 x 4,870,373,376 (experts
  // 128 x 3 x 6144 x 2048, router 128 x 6144, shared 3 x 6144 x 2048) + 2 x 153600 x 6144 + 6,144
  // = 236,571,150,336 (the model card's "236B"; its 237.10 B adds the MTP block, which from_config does not build).
  CHECK(memplan::param_count(memplan::load_zoo_model("k-exaone-236b-a23b")) == 236'571'150'336);
  // Training builds with every attention and precision path the cases use.
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 300;
  cfg.precision = memplan::Precision::amp_bf16;
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.attn = memplan::AttnImpl::eager;
  cfg.grad_checkpointing = true;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
}
