// biogpt (family set 47): BioGptForCausalLM, BART's pre-LN decoder layers with a learned position table offset by 2.
// Written from the code index's modular file without a device: the importer's class defaults, refusals naming the
// field, the position table's limit, the KV cache and the zoo entries' parameter counts, each derived by hand. The
// held-out rows (calibrate/cases/families47-input.jsonl) are predicted in
// data/validation/predictions/families47-holdout.json.
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

}  // namespace

TEST_CASE("biogpt importer: class defaults", "[family][set47][importer]") {
  // BioGptConfig(): microsoft/biogpt's widths, gelu, dropouts 0.1 / 0.1 / 0.0, 1024 positions, scaled and tied.
  const TransformerSpec s = import(R"({"model_type": "biogpt"})");
  CHECK(s.model_type == "biogpt");
  CHECK(s.vocab_size == 42384);
  CHECK(s.hidden_size == 1024);
  CHECK(s.num_layers == 24);
  CHECK(s.num_heads == 16);
  CHECK(s.head_dim == 64);
  CHECK(s.intermediate_size == 4096);
  CHECK(s.max_position_embeddings == 1024);
  CHECK(s.hidden_act == "gelu");
  CHECK(s.resid_dropout == 0.1);
  CHECK(s.attn_dropout == 0.1);
  CHECK(s.activation_dropout == 0.0);
  CHECK(s.scale_embedding);
  CHECK(s.tie_word_embeddings);
  CHECK(s.learned_positions);
}

TEST_CASE("biogpt: refusals name the field", "[family][set47]") {
  CHECK(starts_with(error_of([] { import(R"({"model_type": "biogpt", "layerdrop": 0.1})"); }), "config.layerdrop:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "biogpt", "hidden_act": "swiglu"})"); }), "config.hidden_act:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "biogpt", "hidden_size": 1000, "num_attention_heads": 16})"); }),
                    "config."));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "biogpt", "hidden_dropout_prob": 1.5})"); }),
                    "config.hidden_dropout_prob:"));
}

TEST_CASE("biogpt: the position table's limit and the KV cache, derived by hand", "[family][set47]") {
  const ModelSpec m = memplan::load_zoo_model("biogpt");
  RunConfig cfg;
  cfg.precision = memplan::Precision::bf16;
  cfg.batch_size = 8;
  // embed_positions holds max_position_embeddings + 2 rows for ids offset by 2: 1024 positions, no more.
  cfg.seq_len = 1025;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "seq_len:"));
  cfg.seq_len = 1024;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  // Inference: after the prefill of 512 tokens the cache holds keys and values of 24 layers, [8, 16, 512, 64] each
  // in bf16: 2 * 24 * 8 * 512 * 1024 * 2 bytes = 384 MiB.
  cfg.mode = memplan::Mode::inference;
  cfg.seq_len = 512;
  cfg.generate_tokens = 16;
  const memplan::Estimate e = memplan::estimate(m, cfg);
  CHECK(e.inference.kv_cache_bytes == int64_t{2} * 24 * 8 * 512 * 1024 * 2);
  // 1024 positions: a 1010-token prompt leaves room for 14 fed-back tokens (15 generated), not 15.
  cfg.seq_len = 1010;
  cfg.generate_tokens = 15;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.generate_tokens = 16;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "generate_tokens:"));
}

TEST_CASE("biogpt: parameter counts, derived by hand", "[family][set47]") {
  // biogpt: embed_tokens 42384*1024 = 43,401,216, embed_positions 1026*1024 = 1,050,624; a layer: self_attn
  // 4*(1024*1024 + 1024) = 4,198,400, two LayerNorms 4,096, fc1 4096*1024 + 4096 = 4,198,400, fc2 1024*4096 + 1024 =
  // 4,195,328 -> 12,596,224, x 24 = 302,309,376; layer_norm 2,048; output_projection tied:
  // 43,401,216 + 1,050,624 + 302,309,376 + 2,048 = 346,763,264.
  CHECK(memplan::param_count(memplan::load_zoo_model("biogpt")) == 346'763'264);
  // biogpt-large: 57717*1600 = 92,347,200, 2050*1600 = 3,280,000; a layer 4*(1600*1600 + 1600) = 10,246,400 + 6,400
  // + 6400*1600 + 6400 = 10,246,400 + 1600*6400 + 1600 = 10,241,600 -> 30,740,800, x 48 = 1,475,558,400; 3,200:
  // 1,571,188,800.
  CHECK(memplan::param_count(memplan::load_zoo_model("biogpt-large")) == 1'571'188'800);
}
