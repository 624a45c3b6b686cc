// minicpm3 (family set 67): MiniCPM3ForCausalLM (openbmb/MiniCPM3-4B), DeepSeek-V3's multi-head latent attention
// with the non-interleaved rotary, a SwiGLU MLP in every layer, and MiniCPM's embedding / residual / head scalings.
// Written from the installed 5.17 modeling file without a device: the importer's class defaults and the family's own
// fields, refusals naming the field, the scalings' tensors, the latent KV cache and the parameter counts, each
// derived by hand. The held-out rows (calibrate/cases/families67-input.jsonl) are predicted in
// data/validation/predictions/families67-holdout.json.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/arch/decoders/dense/minicpm3_fields.h"
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

// Two layers, hidden 256, 4 heads of qk_nope 32 + qk_rope 16 and v 64 (hidden / heads), q_lora_rank 64,
// kv_lora_rank 32, intermediate 512, vocabulary 1000, tied.
const char* kSmall = R"({"model_type": "minicpm3", "vocab_size": 1000, "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
    "q_lora_rank": 64, "kv_lora_rank": 32, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16})";

}  // namespace

TEST_CASE("minicpm3 importer: class defaults and the family's own fields", "[family][set67][importer]") {
  // MiniCPM3Config(): vocab 73448, hidden 2560, intermediate 6400, 62 layers, 40 heads / 40 KV heads, 32768
  // positions, tied, kv_lora_rank 256, q_lora_rank 768, qk_nope 64, qk_rope 32, v_head_dim None => 2560 / 40 = 64,
  // scale_emb 12 (an int), scale_depth 1.4, dim_model_base 256.
  const TransformerSpec s = import(R"({"model_type": "minicpm3"})");
  CHECK(s.model_type == "minicpm3");
  CHECK(s.vocab_size == 73448);
  CHECK(s.hidden_size == 2560);
  CHECK(s.intermediate_size == 6400);
  CHECK(s.num_layers == 62);
  CHECK(s.num_heads == 40);
  CHECK(s.num_kv_heads == 40);
  CHECK(s.max_position_embeddings == 32768);
  CHECK(s.tie_word_embeddings);
  CHECK(s.kv_lora_rank == 256);
  CHECK(s.q_lora_rank == 768);
  CHECK(s.qk_nope_head_dim == 64);
  CHECK(s.qk_rope_head_dim == 32);
  CHECK(s.v_head_dim == 64);
  CHECK(s.head_dim == 96);
  CHECK_FALSE(s.rope_interleave);
  CHECK(s.num_experts == 0);
  CHECK(s.first_dense_layers == 62);  // every layer MiniCPM3MLP
  const auto& f = memplan::family_fields<memplan::MiniCPM3Fields>(s);
  CHECK(f.scale_emb == 12.0);
  CHECK(f.scale_emb_integer);
  CHECK(f.scale_depth == 1.4);
  CHECK(f.dim_model_base == 256);
  // The None forms: q_proj instead of the low-rank pair, scale_depth sqrt(layers), dim_model_base hidden_size; a
  // float scale_emb makes a buffer of the default dtype.
  const TransformerSpec n = import(R"({"model_type": "minicpm3", "num_hidden_layers": 4, "q_lora_rank": null,
      "scale_depth": null, "dim_model_base": null, "scale_emb": 12.0, "v_head_dim": 80})");
  const auto& g = memplan::family_fields<memplan::MiniCPM3Fields>(n);
  CHECK(n.q_lora_rank == 0);
  CHECK(n.v_head_dim == 80);
  CHECK(g.scale_depth == 2.0);
  CHECK(g.dim_model_base == 2560);
  CHECK_FALSE(g.scale_emb_integer);
  // The published config's head_dim 96 is overwritten by __post_init__ (qk_rope_head_dim): not read.
  CHECK(import(R"({"model_type": "minicpm3", "head_dim": 7})").head_dim == 96);
}

TEST_CASE("minicpm3: refusals name the field", "[family][set67]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "minicpm3", "num_key_value_heads": 8})", "config.num_key_value_heads:"},
      {R"({"model_type": "minicpm3", "hidden_size": 2561})", "config.hidden_size:"},
      {R"({"model_type": "minicpm3", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "minicpm3", "qk_rope_head_dim": 31})", "config.qk_rope_head_dim:"},
      {R"({"model_type": "minicpm3", "kv_lora_rank": null})", "config.kv_lora_rank:"},
      {R"({"model_type": "minicpm3", "partial_rotary_factor": 0.5})", "config.partial_rotary_factor:"},
      {R"({"model_type": "minicpm3", "rope_scaling": {"rope_type": "mrope"}})", "config.rope_scaling.rope_type:"},
      {R"({"model_type": "minicpm3", "scale_emb": "12"})", "config.scale_emb:"},
      {R"({"model_type": "minicpm3", "scale_depth": -1})", "config.scale_depth:"},
      {R"({"model_type": "minicpm3", "quantization_config": {"quant_method": "gptq"}})", "config.quantization_config:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // Refused by the builder: a spec another importer made for the family (no MiniCPM3Fields).
  ModelSpec m = memplan::testing::model_of_config(kSmall);
  m.transformer.family_fields.reset();
  RunConfig t;
  t.batch_size = 1;
  t.seq_len = 16;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, t); }), "model_type:"));
}

TEST_CASE("minicpm3: the scalings' tensors and the latent cache, derived by hand", "[family][set67]") {
  // generate() from a 100-token prompt, B 2, bf16: the DynamicCache keeps the normed latent [2, 1, 100, 32] and the
  // rotated rope key [2, 1, 100, 16] per layer, each rounded up to the allocator's 512 bytes: 12,800 + 6,656 (of
  // 6,400), x 2 layers = 38,912.
  const ModelSpec m = memplan::testing::model_of_config(kSmall);
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 2;
  cfg.seq_len = 100;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == 38'912);
  // The scalings cost memory whatever their values: scale_depth 1.0 with a single layer and dim_model_base ==
  // hidden_size (both no-op factors) predict the same peaks as the defaults.
  const char* unit = R"({"model_type": "minicpm3", "vocab_size": 1000, "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
      "q_lora_rank": 64, "kv_lora_rank": 32, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16,
      "scale_depth": 1.4142135623730951, "dim_model_base": 256, "scale_emb": 1})";
  RunConfig t;
  t.batch_size = 2;
  t.seq_len = 64;
  t.precision = memplan::Precision::bf16;
  const auto a = memplan::estimate(m, t);
  const auto b = memplan::estimate(memplan::testing::model_of_config(unit), t);
  CHECK(a.peak_allocated_bytes() == b.peak_allocated_bytes());
}

TEST_CASE("minicpm3: parameter counts derived by hand", "[family][set67]") {
  // kSmall per layer: q_a 256 x 64 = 16,384, q_a_layernorm 64, q_b 64 x 4 x 48 = 12,288, kv_a 256 x 48 = 12,288,
  // kv_a_layernorm 32, kv_b 32 x 4 x (32 + 64) = 12,288, o 256 x 256 = 65,536, MLP 3 x 256 x 512 = 393,216, two norms
  // 512: 512,608. 2 x 512,608 + 256,000 tied embedding + 256 final norm = 1,281,472.
  CHECK(memplan::param_count(memplan::testing::model_of_config(kSmall)) == 1'281'472);
  // minicpm3-4b: per layer q_a 2560 x 768 = 1,966,080, q_a_layernorm 768, q_b 768 x 3840 = 2,949,120, kv_a 2560 x 288
  // = 737,280, kv_a_layernorm 256, kv_b 256 x 5120 = 1,310,720, o 2560 x 2560 = 6,553,600, MLP 3 x 2560 x 6400 =
  // 49,152,000, norms 5,120: 62,674,944; x 62 = 3,885,846,528; + 73448 x 2560 = 188,026,880 (tied) + 2,560 =
  // 4,073,875,968.
  CHECK(memplan::param_count(memplan::load_zoo_model("minicpm3-4b")) == 4'073'875'968);
}
