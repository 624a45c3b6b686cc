// Sequence and token classification heads on the encoders (family set 13): bert, roberta (xlm-roberta),
// distilbert, modernbert with RunConfig::task seq_cls / token_cls. The importers' head fields and their class
// defaults, refusals naming their field, parameter counts derived by hand from the modeling files, and the measured
// H200 rows (measured before the heads existed and used to write them).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"

using memplan::Estimate;
using memplan::ModelSpec;
using memplan::RunConfig;
using memplan::Task;
using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }

RunConfig training(Task task, int64_t num_labels, int64_t batch = 2, int64_t seq = 128) {
  return memplan::testing::task_training(task, num_labels, batch, seq);
}

}  // namespace

TEST_CASE("classification heads: the importers' head fields and their class defaults", "[family][set13]") {
  // BertConfig / RobertaConfig / XLMRobertaConfig: classifier_dropout None -> hidden_dropout_prob (0.1) for both
  // heads; problem_type None.
  for (const char* type : {"bert", "roberta", "xlm-roberta"}) {
    INFO(type);
    const TransformerSpec s = import(std::string(R"({"model_type": ")") + type + "\"}");
    CHECK(s.seq_cls_dropout == 0.1);
    CHECK(s.token_cls_dropout == 0.1);
    CHECK(s.problem_type.empty());
    const TransformerSpec h = import(std::string(R"({"model_type": ")") + type + R"(", "hidden_dropout_prob": 0.2})");
    CHECK(h.seq_cls_dropout == 0.2);
    CHECK(h.token_cls_dropout == 0.2);
    const TransformerSpec c = import(std::string(R"({"model_type": ")") + type +
                                     R"(", "classifier_dropout": 0.0, "problem_type": "single_label_classification"})");
    CHECK(c.seq_cls_dropout == 0.0);
    CHECK(c.token_cls_dropout == 0.0);
    CHECK(c.problem_type == "single_label_classification");
  }
  // DistilBertConfig: seq_classif_dropout 0.2 (sequence head), dropout 0.1 (token head).
  const TransformerSpec d = import(R"({"model_type": "distilbert"})");
  CHECK(d.seq_cls_dropout == 0.2);
  CHECK(d.token_cls_dropout == 0.1);
  const TransformerSpec d2 = import(R"({"model_type": "distilbert", "seq_classif_dropout": 0.3, "dropout": 0.0})");
  CHECK(d2.seq_cls_dropout == 0.3);
  CHECK(d2.token_cls_dropout == 0.0);
  // ModernBertConfig: classifier_dropout 0.0, classifier_pooling "cls".
  const TransformerSpec m = import(R"({"model_type": "modernbert"})");
  CHECK(m.seq_cls_dropout == 0.0);
  CHECK(m.token_cls_dropout == 0.0);
  CHECK_FALSE(m.cls_mean_pooling);
  const TransformerSpec mm = import(R"({"model_type": "modernbert", "classifier_pooling": "mean",
      "classifier_dropout": 0.1})");
  CHECK(mm.cls_mean_pooling);
  CHECK(mm.seq_cls_dropout == 0.1);
}

TEST_CASE("classification heads: bad values name their field", "[family][set13]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "bert", "classifier_dropout": 1.5})", "config.classifier_dropout:"},
      {R"({"model_type": "roberta", "classifier_dropout": "x"})", "config.classifier_dropout:"},
      {R"({"model_type": "bert", "problem_type": "ranking"})", "config.problem_type:"},
      {R"({"model_type": "distilbert", "seq_classif_dropout": -0.1})", "config.seq_classif_dropout:"},
      {R"({"model_type": "distilbert", "problem_type": 3})", "config.problem_type:"},
      {R"({"model_type": "modernbert", "classifier_pooling": "max"})", "config.classifier_pooling:"},
      {R"({"model_type": "modernbert", "classifier_dropout": 2})", "config.classifier_dropout:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // Losses other than cross entropy (not measured) are refused naming what picks them; token classification
  // ignores problem_type (cross entropy always) and takes one label.
  const ModelSpec bert = model_of(R"({"model_type": "bert", "num_hidden_layers": 2})");
  CHECK(error_of([&] { memplan::estimate(bert, training(Task::seq_cls, 1)); }).rfind("num_labels:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(bert, training(Task::token_cls, 1)); }) == "no error");
  for (const char* pt : {"regression", "multi_label_classification"}) {
    const ModelSpec m = model_of(std::string(R"({"model_type": "distilbert", "n_layers": 2, "problem_type": ")") + pt +
                                 "\"}");
    CHECK(error_of([&] { memplan::estimate(m, training(Task::seq_cls, 3)); }).rfind("config.problem_type:", 0) == 0);  // the config key, as every importer names it
    CHECK(error_of([&] { memplan::estimate(m, training(Task::token_cls, 3)); }) == "no error");
  }
  // single_label_classification with one label is cross entropy over one class: modelled.
  const ModelSpec one = model_of(R"({"model_type": "modernbert", "num_hidden_layers": 2,
      "problem_type": "single_label_classification"})");
  CHECK(error_of([&] { memplan::estimate(one, training(Task::seq_cls, 1)); }) == "no error");
  // Inference with a head is one forward (tests/families/test_family_set19_encinf.cpp); generate() is refused naming it.
  RunConfig inf = training(Task::seq_cls, 2);
  inf.mode = memplan::Mode::inference;
  CHECK(error_of([&] { memplan::estimate(bert, inf); }) == "no error");
  inf.generate_tokens = 2;
  CHECK(error_of([&] { memplan::estimate(bert, inf); }).rfind("generate_tokens:", 0) == 0);
}

TEST_CASE("classification heads: parameter counts derived by hand", "[family][set13]") {
  // Every count below is sum(p.numel()) of the AutoModelFor...Classification module, derived from its
  // registrations; classifier = nn.Linear(H, num_labels) = H * n + n.
  // bert (BertConfig defaults: V 30522, H 768, I 3072, 512 positions, 2 token types):
  //   embeddings 30522*768 + 512*768 + 2*768 + 2*768 = 23,440,896 + 393,216 + 1,536 + 1,536 = 23,837,184
  //   layer: q, k, v, attention.output.dense 4 * (768*768 + 768) = 2,362,368; two LayerNorms 2 * 1,536;
  //          intermediate 768*3072 + 3072 = 2,362,368; output 3072*768 + 768 = 2,360,064 -> 7,087,872
  //   pooler (seq_cls only) 768*768 + 768 = 590,592
  //   4 layers, seq_cls, 2 labels: 23,837,184 + 4*7,087,872 + 590,592 + 1,538 = 52,780,802
  //   bert-base (12 layers), seq_cls, 2 labels: 23,837,184 + 85,054,464 + 590,592 + 1,538 = 109,483,778
  //   (bert-base-uncased's BertModel with pooler: 109,482,240, its published figure, + the classifier)
  //   4 layers, token_cls, 9 labels (no pooler): 23,837,184 + 28,351,488 + 6,921 = 52,195,593
  // roberta (V 50265, 514 positions, 1 token type): embeddings 38,603,520 + 768 + 1,536 + 394,752 = 39,000,576
  //   RobertaClassificationHead: dense 590,592 + out_proj (768 * n + n); no pooler.
  //   roberta-base (12 layers), seq_cls, 2 labels: 39,000,576 + 85,054,464 + 590,592 + 1,538 = 124,647,170
  //   4 layers, token_cls, 7 labels: 39,000,576 + 28,351,488 + 5,383 = 67,357,447
  // distilbert (V 30522, 512 positions, no token types): embeddings 23,440,896 + 393,216 + 1,536 = 23,835,648;
  //   a TransformerBlock has the BERT layer's 7,087,872 parameters; seq_cls: pre_classifier 590,592 + classifier.
  //   distilbert-base (6 layers), seq_cls, 2 labels: 23,835,648 + 42,527,232 + 590,592 + 1,538 = 66,955,010
  //   (distilbert-base-uncased-finetuned-sst-2-english: 66,955,010)
  // modernbert (width 768: V 50368, I 1152, norms without bias, no projection biases):
  //   base model with L layers: 38,682,624 + 768 + L*5,014,272 + (L - 1)*768 + 768 (see the set-11 test);
  //   ModernBertPredictionHead dense 589,824 (no bias) + norm 768; then the classifier (with its bias).
  //   6 layers, seq_cls, 2 labels: 68,773,632 + 590,592 + 1,538 = 69,365,762
  //   ModernBERT-base (22 layers), seq_cls, 2 labels: 149,655,232 - 50,368 (the MLM decoder bias) + 1,538
  //   = 149,606,402
  struct Row {
    const char* config;
    Task task;
    int64_t labels, params;
  };
  const Row rows[] = {
      {R"({"model_type": "bert", "num_hidden_layers": 4})", Task::seq_cls, 2, 52'780'802},
      {R"({"model_type": "bert"})", Task::seq_cls, 2, 109'483'778},
      {R"({"model_type": "bert", "num_hidden_layers": 4})", Task::token_cls, 9, 52'195'593},
      {R"({"model_type": "roberta", "max_position_embeddings": 514, "type_vocab_size": 1})", Task::seq_cls, 2,
       124'647'170},
      {R"({"model_type": "roberta", "num_hidden_layers": 4, "max_position_embeddings": 514, "type_vocab_size": 1})",
       Task::token_cls, 7, 67'357'447},
      {R"({"model_type": "distilbert"})", Task::seq_cls, 2, 66'955'010},
      {R"({"model_type": "modernbert", "num_hidden_layers": 6})", Task::seq_cls, 2, 69'365'762},
      {R"({"model_type": "modernbert"})", Task::seq_cls, 2, 149'606'402},
  };
  for (const auto& r : rows) {
    INFO(r.config << " " << memplan::task_name(r.task) << " " << r.labels);
    CHECK(memplan::estimate(model_of(r.config), training(r.task, r.labels, 1, 64)).params == r.params);
  }
}

TEST_CASE("classification heads: measured H200 rows of family set 13", "[family][set13]") {
  // Peak allocated within 0.1 % per row, reserved within 1 %, and the measured `params` (sum of p.numel()) exactly;
  // the params equal the hand-derived counts above: bert seq_cls 2 / 3 labels 52,780,802 / 52,781,571, token_cls 9
  // labels 52,195,593; roberta (4 layers) seq_cls 2 labels 39,000,576 + 28,351,488 + 592,130 = 67,944,194, token_cls
  // 7 labels 67,357,447; distilbert (4 layers) seq_cls 2 labels 23,835,648 + 28,351,488 + 592,130 = 52,779,266,
  // token_cls 9 labels 23,835,648 + 28,351,488 + 6,921 = 52,194,057; modernbert (6 layers) seq_cls 2 / 3 labels
  // 69,365,762 / 69,366,531, token_cls 9 labels 69,371,145.
  // f13-bert-seqcls-ampbf16-b32s256 is +0.07 % allocated, +0.10 % reserved: its live blocks at the peak are the
  // recording's; the +1.3 MiB is in the unsplit tails of large blocks (block placement), cause not found
  // (notes-f13/classification-encoders.md).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(
            c.id, {"f13-bert-seqcls", "f13-bert-tokcls", "f13-roberta-seqcls", "f13-roberta-tokcls",
                   "f13-distilbert-seqcls", "f13-distilbert-tokcls", "f13-modernbert-seqcls", "f13-modernbert-tokcls"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 10);
  for (const auto& r : checked) {
    INFO(r.id);
    if (r.id == "f13-bert-seqcls-ampbf16-b32s256") continue;  // the listed miss above
    CHECK(std::abs(r.allocated_err) <= 0.0005);
    CHECK(std::abs(r.reserved_err) <= 0.0005);
  }
}

TEST_CASE("embedding backward: torch 2.11's fused path for a table of few rows", "[family][set13]") {
  // embedding_backward_cuda_kernel above 3072 indices: the two-pass path stages an fp32 [partials, H] buffer
  // (partials = n / 10 + min(n, V)); when sum_and_scatter's grid, ceil(min(n, V) * H_warp / min(H_warp, 1024)),
  // is below 4 blocks per SM (132 SMs) and under a quarter of the partials, one atomic kernel runs instead: a second
  // [partials] int64 buffer (partial -> segment), and for a 16-bit gradient a zero-filled fp32 [V, H] accumulator.
  // BERT b32 s256 (n = 8192, H = 768): word embeddings V 30522 -> grid 8192, two-pass (9011 partials); token
  // types V 2 -> grid 2, 821 partials > 8: fused (the whole-run recordings of family set 13 show two 6568-byte
  // buffers and no 2,522,112-byte one).
  const ModelSpec bert = model_of(R"({"model_type": "bert", "num_hidden_layers": 1})");
  for (auto precision : {memplan::Precision::amp_bf16, memplan::Precision::bf16}) {
    RunConfig c = training(Task::seq_cls, 2, 32, 256);
    c.precision = precision;
    const memplan::Graph g = memplan::build_graph(bert, c);
    int seen = 0;
    for (const auto& op : g.ops) {
      if (g.name_of(op.name) != "embedding") continue;
      const int64_t rows = g.tensors[static_cast<size_t>(op.reads[1])].shape[0];
      const std::vector<int64_t> temps(op.bwd_temp_bytes.begin(), op.bwd_temp_bytes.end());
      const int64_t n8 = 8192 * 8;
      if (rows == 30522) {
        CHECK(temps == std::vector<int64_t>{n8, n8, n8, n8, 9011 * 8, int64_t{9011} * 768 * 4});
        ++seen;
      } else if (rows == 2) {
        std::vector<int64_t> want{n8, n8, n8, n8, 821 * 8, 821 * 8};
        if (precision == memplan::Precision::bf16) want.push_back(2 * 768 * 4);
        CHECK(temps == want);
        ++seen;
      } else {
        CHECK(temps.empty());  // positions: [1, S], 256 indices, the direct kernel
      }
    }
    CHECK(seen == 2);
  }
}
