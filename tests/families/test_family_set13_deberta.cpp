// deberta-v2 (family sets 11 and 13): importer defaults and refusals, parameter counts of the published DeBERTa-v3
// checkpoints derived by hand, the task refusals, and the measured H200 cases (masked LM of set 11, sequence /
// token classification and pure-bf16 masked LM of set 13; measured before the builder existed).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/arch/builders.h"
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

memplan::ModelSpec model_of(const TransformerSpec& s) {
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::transformer;
  m.name = "deberta-test";
  m.transformer = s;
  return m;
}

// The parameters a training estimate of `task` registers (the model the harness builds for it).
int64_t task_params(const TransformerSpec& s, memplan::Task task, int64_t num_labels) {
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 16;
  cfg.precision = memplan::Precision::fp32;
  cfg.attn = memplan::AttnImpl::eager;
  cfg.task = task;
  cfg.num_labels = num_labels;
  return memplan::estimate(model_of(s), cfg).params;
}

// The four-layer width-768 DeBERTa-v3 shape of the measured rows.
const char* kMeasuredShape = R"({"model_type": "deberta-v2", "hidden_size": 768, "intermediate_size": 3072,
    "num_hidden_layers": 4, "num_attention_heads": 12, "vocab_size": 128100, "relative_attention": true,
    "pos_att_type": ["p2c", "c2p"], "position_buckets": 256, "max_relative_positions": -1,
    "norm_rel_ebd": "layer_norm", "share_att_key": true, "position_biased_input": false,
    "max_position_embeddings": 512, "type_vocab_size": 0})";

}  // namespace

TEST_CASE("deberta-v2 importer: class defaults of transformers 5.17", "[family][set13]") {
  // DebertaV2Config: 128100 / 1536 / 24 layers / 24 heads / 6144, gelu, dropouts 0.1, 512 positions, no token
  // types, relative_attention false, absolute positions added, legacy MLM head, tied.
  const TransformerSpec s = import(R"({"model_type": "deberta-v2"})");
  CHECK(s.model_type == "deberta-v2");
  CHECK(s.vocab_size == 128100);
  CHECK(s.hidden_size == 1536);
  CHECK(s.num_layers == 24);
  CHECK(s.num_heads == 24);
  CHECK(s.head_dim == 64);
  CHECK(s.intermediate_size == 6144);
  CHECK(s.max_position_embeddings == 512);
  CHECK(s.type_vocab_size == 0);
  CHECK(s.hidden_act == "gelu");
  CHECK(s.resid_dropout == 0.1);
  CHECK(s.embd_dropout == 0.1);
  CHECK(s.attn_dropout == 0.1);
  CHECK_FALSE(s.deberta_relative_attention);
  CHECK(s.deberta_position_buckets == 0);
  CHECK(s.deberta_max_relative_positions == 512);  // -1 -> max_position_embeddings
  CHECK_FALSE(s.deberta_c2p);
  CHECK_FALSE(s.deberta_p2c);
  CHECK_FALSE(s.deberta_share_att_key);
  CHECK_FALSE(s.deberta_norm_rel_ebd);
  CHECK(s.deberta_position_biased_input);
  CHECK(s.learned_positions);
  CHECK(s.deberta_pooler_dropout == 0.0);
  CHECK(s.deberta_pooler_act == "gelu");
  CHECK(s.deberta_cls_dropout == 0.1);  // cls_dropout None -> hidden_dropout_prob
  CHECK(s.deberta_legacy_mlm_head);
  CHECK(s.tie_word_embeddings);
  // The v3 keys: "p2c|c2p" as a string, buckets, shared keys, normalised relative embeddings.
  const TransformerSpec v3 = import(R"({"model_type": "deberta-v2", "relative_attention": true,
      "pos_att_type": "P2C | c2p", "position_buckets": 256, "max_relative_positions": -1, "share_att_key": true,
      "norm_rel_ebd": "layer_norm", "position_biased_input": false, "cls_dropout": 0.2, "legacy": false})");
  CHECK(v3.deberta_relative_attention);
  CHECK(v3.deberta_c2p);
  CHECK(v3.deberta_p2c);
  CHECK(v3.deberta_position_buckets == 256);
  CHECK(v3.deberta_share_att_key);
  CHECK(v3.deberta_norm_rel_ebd);
  CHECK_FALSE(v3.deberta_position_biased_input);
  CHECK_FALSE(v3.learned_positions);
  CHECK(v3.deberta_cls_dropout == 0.2);
  CHECK_FALSE(v3.deberta_legacy_mlm_head);
  // No eager-only surprise: from_config picks eager for deberta-v2 (no _supports_sdpa).
  CHECK(memplan::default_attn(model_of(v3)) == memplan::AttnImpl::eager);
}

TEST_CASE("deberta-v2 importer and builder: bad values name their field", "[family][set13]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "deberta-v2", "hidden_size": 100, "num_attention_heads": 12})", "config.num_attention_heads:"},
      {R"({"model_type": "deberta-v2", "attention_head_size": 32})", "config.attention_head_size:"},
      {R"({"model_type": "deberta-v2", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "deberta-v2", "pooler_hidden_act": "quick_gelu"})", "config.pooler_hidden_act:"},
      {R"({"model_type": "deberta-v2", "pos_att_type": "p2c|p2p"})", "config.pos_att_type:"},
      {R"({"model_type": "deberta-v2", "pos_att_type": 3})", "config.pos_att_type:"},
      {R"({"model_type": "deberta-v2", "embedding_size": 128})", "config.embedding_size:"},
      {R"({"model_type": "deberta-v2", "conv_kernel_size": 3})", "config.conv_kernel_size:"},
      {R"({"model_type": "deberta-v2", "pooler_hidden_size": 512})", "config.pooler_hidden_size:"},
      {R"({"model_type": "deberta-v2", "position_buckets": 1.5})", "config.position_buckets:"},
      {R"({"model_type": "deberta-v2", "max_relative_positions": "x"})", "config.max_relative_positions:"},
      {R"({"model_type": "deberta-v2", "norm_rel_ebd": 1})", "config.norm_rel_ebd:"},
      {R"({"model_type": "deberta-v2", "hidden_dropout_prob": 1.0})", "config.hidden_dropout_prob:"},
      {R"({"model_type": "deberta-v2", "cls_dropout": -0.1})", "config.cls_dropout:"},
      {R"({"model_type": "deberta-v2", "pad_token_id": 128100})", "config.pad_token_id:"},
      {R"({"model_type": "deberta-v2", "type_vocab_size": -1})", "config.type_vocab_size:"},
      {R"({"model_type": "deberta-v2", "legacy": "yes"})", "config.legacy:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  const memplan::ModelSpec m = memplan::load_zoo_model("deberta-v3-small");
  memplan::RunConfig cfg;
  cfg.batch_size = 2;
  cfg.seq_len = 128;
  cfg.attn = memplan::AttnImpl::eager;
  // No SDPA in transformers 5.17 (inference too); the regression head (num_labels 1) and an untied MLM decoder.
  memplan::RunConfig inf = cfg;
  inf.mode = memplan::Mode::inference;
  inf.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(m, inf); }).rfind("attn:", 0) == 0);
  memplan::RunConfig sdpa = cfg;
  sdpa.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(m, sdpa); }).rfind("attn:", 0) == 0);
  memplan::RunConfig reg = cfg;
  reg.task = memplan::Task::seq_cls;
  reg.num_labels = 1;
  CHECK(error_of([&] { memplan::estimate(m, reg); }).rfind("num_labels:", 0) == 0);
  memplan::ModelSpec untied = m;
  untied.transformer.tie_word_embeddings = false;
  CHECK(error_of([&] { memplan::estimate(untied, cfg); }).rfind("tie_word_embeddings:", 0) == 0);
  // Absolute positions bound seq_len; without them (v3) a longer sequence is fine.
  memplan::RunConfig long_seq = cfg;
  long_seq.seq_len = 1024;
  CHECK(error_of([&] { memplan::estimate(model_of(import(R"({"model_type": "deberta-v2", "num_hidden_layers": 1,
      "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128})")), long_seq); })
            .rfind("seq_len:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(m, long_seq); }) == "no error");
}

TEST_CASE("deberta-v2 parameter counts: published DeBERTa-v3 checkpoints", "[family][set13]") {
  // Derived by hand from the modules' registrations (legacy MLM head: the decoder's weight is the tied word
  // embedding, its bias cls.predictions.bias):
  //   embeddings  V*H + 2H (LayerNorm; position_biased_input false, type_vocab_size 0: no other table)
  //   per layer   q / k / v 3(H*H + H) + attention.output.dense H*H + H + LayerNorm 2H + intermediate H*I + I
  //               + output.dense I*H + H + LayerNorm 2H = 4H^2 + 2HI + 9H + I (share_att_key: no pos projections)
  //   encoder     rel_embeddings 2*256*H + LayerNorm 2H
  //   MLM head    transform.dense H*H + H + LayerNorm 2H + bias V
  // base   H 768, I 3072, 12 layers: layer 2,359,296 + 4,718,592 + 6,912 + 3,072 = 7,087,872;
  //        encoder 12 * 7,087,872 + 393,216 + 1,536 = 85,449,216 (card: 86M backbone);
  //        embeddings 98,380,800 + 1,536 (card: 98M); head 590,592 + 1,536 + 128,100 = 720,228;
  //        total 98,382,336 + 85,449,216 + 720,228 = 184,551,780
  // large  H 1024, I 4096, 24 layers: layer 4,194,304 + 8,388,608 + 9,216 + 4,096 = 12,596,224;
  //        encoder 24 * 12,596,224 + 524,288 + 2,048 = 302,835,712 (card: 304M backbone; the derivation is
  //        trusted); embeddings 131,174,400 + 2,048 (card: 131M); head 1,049,600 + 2,048 + 128,100 = 1,179,748;
  //        total 131,176,448 + 302,835,712 + 1,179,748 = 435,191,908
  // small  base width, 6 layers: encoder 6 * 7,087,872 + 394,752 = 42,921,984 (card: 44M backbone);
  //        total 98,382,336 + 42,921,984 + 720,228 = 142,024,548
  // xsmall H 384, I 1536, 12 layers: layer 589,824 + 1,179,648 + 3,456 + 1,536 = 1,774,464;
  //        encoder 12 * 1,774,464 + 196,608 + 768 = 21,490,944 (card: 22M backbone);
  //        embeddings 49,190,400 + 768; head 147,840 + 768 + 128,100 = 276,708;
  //        total 49,191,168 + 21,490,944 + 276,708 = 70,958,820
  CHECK(memplan::param_count(memplan::load_zoo_model("deberta-v3-base")) == 184'551'780);
  CHECK(memplan::param_count(memplan::load_zoo_model("deberta-v3-large")) == 435'191'908);
  CHECK(memplan::param_count(memplan::load_zoo_model("deberta-v3-small")) == 142'024'548);
  CHECK(memplan::param_count(memplan::load_zoo_model("deberta-v3-xsmall")) == 70'958'820);
  // The measured 4-layer rows: 98,382,336 + 4 * 7,087,872 + 394,752 = 127,128,576 in DebertaV2Model, then
  //   masked LM   + 720,228                             = 127,848,804 (the f11 / f13 MLM rows' sum of p.numel())
  //   seq_cls 3   + pooler.dense 590,592 + 768*3 + 3   = 127,721,475
  //   token_cls 9 + 768*9 + 9                          = 127,135,497
  const TransformerSpec measured = import(kMeasuredShape);
  CHECK(memplan::param_count(measured) == 127'848'804);
  CHECK(task_params(measured, memplan::Task::seq_cls, 3) == 127'721'475);
  CHECK(task_params(measured, memplan::Task::token_cls, 9) == 127'135'497);
  // Without share_att_key each layer has pos_key_proj and pos_query_proj (H*H + H each).
  TransformerSpec unshared = measured;
  unshared.deberta_share_att_key = false;
  CHECK(memplan::param_count(unshared) == 127'848'804 + 4 * 2 * 590'592);
  unshared.deberta_p2c = false;  // c2p alone: pos_key_proj only
  CHECK(memplan::param_count(unshared) == 127'848'804 + 4 * 590'592);
  // legacy false: lm_predictions.lm_head (dense H*H + H, LayerNorm 2H, bias V) registers what the legacy head does.
  TransformerSpec new_head = measured;
  new_head.deberta_legacy_mlm_head = false;
  CHECK(memplan::param_count(new_head) == 127'848'804);
  // The class defaults (deberta-v2-xlarge shape without relative attention): absolute positions 512*H, no
  // rel_embeddings, no encoder LayerNorm.
  //   H 1536, I 6144: layer 4*2,359,296 + 2*9,437,184 + 13,824 + 6,144 = 28,331,520; 24 layers 679,956,480;
  //   embeddings 196,761,600 + 786,432 + 3,072; head 2,360,832 + 3,072 + 128,100 = 2,492,004
  //   total 196,761,600 + 786,432 + 3,072 + 679,956,480 + 2,492,004 = 879,999,588
  CHECK(memplan::param_count(import(R"({"model_type": "deberta-v2"})")) == 879'999'588);
}

TEST_CASE("deberta-v2: measured H200 cases of family sets 11 and 13", "[family][set13]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, and the measured `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f11-deberta-", "f13-deberta-"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 5);
}
