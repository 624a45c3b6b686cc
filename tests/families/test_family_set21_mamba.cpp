// mamba and mamba2 (family set 21): importer defaults and refusals, parameter counts derived by hand at the
// published widths, the attention refusal, and the measured H200 cases (measured before the builders were checked
// against them; notes-f21/mamba.md).
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

memplan::ModelSpec model_of(const std::string& text) {
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::transformer;
  m.transformer = import(text);
  m.name = m.transformer.model_type;
  return m;
}

}  // namespace

TEST_CASE("mamba importer: class defaults of transformers 5.17", "[family][set21]") {
  // MambaConfig: 50280 / 768 / state 16 / 32 layers / expand 2 / conv 4 / time_step_rank "auto" = ceil(768 / 16),
  // no in / out biases, conv bias, fp32 residual, tied head.
  const TransformerSpec x = import(R"({"model_type": "mamba"})");
  CHECK(x.vocab_size == 50280);
  CHECK(x.hidden_size == 768);
  CHECK(x.num_layers == 32);
  CHECK(x.ssm_state_size == 16);
  CHECK(x.ssm_inner_size == 1536);
  CHECK(x.ssm_conv_kernel == 4);
  CHECK(x.ssm_time_step_rank == 48);
  CHECK_FALSE(x.ssm_bias);
  CHECK(x.ssm_conv_bias);
  CHECK(x.ssm_residual_in_fp32);
  CHECK(x.tie_word_embeddings);
  // ceil(2560 / 16) = 160; ceil(1000 / 16) = 63; expand 1.5 * 1000 = 1500
  CHECK(import(R"({"model_type": "mamba", "hidden_size": 2560})").ssm_time_step_rank == 160);
  const TransformerSpec y = import(R"({"model_type": "mamba", "hidden_size": 1000, "expand": 1.5,
      "time_step_rank": "auto", "use_bias": true, "use_conv_bias": false, "residual_in_fp32": false})");
  CHECK(y.ssm_time_step_rank == 63);
  CHECK(y.ssm_inner_size == 1500);
  CHECK(y.ssm_bias);
  CHECK_FALSE(y.ssm_conv_bias);
  CHECK_FALSE(y.ssm_residual_in_fp32);
}

TEST_CASE("mamba2 importer: class defaults of transformers 5.17", "[family][set21]") {
  // Mamba2Config: 128 heads of 64, 32768 / 4096 / state 128 / 64 layers / expand 2 / conv 4 / 8 groups /
  // chunk 256, untied.
  const TransformerSpec x = import(R"({"model_type": "mamba2"})");
  CHECK(x.vocab_size == 32768);
  CHECK(x.hidden_size == 4096);
  CHECK(x.num_layers == 64);
  CHECK(x.ssm_num_heads == 128);
  CHECK(x.ssm_head_dim == 64);
  CHECK(x.ssm_state_size == 128);
  CHECK(x.ssm_inner_size == 8192);
  CHECK(x.ssm_groups == 8);
  CHECK(x.ssm_chunk_size == 256);
  CHECK(x.ssm_conv_kernel == 4);
  CHECK_FALSE(x.tie_word_embeddings);
  CHECK(x.ssm_residual_in_fp32);
}

TEST_CASE("mamba / mamba2 importers: bad values name their field", "[family][set21]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "mamba", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "mamba", "use_mambapy": true})", "config.use_mambapy:"},
      {R"({"model_type": "mamba", "state_size": 0})", "config.state_size:"},
      {R"({"model_type": "mamba", "expand": -1})", "config.expand:"},
      {R"({"model_type": "mamba", "time_step_rank": "big"})", "config.time_step_rank:"},
      {R"({"model_type": "mamba2", "num_heads": 100})", "config.num_heads:"},
      {R"({"model_type": "mamba2", "n_groups": 3})", "config.n_groups:"},
      {R"({"model_type": "mamba2", "chunk_size": 0})", "config.chunk_size:"},
      {R"({"model_type": "mamba2", "hidden_act": "relu"})", "config.hidden_act:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("mamba / mamba2: attn_implementation sdpa is refused naming attn", "[family][set21]") {
  // transformers raises for attn_implementation="sdpa" on a class without attention (_supports_sdpa False); eager
  // is what from_config picks and what the measured cases ask for.
  for (const char* cfg : {R"({"model_type": "mamba", "num_hidden_layers": 1, "hidden_size": 64})",
                          R"({"model_type": "mamba2", "num_hidden_layers": 1, "hidden_size": 64, "num_heads": 2,
                              "n_groups": 1, "state_size": 16, "vocab_size": 100})"}) {
    INFO(cfg);
    const memplan::ModelSpec m = model_of(cfg);
    memplan::RunConfig run;
    run.batch_size = 1;
    run.seq_len = 8;
    run.attn = memplan::AttnImpl::sdpa;
    CHECK(error_of([&] { memplan::estimate(m, run); }).rfind("attn:", 0) == 0);
    run.attn = memplan::AttnImpl::eager;
    CHECK(error_of([&] { memplan::estimate(m, run); }) == "no error");
  }
}

TEST_CASE("mamba / mamba2 parameter counts at the published widths", "[family][set21]") {
  // Derived by hand from the modeling files' registrations (tied head for mamba, untied for Codestral).
  // mamba, per layer with H, D = 2H, N 16, R, K 4: norm H + conv D*K + D + in_proj 2D*H + x_proj (R + 2N)*D +
  // dt_proj D*R + D + A_log D*N + D + out_proj H*D.
  //   state-spaces/mamba-130m-hf (H 768, R 48, 24 layers, V 50280): 3,771,648 per layer; 24 layers 90,519,552 +
  //     embeddings 38,615,040 + norm_f 768 = 129,135,360
  //   state-spaces/mamba-1.4b-hf (H 2048, R 128, 48 layers): 26,441,728 per layer; 1,269,202,944 + 102,973,440 +
  //     2,048 = 1,372,178,432
  //   state-spaces/mamba-2.8b-hf (H 2560, R 160, 64 layers): 41,244,160 per layer; 2,639,626,240 + 128,716,800 +
  //     2,560 = 2,768,345,600
  // mamba2, per layer with H 4096, I 8192, 128 heads, 8 groups of N 128 (conv_dim I + 2GN = 10240), K 4:
  //   norm H + conv 10240*4 + 10240 + in_proj (I + 10240 + 128)*H = 76,021,760 + dt_bias, A_log, D 3*128 +
  //   gated norm I + out_proj H*I = 33,554,432: 109,640,064
  //   mistralai/Mamba-Codestral-7B-v0.1 (64 layers, V 32768, untied): 7,016,964,096 + 2 * 134,217,728 + 4,096 =
  //     7,285,403,648
  const struct {
    const char* config;
    int64_t params;
  } widths[] = {
      {R"({"model_type": "mamba", "hidden_size": 768, "num_hidden_layers": 24, "time_step_rank": 48})",
       129'135'360},
      {R"({"model_type": "mamba", "hidden_size": 2048, "num_hidden_layers": 48, "time_step_rank": 128})",
       1'372'178'432},
      {R"({"model_type": "mamba", "hidden_size": 2560, "num_hidden_layers": 64, "time_step_rank": 160})",
       2'768'345'600},
      {R"({"model_type": "mamba2", "num_hidden_layers": 64, "time_step_rank": 256})", 7'285'403'648},
  };
  for (const auto& w : widths) {
    INFO(w.config);
    CHECK(memplan::param_count(model_of(w.config)) == w.params);
  }
  // The zoo's published state-spaces/mamba-130m-hf config.json: the card's 129M, derived above.
  CHECK(memplan::param_count(memplan::load_zoo_model("mamba-130m")) == 129'135'360);
}

TEST_CASE("mamba / mamba2: measured H200 cases of family set 21", "[family][set21]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the recurrent cache within 1 %, and the measured
  // `params` exactly (tests/family_test_helpers.h). No listed miss: the six rows replay within 0.03 % allocated and
  // 0.5 % reserved (notes-f21/mamba.md).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return !c.holdout && memplan::testing::has_any_prefix(c.id, {"f21-mb-", "f21-mb2-"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 6);
}
