// vaultgemma (family set 55): VaultGemmaForCausalLM, Gemma 2's decoder without the post-attention and
// post-feed-forward norms. Written from the installed 5.17 modeling file without a device: the importer's class
// defaults (Gemma2Config's), refusals naming the field, the KV cache's dtype, and parameter counts derived by hand
// (the zoo entry's, and the two norms a layer fewer than a Gemma 2 of the same widths). The held-out rows
// (calibrate/cases/families55-input.jsonl) are predicted in data/validation/predictions/families55-holdout.json.
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

TEST_CASE("vaultgemma importer: class defaults", "[family][set55][importer]") {
  // VaultGemmaConfig(): Gemma2Config's fields and defaults (2304 x 26 layers, 8 heads and 4 KV heads of 256,
  // intermediate 9216, vocabulary 256000, gelu_pytorch_tanh, window 4096 on the even layers, softcaps 30 / 50, tied).
  const TransformerSpec s = import(R"({"model_type": "vaultgemma"})");
  CHECK(s.model_type == "vaultgemma");
  CHECK(s.vocab_size == 256000);
  CHECK(s.hidden_size == 2304);
  CHECK(s.intermediate_size == 9216);
  CHECK(s.num_layers == 26);
  CHECK(s.num_heads == 8);
  CHECK(s.num_kv_heads == 4);
  CHECK(s.head_dim == 256);
  CHECK(s.max_position_embeddings == 8192);
  CHECK(s.hidden_act == "gelu_pytorch_tanh");
  CHECK(s.sliding_window == 4096);
  REQUIRE(s.sliding_layers.size() == 26);
  CHECK(s.sliding_layers[0] == 1);  // "sliding_attention" if (i + 1) % 2 else "full_attention"
  CHECK(s.sliding_layers[1] == 0);
  CHECK(s.final_logit_softcapping == 30.0);
  CHECK(s.attn_logit_softcapping == 50.0);
  CHECK(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  // google/vaultgemma-1b: every layer full attention, the window still 512.
  const TransformerSpec z = memplan::load_zoo_model("vaultgemma-1b").transformer;
  CHECK(z.sliding_window == 512);
  for (uint8_t l : z.sliding_layers) CHECK(l == 0);
  const TransformerSpec n = import(
      R"({"model_type": "vaultgemma", "final_logit_softcapping": null, "attn_logit_softcapping": null})");
  CHECK(n.final_logit_softcapping == 0.0);
  CHECK(n.attn_logit_softcapping == 0.0);
}

TEST_CASE("vaultgemma: refusals name the field", "[family][set55]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "vaultgemma", "hidden_activation": "gelu_new"})", "config.hidden_activation:"},
      {R"({"model_type": "vaultgemma", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "vaultgemma", "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "vaultgemma", "num_attention_heads": 12, "hidden_size": 1000})", "config.num_attention_heads:"},
      {R"({"model_type": "vaultgemma", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
      {R"({"model_type": "vaultgemma", "final_logit_softcapping": 0})", "config.final_logit_softcapping:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("vaultgemma: parameter counts, derived by hand", "[family][set55]") {
  // vaultgemma-1b (H 1152, 26 layers, 4 heads and 4 KV heads of 256, I 6912, V 256000, tied). A layer: q, k, v
  // [1024, 1152] and o [1152, 1024]: 4 * 1,179,648 = 4,718,592; gate, up, down 3 * 1152 * 6912 = 23,887,872; two
  // norms 2,304: 28,608,768, x 26 = 743,827,968. The embedding 294,912,000 (lm_head tied), the final norm 1,152:
  // 1,038,741,120.
  const ModelSpec vg = memplan::load_zoo_model("vaultgemma-1b");
  CHECK(memplan::param_count(vg) == 1'038'741'120);
  // The same widths as a Gemma 2: two norms more a layer (post_attention / post_feedforward), 2 * 1152 * 26 = 59,904.
  ModelSpec g2 = vg;
  g2.transformer.model_type = "gemma2";
  CHECK(memplan::param_count(g2) - memplan::param_count(vg) == 59'904);
}

TEST_CASE("vaultgemma: the KV cache, derived by hand", "[family][set55]") {
  // vaultgemma-1b, B 2, prompt 512, every layer full (DynamicLayer): 2 * 26 * 2 * 512 * (4 * 256) * 2 bytes = 104 MiB
  // in bf16. Under bf16 autocast the scaled embeddings (and cos / sin) are fp32, the rotated keys fp32, and the
  // DynamicLayer started in the keys' dtype promotes the values: twice the bytes.
  const ModelSpec m = memplan::load_zoo_model("vaultgemma-1b");
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 512;
  cfg.generate_tokens = 8;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_entries_bytes == int64_t{2} * 26 * 2 * 512 * 1024 * 2);
  cfg.precision = memplan::Precision::amp_bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_entries_bytes == int64_t{2} * 26 * 2 * 512 * 1024 * 4);
}
