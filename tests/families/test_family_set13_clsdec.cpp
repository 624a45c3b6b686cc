// Sequence and token classification heads on decoders (family set 13): llama / mistral / qwen2 / qwen3
// (GenericForSequenceClassification, GenericForTokenClassification) and gpt2 (GPT2ForSequenceClassification),
// engine/arch/decoders/parts/heads_decoder.cpp. The importer's head keys and refusals, the parameter counts derived by hand, and
// the measured H200 rows (measured before the head existed and used to write it;
// data/validation/notes-f13/classification-decoders.md).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

memplan::ModelSpec model_of(const std::string& config) {
  memplan::ModelSpec m;
  m.name = "t";
  m.transformer = import(config);
  return m;
}

memplan::RunConfig run(memplan::Task task, int64_t batch, int64_t labels = 2) {
  memplan::RunConfig c;
  c.batch_size = batch;
  c.seq_len = 64;
  c.task = task;
  c.num_labels = labels;
  return c;
}

// The error message of building one training graph.
std::string build_error(const std::string& config, const memplan::RunConfig& c) {
  return error_of([&] { memplan::build_graph(model_of(config), c); });
}

// Parameter count as the estimate counts it (sum of p.numel() over the graph's parameters).
int64_t params_of(const std::string& config, const memplan::RunConfig& c) {
  return memplan::estimate(model_of(config), c).params;
}

}  // namespace

TEST_CASE("decoder classification heads: the config keys they read (transformers 5.17)", "[family][set13]") {
  // None of LlamaConfig / MistralConfig / Qwen2Config / Qwen3Config / GPT2Config sets a pad token, a
  // classifier_dropout or a hidden_dropout: GenericForTokenClassification's dropout is then 0.1, its score bias on.
  for (const char* t : {"llama", "mistral", "qwen2", "qwen3", "gpt2"}) {
    INFO(t);
    const TransformerSpec s = import(std::string(R"({"model_type": ")") + t + "\"}");
    CHECK_FALSE(s.has_pad_token_id);
    CHECK(s.token_cls_dropout == 0.1);
    CHECK(s.token_cls_bias);
    CHECK(s.problem_type.empty());
  }
  const TransformerSpec a = import(R"({"model_type": "llama", "pad_token_id": 0, "hidden_dropout": 0.2,
      "token_classification_bias": false, "problem_type": "single_label_classification"})");
  CHECK(a.has_pad_token_id);
  CHECK(a.token_cls_dropout == 0.2);  // hidden_dropout when classifier_dropout is None
  CHECK_FALSE(a.token_cls_bias);
  CHECK(a.problem_type == "single_label_classification");
  // classifier_dropout first; a null one falls through to hidden_dropout; a null bias flag is falsy (no bias).
  CHECK(import(R"({"model_type": "qwen2", "classifier_dropout": 0.0, "hidden_dropout": 0.3})").token_cls_dropout == 0.0);
  CHECK(import(R"({"model_type": "qwen3", "classifier_dropout": null, "hidden_dropout": 0.3})").token_cls_dropout == 0.3);
  CHECK_FALSE(import(R"({"model_type": "mistral", "token_classification_bias": null})").token_cls_bias);
  CHECK_FALSE(import(R"({"model_type": "gpt2", "pad_token_id": null})").has_pad_token_id);
}

TEST_CASE("decoder classification heads: bad keys name their field", "[family][set13]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "llama", "pad_token_id": "0"})", "config.pad_token_id:"},
      {R"({"model_type": "gpt2", "pad_token_id": 1.5})", "config.pad_token_id:"},
      {R"({"model_type": "qwen2", "classifier_dropout": 1.5})", "config.classifier_dropout:"},
      {R"({"model_type": "qwen3", "hidden_dropout": -0.1})", "config.hidden_dropout:"},
      {R"({"model_type": "mistral", "token_classification_bias": 1})", "config.token_classification_bias:"},
      {R"({"model_type": "llama", "problem_type": "ranking"})", "config.problem_type:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("decoder classification heads: what the builder refuses, naming the field", "[family][set13]") {
  using memplan::Task;
  const std::string nopad = R"({"model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
      "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 1000})";
  // transformers raises "Cannot handle batch sizes > 1 if no padding token is defined."; batch 1 pools the
  // last position, and the token head never pools.
  CHECK(build_error(nopad, run(Task::seq_cls, 2)).rfind("config.pad_token_id:", 0) == 0);
  CHECK(build_error(nopad, run(Task::seq_cls, 1)) == "no error");
  CHECK(build_error(nopad, run(Task::token_cls, 2)) == "no error");
  const std::string padded = R"({"model_type": "qwen2", "hidden_size": 256, "intermediate_size": 512,
      "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
      "pad_token_id": 0)";
  CHECK(build_error(padded + "}", run(Task::seq_cls, 2)) == "no error");
  // Regression (num_labels 1 with no problem_type, or problem_type regression) and multi-label are not modelled.
  CHECK(build_error(padded + "}", run(Task::seq_cls, 2, 1)).rfind("num_labels:", 0) == 0);
  CHECK(build_error(padded + R"(, "problem_type": "regression"})", run(Task::seq_cls, 2)).rfind("config.problem_type:", 0) ==
        0);
  CHECK(build_error(padded + R"(, "problem_type": "multi_label_classification"})", run(Task::seq_cls, 2))
            .rfind("config.problem_type:", 0) == 0);
  // single_label_classification with one label is cross entropy over one column: modelled.
  CHECK(build_error(padded + R"(, "problem_type": "single_label_classification"})", run(Task::seq_cls, 2, 1)) ==
        "no error");
  // GPT2ForTokenClassification (its own class, not measured) and mixtral (no measured row) are refused by task.
  CHECK(build_error(R"({"model_type": "gpt2", "n_layer": 1, "pad_token_id": 0})", run(Task::token_cls, 2))
            .rfind("task:", 0) == 0);
  CHECK(build_error(R"({"model_type": "mixtral", "num_hidden_layers": 1, "hidden_size": 256, "intermediate_size": 512,
      "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 2, "vocab_size": 1000,
      "pad_token_id": 0})",
                    run(Task::seq_cls, 2))
            .rfind("task:", 0) == 0);
}

TEST_CASE("decoder classification heads: parameter counts derived by hand", "[family][set13]") {
  using memplan::Task;
  // No lm_head (so nothing tied to the embedding either), plus score: [NL, H] for the sequence head, [NL, H] and a
  // [NL] bias for the token head. Base models (the measured configs; V vocab, H hidden, I intermediate, L layers):
  //  llama  V 128256, H 2048, I 8192, 32 / 8 heads of 64: embed 262,668,288; per layer q 4,194,304 + k, v
  //         1,048,576 each + o 4,194,304 + MLP 3 * 16,777,216 + norms 4096 = 60,821,504; x4 = 243,286,016;
  //         final norm 2048 => 505,956,352.
  //         seq_cls NL 2: + 4096 = 505,960,448; NL 5: + 10,240 = 505,966,592; token_cls NL 9: + 18,432 + 9 =
  //         505,974,793 (the measured sums of p.numel()).
  //  qwen2  V 151936, H 896, I 4864, 14 / 2 heads of 64, q/k/v biases: embed 136,134,656; per layer q 802,816 +
  //         896, k and v 114,688 + 128 each, o 802,816, MLP 13,074,432, norms 1792 = 14,912,384; x4 = 59,649,536;
  //         norm 896 => 195,785,088; seq_cls NL 3: + 2688 = 195,787,776 (measured).
  //  qwen3  V 151936, H 1024, I 3072, 16 / 8 heads of 128, q_norm / k_norm [128]: embed 155,582,464; per layer q
  //         2,097,152, k and v 1,048,576 each, o 2,097,152, q/k norms 256, MLP 9,437,184, norms 2048 =
  //         15,730,944; x4 = 62,923,776; norm 1024 => 218,507,264; seq_cls NL 2: + 2048 = 218,509,312 (measured).
  //  gpt2   4 layers of gpt2 small: wte 38,597,376, wpe 786,432, per layer ln 1536 + c_attn 1,771,776 + c_proj
  //         590,592 + ln 1536 + c_fc 2,362,368 + c_proj 2,360,064 = 7,087,872; x4 = 28,351,488; ln_f 1536 =>
  //         67,736,832; seq_cls NL 2: + 1536 = 67,738,368; NL 4: + 3072 = 67,739,904 (measured).
  //  Qwen2.5-0.5B (24 layers, tied): 494,032,768 as a CausalLM (tied lm_head counted once) = the base model;
  //         token_cls NL 2: + 1792 + 2 = 494,034,562.
  const std::string llama = R"({"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
      "tie_word_embeddings": true, "pad_token_id": 0})";
  CHECK(params_of(llama, run(Task::seq_cls, 1, 2)) == 505'960'448);
  CHECK(params_of(llama, run(Task::seq_cls, 1, 5)) == 505'966'592);
  CHECK(params_of(llama, run(Task::token_cls, 1, 9)) == 505'974'793);
  CHECK(params_of(R"({"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 4,
      "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": true,
      "pad_token_id": 151643})",
                  run(Task::seq_cls, 1, 3)) == 195'787'776);
  CHECK(params_of(R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 4,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
      "tie_word_embeddings": true, "pad_token_id": 151643})",
                  run(Task::seq_cls, 1, 2)) == 218'509'312);
  CHECK(params_of(R"({"model_type": "gpt2", "n_layer": 4, "pad_token_id": 50256})", run(Task::seq_cls, 1, 2)) ==
        67'738'368);
  CHECK(params_of(R"({"model_type": "gpt2", "n_layer": 4, "pad_token_id": 50256})", run(Task::seq_cls, 1, 4)) ==
        67'739'904);
  CHECK(params_of(R"({"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
      "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": true})",
                  run(Task::token_cls, 1, 2)) == 494'034'562);
}

TEST_CASE("decoder classification heads: measured H200 rows of family set 13", "[family][set13]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, and the measured `params` exactly (the fp32 Qwen2
  // row runs SDPA's math backend: exact since its training order was matched on this row's stream).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f13-llama-seqcls-", "f13-llama-tokcls-", "f13-qwen2-seqcls-",
                                                       "f13-qwen3-seqcls-", "f13-gpt2-seqcls-"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 7);
}
