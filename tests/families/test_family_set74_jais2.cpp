// jais2 (family set 74): Jais2ForCausalLM (inceptionai's Jais 2), Llama's decoder with nn.LayerNorm (weight and bias)
// in place of RMSNorm, biased attention (q / k / v and o) and NemotronMLP (down(relu2(up(x))), biased). Written from the
// installed 5.17 modeling file without a device: the importer's class defaults, refusals naming the field, the KV
// cache, parameter counts, each derived by hand. The held-out rows (calibrate/cases/families74-input.jsonl) are
// predicted in data/validation/predictions/families74-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

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

// Two layers, 4 heads of 64 (MHA), hidden 256, relu2 MLP 512, vocabulary 1000, the class's biases.
const char* kSmall = R"({"model_type": "jais2", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4})";

}  // namespace

TEST_CASE("jais2 importer: class defaults", "[family][set74][importer]") {
  // Jais2Config(): vocab 150272, hidden 3328, intermediate 26624, 32 layers, 26 heads (num_key_value_heads None =>
  // heads), head_dim None => 3328 // 26 = 128, relu2, 8192 positions, untied, attention_bias / mlp_bias True.
  const TransformerSpec s = import(R"({"model_type": "jais2"})");
  CHECK(s.model_type == "jais2");
  CHECK(s.vocab_size == 150272);
  CHECK(s.hidden_size == 3328);
  CHECK(s.intermediate_size == 26624);
  CHECK(s.num_layers == 32);
  CHECK(s.num_heads == 26);
  CHECK(s.num_kv_heads == 26);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 8192);
  CHECK(s.hidden_act == "relu2");
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK(s.qkv_bias);
  CHECK(s.o_bias);  // Jais2Attention's o_proj takes attention_bias too
  CHECK(s.mlp_bias);
  CHECK(s.sliding_window == 0);
  const TransformerSpec n = import(R"({"model_type": "jais2", "attention_bias": false, "mlp_bias": false,
      "num_key_value_heads": 2, "head_dim": null})");
  CHECK_FALSE(n.qkv_bias);
  CHECK_FALSE(n.o_bias);
  CHECK_FALSE(n.mlp_bias);
  CHECK(n.num_kv_heads == 2);
  CHECK(n.head_dim == 128);
}

TEST_CASE("jais2: refusals name the field", "[family][set74]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "jais2", "hidden_act": "silu"})", "config.hidden_act:"},
      {R"({"model_type": "jais2", "num_attention_heads": 27})", "config.num_attention_heads:"},  // 3328 % 27
      {R"({"model_type": "jais2", "num_key_value_heads": 5})", "config.num_key_value_heads:"},   // 26 % 5
      {R"({"model_type": "jais2", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "jais2", "attention_bias": "yes"})", "config.attention_bias:"},
      {R"({"model_type": "jais2", "rope_parameters": {"rope_type": "longrope", "rope_theta": 1e4}})",
       "config.rope_parameters.rope_type:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("jais2: the KV cache after the prefill, derived by hand", "[family][set74]") {
  // generate() from a 100-token prompt, B 2, bf16: per layer K and V [2, 4, 100, 64] = 51,200 elements, 102,400
  // bytes each; 2 layers x 2 x 102,400 = 409,600.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 409'600);
}

TEST_CASE("jais2: parameter counts derived by hand", "[family][set74]") {
  // kSmall: 2 x 1000 x 256 embeddings / head = 512,000; per layer q / k / v / o 4 x 65,536 + 4 x 256 biases, up
  // 512 x 256 + 512, down 256 x 512 + 256, two LayerNorms 2 x 512: 263,168 + 262,912 + 1,024 = 527,104; x 2 =
  // 1,054,208; final LayerNorm 512: 1,566,720.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'566'720);
  // Without biases the layers are Arcee's (the same up / down MLP) but for the LayerNorm biases, 2 x 256 a layer and
  // 256 in the final norm: Arcee's 1,561,856 + 1,280 = 1,563,136.
  const char* arcee = R"({"model_type": "arcee", "vocab_size": 1000, "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4})";
  const char* unbiased = R"({"model_type": "jais2", "vocab_size": 1000, "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "attention_bias": false,
      "mlp_bias": false})";
  CHECK(memplan::param_count(memplan::testing::model_of_config(arcee)) == 1'561'856);
  CHECK(memplan::param_count(memplan::testing::model_of_config(unbiased)) == 1'563'136);
  // jais2-defaults: 2 x 150272 x 3328 = 1,000,210,432; per layer 4 x 3328^2 + 4 x 3328 = 44,315,648, MLP 2 x 26624 x
  // 3328 + 26624 + 3328 = 177,239,296, two LayerNorms 13,312: 221,568,256, x 32 = 7,090,184,192; + 6656 =
  // 8,090,401,280 (the 8B of inceptionai/Jais-2-8B-Chat).
  CHECK(memplan::param_count(memplan::load_zoo_model("jais2-defaults")) == 8'090'401'280);
}
