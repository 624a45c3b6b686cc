// xlm-roberta-xl (family set 48): XLMRobertaXLForMaskedLM, XLMRobertaXLFor{Sequence,Token}Classification and
// XLMRobertaXLModel (embedding serving): pre-LN BERT layers on RoBERTa's embeddings without their LayerNorm. Written
// from the code index's modular file without a device: the importer's class defaults, refusals naming the field, what
// the pre-LN layout changes against xlm-roberta (derived by hand) and the zoo entries' parameter counts. The held-out
// rows (calibrate/cases/families48-input.jsonl) are predicted in data/validation/predictions/families48-holdout.json.
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

TEST_CASE("xlm-roberta-xl importer: class defaults", "[family][set48][importer]") {
  // XLMRobertaXLConfig(): facebook/xlm-roberta-xl's widths (not BertConfig's), one token type, 514 positions from
  // pad_token_id 1 (so 512 tokens).
  const TransformerSpec s = import(R"({"model_type": "xlm-roberta-xl"})");
  CHECK(s.model_type == "xlm-roberta-xl");
  CHECK(s.vocab_size == 250880);
  CHECK(s.hidden_size == 2560);
  CHECK(s.num_layers == 36);
  CHECK(s.num_heads == 32);
  CHECK(s.head_dim == 80);
  CHECK(s.intermediate_size == 10240);
  CHECK(s.max_position_embeddings == 514);
  CHECK(s.type_vocab_size == 1);
  CHECK(s.position_id_offset == 2);
  CHECK(s.tie_word_embeddings);
}

TEST_CASE("xlm-roberta-xl: refusals name the field", "[family][set48]") {
  CHECK(starts_with(error_of([] { import(R"({"model_type": "xlm-roberta-xl", "is_decoder": true})"); }),
                    "config.is_decoder:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "xlm-roberta-xl", "add_cross_attention": true})"); }),
                    "config.add_cross_attention:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "xlm-roberta-xl", "hidden_act": "relu"})"); }),
                    "config.hidden_act:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "xlm-roberta-xl", "pad_token_id": null})"); }),
                    "config.pad_token_id:"));
  // Positions start at pad + 1: 512 of the 514 rows are usable.
  RunConfig cfg = mlm(2, 513);
  const ModelSpec m = memplan::testing::model_of_config(R"({"model_type": "xlm-roberta-xl", "num_hidden_layers": 1})");
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "seq_len:"));
}

TEST_CASE("xlm-roberta-xl: the pre-LN layout holds xlm-roberta's parameters, derived by hand", "[family][set48]") {
  // Same fields: each layer moves its two LayerNorms (2 x 2H parameters either way); the XL embeddings drop their
  // LayerNorm (-2H) and the encoder gains a final one (+2H): the parameter counts are equal.
  const std::string base = R"("hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 3,
      "num_attention_heads": 4, "vocab_size": 8000, "max_position_embeddings": 514, "type_vocab_size": 1})";
  const ModelSpec xlmr = memplan::testing::model_of_config(R"({"model_type": "xlm-roberta", )" + base);
  const ModelSpec xl = memplan::testing::model_of_config(R"({"model_type": "xlm-roberta-xl", )" + base);
  CHECK(memplan::param_count(xl.transformer) == memplan::param_count(xlmr.transformer));
}

TEST_CASE("xlm-roberta-xl: parameter counts, derived by hand", "[family][set48]") {
  // xlm-roberta-xl: word 250880*2560 = 642,252,800, token type 2,560, positions 514*2560 = 1,315,840; a layer:
  // q/k/v/out 4*(2560*2560 + 2560) = 26,224,640, self_attn_layer_norm 5,120, intermediate 10240*2560 + 10240 =
  // 26,224,640, output 2560*10240 + 2560 = 26,216,960, LayerNorm 5,120 -> 78,676,480, x 36 = 2,832,353,280; encoder
  // LayerNorm 5,120; masked-LM head: dense 6,556,160, layer_norm 5,120, bias 250,880 (decoder tied):
  // 642,252,800 + 2,560 + 1,315,840 + 2,832,353,280 + 5,120 + 6,556,160 + 5,120 + 250,880 = 3,482,741,760.
  CHECK(memplan::param_count(memplan::load_zoo_model("xlm-roberta-xl")) == 3'482'741'760);
  // xlm-roberta-xxl: 4096 wide, FFN 16384, 48 layers: a layer 201,379,840; 10,712,994,816 in all.
  CHECK(memplan::param_count(memplan::load_zoo_model("xlm-roberta-xxl")) == 10'712'994'816);
}

TEST_CASE("data2vec-text: the RoBERTa classes under other names", "[family][set48]") {
  // modular_data2vec_text.py: Data2VecText{Embeddings,Layer,Model,LMHead,ClassificationHead} are the Roberta classes,
  // assigned in Roberta's order (base model, then head). Data2VecTextConfig has BertConfig's defaults (vocab 30522).
  const TransformerSpec s = import(R"({"model_type": "data2vec-text"})");
  CHECK(s.vocab_size == 30522);
  CHECK(s.position_id_offset == 2);
  // roberta-base's widths: word 50265*768 = 38,603,520, positions 514*768 = 394,752, token type 768, LayerNorm 1,536;
  // 12 BERT layers of 7,087,872 = 85,054,464; lm_head dense 590,592, layer_norm 1,536, bias 50,265 (decoder tied):
  // 124,697,433.
  CHECK(memplan::param_count(memplan::load_zoo_model("data2vec-text-base")) == 124'697'433);
  // The same replay as roberta's with the same fields, for each task.
  const std::string fields = R"("hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 8000, "max_position_embeddings": 514, "type_vocab_size": 1})";
  const ModelSpec d2v = memplan::testing::model_of_config(R"({"model_type": "data2vec-text", )" + fields);
  const ModelSpec rob = memplan::testing::model_of_config(R"({"model_type": "roberta", )" + fields);
  for (const memplan::Task task : {memplan::Task::lm, memplan::Task::seq_cls, memplan::Task::token_cls}) {
    const RunConfig cfg = memplan::testing::task_training(task, task == memplan::Task::lm ? 0 : 3, 8, 256);
    CHECK(memplan::estimate(d2v, cfg).peak_allocated_bytes() == memplan::estimate(rob, cfg).peak_allocated_bytes());
  }
}
