// camembert and electra (family set 15): the importers' class defaults, refusals naming the field, parameter
// counts derived by hand from the modeling files (published checkpoints and the measured rows), and the measured
// H200 rows (measured before the builders existed and used to write them).
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

TEST_CASE("camembert / electra: the importers' class defaults", "[family][set15]") {
  // CamembertConfig (5.17): XLMRobertaConfig's defaults, vocab 30522, pad_token_id 1 (positions counted from 2).
  const TransformerSpec c = import(R"({"model_type": "camembert"})");
  CHECK(c.model_type == "camembert");
  CHECK(c.vocab_size == 30522);
  CHECK(c.hidden_size == 768);
  CHECK(c.num_layers == 12);
  CHECK(c.num_heads == 12);
  CHECK(c.intermediate_size == 3072);
  CHECK(c.max_position_embeddings == 512);
  CHECK(c.type_vocab_size == 2);
  CHECK(c.position_id_offset == 2);
  CHECK(c.seq_cls_dropout == 0.1);
  CHECK(c.token_cls_dropout == 0.1);
  CHECK(c.embedding_size == 0);
  // ElectraConfig (5.17): the small generator's shape.
  const TransformerSpec e = import(R"({"model_type": "electra"})");
  CHECK(e.model_type == "electra");
  CHECK(e.vocab_size == 30522);
  CHECK(e.embedding_size == 128);
  CHECK(e.hidden_size == 256);
  CHECK(e.num_layers == 12);
  CHECK(e.num_heads == 4);
  CHECK(e.head_dim == 64);
  CHECK(e.intermediate_size == 1024);
  CHECK(e.hidden_act == "gelu");
  CHECK(e.max_position_embeddings == 512);
  CHECK(e.type_vocab_size == 2);
  CHECK(e.resid_dropout == 0.1);
  CHECK(e.embd_dropout == 0.1);
  CHECK(e.attn_dropout == 0.1);
  CHECK(e.tie_word_embeddings);
  CHECK(e.position_id_offset == 0);
  CHECK(e.seq_cls_dropout == 0.1);
  CHECK(e.token_cls_dropout == 0.1);
  CHECK(e.problem_type.empty());
  const TransformerSpec e2 = import(R"({"model_type": "electra", "hidden_dropout_prob": 0.2,
      "classifier_dropout": 0.0, "embedding_size": 256})");
  CHECK(e2.embd_dropout == 0.2);
  CHECK(e2.seq_cls_dropout == 0.0);
  CHECK(e2.token_cls_dropout == 0.0);
  CHECK(e2.embedding_size == 256);
}

TEST_CASE("camembert / electra: bad values name their field", "[family][set15]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "electra", "embedding_size": 0})", "config.embedding_size:"},
      {R"({"model_type": "electra", "embedding_size": "x"})", "config.embedding_size:"},
      {R"({"model_type": "electra", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "electra", "hidden_size": 250})", "config.num_attention_heads:"},
      {R"({"model_type": "electra", "chunk_size_feed_forward": 64})", "config.chunk_size_feed_forward:"},
      {R"({"model_type": "electra", "is_decoder": true})", "config.is_decoder:"},
      {R"({"model_type": "electra", "add_cross_attention": true})", "config.add_cross_attention:"},
      {R"({"model_type": "electra", "pad_token_id": 30522})", "config.pad_token_id:"},
      {R"({"model_type": "electra", "classifier_dropout": 1.5})", "config.classifier_dropout:"},
      {R"({"model_type": "electra", "problem_type": "ranking"})", "config.problem_type:"},
      {R"({"model_type": "camembert", "hidden_act": "gelu_new"})", "config.hidden_act:"},
      {R"({"model_type": "camembert", "pad_token_id": null})", "config.pad_token_id:"},
      {R"({"model_type": "camembert", "is_decoder": true})", "config.is_decoder:"},
      {R"({"model_type": "camembert", "max_position_embeddings": 2})", "config.pad_token_id:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // Regression / multi-label sequence losses are refused naming what picks them.
  const ModelSpec m = model_of(R"({"model_type": "electra", "num_hidden_layers": 2, "problem_type": "regression"})");
  CHECK(error_of([&] { memplan::estimate(m, training(Task::seq_cls, 3)); }).rfind("config.problem_type:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(m, training(Task::token_cls, 3)); }) == "no error");
  const ModelSpec one = model_of(R"({"model_type": "camembert", "num_hidden_layers": 2})");
  CHECK(error_of([&] { memplan::estimate(one, training(Task::seq_cls, 1)); }).rfind("num_labels:", 0) == 0);
  RunConfig inf = training(Task::lm, 2);  // inference is one forward (test_family_set19_encinf.cpp): no generate()
  inf.mode = memplan::Mode::inference;
  inf.generate_tokens = 2;
  CHECK(error_of([&] { memplan::estimate(model_of(R"({"model_type": "electra"})"), inf); })
            .rfind("generate_tokens:", 0) == 0);
}

TEST_CASE("camembert / electra: parameter counts derived by hand", "[family][set15]") {
  // camembert (roberta's modules): embeddings V*768 + 1 token type * 768 + LayerNorm 1,536 + 514 * 768 = 394,752;
  //   layer 7,087,872 (BERT's: q, k, v, o 4 * 590,592, two LayerNorms 3,072, 2,362,368 + 2,360,064);
  //   lm_head: dense 590,592 + layer_norm 1,536 + bias V (decoder tied to the word embeddings, its bias to lm_head.bias).
  //   camembert-base (V 32005, 12 layers): 24,579,840 + 768 + 1,536 + 394,752 = 24,976,896; + 85,054,464
  //   + 590,592 + 1,536 + 32,005 = 110,655,493 (published: 110 M).
  //   4 layers, MLM: 24,976,896 + 28,351,488 + 624,133 = 53,952,517 (f15-camembert-ampbf16-b16s512's params)
  //   4 layers, seq_cls 3 labels: + CamembertClassificationHead dense 590,592 + out_proj 2,307 = 53,921,283
  // electra: embeddings V*E + 512*E + 2*E + 2*E; embeddings_project E*H + H when E != H; layer 4*(H*H + H) + 4*H
  //   + 2*(H*I) + I + H; ElectraForMaskedLM head: LayerNorm 2*E + dense H*E + E + generator_lm_head bias V (its
  //   weight tied to the word embeddings). ElectraForPreTraining (the published discriminators) has instead
  //   dense H*H + H and dense_prediction H + 1.
  //   small (E 128, H 256, I 1024, 12 layers): embeddings 3,906,816 + 65,536 + 256 + 256 = 3,972,864; project
  //     32,768 + 256 = 33,024; layer 263,168 + 1,024 + 263,168 + 262,400 = 789,760, x 12 = 9,477,120; base model
  //     13,483,008. MaskedLM head 256 + 32,896 + 30,522 = 63,674 -> 13,546,682 (electra-small-generator, and
  //     f15-electras-mlm-bf16-b32s512's params); PreTraining 65,792 + 257 -> 13,549,057 (published 13.5 M).
  //   base generator (E 768, H 256, I 1024, 12 layers): embeddings 23,440,896 + 393,216 + 1,536 + 1,536 =
  //     23,837,184; project 196,608 + 256 = 196,864; layers 9,477,120; head 1,536 + 197,376 + 30,522 = 229,434
  //     -> 33,740,602 (published 33.5 M).
  //   base discriminator (E = H 768, I 3072, 12 layers): 23,837,184 + 85,054,464 = 108,891,648; MaskedLM head
  //     1,536 + 590,592 + 30,522 = 622,650 -> 109,514,298; PreTraining 590,592 + 769 -> 109,483,009 (published
  //     110 M). 4 layers, seq_cls 2 labels: 23,837,184 + 28,351,488 + 590,592 + 1,538 = 52,780,802.
  //   large discriminator (E = H 1024, I 4096, 24 layers): embeddings 31,254,528 + 524,288 + 2,048 + 2,048 =
  //     31,782,912; layer 4,198,400 + 4,096 + 4,198,400 + 4,195,328 = 12,596,224, x 24 = 302,309,376; base
  //     334,092,288; MaskedLM head 2,048 + 1,049,600 + 30,522 = 1,082,170 -> 335,174,458; PreTraining 1,049,600
  //     + 1,025 -> 335,142,913 (published 335 M). 3 layers, token_cls 9 labels: 31,782,912 + 37,788,672 + 9,225
  //     = 69,580,809.
  CHECK(memplan::param_count(memplan::load_zoo_model("camembert-base")) == 110'655'493);
  CHECK(memplan::param_count(memplan::load_zoo_model("electra-small-generator")) == 13'546'682);
  CHECK(memplan::param_count(memplan::load_zoo_model("electra-small-discriminator")) == 13'546'682);
  CHECK(memplan::param_count(memplan::load_zoo_model("electra-base-generator")) == 33'740'602);
  CHECK(memplan::param_count(memplan::load_zoo_model("electra-base-discriminator")) == 109'514'298);
  CHECK(memplan::param_count(memplan::load_zoo_model("electra-large-discriminator")) == 335'174'458);
  struct Row {
    const char* config;
    Task task;
    int64_t labels, params;
  };
  const Row rows[] = {
      {R"({"model_type": "camembert", "num_hidden_layers": 4, "vocab_size": 32005, "max_position_embeddings": 514,
           "type_vocab_size": 1})", Task::seq_cls, 3, 53'921'283},
      {R"({"model_type": "electra", "embedding_size": 768, "hidden_size": 768, "num_hidden_layers": 4,
           "num_attention_heads": 12, "intermediate_size": 3072})", Task::seq_cls, 2, 52'780'802},
      {R"({"model_type": "electra", "embedding_size": 1024, "hidden_size": 1024, "num_hidden_layers": 3,
           "num_attention_heads": 16, "intermediate_size": 4096})", Task::token_cls, 9, 69'580'809},
      // tie_word_embeddings false: generator_lm_head keeps its own [V, E] weight (30522 * 128 = 3,906,816).
      {R"({"model_type": "electra", "tie_word_embeddings": false})", Task::lm, 0, 13'546'682 + 3'906'816},
  };
  for (const auto& r : rows) {
    INFO(r.config << " " << memplan::task_name(r.task) << " " << r.labels);
    CHECK(memplan::estimate(model_of(r.config), training(r.task, r.labels, 1, 64)).params == r.params);
  }
}

TEST_CASE("camembert / electra: measured H200 rows of family set 15", "[family][set15]") {
  // Peak allocated within 0.1 % per row, reserved within 1 %, and the measured `params` (sum of p.numel())
  // exactly: they equal the hand-derived counts above (camembert 4 layers MLM 53,952,517, seq_cls 3 labels
  // 53,921,283; electra small MLM 13,546,682, base 4 layers seq_cls 2 labels 52,780,802, large 3 layers token_cls 9
  // labels 69,580,809).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f15-camembert-", "f15-electras-", "f15-electrab-",
                                                       "f15-electral-"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 5);
  // Allocated is exact (within 0.05 %) on every row; reserved too but on f15-electral-tokcls-fp32-b4s512-ckpt
  // (+0.85 %, 1416 vs 1404 MiB): the shared fp32 encoder's known event differences (the efficient-attention
  // backward's 8.00 + 8.01 MiB pair made as one block, one addmm output freed a few events early in the
  // checkpointed forward; notes-f15/electra.md).
  for (const auto& r : checked) {
    INFO(r.id);
    CHECK(std::abs(r.allocated_err) <= 0.0005);
    if (r.id != "f15-electral-tokcls-fp32-b4s512-ckpt") CHECK(std::abs(r.reserved_err) <= 0.0005);
  }
}
