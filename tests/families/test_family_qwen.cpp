// qwen3 / qwen3_moe / olmo2: importer defaults and refusals, parameter counts against the measured cases and the
// published checkpoints, and the measured H200 cases of family set 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::InputError;
using memplan::TransformerSpec;
using nlohmann::json;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }


}  // namespace

TEST_CASE("qwen importers: class defaults of transformers 5.17", "[family][qwen]") {
  // Qwen3Config: 151936 / 4096 / 22016 / 32 layers / 32 heads / 32 kv heads / head_dim 128, untied, no window
  // (use_sliding_window false drops sliding_window 4096).
  const TransformerSpec q = import(R"({"model_type": "qwen3"})");
  CHECK(q.vocab_size == 151936);
  CHECK(q.hidden_size == 4096);
  CHECK(q.intermediate_size == 22016);
  CHECK(q.num_layers == 32);
  CHECK(q.num_kv_heads == 32);
  CHECK(q.head_dim == 128);
  CHECK_FALSE(q.tie_word_embeddings);
  CHECK(q.sliding_window == 0);
  CHECK(q.moe_layers.empty());
  // use_sliding_window: layers i >= max_window_layers (28) slide.
  const TransformerSpec w = import(R"({"model_type": "qwen3", "use_sliding_window": true, "num_hidden_layers": 30})");
  CHECK(w.sliding_window == 4096);
  REQUIRE(w.sliding_layers.size() == 30);
  CHECK(w.sliding_layers[27] == 0);
  CHECK(w.sliding_layers[28] == 1);
  const TransformerSpec w0 = import(R"({"model_type": "qwen3", "use_sliding_window": true, "num_hidden_layers": 4})");
  CHECK(w0.sliding_window == 0);  // max_window_layers 28 >= 4 layers: nothing slides
  const TransformerSpec lt = import(R"({"model_type": "qwen3", "use_sliding_window": true, "sliding_window": 512,
      "num_hidden_layers": 3, "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})");
  CHECK(lt.sliding_window == 512);
  CHECK(lt.sliding_layers == std::vector<uint8_t>{1, 0, 1});

  // Qwen3MoeConfig: 2048 / 6144 / 24 layers / 32 heads / 4 kv heads, head_dim hidden // heads = 64, 8 of 128
  // experts of 768, norm_topk_prob false, decoder_sparse_step 1, no mlp_only_layers.
  const TransformerSpec m = import(R"({"model_type": "qwen3_moe"})");
  CHECK(m.hidden_size == 2048);
  CHECK(m.num_layers == 24);
  CHECK(m.num_kv_heads == 4);
  CHECK(m.head_dim == 64);
  CHECK(m.num_experts == 128);
  CHECK(m.num_experts_per_tok == 8);
  CHECK(m.moe_intermediate_size == 768);
  CHECK_FALSE(m.norm_topk_prob);
  CHECK(m.moe_layers == std::vector<uint8_t>(24, 1));
  const TransformerSpec ms = import(R"({"model_type": "qwen3_moe", "num_hidden_layers": 6, "decoder_sparse_step": 2,
      "mlp_only_layers": [3, 40]})");
  CHECK(ms.moe_layers == std::vector<uint8_t>{0, 1, 0, 0, 0, 1});  // (i + 1) % 2 == 0 and i not in [3, 40]
  const TransformerSpec mw = import(R"({"model_type": "qwen3_moe", "num_hidden_layers": 2, "use_sliding_window": true})");
  CHECK(mw.sliding_window == 4096);
  CHECK(mw.sliding_layers == std::vector<uint8_t>{1, 1});

  // Olmo2Config: 50304 / 4096 / 11008 / 32 layers / 32 heads, kv heads None => heads, head_dim 4096 / 32.
  const TransformerSpec o = import(R"({"model_type": "olmo2"})");
  CHECK(o.vocab_size == 50304);
  CHECK(o.intermediate_size == 11008);
  CHECK(o.num_kv_heads == 32);
  CHECK(o.head_dim == 128);
  CHECK(o.max_position_embeddings == 2048);
  CHECK_FALSE(o.tie_word_embeddings);
}

TEST_CASE("qwen importers refuse what the models would reject or the builders do not model", "[family][qwen]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "qwen3", "num_hidden_layers": 2, "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "qwen3", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})",
       "config.layer_types[0]:"},
      // a sliding layer without a window: create_sliding_window_causal_mask raises
      {R"({"model_type": "qwen3", "num_hidden_layers": 1, "layer_types": ["sliding_attention"]})", "config.layer_types:"},
      {R"({"model_type": "qwen3", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "qwen3", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
      {R"({"model_type": "qwen3", "head_dim": 0})", "config.head_dim:"},
      {R"({"model_type": "qwen3_moe", "num_experts_per_tok": 9, "num_experts": 8})", "config.num_experts_per_tok:"},
      {R"({"model_type": "qwen3_moe", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "qwen3_moe", "mlp_only_layers": 3})", "config.mlp_only_layers:"},
      {R"({"model_type": "qwen3_moe", "mlp_only_layers": ["a"]})", "config.mlp_only_layers:"},
      {R"({"model_type": "qwen3_moe", "decoder_sparse_step": 0})", "config.decoder_sparse_step:"},
      {R"({"model_type": "qwen3_moe", "layer_types": []})", "config.layer_types:"},
      {R"({"model_type": "olmo2", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
      {R"({"model_type": "olmo2", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "olmo2", "hidden_size": 16, "num_attention_heads": 32})", "config.num_attention_heads:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("qwen parameter counts: measured cases and published checkpoints", "[family][qwen]") {
  // The measured cases' sum(p.numel()) (data/validation/h200-families.jsonl `params`).
  CHECK(memplan::param_count(import(R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
      "num_hidden_layers": 6, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
      "tie_word_embeddings": true})")) == 249'969'152);
  CHECK(memplan::param_count(import(R"({"model_type": "qwen3_moe", "hidden_size": 1024, "intermediate_size": 3072,
      "moe_intermediate_size": 384, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
      "head_dim": 128, "num_experts": 16, "num_experts_per_tok": 4, "mlp_only_layers": [0]})")) == 398'256'128);
  CHECK(memplan::param_count(import(R"({"model_type": "olmo2", "hidden_size": 2048, "intermediate_size": 8192,
      "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 100352})")) ==
        679'512'064);

  // Published checkpoints, derived by hand: qwen3 = V*H (x2 untied) + L * (q H*nh*128 + k, v 2*H*8*128 +
  // o nh*128*H + q/k_norm 2*128 + gate/up/down 3*H*I + 2 norms * H) + final norm H, V = 151936. Each agrees with
  // its model card's figure (total / non-embedding): 0.6B / 0.44B, 1.7B / 1.4B, 4.0B / 3.6B, 8.2B / 6.95B,
  // 14.8B / 13.2B, 32.8B / 31.2B. qwen3-30b-a3b: experts 128 * 3 * 768 * H + router 128 * H per layer (card:
  // 30.5B total, 29.9B non-embedding). olmo2 = 2 * V*H + L * (4 * H^2 + q/k_norm 2*H + 3*H*I + 2 norms * H) + H,
  // V = 100352 (cards: 1B "1.5B", 7B "7.3B", 13B "13.7B").
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"qwen3-0.6b", 596'049'920},       // 151936*1024 + 28*15,730,944 + 1024
      {"qwen3-1.7b", 1'720'574'976},     // 151936*2048 + 28*50,336,768 + 2048
      {"qwen3-4b", 4'022'468'096},       // 151936*2560 + 36*100,930,816 + 2560
      {"qwen3-8b", 8'190'735'360},       // 2*151936*4096 + 36*192,946,432 + 4096
      {"qwen3-14b", 14'768'307'200},     // 2*151936*5120 + 40*330,311,936 + 5120
      {"qwen3-32b", 32'762'123'264},     // 2*151936*5120 + 64*487,598,336 + 5120
      {"qwen3-30b-a3b", 30'532'122'624}, // 2*151936*2048 + 48*623,120,640 + 2048
      {"olmo-2-1b", 1'484'916'736},      // 2*100352*2048 + 16*67,117,056 + 2048
      {"olmo-2-7b", 7'298'617'344},      // 2*100352*4096 + 32*202,391,552 + 4096
      {"olmo-2-13b", 13'716'198'400},    // 2*100352*5120 + 40*317,214,720 + 5120
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
  CHECK(memplan::load_zoo_model("qwen3-0.6b").transformer.tie_word_embeddings);
  CHECK(memplan::load_zoo_model("qwen3-30b-a3b").transformer.norm_topk_prob);
  CHECK(memplan::load_zoo_model("qwen3-32b").transformer.sliding_window == 0);
}

TEST_CASE("qwen family set 1: measured H200 cases", "[family][qwen]") {
  // Peak allocated within 1 % per case, reserved within 5 %, the inference KV figure within 1 %.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f1-qwen3", "f1-olmo2"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.01, 0.05}; });
  CHECK(checked.size() == 8);
}
