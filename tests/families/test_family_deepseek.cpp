// deepseek_v2 / deepseek_v3 / gpt_oss: importer defaults and refusals, parameter counts against the measured
// cases and the published checkpoints, the MLA KV figure, and the measured H200 cases of family set 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "engine/kv_cache.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::InputError;
using memplan::TransformerSpec;
using nlohmann::json;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }


}  // namespace

TEST_CASE("deepseek / gpt_oss importers: class defaults of transformers 5.17", "[family][deepseek]") {
  // DeepseekV2Config: 4096 / 11008 / 32 layers / 32 heads, kv_lora 512, q_lora 1536, 64 routed + 2 shared experts
  // of 1407, greedy routing; num_experts_per_tok None is refused (every layer routes: first_k_dense_replace 0).
  CHECK(error_of([] { import(R"({"model_type": "deepseek_v2"})"); }).rfind("config.num_experts_per_tok:", 0) == 0);
  const TransformerSpec v2 = import(R"({"model_type": "deepseek_v2", "num_experts_per_tok": 6})");
  CHECK(v2.hidden_size == 4096);
  CHECK(v2.intermediate_size == 11008);
  CHECK(v2.num_layers == 32);
  CHECK(v2.num_kv_heads == 32);
  CHECK(v2.q_lora_rank == 1536);
  CHECK(v2.num_experts == 64);
  CHECK(v2.num_shared_experts == 2);
  CHECK(v2.moe_intermediate_size == 1407);
  CHECK(v2.first_dense_layers == 0);
  CHECK(v2.moe_topk_method == "greedy");
  CHECK(v2.head_dim == 192);
  CHECK(import(R"({"model_type": "deepseek_v2", "num_experts_per_tok": 2, "q_lora_rank": null})").q_lora_rank == 0);

  // DeepseekV3Config: 7168 / 61 layers / 128 heads, 256 routed experts top-8 in 8 groups (top 4), 3 dense layers.
  const TransformerSpec v3 = import(R"({"model_type": "deepseek_v3"})");
  CHECK(v3.hidden_size == 7168);
  CHECK(v3.num_layers == 61);
  CHECK(v3.num_experts == 256);
  CHECK(v3.num_experts_per_tok == 8);
  CHECK(v3.moe_n_group == 8);
  CHECK(v3.moe_topk_group == 4);
  CHECK(v3.first_dense_layers == 3);
  CHECK(v3.moe_norm_topk_prob);
  CHECK(v3.rope_interleave);
  CHECK(v3.moe_topk_method == "noaux_tc");

  // GptOssConfig: 36 layers, 128 experts top-4, sliding 128 on even layers, biased attention.
  const TransformerSpec g = import(R"({"model_type": "gpt_oss"})");
  CHECK(g.num_layers == 36);
  CHECK(g.num_experts == 128);
  CHECK(g.num_experts_per_tok == 4);
  CHECK(g.head_dim == 64);
  CHECK(g.num_kv_heads == 8);
  CHECK(g.attention_bias);
  CHECK(g.sliding_window == 128);
  REQUIRE(g.sliding_layers.size() == 36);
  CHECK(g.sliding_layers[0] == 1);
  CHECK(g.sliding_layers[1] == 0);
  const TransformerSpec g2 = import(
      R"({"model_type": "gpt_oss", "num_hidden_layers": 3, "layer_types": ["full_attention", "full_attention", "sliding_attention"]})");
  CHECK(g2.sliding_layers == std::vector<uint8_t>{0, 0, 1});
}

TEST_CASE("deepseek / gpt_oss importers refuse what the models reject or the builders do not model", "[family][deepseek]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "deepseek_v2", "num_experts_per_tok": 2, "topk_method": "noaux_tc"})", "config.topk_method:"},
      {R"({"model_type": "deepseek_v2", "num_experts_per_tok": 2, "topk_method": "group_limited_greedy"})",
       "config.n_group:"},
      {R"({"model_type": "deepseek_v2", "num_experts_per_tok": 2, "topk_method": "group_limited_greedy", "n_group": 4,
          "topk_group": 5})", "config.topk_group:"},
      {R"({"model_type": "deepseek_v2", "num_experts_per_tok": 80})", "config.num_experts_per_tok:"},
      {R"({"model_type": "deepseek_v2", "num_experts_per_tok": 2, "hidden_size": 4000, "num_attention_heads": 48})",
       "config.num_attention_heads:"},
      {R"({"model_type": "deepseek_v2", "num_experts_per_tok": 2, "qk_rope_head_dim": 63})", "config.qk_rope_head_dim:"},
      {R"({"model_type": "deepseek_v3", "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "deepseek_v3", "n_group": 128})", "config.n_group:"},  // groups of 2 fine, 128 x 2 ok
      {R"({"model_type": "deepseek_v3", "quantization_config": {"quant_method": "fp8"}})", "config.quantization_config:"},
      {R"({"model_type": "gpt_oss", "quantization_config": {"quant_method": "mxfp4"}})", "config.quantization_config:"},
      {R"({"model_type": "gpt_oss", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "gpt_oss", "num_hidden_layers": 2, "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "gpt_oss", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "gpt_oss", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "gpt_oss", "num_key_value_heads": 7})", "config.num_key_value_heads:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    const std::string err = error_of([&] { import(c.config); });
    INFO(err);
    if (std::string(c.config).find("\"n_group\": 128") != std::string::npos) {
      CHECK(err == "no error");  // 256 experts in 128 groups of 2: allowed
      continue;
    }
    CHECK(err.rfind(c.field, 0) == 0);
  }
}

TEST_CASE("deepseek / gpt_oss parameter counts: measured cases and published checkpoints", "[family][deepseek]") {
  // The measured cases' sum(p.numel()) (data/validation/h200-families.jsonl `params`).
  CHECK(memplan::param_count(import(R"({"model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944,
      "moe_intermediate_size": 1408, "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 16,
      "kv_lora_rank": 512, "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
      "n_routed_experts": 16, "num_experts_per_tok": 6, "n_shared_experts": 2, "first_k_dense_replace": 1,
      "vocab_size": 102400, "max_position_embeddings": 4096, "topk_method": "greedy", "n_group": 1,
      "topk_group": 1})")) == 839'466'496);
  CHECK(memplan::param_count(import(R"({"model_type": "deepseek_v3", "hidden_size": 1024, "intermediate_size": 2816,
      "moe_intermediate_size": 512, "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 16,
      "kv_lora_rank": 256, "q_lora_rank": 384, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64,
      "n_routed_experts": 16, "num_experts_per_tok": 4, "n_group": 4, "topk_group": 2, "n_shared_experts": 1,
      "first_k_dense_replace": 1, "vocab_size": 32000, "max_position_embeddings": 4096})")) == 136'258'432);
  CHECK(memplan::param_count(import(R"({"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
      "num_hidden_layers": 2, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
      "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 201088, "sliding_window": 128,
      "max_position_embeddings": 8192, "layer_types": ["sliding_attention", "full_attention"]})")) == 1'609'697'104);

  // Published totals. DeepSeek-V3: "671B" for the main model (the 14B MTP module is not built by transformers);
  // by hand: 2 * 129280 * 7168 (embed + head) + 61 * (attention 187,107,328 + norms 14,336) + 3 dense MLPs of
  // 3 * 7168 * 18432 + 58 MoE blocks of (256 + 1) * 3 * 7168 * 2048 + 256 * 7168 + final norm 7168.
  // gpt-oss: model cards 20.9B / 116.8B; by hand: 2 * 201088 * 2880 + L * (q/k/v/o with biases 26,550,080 +
  // sinks 64 + router 2881 E + experts E * (2880 * 5760 + 5760 + 2880 * 2880 + 2880) + norms 5760) + 2880.
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"deepseek-v2-lite", 15'706'484'224},  // deepseek-ai/DeepSeek-V2-Lite: 15.7B
      {"deepseek-v3", 671'026'404'352},      // deepseek-ai/DeepSeek-V3: 671B
      {"gpt-oss-20b", 20'914'757'184},       // openai/gpt-oss-20b: 20.9B
      {"gpt-oss-120b", 116'829'156'672},     // openai/gpt-oss-120b: 116.8B
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("MLA KV cache: transformers 5.17 caches the latent and the rope key per layer", "[family][deepseek]") {
  // DeepseekV2Attention.forward: past_key_values.update(k_nope [B, 1, L, kv_lora_rank], k_pe [B, 1, L, rope]).
  const TransformerSpec s = import(R"({"model_type": "deepseek_v2", "num_experts_per_tok": 6, "num_hidden_layers": 3,
      "kv_lora_rank": 512, "qk_rope_head_dim": 64})");
  const memplan::KvModel kv = memplan::kv_model(s, memplan::DType::bf16, memplan::KvDtype::auto_);
  CHECK(kv.bytes_per_token_all_layers() == 3 * (512 + 64) * 2);
}

TEST_CASE("gpt_oss refuses SDPA as transformers does", "[family][deepseek]") {
  memplan::ModelSpec m;
  m.name = "gpt-oss";
  m.transformer = import(R"({"model_type": "gpt_oss", "num_hidden_layers": 2, "num_local_experts": 4})");
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 64;
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(m, cfg); }).rfind("attn:", 0) == 0);
}

TEST_CASE("deepseek / gpt_oss family set 1: measured H200 cases", "[family][deepseek]") {
  // Peak allocated within 1 % per case, reserved within 5 %, the inference KV figure within 1 %.
  // f1-dsv3-infer: a listed reserved miss (tests/test_fidelity.cpp, NOTES.md): every event >= 1 MiB equals the
  // recording's, which opens one more 32 MiB segment; it must still miss, within 7 %.
  const std::string listed = "f1-dsv3-infer-bf16-b2s1024-g4";
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f1-dsv", "f1-gptoss"}); },
      [&](const std::string& id) { return memplan::testing::FamilyBounds{0.01, id == listed ? 0.07 : 0.05}; });
  CHECK(checked.size() == 6);
  int listed_seen = 0;
  for (const auto& r : checked)
    if (r.id == listed) {
      ++listed_seen;
      CHECK(std::abs(r.reserved_err) > 0.05);
    }
  CHECK(listed_seen == 1);
}
