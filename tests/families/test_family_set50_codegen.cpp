// codegen (family set 50): CodeGenForCausalLM, GPT-J's block with a fused qkv_proj split for 4 shards and fp32 sin /
// cos rows that turn a 16-bit model's rotated keys and queries fp32. Written from the installed 5.17 modeling file
// without a device: the importer's class defaults, refusals naming the field, the position table's limit, the KV
// cache's dtype (keys cast back to the hidden states' dtype) and the zoo entries' parameter counts, each derived by
// hand. The held-out rows (calibrate/cases/families50-input.jsonl) are predicted in
// data/validation/predictions/families50-holdout.json.
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

TEST_CASE("codegen importer: class defaults", "[family][set50][importer]") {
  // CodeGenConfig(): GPT-J 6B's widths (4096 x 28 layers of 16 heads, rotary_dim 64), vocabulary 50400, 2048
  // positions, gelu_new, dropouts 0.0, untied lm_head with bias.
  const TransformerSpec s = import(R"({"model_type": "codegen"})");
  CHECK(s.model_type == "codegen");
  CHECK(s.vocab_size == 50400);
  CHECK(s.hidden_size == 4096);
  CHECK(s.num_layers == 28);
  CHECK(s.num_heads == 16);
  CHECK(s.head_dim == 256);
  CHECK(s.rotary_dim == 64);
  CHECK(s.intermediate_size == 16384);
  CHECK(s.max_position_embeddings == 2048);
  CHECK(s.hidden_act == "gelu_new");
  CHECK(s.resid_dropout == 0.0);
  CHECK(s.attn_dropout == 0.0);
  CHECK(s.embd_dropout == 0.0);
  CHECK_FALSE(s.tie_word_embeddings);
  CHECK(s.lm_head_bias);
  CHECK(s.parallel_residual);
  CHECK(s.learned_positions);
  const TransformerSpec z = import(R"({"model_type": "codegen", "n_inner": 1000, "n_ctx": 4096})");
  CHECK(z.intermediate_size == 1000);
}

TEST_CASE("codegen: refusals name the field", "[family][set50]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "codegen", "n_embd": 1536, "n_head": 6, "rotary_dim": 32})", "config.n_head:"},  // mp_num 4
      {R"({"model_type": "codegen", "rotary_dim": null})", "config.rotary_dim:"},
      {R"({"model_type": "codegen", "rotary_dim": 63})", "config.rotary_dim:"},
      {R"({"model_type": "codegen", "rotary_dim": 512})", "config.rotary_dim:"},
      {R"({"model_type": "codegen", "activation_function": "tanh"})", "config.activation_function:"},
      {R"({"model_type": "codegen", "n_ctx": 0})", "config.n_ctx:"},
      {R"({"model_type": "codegen", "n_ctx": "2048"})", "config.n_ctx:"},
      {R"({"model_type": "codegen", "attn_pdrop": 1.5})", "config.attn_pdrop:"},
      {R"({"model_type": "codegen", "n_embd": 1000, "n_head": 16})", "config."},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
  // No SDPA path; the sin / cos table has n_positions rows.
  const ModelSpec m = memplan::testing::model_of_config(
      R"({"model_type": "codegen", "n_embd": 256, "n_head": 8, "n_layer": 1, "rotary_dim": 16, "n_positions": 512,
          "vocab_size": 1000})");
  RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 256;
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "attn:"));
  cfg.attn = memplan::AttnImpl::eager;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.seq_len = 513;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "seq_len:"));
}

TEST_CASE("codegen: the KV cache holds keys in the hidden states' dtype, derived by hand", "[family][set50]") {
  // layer_past.update(key.to(hidden_states.dtype), value). A bf16 model: keys and values bf16. codegen-350m-mono,
  // B 4, prompt 512: 2 * 20 layers * 4 * 512 * 1024 * 2 bytes = 160 MiB.
  const ModelSpec m = memplan::load_zoo_model("codegen-350m-mono");
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.attn = memplan::AttnImpl::eager;
  cfg.batch_size = 4;
  cfg.seq_len = 512;
  cfg.generate_tokens = 8;
  cfg.precision = memplan::Precision::bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == int64_t{2} * 20 * 4 * 512 * 1024 * 2);
  // Under bf16 autocast the hidden states (LayerNorm outputs) are fp32, so the keys are cached fp32, and the
  // DynamicLayer starts both tensors in the keys' dtype: the bf16 values are promoted by the cat. Twice the bytes.
  cfg.precision = memplan::Precision::amp_bf16;
  CHECK(memplan::estimate(m, cfg).inference.kv_cache_bytes == int64_t{2} * 20 * 4 * 512 * 1024 * 4);
}

TEST_CASE("codegen: parameter counts, derived by hand", "[family][set50]") {
  // A block: ln_1 2H, qkv_proj 3H^2, out_proj H^2 (no biases), fc_in 4H^2 + 4H, fc_out 4H^2 + H -> 12H^2 + 7H.
  // The model: wte V*H, L blocks, ln_f 2H, lm_head V*H + V (untied, with bias). V = 51200 for every checkpoint.
  // codegen-350m-mono (H 1024, L 20): 12*1024^2 + 7*1024 = 12,590,080, x 20 = 251,801,600; 2*51200*1024 =
  // 104,857,600; + 2,048 + 51,200: 356,712,448.
  CHECK(memplan::param_count(memplan::load_zoo_model("codegen-350m-mono")) == 356'712'448);
  // codegen-2b-mono (H 2560, L 32): 12*2560^2 + 7*2560 = 78,661,120, x 32 = 2,517,155,840; 2*51200*2560 =
  // 262,144,000; + 5,120 + 51,200: 2,779,356,160.
  CHECK(memplan::param_count(memplan::load_zoo_model("codegen-2b-mono")) == 2'779'356'160);
  // codegen-6b-mono (H 4096, L 33): 12*4096^2 + 7*4096 = 201,355,264, x 33 = 6,644,723,712; 2*51200*4096 =
  // 419,430,400; + 8,192 + 51,200: 7,064,213,504.
  CHECK(memplan::param_count(memplan::load_zoo_model("codegen-6b-mono")) == 7'064'213'504);
  // codegen-16b-mono (H 6144, L 34): 12*6144^2 + 7*6144 = 453,027,840, x 34 = 15,402,946,560; 2*51200*6144 =
  // 629,145,600; + 12,288 + 51,200: 16,032,155,648.
  CHECK(memplan::param_count(memplan::load_zoo_model("codegen-16b-mono")) == 16'032'155'648);
}
