// mpnet (family set 17): the importer's class defaults, refusals naming the field, parameter counts derived by
// hand from modeling_mpnet.py (published checkpoints and the measured rows), and the measured H200 rows (measured
// before the builder existed and used to write it).
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

// MPNet runs eager attention only (the CLI's default for it, default_attn).
RunConfig training(Task task, int64_t num_labels, int64_t batch = 2, int64_t seq = 64) {
  RunConfig c = memplan::testing::task_training(task, num_labels, batch, seq);
  c.attn = memplan::AttnImpl::eager;
  return c;
}

}  // namespace

TEST_CASE("mpnet: the importer's class defaults", "[family][set17]") {
  // MPNetConfig (5.17): vocab 30527, hidden 768, 12 layers, 12 heads, intermediate 3072, gelu, dropouts 0.1,
  // max_position_embeddings 512, relative_attention_num_buckets 32, tied; positions start at the fixed padding
  // index 1 + 1.
  const TransformerSpec s = import(R"({"model_type": "mpnet"})");
  CHECK(s.model_type == "mpnet");
  CHECK(s.vocab_size == 30527);
  CHECK(s.hidden_size == 768);
  CHECK(s.num_layers == 12);
  CHECK(s.num_heads == 12);
  CHECK(s.head_dim == 64);
  CHECK(s.intermediate_size == 3072);
  CHECK(s.hidden_act == "gelu");
  CHECK(s.max_position_embeddings == 512);
  CHECK(s.relative_attention_num_buckets == 32);
  CHECK(s.position_id_offset == 2);
  CHECK(s.resid_dropout == 0.1);
  CHECK(s.embd_dropout == 0.1);
  CHECK(s.attn_dropout == 0.1);
  CHECK(s.seq_cls_dropout == 0.1);
  CHECK(s.token_cls_dropout == 0.1);
  CHECK(s.tie_word_embeddings);
  CHECK(s.problem_type.empty());
  // pad_token_id does not move the positions (MPNetEmbeddings.padding_idx is 1 whatever the config says).
  const TransformerSpec p = import(R"({"model_type": "mpnet", "pad_token_id": 0, "hidden_dropout_prob": 0.0,
      "relative_attention_num_buckets": 64})");
  CHECK(p.position_id_offset == 2);
  CHECK(p.seq_cls_dropout == 0.0);
  CHECK(p.token_cls_dropout == 0.0);
  CHECK(p.relative_attention_num_buckets == 64);
  // The CLI's attention default: eager (MPNetPreTrainedModel has no SDPA).
  ModelSpec m = model_of(R"({"model_type": "mpnet"})");
  CHECK(memplan::default_attn(m) == memplan::AttnImpl::eager);
}

TEST_CASE("mpnet: bad values and unmodelled settings name their field", "[family][set17]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "mpnet", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "mpnet", "hidden_size": 770})", "config.num_attention_heads:"},
      {R"({"model_type": "mpnet", "relative_attention_num_buckets": 16})", "config.relative_attention_num_buckets:"},
      {R"({"model_type": "mpnet", "relative_attention_num_buckets": 0})", "config.relative_attention_num_buckets:"},
      {R"({"model_type": "mpnet", "tie_word_embeddings": false})", "config.tie_word_embeddings:"},
      {R"({"model_type": "mpnet", "vocab_size": 1})", "config.vocab_size:"},
      {R"({"model_type": "mpnet", "max_position_embeddings": 2})", "config.max_position_embeddings:"},
      {R"({"model_type": "mpnet", "hidden_dropout_prob": 1.5})", "config.hidden_dropout_prob:"},
      {R"({"model_type": "mpnet", "problem_type": "ranking"})", "config.problem_type:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  const ModelSpec m = model_of(R"({"model_type": "mpnet", "num_hidden_layers": 2, "max_position_embeddings": 514})");
  CHECK(error_of([&] { memplan::estimate(m, training(Task::lm, 2)); }) == "no error");
  RunConfig sdpa = training(Task::lm, 2);
  sdpa.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(m, sdpa); }).rfind("attn:", 0) == 0);
  RunConfig ckpt = training(Task::lm, 2);
  ckpt.grad_checkpointing = true;
  CHECK(error_of([&] { memplan::estimate(m, ckpt); }).rfind("grad_checkpointing:", 0) == 0);
  RunConfig some = training(Task::seq_cls, 2);
  some.checkpoint_layers = {1};
  CHECK(error_of([&] { memplan::estimate(m, some); }).rfind("grad_checkpointing:", 0) == 0);
  RunConfig inf = training(Task::lm, 2);  // inference is one forward (test_family_set19_encinf.cpp)
  inf.mode = memplan::Mode::inference;
  inf.generate_tokens = 3;
  CHECK(error_of([&] { memplan::estimate(m, inf); }).rfind("generate_tokens:", 0) == 0);
  // 514 rows hold 512 tokens (positions 2..513).
  CHECK(error_of([&] { memplan::estimate(m, training(Task::lm, 2, 1, 512)); }) == "no error");
  CHECK(error_of([&] { memplan::estimate(m, training(Task::lm, 2, 1, 513)); }).rfind("seq_len:", 0) == 0);
  const ModelSpec reg = model_of(R"({"model_type": "mpnet", "num_hidden_layers": 2, "problem_type": "regression"})");
  CHECK(error_of([&] { memplan::estimate(reg, training(Task::seq_cls, 3)); }).rfind("config.problem_type:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(reg, training(Task::token_cls, 3)); }) == "no error");
}

TEST_CASE("mpnet: parameter counts derived by hand", "[family][set17]") {
  // mpnet-base / all-mpnet-base-v2 (V 30527, H 768, I 3072, 12 layers, 12 heads, 514 positions, 32 buckets):
  //   embeddings: word 30527 * 768 = 23,444,736 + position 514 * 768 = 394,752 + LayerNorm 1,536 = 23,841,024
  //     (no token types; position_ids is a buffer);
  //   layer: q, k, v, o 4 * (768 * 768 + 768) = 2,362,368 + attention LayerNorm 1,536 + intermediate
  //     768 * 3072 + 3072 = 2,362,368 + output 3072 * 768 + 768 = 2,360,064 + LayerNorm 1,536 = 7,087,872,
  //     x 12 = 85,054,464; encoder.relative_attention_bias 32 * 12 = 384;
  //   MPNetModel without pooler: 108,895,872.
  //   MPNetForMaskedLM: lm_head dense 590,592 + layer_norm 1,536 + bias 30,527 (decoder.weight tied to the word
  //     embeddings, decoder.bias to lm_head.bias) = 622,655 -> 109,518,527 (the measured MLM rows' params;
  //     the published figure for the checkpoints is "110M").
  //   MPNetForSequenceClassification, 2 labels: classifier dense 590,592 + out_proj 1,538 -> 109,488,002.
  //   MPNetForTokenClassification, 9 labels: classifier 6,921 -> 108,902,793.
  //   (MPNetModel with its pooler, as sentence-transformers loads all-mpnet-base-v2: 108,895,872 + 590,592 =
  //   109,486,464; memplan builds the masked-LM class for the zoo entries.)
  CHECK(memplan::param_count(memplan::load_zoo_model("mpnet-base")) == 109'518'527);
  CHECK(memplan::param_count(memplan::load_zoo_model("all-mpnet-base-v2")) == 109'518'527);
  // Another shape: H 1024, 16 heads, I 4096, 2 layers, 64 buckets, token_cls 3 labels:
  //   embeddings 30527 * 1024 = 31,259,648 + 514 * 1024 = 526,336 + 2,048 = 31,788,032;
  //   layer 4 * 1,049,600 + 2,048 + 4,198,400 + 4,195,328 + 2,048 = 12,596,224, x 2 = 25,192,448;
  //   table 64 * 16 = 1,024; classifier 1024 * 3 + 3 = 3,075 -> 56,984,579.
  struct Row {
    const char* config;
    Task task;
    int64_t labels, params;
  };
  const Row rows[] = {
      {R"({"model_type": "mpnet", "max_position_embeddings": 514})", Task::lm, 0, 109'518'527},
      {R"({"model_type": "mpnet", "max_position_embeddings": 514})", Task::seq_cls, 2, 109'488'002},
      {R"({"model_type": "mpnet", "max_position_embeddings": 514})", Task::token_cls, 9, 108'902'793},
      {R"({"model_type": "mpnet", "max_position_embeddings": 514, "hidden_size": 1024, "num_attention_heads": 16,
           "intermediate_size": 4096, "num_hidden_layers": 2, "relative_attention_num_buckets": 64})",
       Task::token_cls, 3, 56'984'579},
  };
  for (const auto& r : rows) {
    INFO(r.config << " " << memplan::task_name(r.task) << " " << r.labels);
    CHECK(memplan::estimate(model_of(r.config), training(r.task, r.labels, 1, 64)).params == r.params);
  }
}

TEST_CASE("mpnet: measured H200 rows of family set 17", "[family][set17]") {
  // Peak allocated within 0.1 % per row, reserved within 1 %, and the measured `params` (sum of p.numel())
  // exactly: they equal the hand-derived counts above (MLM 109,518,527, seq_cls 2 labels 109,488,002,
  // token_cls 9 labels 108,902,793).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return c.id.rfind("f17-mpnet-", 0) == 0; },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 4);
  for (const auto& r : checked) {
    INFO(r.id);
    CHECK(std::abs(r.allocated_err) <= 0.0005);
  }
}
