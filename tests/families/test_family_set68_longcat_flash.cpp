// longcat_flash (family set 68): LongcatFlashForCausalLM (meituan-longcat/LongCat-Flash-Chat): decoder layers of two
// MLA sublayers (DeepSeek-V3's attention with the LoRA scalings) and two dense MLPs, with one MoE of routed and
// identity ("zero-computation") experts whose output short-cuts to the layer's end; the experts run transformers'
// Python loop. Written from the installed 5.17 modeling file without a device: the importer's class defaults and the
// family's own fields, refusals naming the field, the latent cache of two attentions a layer, the parameter counts
// (the identity experts' unused gate_up slabs included), each derived by hand. The held-out rows
// (calibrate/cases/families68-input.jsonl) are predicted in data/validation/predictions/families68-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "engine/arch/decoders/moe/longcat_flash_fields.h"
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

// Two decoder layers, hidden 256, 4 heads of qk_nope 32 + qk_rope 16 and v 32, q_lora_rank 64, kv_lora_rank 32, dense
// MLPs of 512, 4 routed experts of 128 plus 2 identity experts, top 2, vocabulary 1000.
const char* kSmall = R"({"model_type": "longcat_flash", "vocab_size": 1000, "hidden_size": 256,
    "ffn_hidden_size": 512, "expert_ffn_hidden_size": 128, "num_layers": 2, "num_attention_heads": 4,
    "q_lora_rank": 64, "kv_lora_rank": 32, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "head_dim": 16,
    "v_head_dim": 32, "moe_topk": 2, "n_routed_experts": 4, "zero_expert_num": 2})";

}  // namespace

TEST_CASE("longcat_flash importer: class defaults and the family's own fields", "[family][set68][importer]") {
  const TransformerSpec s = import(R"({"model_type": "longcat_flash"})");
  CHECK(s.model_type == "longcat_flash");
  CHECK(s.vocab_size == 131072);
  CHECK(s.hidden_size == 6144);
  CHECK(s.num_layers == 28);  // decoder layers (num_hidden_layers is overwritten with 2 x num_layers, unread)
  CHECK(s.num_heads == 64);
  CHECK(s.num_kv_heads == 64);
  CHECK(s.intermediate_size == 12288);
  CHECK(s.moe_intermediate_size == 2048);
  CHECK(s.num_experts == 512);
  CHECK(s.num_experts_per_tok == 12);
  CHECK(s.q_lora_rank == 1536);
  CHECK(s.kv_lora_rank == 512);
  CHECK(s.qk_nope_head_dim == 128);
  CHECK(s.qk_rope_head_dim == 64);
  CHECK(s.v_head_dim == 128);
  CHECK(s.head_dim == 192);
  CHECK(s.rope_interleave);
  CHECK_FALSE(s.tie_word_embeddings);
  const auto& f = memplan::family_fields<memplan::LongcatFlashFields>(s);
  CHECK(f.zero_experts == 256);
  CHECK_FALSE(f.router_bias);
  // The attribute_map names and a null zero_expert_num ("or 0").
  const TransformerSpec a = import(R"({"model_type": "longcat_flash", "num_local_experts": 8,
      "num_experts_per_tok": 4, "intermediate_size": 1024, "zero_expert_num": null, "num_hidden_layers": 3})");
  CHECK(a.num_experts == 8);
  CHECK(a.num_experts_per_tok == 4);
  CHECK(a.intermediate_size == 1024);
  CHECK(a.num_layers == 28);
  CHECK(memplan::family_fields<memplan::LongcatFlashFields>(a).zero_experts == 0);
}

TEST_CASE("longcat_flash: refusals name the field", "[family][set68]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "longcat_flash", "q_lora_rank": null})", "config.q_lora_rank:"},
      {R"({"model_type": "longcat_flash", "num_key_value_heads": 8})", "config.num_key_value_heads:"},
      {R"({"model_type": "longcat_flash", "qk_head_dim": 128})", "config.qk_head_dim:"},
      {R"({"model_type": "longcat_flash", "head_dim": 128})", "config.head_dim:"},
      {R"({"model_type": "longcat_flash", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "longcat_flash", "n_routed_experts": 2, "zero_expert_num": 1, "moe_topk": 4})",
       "config.moe_topk:"},
      {R"({"model_type": "longcat_flash", "rope_scaling": {"rope_type": "longrope"}})",
       "config.rope_scaling.rope_type:"},
      {R"({"model_type": "longcat_flash", "quantization_config": {"quant_method": "fp8"}})",
       "config.quantization_config:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("longcat_flash: two latent caches a layer, derived by hand", "[family][set68]") {
  // generate() from a 100-token prompt, B 2, bf16: each of the 2 x 2 attentions keeps the scaled latent
  // [2, 1, 100, 32] and the rotated rope key [2, 1, 100, 16], each rounded up to the allocator's 512 bytes:
  // 4 x (12,800 + 6,656) = 77,824.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 77'824);
}

TEST_CASE("longcat_flash: parameter counts derived by hand", "[family][set68]") {
  // kSmall per layer: experts gate_up [6, 256, 256] = 393,216 (the two identity experts' slabs included), down
  // [4, 256, 128] = 131,072, router [6, 256] = 1,536; per MLA q_a 256 x 64 = 16,384, q_a_layernorm 64, q_b
  // 64 x 4 x 48 = 12,288, kv_a 256 x 48 = 12,288, kv_a_layernorm 32, kv_b 32 x 4 x 64 = 8,192, o 128 x 256 = 32,768:
  // 82,016, x 2; MLPs 2 x 3 x 256 x 512 = 786,432; norms 4 x 256 = 1,024. 1,477,312 a layer; x 2 + 2 x 256,000
  // (untied) + 256 = 3,466,880.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 3'466'880);
  // router_bias: the classifier's bias [6] a layer, registered though the forward never reads it (+ 12).
  std::string biased = kSmall;
  biased.insert(biased.rfind('}'), R"(, "router_bias": true)");
  CHECK(memplan::param_count(memplan::testing::model_of_config(biased)) == 3'466'892);
  // longcat-flash-chat as 5.17 builds it: 28 x 26,408,677,376 + 2 x 805,306,368 + 6,144 (models/zoo/README.md).
  CHECK(memplan::param_count(memplan::load_zoo_model("longcat-flash-chat")) == 741'053'585'408);
}
