// hy_v3 (family set 71): HYV3ForCausalLM (Tencent Hy3), pre-norm layers with qk-normed heads (rotary on every
// layer) and HYV3MLP where mlp_layer_types says "dense", HYV3MoE (sigmoid top-k router with an fp32 expert bias, no
// groups, grouped_mm experts, a shared MLP, the fp32 combine) where it says "sparse". Written from the installed
// 5.17 modeling file without a device: the importer's class defaults, refusals naming the field, the KV cache and
// the parameter counts, each derived by hand. The held-out rows (calibrate/cases/families71-input.jsonl) are
// predicted in data/validation/predictions/families71-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "engine/arch/decoders/moe/hy_v3_fields.h"
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

// Three layers (dense, sparse, sparse by the default mlp_layer_types), 4 heads x 32 over 2 KV heads, dense
// intermediate 512, 4 experts of 64 (top 2) + 1 shared, vocabulary 1000.
const char* kSmall = R"({"model_type": "hy_v3", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
    "moe_intermediate_size": 64, "num_experts": 4, "num_experts_per_tok": 2, "num_shared_experts": 1})";

std::string with(const std::string& extra) {  // kSmall with more keys (none of kSmall's own)
  std::string s = kSmall;
  return s.substr(0, s.size() - 1) + ", " + extra + "}";
}

// kSmall without shared experts.
const char* kNoShared = R"({"model_type": "hy_v3", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
    "moe_intermediate_size": 64, "num_experts": 4, "num_experts_per_tok": 2, "num_shared_experts": 0})";

}  // namespace

TEST_CASE("hy_v3 importer: class defaults", "[family][set71][importer]") {
  // HYV3Config(): Hy3-preview's widths (120832 / 4096 / 13312 / 80 layers / 64 heads / 8 kv / head_dim 128), 192
  // experts of 1536 top 8 (attribute_map num_local_experts), one shared expert, layer 0 dense, the fp32 combine,
  // no biases, eos_token_id None.
  const TransformerSpec s = import(R"({"model_type": "hy_v3"})");
  CHECK(s.model_type == "hy_v3");
  CHECK(s.vocab_size == 120832);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 13312);
  CHECK(s.num_layers == 80);
  CHECK(s.num_heads == 64);
  CHECK(s.num_kv_heads == 8);
  CHECK(s.head_dim == 128);
  CHECK(s.rotary_dim == 128);
  CHECK(s.max_position_embeddings == 131072);
  CHECK(s.moe_intermediate_size == 1536);
  CHECK(s.num_experts == 192);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.num_shared_experts == 1);
  REQUIRE(s.moe_layers.size() == 80);
  CHECK(s.moe_layers[0] == 0);
  CHECK(s.moe_layers[1] == 1);
  CHECK(s.moe_layers[79] == 1);
  CHECK(s.sliding_window == 0);
  CHECK_FALSE(s.attention_bias);
  CHECK_FALSE(s.mlp_bias);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK(s.generate_without_eos);
  CHECK(memplan::family_fields<memplan::HyV3Fields>(s).moe_fp32_combine);
  CHECK_FALSE(memplan::family_fields<memplan::HyV3Fields>(import(R"({"model_type": "hy_v3",
      "enable_moe_fp32_combine": false})")).moe_fp32_combine);
  CHECK(import(R"({"model_type": "hy_v3", "num_local_experts": 16})").num_experts == 16);
  CHECK(import(R"({"model_type": "hy_v3", "num_hidden_layers": 3, "mlp_layer_types": ["sparse", "dense", "sparse"]})")
            .moe_layers == std::vector<uint8_t>{1, 0, 1});
  // A spec without the family's values (built by hand) is refused by the builder, naming model_type.
  TransformerSpec bare = import(kSmall);
  bare.family_fields.reset();
  memplan::ModelSpec m = memplan::testing::model_of_config(kSmall);
  m.transformer = bare;
  RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 16;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "model_type:"));
}

TEST_CASE("hy_v3: refusals name the field", "[family][set71]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "hy_v3", "num_experts": null})", "config.num_experts:"},
      {R"({"model_type": "hy_v3", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "hy_v3", "num_experts": 4, "num_experts_per_tok": 8})", "config.num_experts_per_tok:"},
      {R"({"model_type": "hy_v3", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "hy_v3", "rope_parameters": {"rope_type": "longrope"}})", "config.rope_parameters.rope_type:"},
      {R"({"model_type": "hy_v3", "num_hidden_layers": 2, "mlp_layer_types": ["dense"]})", "config.mlp_layer_types:"},
      {R"({"model_type": "hy_v3", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "hy_v3", "num_key_value_heads": 7})", "config.num_key_value_heads:"},
      {R"({"model_type": "hy_v3", "quantization_config": {"bits": 4}})", "config.quantization_config:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("hy_v3: the KV cache, derived by hand", "[family][set71]") {
  // Per layer key_states and value_states [B, 2, L, 32] (the rotated keys). B 2, prompt 100, bf16: 2 x 25,600
  // bytes a layer, x 3 layers = 153,600.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 153'600);
}

TEST_CASE("hy_v3: parameter counts, derived by hand", "[family][set71]") {
  // kSmall per layer: q 256 x 128 = 32,768, k and v 256 x 64 = 16,384 each, o 128 x 256 = 32,768, q_norm / k_norm
  // 2 x 32, norms 2 x 256: 98,880; layer 0's MLP 3 x 256 x 512 = 393,216; each sparse layer's router 4 x 256 =
  // 1,024, experts 4 x 3 x 256 x 64 = 196,608, shared 3 x 256 x 64 = 49,152: 246,784.
  // 3 x 98,880 + 393,216 + 2 x 246,784 + 2 x 1000 x 256 (untied) + 256 = 1,695,680.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'695'680);
  // attention_bias (q 128 + k 64 + v 64 + o 256 a layer) and mlp_bias (512 + 512 + 256 on layer 0, 64 + 64 + 256 on
  // each shared MLP): + 3 x 512 + 1,280 + 2 x 384 = 1,699,264.
  CHECK(memplan::param_count(memplan::testing::model_of_config(with(R"("attention_bias": true, "mlp_bias": true)"))) ==
        1'699'264);
  // num_shared_experts 0: HYV3MLP's `intermediate_size or config.intermediate_size` makes the shared MLP 512 wide:
  // + 2 x (393,216 - 49,152) = 2,383,808.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kNoShared)) == 2'383'808);
  // hy-v3-defaults: 80 x (75,497,472 attention (q 4096 x 8192, k / v 4096 x 1024, o 8192 x 4096) + 256 qk norms +
  // 8,192 norms) + 163,577,856 (layer 0's MLP, 3 x 4096 x 13312) + 79 x 3,643,539,456 (router 192 x 4096, experts
  // 192 x 3 x 4096 x 1536, shared 3 x 4096 x 1536) + 2 x 120832 x 4096 + 4,096 = 295,033,528,320 (the model card's
  // "295B"; its MTP layer is not built by from_config).
  CHECK(memplan::param_count(memplan::load_zoo_model("hy-v3-defaults")) == 295'033'528'320);
  // Training builds with every attention and precision path the cases use.
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 64;
  cfg.precision = memplan::Precision::amp_bf16;
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.attn = memplan::AttnImpl::eager;
  cfg.grad_checkpointing = true;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.precision = memplan::Precision::bf16;
  CHECK_NOTHROW(memplan::estimate(memplan::testing::model_of_config(with(R"("enable_moe_fp32_combine": false)")), cfg));
}
