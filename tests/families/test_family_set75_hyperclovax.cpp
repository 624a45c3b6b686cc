// hyperclovax (family set 75): HyperCLOVAXForCausalLM (NAVER's HyperCLOVA X SEED), Granite's decoder (four muP
// multipliers, Python floats) with Peri-Layer Normalization (config.use_post_norm: an RMSNorm after the attention and
// after the MLP, kept in HyperclovaxFields) and the logits multiplied by logits_scaling where Granite divides.
// Written from the installed 5.17 modeling file without a device: the importer's class defaults, refusals naming the
// field, the Granite figures without the post norms, parameter counts, each derived by hand. The held-out rows
// (calibrate/cases/families75-input.jsonl) are predicted in data/validation/predictions/families75-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "engine/arch/decoders/dense/hyperclovax_fields.h"
#include "engine/arch/family_fields.h"
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

// Two layers, 4 heads of 64 (MHA), hidden 256, SwiGLU 512, vocabulary 1000, multipliers other than 1.
const char* kSmall = R"({"model_type": "hyperclovax", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "embedding_multiplier": 10.0,
    "residual_multiplier": 0.5, "logits_scaling": 0.125, "attention_multiplier": 0.015625})";

}  // namespace

TEST_CASE("hyperclovax importer: class defaults", "[family][set75][importer]") {
  // HyperCLOVAXConfig(): GraniteConfig's vocab 32000, hidden 4096, intermediate 11008, 32 layers, 32 heads
  // (num_key_value_heads None => heads), head_dim None => 128, silu, 2048 positions, untied, no biases;
  // use_post_norm True.
  const TransformerSpec s = import(R"({"model_type": "hyperclovax"})");
  CHECK(s.model_type == "hyperclovax");
  CHECK(s.vocab_size == 32000);
  CHECK(s.hidden_size == 4096);
  CHECK(s.intermediate_size == 11008);
  CHECK(s.num_layers == 32);
  CHECK(s.num_heads == 32);
  CHECK(s.num_kv_heads == 32);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 2048);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.qkv_bias);
  CHECK_FALSE(s.mlp_bias);
  CHECK(memplan::family_fields<memplan::HyperclovaxFields>(s).use_post_norm);
  const TransformerSpec n = import(R"({"model_type": "hyperclovax", "use_post_norm": false, "logits_scaling": 0})");
  CHECK_FALSE(memplan::family_fields<memplan::HyperclovaxFields>(n).use_post_norm);
}

TEST_CASE("hyperclovax: refusals name the field", "[family][set75]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "hyperclovax", "use_post_norm": "yes"})", "config.use_post_norm:"},
      {R"({"model_type": "hyperclovax", "embedding_multiplier": "x"})", "config.embedding_multiplier:"},
      {R"({"model_type": "hyperclovax", "logits_scaling": [1]})", "config.logits_scaling:"},
      {R"({"model_type": "hyperclovax", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "hyperclovax", "num_attention_heads": 30})", "config.num_attention_heads:"},
      {R"({"model_type": "hyperclovax", "sliding_window": 4096})", "config.sliding_window:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // A spec without the family's values (built by hand, not by the importer) is refused, not given defaults.
  ModelSpec m = memplan::testing::model_of_config(kSmall);
  m.transformer.family_fields.reset();
  RunConfig t;
  t.batch_size = 1;
  t.seq_len = 16;
  CHECK(starts_with(error_of([&] { (void)memplan::estimate(m, t); }), "model_type:"));
}

TEST_CASE("hyperclovax: Granite's figures without the post norms; parameter counts derived by hand", "[family][set75]") {
  // use_post_norm False makes post_norm1 / post_norm2 nn.Identity: GraniteDecoderLayer's statements, and a product
  // by logits_scaling costs what Granite's quotient does: the same peak as granite with the same config. The peri-LN
  // norms only add (their fp32 copies, saved for backward, and two weights a layer).
  const std::string body = R"("vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
      "num_hidden_layers": 2, "num_attention_heads": 4, "embedding_multiplier": 10.0, "residual_multiplier": 0.5,
      "logits_scaling": 0.125, "attention_multiplier": 0.015625})";
  const ModelSpec nopost = memplan::testing::model_of_config(R"({"model_type": "hyperclovax", "use_post_norm": false, )" + body);
  const ModelSpec granite = memplan::testing::model_of_config(R"({"model_type": "granite", )" + body);
  const ModelSpec post = memplan::testing::model_of_config(kSmall);
  for (const auto attn : {memplan::AttnImpl::sdpa, memplan::AttnImpl::eager}) {
    RunConfig t;
    t.batch_size = 2;
    t.seq_len = 96;
    t.precision = memplan::Precision::amp_bf16;
    t.attn = attn;
    const auto n = memplan::estimate(nopost, t);
    CHECK(n.peak_allocated_bytes() == memplan::estimate(granite, t).peak_allocated_bytes());
    CHECK(memplan::estimate(post, t).peak_allocated_bytes() > n.peak_allocated_bytes());
  }
  // kSmall: 2 x 1000 x 256 = 512,000; per layer q / k / v / o 4 x 65,536, MLP 3 x 512 x 256, four norms (input,
  // post-attention, post_norm1, post_norm2) 4 x 256: 262,144 + 393,216 + 1,024 = 656,384, x 2 = 1,312,768; + 256:
  // 1,825,024. Without the post norms 512 fewer a layer: 1,824,000.
  CHECK(memplan::param_count(post) == 1'825'024);
  CHECK(memplan::param_count(nopost) == 1'824'000);
  // hyperclovax-defaults: 2 x 32000 x 4096 = 262,144,000; per layer 4 x 4096^2 + 3 x 4096 x 11008 + 4 x 4096 =
  // 202,391,552, x 32 = 6,476,529,664; + 4096 = 6,738,677,760.
  CHECK(memplan::param_count(memplan::load_zoo_model("hyperclovax-defaults")) == 6'738'677'760);
}
