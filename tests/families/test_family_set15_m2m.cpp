// m2m_100 (M2M-100 and NLLB-200, family set 15): importer defaults and refusals, parameter counts of the published
// checkpoints derived by hand, run refusals, and the measured H200 cases (measured before the builder existed and
// used to write it).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

memplan::RunConfig run(memplan::Mode mode, int64_t batch, int64_t seq, int64_t target) {
  memplan::RunConfig cfg;
  cfg.mode = mode;
  cfg.batch_size = batch;
  cfg.seq_len = seq;
  cfg.target_len = target;
  return cfg;
}

}  // namespace

TEST_CASE("m2m_100 importer: class defaults of transformers 5.17", "[family][set15]") {
  // M2M100Config: vocab 128112, d_model 1024, 12 + 12 layers, 16 heads each, ffn 4096 each, 1024 positions, relu,
  // dropout 0.1, attention_dropout 0.1, activation_dropout 0, LayerDrop 0.05 each, scale_embedding true, pad 1,
  // tied.
  const TransformerSpec s = import(R"({"model_type": "m2m_100"})");
  CHECK(s.family == TransformerSpec::Family::t5);
  CHECK(s.vocab_size == 128112);
  CHECK(s.hidden_size == 1024);
  CHECK(s.num_layers == 12);
  CHECK(s.num_decoder_layers == 12);
  CHECK(s.num_heads == 16);
  CHECK(s.decoder_num_heads == 16);
  CHECK(s.head_dim == 64);
  CHECK(s.intermediate_size == 4096);
  CHECK(s.decoder_intermediate_size == 4096);
  CHECK(s.max_position_embeddings == 1024);
  CHECK(s.hidden_act == "relu");
  CHECK(s.resid_dropout == 0.1);
  CHECK(s.attn_dropout == 0.1);
  CHECK(s.activation_dropout == 0.0);
  CHECK(s.m2m_encoder_layerdrop == 0.05);
  CHECK(s.m2m_decoder_layerdrop == 0.05);
  CHECK(s.scale_embedding);
  CHECK(s.tie_word_embeddings);
  CHECK(s.m2m_padding_idx == 1);
  CHECK_FALSE(s.learned_positions);  // sinusoidal buffers: the builder checks the lengths against the table
  // attribute_map spellings, and NLLB's keys
  const TransformerSpec m = import(R"({"model_type": "m2m_100", "hidden_size": 512, "num_attention_heads": 8,
      "num_hidden_layers": 3, "decoder_layers": 2, "decoder_attention_heads": 4, "scale_embedding": false,
      "encoder_layerdrop": 0, "decoder_layerdrop": 0, "pad_token_id": 0, "activation_function": "gelu"})");
  CHECK(m.hidden_size == 512);
  CHECK(m.num_heads == 8);
  CHECK(m.num_layers == 3);
  CHECK(m.num_decoder_layers == 2);
  CHECK(m.decoder_num_heads == 4);
  CHECK_FALSE(m.scale_embedding);
  CHECK(m.m2m_encoder_layerdrop == 0.0);
  CHECK(m.m2m_padding_idx == 0);
  CHECK(m.hidden_act == "gelu");
}

TEST_CASE("m2m_100 importer: bad values name their field", "[family][set15]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "m2m_100", "d_model": 1000})", "config.encoder_attention_heads:"},
      {R"({"model_type": "m2m_100", "decoder_attention_heads": 7})", "config.decoder_attention_heads:"},
      {R"({"model_type": "m2m_100", "activation_function": "gelu_new"})", "config.activation_function:"},
      {R"({"model_type": "m2m_100", "encoder_layerdrop": 1.0})", "config.encoder_layerdrop:"},
      {R"({"model_type": "m2m_100", "decoder_layerdrop": -0.1})", "config.decoder_layerdrop:"},
      {R"({"model_type": "m2m_100", "pad_token_id": null})", "config.pad_token_id:"},
      {R"({"model_type": "m2m_100", "pad_token_id": -1})", "config.pad_token_id:"},
      {R"({"model_type": "m2m_100", "vocab_size": 100, "pad_token_id": 100})", "config.pad_token_id:"},
      {R"({"model_type": "m2m_100", "decoder_start_token_id": null})", "config.decoder_start_token_id:"},
      {R"({"model_type": "m2m_100", "tie_word_embeddings": false})", "config.tie_word_embeddings:"},
      {R"({"model_type": "m2m_100", "dropout": 1.5})", "config.dropout:"},
      {R"({"model_type": "m2m_100", "attention_dropout": "x"})", "config.attention_dropout:"},
      {R"({"model_type": "m2m_100", "max_position_embeddings": 0})", "config.max_position_embeddings:"},
      {R"({"model_type": "m2m_100", "decoder_ffn_dim": 0})", "config.decoder_ffn_dim:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("m2m_100: run refusals name their field", "[family][set15]") {
  const memplan::ModelSpec nllb = memplan::load_zoo_model("nllb-200-distilled-600m");
  using memplan::Mode;
  // The sinusoidal table has 1024 + 2 rows and forward rebuilds it (not modelled) once pad_token_id + 1 + length
  // passes 1026: with pad 1, 1024 tokens fit, 1025 do not (the last generate step: pad + 1 + 1 + past, past =
  // generate_tokens - 1).
  CHECK(error_of([&] { memplan::estimate(nllb, run(Mode::training, 1, 1024, 64)); }) == "no error");
  CHECK(error_of([&] { memplan::estimate(nllb, run(Mode::training, 1, 1025, 64)); }).rfind("seq_len:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(nllb, run(Mode::training, 1, 64, 1025)); }).rfind("target_len:", 0) == 0);
  memplan::RunConfig gen = run(Mode::inference, 1, 64, 0);
  gen.generate_tokens = 1025;
  CHECK(error_of([&] { memplan::estimate(nllb, gen); }).rfind("generate_tokens:", 0) == 0);
  gen.generate_tokens = 1024;
  CHECK(error_of([&] { memplan::estimate(nllb, gen); }) == "no error");
  // Eager attention (not measured) builds without error.
  memplan::RunConfig eager = run(Mode::training, 2, 64, 32);
  eager.attn = memplan::AttnImpl::eager;
  CHECK(error_of([&] { memplan::estimate(nllb, eager); }) == "no error");
}

TEST_CASE("m2m_100 parameter counts: published checkpoints", "[family][set15]") {
  // Derived by hand from the modeling file's registrations (lm_head tied to shared; the sinusoidal position
  // tables are buffers; no layernorm_embedding): shared V*d; per stack a final layer_norm 2*d;
  //   encoder layer: 4 attention projections with bias 4*(d^2 + d), two LayerNorms 4*d, fc1 d*f + f, fc2 f*d + d;
  //   decoder layer: + encoder_attn 4*(d^2 + d) and its LayerNorm 2*d.
  //   d 1024, f 4096: encoder layer 4,198,400 + 4,096 + 4,198,400 + 4,195,328 = 12,596,224; decoder 16,796,672.
  //   d 1024, f 8192: encoder layer 4,198,400 + 4,096 + 8,396,800 + 8,389,632 = 20,988,928; decoder 25,189,376.
  //   d 2048, f 8192: encoder layer 16,785,408 + 8,192 + 16,785,408 + 16,779,264 = 50,358,272; decoder
  //     50,358,272 + 16,785,408 + 4,096 = 67,147,776.
  // m2m100_418M (V 128112): 131,186,688 + 12 * 12,596,224 + 12 * 16,796,672 + 4,096 = 483,905,536 (the
  //   checkpoint's name says 418M; its sum of p.numel() is this ~484M).
  // m2m100_1.2B: 131,186,688 + 24 * 20,988,928 + 24 * 25,189,376 + 4,096 = 1,239,470,080.
  // nllb-200-distilled-600M (V 256206): 262,354,944 + 12 * 12,596,224 + 12 * 16,796,672 + 4,096 = 615,073,792.
  // nllb-200-distilled-1.3B: 262,354,944 + 24 * 20,988,928 + 24 * 25,189,376 + 4,096 = 1,370,638,336.
  // nllb-200-3.3B (d 2048): 524,709,888 + 24 * 50,358,272 + 24 * 67,147,776 + 8,192 = 3,344,863,232.
  // The measured 2 + 2 layer rows: NLLB 262,354,944 + 2 * 12,596,224 + 2 * 16,796,672 + 4,096 = 321,144,832 and
  // M2M 131,186,688 + 58,785,792 + 4,096 = 189,976,576 (their measured sums of p.numel()).
  CHECK(memplan::param_count(memplan::load_zoo_model("m2m100-418m")) == 483'905'536);
  CHECK(memplan::param_count(memplan::load_zoo_model("m2m100-1.2b")) == 1'239'470'080);
  CHECK(memplan::param_count(memplan::load_zoo_model("nllb-200-distilled-600m")) == 615'073'792);
  CHECK(memplan::param_count(memplan::load_zoo_model("nllb-200-distilled-1.3b")) == 1'370'638'336);
  CHECK(memplan::param_count(memplan::load_zoo_model("nllb-200-3.3b")) == 3'344'863'232);
  CHECK(memplan::param_count(import(R"({"model_type": "m2m_100", "encoder_layers": 2, "decoder_layers": 2,
      "vocab_size": 256206})")) == 321'144'832);
}

TEST_CASE("m2m_100: measured H200 cases of family set 15", "[family][set15]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, and the measured `params` exactly. Two listed
  // misses, both LayerDrop (config default 0.05, which these rows kept): the builder replays every layer in every
  // step, the runs skipped random ones (recording diffs: no decoder layer 1 in the amp row's second forward, the
  // step of its measured peak; the bf16 row's first step saved 45 MiB less, one layer fewer).
  //   f15-nllb-ampfp16-b4s512t512: allocated +0.95 % (the all-layers step), bound 1 %.
  //   f15-nllb-bf16-b8s256t256: reserved +1.29 % (the first step's segments), bound 1.5 %.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f15-nllb-", "f15-m2m-"});
      },
      [](const std::string& id) {
        if (id == "f15-nllb-ampfp16-b4s512t512") return memplan::testing::FamilyBounds{0.01, 0.01};
        if (id == "f15-nllb-bf16-b8s256t256") return memplan::testing::FamilyBounds{0.001, 0.015};
        return memplan::testing::FamilyBounds{0.001, 0.01};
      });
  CHECK(checked.size() == 4);
}
