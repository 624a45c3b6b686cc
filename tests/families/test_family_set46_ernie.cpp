// ernie (family set 46): ErnieForMaskedLM, ErnieFor{Sequence,Token}Classification and ErnieModel (embedding serving),
// BERT's model with ERNIE 2.0 / 3.0's task-type embedding. Written from the modular file without a device: the
// importer's class defaults, refusals naming the field, what use_task_id adds (derived by hand), and the zoo entry's
// parameter count derived by hand. The held-out rows (calibrate/cases/families46-input.jsonl) are predicted in
// data/validation/predictions/.
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
RunConfig mlm(int64_t batch, int64_t seq) { return memplan::testing::task_training(memplan::Task::lm, 0, batch, seq); }

}  // namespace

TEST_CASE("ernie importer: class defaults", "[family][set46][importer]") {
  // ErnieConfig(): BertConfig's widths, task_type_vocab_size 3, use_task_id false (no task-type embedding).
  const TransformerSpec s = import(R"({"model_type": "ernie"})");
  CHECK(s.model_type == "ernie");
  CHECK(s.vocab_size == 30522);
  CHECK(s.hidden_size == 768);
  CHECK(s.num_layers == 12);
  CHECK(s.type_vocab_size == 2);
  CHECK(s.max_position_embeddings == 512);
  CHECK(s.ernie_task_type_vocab == 0);
  CHECK(s.tie_word_embeddings);
  CHECK(import(R"({"model_type": "ernie", "use_task_id": true})").ernie_task_type_vocab == 3);
  CHECK(import(R"({"model_type": "ernie", "use_task_id": true, "task_type_vocab_size": 16})").ernie_task_type_vocab ==
        16);
}

TEST_CASE("ernie: refusals name the field", "[family][set46]") {
  CHECK(starts_with(error_of([] { import(R"({"model_type": "ernie", "is_decoder": true})"); }), "config.is_decoder:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "ernie", "add_cross_attention": true})"); }),
               "config.add_cross_attention:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "ernie", "use_task_id": true, "task_type_vocab_size": 0})"); }),
               "config.task_type_vocab_size:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "ernie", "use_task_id": "yes"})"); }), "config.use_task_id:"));
}

TEST_CASE("ernie: use_task_id adds a task-type table and its lookup, derived by hand", "[family][set46]") {
  // Without task ids ErnieModel is BertModel: the same parameters and the same step as bert with ERNIE's fields.
  const std::string base = R"("hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 8000, "max_position_embeddings": 1024)";
  const ModelSpec bert = memplan::testing::model_of_config(R"({"model_type": "bert", )" + base + "}");
  const ModelSpec e1 = memplan::testing::model_of_config(R"({"model_type": "ernie", )" + base + "}");
  const ModelSpec e3 =
      memplan::testing::model_of_config(R"({"model_type": "ernie", "use_task_id": true, )" + base + "}");
  CHECK(memplan::param_count(e1.transformer) == memplan::param_count(bert.transformer));
  // task_type_embeddings [3, 256]: 768 parameters more.
  CHECK(memplan::param_count(e3.transformer) == memplan::param_count(bert.transformer) + 3 * 256);
  const auto rb = memplan::estimate(bert, mlm(8, 512));
  const auto r1 = memplan::estimate(e1, mlm(8, 512));
  CHECK(r1.peak_allocated_bytes() == rb.peak_allocated_bytes());
  // With task ids the forward adds a zero [8, 512] int64 index (32 KiB) the lookup saves for its backward, and a
  // [8, 512, 256] fp32 lookup (4 MiB) added in place: the peak can only grow, by at most the index, the lookup, the
  // table, its gradient and AdamW's two moments of it.
  const auto r3 = memplan::estimate(e3, mlm(8, 512));
  CHECK(r3.peak_allocated_bytes() > rb.peak_allocated_bytes());
  CHECK(r3.peak_allocated_bytes() - rb.peak_allocated_bytes() <= 8 * 512 * 8 + 8 * 512 * 256 * 4 + 4 * (3 * 256 * 4) + 4096);
}

TEST_CASE("ernie: parameter count, derived by hand", "[family][set46]") {
  // ernie-3.0-base-zh: word 40000*768 = 30,720,000, positions 2048*768 = 1,572,864, token types 4*768 = 3,072,
  // LayerNorm 1,536, task types 3*768 = 2,304; a layer: q/k/v/out 4*(768*768 + 768) = 2,362,368, LayerNorm 1,536,
  // intermediate 3072*768 + 3072 = 2,362,368, output 768*3072 + 768 = 2,360,064, LayerNorm 1,536 -> 7,087,872,
  // x 12 = 85,054,464. ErnieModel's pooler 590,592 makes the model card's 117,944,832; the masked-LM model has no
  // pooler and adds the head's transform dense 590,592, LayerNorm 1,536 and bias 40,000 (decoder tied):
  // 30,720,000 + 1,572,864 + 3,072 + 1,536 + 2,304 + 85,054,464 + 632,128 = 117,986,368.
  CHECK(memplan::param_count(memplan::load_zoo_model("ernie-3.0-base-zh")) == 117'986'368);
}
