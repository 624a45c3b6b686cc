// nanochat (family set 54): NanoChatForCausalLM, Llama's skeleton with weightless RMSNorms (one more on the embeddings
// before the first layer), q / k norms after the rotary embedding, a relu2 MLP (fc1 / fc2) and final logit
// softcapping. Written from the installed 5.17 modeling file without a device: the importer's class defaults,
// refusals naming the field, the KV cache's dtype and the zoo entries' parameter counts, each derived by hand. The
// held-out rows (calibrate/cases/families54-input.jsonl) are predicted in
// data/validation/predictions/families54-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
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

}  // namespace

TEST_CASE("nanochat importer: class defaults", "[family][set54][importer]") {
  // NanoChatConfig(): 768 x 12 layers of 6 heads (head_dim 128 = 768 / 6: not a field, getattr's fallback),
  // intermediate 8192, vocabulary 50304, 2048 positions, relu2, softcap 15.0, untied, no biases.
  const TransformerSpec s = import(R"({"model_type": "nanochat"})");
  CHECK(s.model_type == "nanochat");
  CHECK(s.vocab_size == 50304);
  CHECK(s.hidden_size == 768);
  CHECK(s.intermediate_size == 8192);
  CHECK(s.num_layers == 12);
  CHECK(s.num_heads == 6);
  CHECK(s.num_kv_heads == 6);
  CHECK(s.head_dim == 128);
  CHECK(s.max_position_embeddings == 2048);
  CHECK(s.hidden_act == "relu2");
  CHECK(s.attn_dropout == 0.0);
  CHECK(s.final_logit_softcapping == 15.0);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK(s.sliding_window == 0);
  // final_logit_softcapping None: no softcapping; a head_dim key is what NanoChatAttention's getattr reads.
  const TransformerSpec z = import(
      R"({"model_type": "nanochat", "final_logit_softcapping": null, "num_key_value_heads": 2, "head_dim": 64})");
  CHECK(z.final_logit_softcapping == 0.0);
  CHECK(z.num_kv_heads == 2);
  CHECK(z.head_dim == 64);
}

TEST_CASE("nanochat: refusals name the field", "[family][set54]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "nanochat", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "nanochat", "final_logit_softcapping": -1.0})", "config.final_logit_softcapping:"},
      {R"({"model_type": "nanochat", "attention_dropout": 1.5})", "config.attention_dropout:"},
      {R"({"model_type": "nanochat", "num_key_value_heads": 4})", "config.num_key_value_heads:"},  // 6 heads
      {R"({"model_type": "nanochat", "head_dim": 63})", "config.head_dim:"},  // rotary over the whole head
      {R"({"model_type": "nanochat", "hidden_size": 1000})", "config."},    // 6 heads do not divide 1000
      {R"({"model_type": "nanochat", "tie_word_embeddings": "no"})", "config.tie_word_embeddings:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("nanochat: the KV cache holds the normed keys, derived by hand", "[family][set54]") {
  // nanochat-d20 (20 layers, 10 KV heads of 128), B 2, prompt 512. A bf16 model: the k_norm output is bf16 (type_as),
  // values bf16: 2 * 20 * 2 * 512 * 1280 * 2 bytes = 100 MiB.
  const ModelSpec m = memplan::load_zoo_model("nanochat-d20");
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 512;
  cfg.generate_tokens = 8;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_entries_bytes == int64_t{2} * 20 * 2 * 512 * 1280 * 2);
  // Under bf16 autocast the embeddings (and so cos / sin) are fp32: the rotated keys are fp32, k_norm keeps them
  // fp32, and the DynamicLayer, started in the keys' dtype, promotes the bf16 values by its cat. Twice the bytes.
  cfg.precision = memplan::Precision::amp_bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_entries_bytes == int64_t{2} * 20 * 2 * 512 * 1280 * 4);
}

TEST_CASE("nanochat: parameter counts, derived by hand", "[family][set54]") {
  // No norm has a weight. A layer: q, k, v, o [H, H] (heads x 128 = H) and fc1 [4H, H], fc2 [H, 4H]: 12 H^2. The
  // model: embed_tokens V*H, L layers, lm_head V*H (untied). V = 65,536.
  // nanochat-d20 (H 1280, L 20): 12 * 1280^2 = 19,660,800, x 20 = 393,216,000; 2 * 65,536 * 1280 = 167,772,160:
  // 560,988,160 (the model cards' count).
  CHECK(memplan::param_count(memplan::load_zoo_model("nanochat-d20")) == 560'988'160);
  // nanochat-d32 (H 2048, L 32): 12 * 2048^2 = 50,331,648, x 32 = 1,610,612,736; 2 * 65,536 * 2048 = 268,435,456:
  // 1,879,048,192.
  CHECK(memplan::param_count(memplan::load_zoo_model("nanochat-d32")) == 1'879'048'192);
  // Tied, with GQA and attention biases: H 256, 4 heads of 64, 2 KV heads, I 1024, V 1000, 1 layer. The layer: q and
  // o 65,536 + 256 each, k and v 32,768 + 128 each (197,376), fc1 and fc2 262,144 each (no bias): 721,664; the
  // embedding 256,000 (the head tied to it): 977,664.
  CHECK(memplan::param_count(memplan::testing::model_of_config(
            R"({"model_type": "nanochat", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
                "intermediate_size": 1024, "vocab_size": 1000, "num_hidden_layers": 1, "attention_bias": true,
                "tie_word_embeddings": true})")) == 977'664);
}
