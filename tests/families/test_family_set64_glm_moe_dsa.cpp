// glm_moe_dsa (family set 64): GlmMoeDsaForCausalLM (GLM-5), DeepSeek-V3.2's decoder (MLA, the DSA lightning indexer
// under torch.no_grad(), the noaux_tc MoE) with the indexer's interleaved rotary and cross-layer top-k sharing
// (config.indexer_types: a "shared" layer has no indexer and reuses the previous full layer's top-k). Written from
// the installed 5.17 modeling file without a device: the importer's class defaults and its indexer schedules,
// refusals naming the field, the KV cache (no indexer keys for a shared layer), the indexer weights left out of the
// optimizer, the zoo entry's parameter count, each derived by hand. The held-out rows
// (calibrate/cases/families64-input.jsonl) are predicted in data/validation/predictions/families64-holdout.json.
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

// Three layers (one dense, two MoE of 4 experts), 4 heads of nope 64 + rope 32, v 64, an indexer of 2 heads x 128
// keeping 64 keys; layer 1 reuses layer 0's top-k.
const char* kSmall = R"({"model_type": "glm_moe_dsa", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "moe_intermediate_size": 128, "num_hidden_layers": 3, "num_attention_heads": 4,
    "num_key_value_heads": 4, "q_lora_rank": 96, "kv_lora_rank": 64, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
    "v_head_dim": 64, "n_routed_experts": 4, "n_group": 1, "topk_group": 1, "num_experts_per_tok": 2,
    "first_k_dense_replace": 1, "index_n_heads": 2, "index_head_dim": 128, "index_topk": 64,
    "indexer_types": ["full", "shared", "full"]})";

std::string with_layers(int layers, const std::string& extra) {
  return R"({"model_type": "glm_moe_dsa", "num_hidden_layers": )" + std::to_string(layers) + extra + "}";
}

}  // namespace

TEST_CASE("glm_moe_dsa importer: class defaults", "[family][set64][importer]") {
  // GlmMoeDsaConfig(): GLM-5's widths, 202752 positions, index 32 heads x 128, top 2048, 3 dense layers, every
  // indexer full (index_topk_freq 1).
  const TransformerSpec s = import(R"({"model_type": "glm_moe_dsa"})");
  CHECK(s.model_type == "glm_moe_dsa");
  CHECK(s.vocab_size == 154880);
  CHECK(s.hidden_size == 6144);
  CHECK(s.intermediate_size == 12288);
  CHECK(s.moe_intermediate_size == 2048);
  CHECK(s.num_layers == 78);
  CHECK(s.num_heads == 64);
  CHECK(s.num_kv_heads == 64);
  CHECK(s.num_experts == 256);
  CHECK(s.num_shared_experts == 1);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.moe_n_group == 1);
  CHECK(s.moe_topk_group == 1);
  CHECK(s.first_dense_layers == 3);
  CHECK(s.kv_lora_rank == 512);
  CHECK(s.q_lora_rank == 2048);
  CHECK(s.qk_nope_head_dim == 192);
  CHECK(s.qk_rope_head_dim == 64);
  CHECK(s.v_head_dim == 256);
  CHECK(s.max_position_embeddings == 202752);
  CHECK(s.moe_topk_method == "noaux_tc");
  CHECK(s.moe_norm_topk_prob);
  CHECK(s.rope_interleave);
  CHECK(s.index_n_heads == 32);
  CHECK(s.index_head_dim == 128);
  CHECK(s.index_topk == 2048);
  CHECK(s.index_shared_layers.empty());
  CHECK(s.moe_layers.empty());
  CHECK_FALSE(s.tie_word_embeddings);
}

TEST_CASE("glm_moe_dsa importer: the indexer schedule", "[family][set64][importer]") {
  using V = std::vector<uint8_t>;
  // indexer_types as given ("shared" -> 1)
  CHECK(import(with_layers(3, R"(, "indexer_types": ["full", "shared", "full"])")).index_shared_layers == V{0, 1, 0});
  // index_topk_pattern, a string of F / S
  CHECK(import(with_layers(4, R"(, "index_topk_pattern": "FSSF")")).index_shared_layers == V{0, 1, 1, 0});
  // index_topk_freq 4, offset 2 (default): full where max(i - 1, 0) % 4 == 0 -> layers 0, 1, 5, 9
  CHECK(import(with_layers(10, R"(, "index_topk_freq": 4)")).index_shared_layers ==
        V{0, 0, 1, 1, 1, 0, 1, 1, 1, 0});
  // offset 0: max(i + 1, 0) % 2 == 0 -> layers 1, 3 full, layer 0 shared: refused (no previous top-k)
  CHECK(starts_with(error_of([] { import(with_layers(4, R"(, "index_topk_freq": 2, "index_skip_topk_offset": 0)")); }),
                    "config.indexer_types[0]:"));
  // all full: no list kept
  CHECK(import(with_layers(3, R"(, "indexer_types": ["full", "full", "full"])")).index_shared_layers.empty());
  // mlp_layer_types read when present
  CHECK(import(with_layers(3, R"(, "mlp_layer_types": ["dense", "sparse", "dense"])")).moe_layers == V{0, 1, 0});
}

TEST_CASE("glm_moe_dsa: refusals name the field", "[family][set64]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "glm_moe_dsa", "q_lora_rank": null})", "config.q_lora_rank:"},
      {R"({"model_type": "glm_moe_dsa", "index_head_dim": 64})", "config.index_head_dim:"},  // = qk_rope_head_dim
      {R"({"model_type": "glm_moe_dsa", "index_topk": 0})", "config.index_topk:"},
      {R"({"model_type": "glm_moe_dsa", "num_hidden_layers": 2, "indexer_types": ["shared", "full"]})",
       "config.indexer_types[0]:"},
      {R"({"model_type": "glm_moe_dsa", "num_hidden_layers": 2, "indexer_types": ["full", "sparse"]})",
       "config.indexer_types[1]:"},
      {R"({"model_type": "glm_moe_dsa", "num_hidden_layers": 3, "indexer_types": ["full"]})", "config.indexer_types:"},
      {R"({"model_type": "glm_moe_dsa", "num_hidden_layers": 2, "index_topk_pattern": "FX"})",
       "config.index_topk_pattern:"},
      {R"({"model_type": "glm_moe_dsa", "num_hidden_layers": 2, "mlp_layer_types": ["dense", "moe"]})",
       "config.mlp_layer_types[1]:"},
      {R"({"model_type": "glm_moe_dsa", "num_hidden_layers": 2, "layer_types": ["full_attention", "full_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "glm_moe_dsa", "quantization_config": {"quant_method": "fp8"}})", "config.quantization_config:"},
      {R"({"model_type": "glm_moe_dsa", "n_group": 3})", "config.n_group:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("glm_moe_dsa: a shared layer caches no indexer keys, derived by hand", "[family][set64]") {
  // Per layer: the expanded key_states [B, 4, L, 96] and value_states [B, 4, L, 64]; the indexer keys [B, L, 128]
  // only in the two full layers (a shared layer has no indexer and never calls update_indexer). B 2, prompt 100,
  // bf16: 3 x (153,600 + 102,400) + 2 x 51,200 = 870,400 bytes.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 870'400);
}

TEST_CASE("glm_moe_dsa: the full layers' indexer weights get no gradient, a shared layer has none", "[family][set64]") {
  // wq_b [256, 96], wk [128, 256], k_norm weight + bias [128], weights_proj [2, 256]: 58,112 a full layer, in two of
  // the three layers; requires_grad but never a .grad (the indexer runs under no_grad), so no AdamW state.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 80;
  cfg.precision = memplan::Precision::bf16;
  const auto e = memplan::estimate(m, cfg);
  CHECK(e.params - e.trainable_params == 2 * 58'112);
  // Below and above index_topk (64 keys), SDPA and eager, checkpointed (each layer's frame keeps the top-k it was
  // passed) all build.
  cfg.seq_len = 40;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.attn = memplan::AttnImpl::eager;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.seq_len = 120;
  cfg.grad_checkpointing = true;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
}

TEST_CASE("glm_moe_dsa: parameter count, derived by hand", "[family][set64]") {
  // glm-5 (78 layers, 3 dense, every indexer full):
  //   MLA per layer: q_a 6144 x 2048 = 12,582,912, q_a_layernorm 2,048, q_b 2048 x 64 x 256 = 33,554,432,
  //     kv_a_proj_with_mqa 6144 x 576 = 3,538,944, kv_a_layernorm 512, kv_b 512 x 64 x 448 = 14,680,064,
  //     o_proj 64 x 256 x 6144 = 100,663,296: 165,022,208;
  //   indexer: wq_b 2048 x 4096 = 8,388,608, wk 6144 x 128 = 786,432, k_norm 256, weights_proj 6144 x 32 =
  //     196,608: 9,371,904; the two RMSNorms 12,288;
  //   dense MLP 3 x 6144 x 12288 = 226,492,416; MoE: experts 256 x 3 x 6144 x 2048 = 9,663,676,416, router
  //     256 x 6144 = 1,572,864, shared experts 3 x 6144 x 2048 = 37,748,736: 9,702,998,016;
  //   78 x 174,406,400 + 3 x 226,492,416 + 75 x 9,702,998,016 + 2 x 154880 x 6144 + 6,144 = 743,911,199,232.
  CHECK(memplan::param_count(memplan::load_zoo_model("glm-5")) == 743'911'199'232);
}
