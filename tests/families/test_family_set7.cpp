// qwen2_moe / opt / roberta / xlm-roberta (family sets 7 and 8): importer defaults and refusals, parameter counts
// against the published checkpoints, and the measured H200 cases (set 7 measured before the builders existed and
// used to write them; set 8 held out, predicted at 6ac283d before it was measured).
#include <catch2/catch.hpp>

#include <cmath>
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

}  // namespace

TEST_CASE("qwen2_moe / opt / roberta importers: class defaults of transformers 5.17", "[family][set7]") {
  // Qwen2MoeConfig: 151936 / 2048 / 5632 / 24 layers / 16 heads / 16 kv, 4 of 60 experts of 1408, a shared
  // expert of 5632, q/k/v biases, untied; every layer sparse (decoder_sparse_step 1, mlp_only_layers []).
  const TransformerSpec q = import(R"({"model_type": "qwen2_moe"})");
  CHECK(q.vocab_size == 151936);
  CHECK(q.num_experts == 60);
  CHECK(q.num_experts_per_tok == 4);
  CHECK(q.moe_intermediate_size == 1408);
  CHECK(q.shared_expert_intermediate_size == 5632);
  CHECK(q.qkv_bias);
  CHECK_FALSE(q.o_bias);
  CHECK_FALSE(q.norm_topk_prob);
  CHECK(q.moe_layers == std::vector<uint8_t>(24, 1));
  const TransformerSpec q2 = import(R"({"model_type": "qwen2_moe", "num_hidden_layers": 4,
      "decoder_sparse_step": 2, "mlp_only_layers": [3]})");
  CHECK(q2.moe_layers == std::vector<uint8_t>{0, 1, 0, 0});

  // OPTConfig: 50272 / 768 / 12 layers / ffn 3072 / 12 heads, pre-LN, relu, biases, dropout 0.1, tied; the
  // embedding as wide as the model.
  const TransformerSpec o = import(R"({"model_type": "opt"})");
  CHECK(o.vocab_size == 50272);
  CHECK(o.intermediate_size == 3072);
  CHECK(o.word_embed_proj_dim == 768);
  CHECK(o.hidden_act == "relu");
  CHECK(o.resid_dropout == 0.1);
  CHECK(o.tie_word_embeddings);
  CHECK(o.learned_positions);
  CHECK_FALSE(o.post_layer_norm);
  CHECK_FALSE(o.no_final_norm);
  const TransformerSpec o350 = import(R"({"model_type": "opt", "hidden_size": 1024, "num_attention_heads": 16,
      "word_embed_proj_dim": 512, "do_layer_norm_before": false})");
  CHECK(o350.post_layer_norm);
  CHECK(o350.no_final_norm);
  CHECK(o350.word_embed_proj_dim == 512);

  // RobertaConfig: BertConfig's sizes with vocab 50265 (XLMRobertaConfig: 30522), pad_token_id 1: positions
  // start at 2.
  const TransformerSpec r = import(R"({"model_type": "roberta"})");
  CHECK(r.vocab_size == 50265);
  CHECK(r.max_position_embeddings == 512);
  CHECK(r.position_id_offset == 2);
  CHECK(r.family == TransformerSpec::Family::bert);
  CHECK(import(R"({"model_type": "xlm-roberta"})").vocab_size == 30522);
}

TEST_CASE("qwen2_moe / opt / roberta importers: bad values name their field", "[family][set7]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "qwen2_moe", "use_sliding_window": true})", "config.use_sliding_window:"},
      {R"({"model_type": "qwen2_moe", "layer_types": ["sliding_attention"]})", "config.layer_types:"},
      {R"({"model_type": "qwen2_moe", "num_experts_per_tok": 61})", "config.num_experts_per_tok:"},
      {R"({"model_type": "qwen2_moe", "shared_expert_intermediate_size": 0})", "config.shared_expert_intermediate_size:"},
      {R"({"model_type": "qwen2_moe", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "qwen2_moe", "num_key_value_heads": null})", "config.num_key_value_heads:"},
      {R"({"model_type": "opt", "layerdrop": 0.1})", "config.layerdrop:"},
      {R"({"model_type": "opt", "activation_function": "quick_gelu"})", "config.activation_function:"},
      {R"({"model_type": "opt", "hidden_size": 100, "num_attention_heads": 12})", "config.num_attention_heads:"},
      {R"({"model_type": "opt", "word_embed_proj_dim": -1})", "config.word_embed_proj_dim:"},
      {R"({"model_type": "roberta", "pad_token_id": null})", "config.pad_token_id:"},
      {R"({"model_type": "roberta", "pad_token_id": 600})", "config.pad_token_id:"},
      {R"({"model_type": "roberta", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "xlm-roberta", "type_vocab_size": 0})", "config.type_vocab_size:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("qwen2_moe / opt / roberta parameter counts: published checkpoints", "[family][set7]") {
  // Derived by hand from the modeling files' registrations (tied heads counted once).
  //  qwen2_moe: 2*V*H + L * (q, k, v with biases + o + router E*H + experts 3*E*H*I + shared 3*H*Is + gate H +
  //   2 norms H) + H.
  //  opt: V*P + (max + 2)*H + (P != H: 2*P*H) + final LayerNorm 2H (pre-LN) + L * (4 (H^2 + H) + 2 LayerNorms 4H +
  //   fc1 H*F + F + fc2 F*H + H).
  //  roberta: V*H + positions 514*H + one token type H + LayerNorm 2H + L * (4 (H^2 + H) + 2 LayerNorms 4H +
  //   H*I + I + I*H + H) + lm_head (dense H^2 + H, layer_norm 2H, bias V).
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"qwen1.5-moe-a2.7b", 14'315'784'192},  // 2*151936*2048 + 24*570,560,512 + 2048 (card: 14.3B)
      {"qwen2-57b-a14b", 57'408'658'944},     // 2*151936*3584 + 28*2,011,364,352 + 3584 (card: 57.4B)
      {"opt-125m", 125'239'296},              // 50272*768 + 2050*768 + 1536 + 12*7,087,872 (card: 125M)
      {"opt-350m", 331'196'416},              // 50272*512 + 2050*1024 + 2*512*1024 + 24*12,596,224 (card: 350M)
      {"opt-1.3b", 1'315'758'080},            // 50272*2048 + 2050*2048 + 4096 + 24*50,356,224 (card: 1.3B)
      {"opt-6.7b", 6'658'473'984},            // 50272*4096 + 2050*4096 + 8192 + 32*201,379,840 (card: 6.7B)
      {"opt-13b", 12'853'473'280},            // 50272*5120 + 2050*5120 + 10240 + 40*314,652,160 (card: 13B)
      {"opt-30b", 29'974'540'288},            // 50272*7168 + 2050*7168 + 14336 + 48*616,655,872 (card: 30B)
      {"roberta-base", 124'697'433},          // 50265*768 + 514*768 + 768 + 1536 + 12*7,087,872 + 642,393
      {"roberta-large", 355'412'057},         // 50265*1024 + 514*1024 + 1024 + 2048 + 24*12,596,224 + 1,101,913
      {"xlm-roberta-base", 278'295'186},      // 250002*768 + 514*768 + 768 + 1536 + 12*7,087,872 + 842,130
      {"xlm-roberta-large", 560'142'482},     // 250002*1024 + 514*1024 + 1024 + 2048 + 24*12,596,224 + 1,301,650
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("roberta's sequence limit: positions start at pad_token_id + 1", "[family][set7]") {
  // roberta-base's 514 position rows serve 512 tokens (positions 2 .. 513).
  const memplan::ModelSpec m = memplan::load_zoo_model("roberta-base");
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 512;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.seq_len = 513;
  CHECK(error_of([&] { memplan::estimate(m, cfg); }).rfind("seq_len:", 0) == 0);
  // OPT's table has max + 2 rows for ids offset by 2: max_position_embeddings tokens.
  const memplan::ModelSpec o = memplan::load_zoo_model("opt-125m");
  cfg.seq_len = 2049;
  CHECK(error_of([&] { memplan::estimate(o, cfg); }).rfind("seq_len:", 0) == 0);
}

TEST_CASE("qwen2_moe / opt / roberta: measured H200 cases of family sets 7 and 8", "[family][set7]") {
  // Peak allocated within 0.1 % per case (every case is within 0.05 %), reserved within 1 % (set 7: 0.19 % at
  // most; set 8, predicted blind: 0.24 %), the KV cache within 1 %, and the measured `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        // set 7's two falcon rows are checked with falcon (tests/families/test_family_set9_falcon.cpp)
        return memplan::testing::has_any_prefix(c.id, {"f7-", "f8-"}) && c.model.transformer.model_type != "falcon";
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  int tuning = 0, held_out = 0;
  for (const auto& r : checked) (r.holdout ? held_out : tuning) += 1;
  CHECK(tuning == 12);
  CHECK(held_out == 12);
}
