// deepseek_v32 (family set 58): DeepseekV32ForCausalLM, DeepSeek-V3's multi-head latent attention and MoE with the
// DSA lightning indexer, which scores every key per query under torch.no_grad() and keeps index_topk of them.
// Written from the installed 5.17 modeling file without a device: the importer's class defaults, refusals naming
// the field, the KV cache (the expanded keys / values plus the indexer's keys, per layer), the indexer's weights
// left out of the optimizer (no gradient reaches them), the zoo entry's parameter count, each derived by hand. The
// held-out rows (calibrate/cases/families58-input.jsonl) are predicted in
// data/validation/predictions/families58-holdout.json.
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

// Two layers (one dense, one MoE of 4 experts in 2 groups), 4 heads of nope 64 + rope 32, v 64, an indexer of
// 2 heads x 128 keeping 64 keys.
const char* kSmall = R"({"model_type": "deepseek_v32", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "moe_intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 4, "q_lora_rank": 96, "kv_lora_rank": 64, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
    "v_head_dim": 64, "n_routed_experts": 4, "n_group": 2, "topk_group": 1, "num_experts_per_tok": 2,
    "first_k_dense_replace": 1, "index_n_heads": 2, "index_head_dim": 128, "index_topk": 64})";

}  // namespace

TEST_CASE("deepseek_v32 importer: class defaults", "[family][set58][importer]") {
  // DeepseekV32Config(): DeepSeek-V3's widths, 163840 positions, index 64 heads x 128, top 2048, 3 dense layers.
  const TransformerSpec s = import(R"({"model_type": "deepseek_v32"})");
  CHECK(s.model_type == "deepseek_v32");
  CHECK(s.vocab_size == 129280);
  CHECK(s.hidden_size == 7168);
  CHECK(s.intermediate_size == 18432);
  CHECK(s.moe_intermediate_size == 2048);
  CHECK(s.num_layers == 61);
  CHECK(s.num_heads == 128);
  CHECK(s.num_kv_heads == 128);
  CHECK(s.num_experts == 256);
  CHECK(s.num_shared_experts == 1);
  CHECK(s.num_experts_per_tok == 8);
  CHECK(s.moe_n_group == 8);
  CHECK(s.moe_topk_group == 4);
  CHECK(s.first_dense_layers == 3);
  CHECK(s.kv_lora_rank == 512);
  CHECK(s.q_lora_rank == 1536);
  CHECK(s.qk_nope_head_dim == 128);
  CHECK(s.qk_rope_head_dim == 64);
  CHECK(s.v_head_dim == 128);
  CHECK(s.max_position_embeddings == 163840);
  CHECK(s.moe_topk_method == "noaux_tc");
  CHECK(s.moe_norm_topk_prob);
  CHECK(s.rope_interleave);
  CHECK(s.index_n_heads == 64);
  CHECK(s.index_head_dim == 128);
  CHECK(s.index_topk == 2048);
  CHECK_FALSE(s.tie_word_embeddings);
}

TEST_CASE("deepseek_v32: refusals name the field", "[family][set58]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "deepseek_v32", "q_lora_rank": null})", "config.q_lora_rank:"},
      {R"({"model_type": "deepseek_v32", "index_head_dim": 64})", "config.index_head_dim:"},  // = qk_rope_head_dim
      {R"({"model_type": "deepseek_v32", "index_topk": 0})", "config.index_topk:"},
      {R"({"model_type": "deepseek_v32", "index_n_heads": -1})", "config.index_n_heads:"},
      {R"({"model_type": "deepseek_v32", "mlp_layer_types": ["dense", "sparse"]})", "config.mlp_layer_types:"},
      {R"({"model_type": "deepseek_v32", "quantization_config": {"quant_method": "fp8"}})", "config.quantization_config:"},
      {R"({"model_type": "deepseek_v32", "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "deepseek_v32", "topk_group": 9})", "config.topk_group:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("deepseek_v32: the KV cache holds expanded keys / values and the indexer's keys, derived by hand",
          "[family][set58]") {
  // Per layer: DynamicIndexedLayer keeps key_states [B, 4, L, 96], value_states [B, 4, L, 64] (after expand_kv:
  // the V3.2 attention caches the expanded states, not V3's latents) and the indexer keys [B, L, 128]. B 2, prompt
  // 100 (L = 100 after the prefill), bf16: 153,600 + 102,400 + 51,200 bytes a layer, x 2 layers = 614,400.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;  // generate() first: the cuBLAS workspace is not the prefill's
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 614'400);
  // Under bf16 autocast kv_b_proj's output (and so key_states' new_empty and the values) is bf16, but the indexer's
  // key is fp32 (nn.LayerNorm runs in fp32, cos / sin are the fp32 hidden states' dtype): 102,400 bytes for it.
  cfg.precision = memplan::Precision::amp_bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 2 * (153'600 + 102'400 + 102'400));
}

TEST_CASE("deepseek_v32: the indexer's weights get no gradient and no optimizer state", "[family][set58]") {
  // The indexer runs under torch.no_grad(): wq_b [256, 96], wk [128, 256], k_norm weight + bias [128] and
  // weights_proj [2, 256] (24,576 + 32,768 + 256 + 512 = 58,112 a layer) keep requires_grad but never get a .grad,
  // so AdamW (which skips grad-less parameters) keeps no state for them.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 80;
  cfg.precision = memplan::Precision::bf16;
  const auto e = memplan::estimate(m, cfg);
  CHECK(e.params - e.trainable_params == 2 * 58'112);
  // Below and above index_topk (64 keys) both build: k = min(index_topk, T).
  cfg.seq_len = 40;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.attn = memplan::AttnImpl::eager;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
}

TEST_CASE("deepseek_v32: parameter count, derived by hand", "[family][set58]") {
  // deepseek-v3.2 is DeepSeek-V3's body (671,026,404,352 parameters without the routers' bias buffers:
  // test_family_deepseek.cpp) plus one indexer per layer: wq_b 1536 x (64 * 128) = 12,582,912, wk 7168 x 128 =
  // 917,504, k_norm 2 x 128 = 256, weights_proj 7168 x 64 = 458,752: 13,959,424, x 61 = 851,524,864.
  // 671,026,404,352 + 851,524,864 = 671,877,929,216.
  CHECK(memplan::param_count(memplan::load_zoo_model("deepseek-v3.2")) == 671'877'929'216);
}
