// albert (family set 17): AlbertForMaskedLM / AlbertForSequenceClassification / AlbertForTokenClassification.
// The importer's class defaults, refusals naming the field or option, parameter counts derived by hand from
// modeling_albert.py (the published albert/albert-*-v2 checkpoints and the measured rows), the shared layer
// group's accounting, and the measured H200 rows (measured before the builder existed and used to write it).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::ModelSpec;
using memplan::RunConfig;
using memplan::Task;
using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }

RunConfig training(Task task, int64_t num_labels, int64_t batch = 2, int64_t seq = 64) {
  return memplan::testing::task_training(task, num_labels, batch, seq);
}

}  // namespace

TEST_CASE("albert: the importer's class defaults", "[family][set17]") {
  // AlbertConfig (5.17): ALBERT-xxlarge's shape.
  const TransformerSpec a = import(R"({"model_type": "albert"})");
  CHECK(a.model_type == "albert");
  CHECK(a.vocab_size == 30000);
  CHECK(a.embedding_size == 128);
  CHECK(a.hidden_size == 4096);
  CHECK(a.num_layers == 12);
  CHECK(a.albert_num_hidden_groups == 1);
  CHECK(a.albert_inner_group_num == 1);
  CHECK(a.num_heads == 64);
  CHECK(a.head_dim == 64);
  CHECK(a.intermediate_size == 16384);
  CHECK(a.hidden_act == "gelu_new");
  CHECK(a.resid_dropout == 0.0);
  CHECK(a.embd_dropout == 0.0);
  CHECK(a.attn_dropout == 0.0);
  CHECK(a.max_position_embeddings == 512);
  CHECK(a.type_vocab_size == 2);
  CHECK(a.tie_word_embeddings);
  CHECK(a.seq_cls_dropout == 0.1);
  CHECK(a.token_cls_dropout == 0.1);
  CHECK(a.problem_type.empty());
  const TransformerSpec b = import(R"({"model_type": "albert", "hidden_dropout_prob": 0.2, "hidden_act": "gelu",
      "classifier_dropout_prob": 0.0, "num_hidden_groups": 3, "inner_group_num": 2})");
  CHECK(b.embd_dropout == 0.2);
  CHECK(b.resid_dropout == 0.2);
  CHECK(b.hidden_act == "gelu");
  CHECK(b.seq_cls_dropout == 0.0);
  CHECK(b.token_cls_dropout == 0.0);
  CHECK(b.albert_num_hidden_groups == 3);
  CHECK(b.albert_inner_group_num == 2);
  // Every albert/albert-*-v2 config.json key (down_scale_factor, gap_size, net_structure_type, num_memory_blocks
  // are read by no 5.17 module).
  CHECK(memplan::load_zoo_model("albert-base-v2").transformer.hidden_size == 768);
}

TEST_CASE("albert: bad values name their field", "[family][set17]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "albert", "embedding_size": 0})", "config.embedding_size:"},
      {R"({"model_type": "albert", "embedding_size": "x"})", "config.embedding_size:"},
      {R"({"model_type": "albert", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "albert", "hidden_size": 4000})", "config.num_attention_heads:"},
      {R"({"model_type": "albert", "num_hidden_groups": 0})", "config.num_hidden_groups:"},
      {R"({"model_type": "albert", "num_hidden_groups": 13})", "config.num_hidden_groups:"},
      {R"({"model_type": "albert", "inner_group_num": 0})", "config.inner_group_num:"},
      {R"({"model_type": "albert", "inner_group_num": 5000})", "config.inner_group_num:"},
      {R"({"model_type": "albert", "chunk_size_feed_forward": 64})", "config.chunk_size_feed_forward:"},
      {R"({"model_type": "albert", "tie_word_embeddings": false})", "config.tie_word_embeddings:"},
      {R"({"model_type": "albert", "pad_token_id": 30000})", "config.pad_token_id:"},
      {R"({"model_type": "albert", "classifier_dropout_prob": 1.5})", "config.classifier_dropout_prob:"},
      {R"({"model_type": "albert", "problem_type": "ranking"})", "config.problem_type:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  const ModelSpec m = model_of(R"({"model_type": "albert", "hidden_size": 256, "num_attention_heads": 4,
      "intermediate_size": 1024, "num_hidden_layers": 2})");
  CHECK(error_of([&] { memplan::estimate(m, training(Task::lm, 0)); }) == "no error");
  CHECK(error_of([&] { memplan::estimate(m, training(Task::token_cls, 3)); }) == "no error");
  // AlbertPreTrainedModel does not support gradient checkpointing: transformers raises, and so does memplan.
  RunConfig ckpt = training(Task::lm, 0);
  ckpt.grad_checkpointing = true;
  CHECK(error_of([&] { memplan::estimate(m, ckpt); }).rfind("grad_checkpointing:", 0) == 0);
  RunConfig some = training(Task::lm, 0);
  some.checkpoint_layers = {1};
  CHECK(error_of([&] { memplan::estimate(m, some); }).rfind("grad_checkpointing:", 0) == 0);
  RunConfig frozen = training(Task::lm, 0);
  frozen.frozen_layers = {0};
  CHECK(error_of([&] { memplan::estimate(m, frozen); }).rfind("frozen_layers:", 0) == 0);
  RunConfig lora = training(Task::lm, 0);
  lora.lora.r = 8;
  lora.lora.target_modules = {"query", "value"};
  CHECK(error_of([&] { memplan::estimate(m, lora); }) != "no error");
  RunConfig inf = training(Task::lm, 0);  // inference is one forward (test_family_set19_encinf.cpp)
  inf.mode = memplan::Mode::inference;
  inf.generate_tokens = 8;
  CHECK(error_of([&] { memplan::estimate(m, inf); }).rfind("generate_tokens:", 0) == 0);
  const ModelSpec reg = model_of(R"({"model_type": "albert", "hidden_size": 256, "num_attention_heads": 4,
      "intermediate_size": 1024, "num_hidden_layers": 2, "problem_type": "regression"})");
  CHECK(error_of([&] { memplan::estimate(reg, training(Task::seq_cls, 3)); }).rfind("config.problem_type:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(m, training(Task::seq_cls, 1)); }).rfind("num_labels:", 0) == 0);
  // 5 groups x 3 inner layers over 12 layer applications: 15 parameter sets, 36 layer applications.
  // 3,906,048 + 99,072 + 15 x 7,087,872 + 128,688 = 110,451,888.
  const ModelSpec grouped = model_of(R"({"model_type": "albert", "hidden_size": 768, "num_attention_heads": 12,
      "intermediate_size": 3072, "num_hidden_groups": 5, "inner_group_num": 3})");
  CHECK(memplan::estimate(grouped, training(Task::lm, 0)).params == 110'451'888);
}

TEST_CASE("albert: parameter counts derived by hand", "[family][set17]") {
  // AlbertForMaskedLM, V 30000, E 128, 512 positions, 2 token types:
  //   embeddings: V*E 3,840,000 + 512*E 65,536 + 2*E 256 + LayerNorm 256 = 3,906,048;
  //   embedding_hidden_mapping_in: E*H + H = 129 H;
  //   one AlbertLayer (the only parameter set: num_hidden_groups 1, inner_group_num 1, whatever num_hidden_layers):
  //     query / key / value / dense 4 (H*H + H), attention LayerNorm 2H, full_layer_layer_norm 2H,
  //     ffn H*I + I, ffn_output I*H + H  = 4 H^2 + 2 H I + 9 H + I;
  //   AlbertMLMHead: LayerNorm 2E 256 + bias V 30,000 + dense H*E + E (decoder weight and bias tied) = 30,384 + 128 H.
  //   Total 3,936,432 + 257 H + 4 H^2 + 2 H I + 9 H + I.
  //   base   (H 768,  I 3072):  layer 2,359,296 + 4,718,592 + 6,912 + 3,072 = 7,087,872; 257 H 197,376
  //          -> 11,221,680 (f17-albertb's measured params)
  //   large  (H 1024, I 4096):  layer 4,194,304 + 8,388,608 + 9,216 + 4,096 = 12,596,224; 257 H 263,168
  //          -> 16,795,824 (f17-albertl's)
  //   xlarge (H 2048, I 8192):  layer 16,777,216 + 33,554,432 + 18,432 + 8,192 = 50,358,272; 257 H 526,336
  //          -> 54,821,040 (f17-albertxl's)
  //   xxlarge (H 4096, I 16384): layer 67,108,864 + 134,217,728 + 36,864 + 16,384 = 201,379,840; 257 H 1,052,672
  //          -> 206,368,944 (f17-albertxxl's)
  // The published 11.7M / 17.7M / 58.7M / 222.6M count AlbertModel with its pooler (H*H + H) and no MLM head:
  //   base 3,906,048 + 99,072 + 7,087,872 + 590,592 = 11,683,584; large 3,906,048 + 132,096 + 12,596,224
  //   + 1,049,600 = 17,683,968; xlarge 3,906,048 + 264,192 + 50,358,272 + 4,196,352 = 58,724,864; xxlarge
  //   3,906,048 + 528,384 + 201,379,840 + 16,781,312 = 222,595,584. AlbertForSequenceClassification adds its
  //   classifier H * n + n to that (base, 3 labels: 11,685,891, f17-albertb-seqcls's measured params);
  //   AlbertForTokenClassification has no pooler: MLM total - head + classifier.
  CHECK(memplan::param_count(memplan::load_zoo_model("albert-base-v2")) == 11'221'680);
  CHECK(memplan::param_count(memplan::load_zoo_model("albert-large-v2")) == 16'795'824);
  CHECK(memplan::param_count(memplan::load_zoo_model("albert-xlarge-v2")) == 54'821'040);
  CHECK(memplan::param_count(memplan::load_zoo_model("albert-xxlarge-v2")) == 206'368'944);
  struct Row {
    const char* zoo;
    Task task;
    int64_t labels, params;
  };
  const Row rows[] = {
      {"albert-base-v2", Task::seq_cls, 2, 11'683'584 + 2 * 768 + 2},
      {"albert-large-v2", Task::seq_cls, 2, 17'683'968 + 2 * 1024 + 2},
      {"albert-xlarge-v2", Task::seq_cls, 2, 58'724'864 + 2 * 2048 + 2},
      {"albert-xxlarge-v2", Task::seq_cls, 2, 222'595'584 + 2 * 4096 + 2},
      // large, token_cls 9 labels: 3,906,048 + 132,096 + 12,596,224 + 9,225 = 16,643,593
      {"albert-large-v2", Task::token_cls, 9, 16'643'593},
  };
  for (const auto& r : rows) {
    INFO(r.zoo << " " << memplan::task_name(r.task) << " " << r.labels);
    CHECK(memplan::estimate(memplan::load_zoo_model(r.zoo), training(r.task, r.labels, 1, 64)).params == r.params);
  }
  // freeze_embeddings (the harness: requires_grad False on get_input_embeddings().parameters()) freezes the word
  // embeddings alone, V * E = 3,840,000 (the tied decoder weight is the same tensor).
  RunConfig frozen = training(Task::lm, 0, 1, 64);
  frozen.freeze_embeddings = true;
  const auto base_est = memplan::estimate(memplan::load_zoo_model("albert-base-v2"), frozen);
  CHECK(base_est.params == 11'221'680);
  CHECK(base_est.trainable_params == 11'221'680 - 3'840'000);
  // Parameter sets are num_hidden_groups * inner_group_num layers, not num_hidden_layers: base with 2 groups or
  // 2 inner layers has 11,221,680 + 7,087,872 = 18,309,552; 3 groups x 2 inner: 11,221,680 + 5 x 7,087,872.
  const char* base = R"({"model_type": "albert", "hidden_size": 768, "num_attention_heads": 12,
      "intermediate_size": 3072)";
  CHECK(memplan::param_count(model_of(std::string(base) + R"(, "num_hidden_groups": 2})")) == 18'309'552);
  CHECK(memplan::param_count(model_of(std::string(base) + R"(, "inner_group_num": 2})")) == 18'309'552);
  CHECK(memplan::param_count(model_of(std::string(base) + R"(, "num_hidden_groups": 3, "inner_group_num": 2})")) ==
        11'221'680 + 5 * 7'087'872);
}

TEST_CASE("albert: shared layers keep one gradient per weight, activations per application", "[family][set17]") {
  // 12 applications of one group vs 12 groups of one application each (same activations): the shared model
  // holds 1 set of weights, gradients and AdamW states instead of 12, so its peak is lower by at least the
  // 11 missing sets' weights + gradients (fp32: 2 x 4 bytes x 11 x 7,087,872); inner_group_num 2 doubles the
  // layer applications and so the saved activations.
  const char* base = R"({"model_type": "albert", "hidden_size": 768, "num_attention_heads": 12,
      "intermediate_size": 3072)";
  const RunConfig run = training(Task::lm, 0, 4, 128);
  const auto peak = [&](const std::string& extra) {
    return memplan::estimate(model_of(std::string(base) + extra + "}"), run).torch_peak_allocated_bytes();
  };
  const int64_t shared = peak(""), unshared = peak(R"(, "num_hidden_groups": 12)"),
                doubled = peak(R"(, "inner_group_num": 2)");
  CHECK(unshared - shared >= int64_t{2} * 4 * 11 * 7'087'872);
  CHECK(doubled > shared);
}

TEST_CASE("albert: measured H200 rows of family set 17", "[family][set17]") {
  // Peak allocated within 0.1 % per row, reserved within 1 %, and the measured `params` (sum of p.numel())
  // exactly: they equal the hand-derived counts above.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f17-albert"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 5);
  // Allocated and reserved are exact (within 0.05 %) on every row: f17-albertb-ampbf16-b32s512 is -1.0 MiB
  // allocated and +2 MiB reserved with every >= 0.5 MiB event of the recording matched (a block tail of the
  // allocator's layout; notes-f17/albert.md).
  for (const auto& r : checked) {
    INFO(r.id);
    CHECK(std::abs(r.allocated_err) <= 0.0005);
    CHECK(std::abs(r.reserved_err) <= 0.0005);
  }
}
