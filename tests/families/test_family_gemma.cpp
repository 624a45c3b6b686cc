// gemma / gemma2 / gemma3_text / gemma3 (text decoder): importer defaults and refusals, parameter counts against
// the measured cases and the published checkpoints, and the measured H200 cases of family set 1.
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

TEST_CASE("gemma importers: class defaults of transformers 5.17", "[family][gemma]") {
  // GemmaConfig: 3072 / 24576 / 28 layers / 16 heads / 16 kv heads / head_dim 256, tied, no sliding window.
  const TransformerSpec g = import(R"({"model_type": "gemma"})");
  CHECK(g.hidden_size == 3072);
  CHECK(g.intermediate_size == 24576);
  CHECK(g.num_layers == 28);
  CHECK(g.num_kv_heads == 16);
  CHECK(g.head_dim == 256);
  CHECK(g.hidden_act == "gelu_pytorch_tanh");
  CHECK(g.tie_word_embeddings);
  CHECK(g.sliding_window == 0);
  CHECK(g.final_logit_softcapping == 0.0);

  // Gemma2Config: softcapping 30 / 50, sliding 4096 on even layers (layer_types (i + 1) % 2).
  const TransformerSpec g2 = import(R"({"model_type": "gemma2"})");
  CHECK(g2.vocab_size == 256000);
  CHECK(g2.num_layers == 26);
  CHECK(g2.num_kv_heads == 4);
  CHECK(g2.final_logit_softcapping == 30.0);
  CHECK(g2.attn_logit_softcapping == 50.0);
  CHECK(g2.sliding_window == 4096);
  REQUIRE(g2.sliding_layers.size() == 26);
  CHECK(g2.sliding_layers[0] == 1);
  CHECK(g2.sliding_layers[1] == 0);
  CHECK(g2.sliding_layers[24] == 1);

  // Gemma3TextConfig: vocab 262208, no softcapping, sliding_window_pattern 6 => layers 5, 11, 17, 23 full.
  const TransformerSpec g3 = import(R"({"model_type": "gemma3_text"})");
  CHECK(g3.vocab_size == 262208);
  CHECK(g3.max_position_embeddings == 131072);
  CHECK(g3.final_logit_softcapping == 0.0);
  CHECK(g3.attn_logit_softcapping == 0.0);
  REQUIRE(g3.sliding_layers.size() == 26);
  int full = 0;
  for (int64_t i = 0; i < 26; ++i) full += g3.sliding_layers[static_cast<size_t>(i)] == 0;
  CHECK(full == 4);
  CHECK(g3.sliding_layers[5] == 0);
  CHECK(g3.sliding_layers[4] == 1);
  const TransformerSpec p3 = import(R"({"model_type": "gemma3_text", "num_hidden_layers": 4, "sliding_window_pattern": 2})");
  CHECK(p3.sliding_layers == std::vector<uint8_t>{1, 0, 1, 0});
  const TransformerSpec lt = import(
      R"({"model_type": "gemma2", "num_hidden_layers": 3, "layer_types": ["full_attention", "sliding_attention", "full_attention"]})");
  CHECK(lt.sliding_layers == std::vector<uint8_t>{0, 1, 0});
  CHECK(import(R"({"model_type": "gemma2", "final_logit_softcapping": null})").final_logit_softcapping == 0.0);
}

TEST_CASE("gemma3 multimodal configs import their text decoder", "[family][gemma]") {
  const TransformerSpec s = import(R"({"model_type": "gemma3", "text_config": {"hidden_size": 2560,
      "intermediate_size": 10240, "num_hidden_layers": 34, "sliding_window": 1024}, "vision_config": {}})");
  CHECK(s.model_type == "gemma3_text");
  CHECK(s.hidden_size == 2560);
  CHECK(s.num_heads == 8);  // Gemma3TextConfig default
  CHECK(s.sliding_window == 1024);
  CHECK(s.modelled_part == "text decoder only");
  CHECK(error_of([] { import(R"({"model_type": "gemma3", "text_config": {"hidden_size": -1}})"); })
            .rfind("config.text_config.hidden_size:", 0) == 0);
  CHECK(error_of([] { import(R"({"model_type": "gemma3", "text_config": 3})"); }).rfind("config.text_config:", 0) == 0);
}

TEST_CASE("gemma importers refuse what the models would reject or the builders do not model", "[family][gemma]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "gemma2", "hidden_activation": "gelu_new"})", "config.hidden_activation:"},
      {R"({"model_type": "gemma", "hidden_act": "tanh"})", "config.hidden_act:"},
      {R"({"model_type": "gemma3_text", "use_bidirectional_attention": true})", "config.use_bidirectional_attention:"},
      {R"({"model_type": "gemma2", "num_hidden_layers": 2, "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "gemma2", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "gemma2", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "gemma2", "final_logit_softcapping": -1})", "config.final_logit_softcapping:"},
      {R"({"model_type": "gemma2", "hidden_size": 2300})", "config.num_attention_heads:"},  // 2300 % 8
      {R"({"model_type": "gemma", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("gemma parameter counts: measured cases and published checkpoints", "[family][gemma]") {
  // The measured cases' sum(p.numel()) (data/validation/h200-families.jsonl `params`).
  CHECK(memplan::param_count(import(R"({"model_type": "gemma", "hidden_size": 2048, "intermediate_size": 16384,
      "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 1})")) == 854'603'776);
  CHECK(memplan::param_count(import(R"({"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216,
      "num_hidden_layers": 4})")) == 901'290'240);
  CHECK(memplan::param_count(import(R"({"model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912,
      "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 1, "vocab_size": 262144})")) == 463'043'712);

  // Published counts (model cards / hub safetensors totals). gemma3 multimodal entries: the text decoder's count,
  // derived by hand as embed V*H + L * (q + k + v + o + q_norm/k_norm 2*hd + gate/up/down 3*H*I + 4 norms * H)
  // + final norm H; it equals the published total minus the SigLIP tower (416,866,032) and the projector
  // (1152 * H + 1152): 4b 4,300,079,472, 12b 12,187,325,040, 27b 27,432,406,640.
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"gemma-2b", 2'506'172'416},      // google/gemma-2b
      {"gemma-7b", 8'537'680'896},      // google/gemma-7b
      {"gemma-2-2b", 2'614'341'888},    // google/gemma-2-2b
      {"gemma-2-9b", 9'241'705'984},    // google/gemma-2-9b
      {"gemma-2-27b", 27'227'128'320},  // google/gemma-2-27b
      {"gemma-3-1b", 999'885'952},      // google/gemma-3-1b-pt
      {"gemma-3-4b", 3'880'263'168},    // 262208*2560 + 34*94,382,592 + 2560
      {"gemma-3-12b", 11'766'034'176},  // 262208*3840 + 48*224,148,992 + 3840
      {"gemma-3-27b", 27'009'346'304},  // 262208*5376 + 62*412,898,560 + 5376
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
  CHECK(memplan::load_zoo_model("gemma-3-27b").transformer.head_dim == 128);
  CHECK(memplan::load_zoo_model("gemma-3-4b").transformer.modelled_part == "text decoder only");
}

TEST_CASE("gemma family set 1: measured H200 cases", "[family][gemma]") {
  // Peak allocated within 1 % per case, reserved within 5 %, the inference KV figure within 1 %.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f1-gemma"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.01, 0.05}; });
  CHECK(checked.size() == 9);
}
