// marian and pegasus (family set 15): importer defaults and refusals (transformers 5.17 MarianConfig /
// PegasusConfig), parameter counts of the published checkpoints derived by hand, and the measured H200 cases
// (measured before the builder existed and used to write it).
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

memplan::RunConfig run(memplan::Mode mode, int64_t batch, int64_t seq, int64_t target, int64_t tokens) {
  memplan::RunConfig cfg;
  cfg.mode = mode;
  cfg.batch_size = batch;
  cfg.seq_len = seq;
  cfg.target_len = target;
  cfg.generate_tokens = tokens;
  return cfg;
}

}  // namespace

TEST_CASE("marian / pegasus importers: class defaults of transformers 5.17", "[family][set15]") {
  // MarianConfig: vocab 58101, d_model 1024, 12 + 12 layers, 16 heads, ffn 4096, 1024 positions, gelu, dropout 0.1,
  // attention / activation dropout 0, scale_embedding false, tied.
  const TransformerSpec m = import(R"({"model_type": "marian"})");
  CHECK(m.family == TransformerSpec::Family::t5);
  CHECK(m.vocab_size == 58101);
  CHECK(m.hidden_size == 1024);
  CHECK(m.num_layers == 12);
  CHECK(m.num_decoder_layers == 12);
  CHECK(m.num_heads == 16);
  CHECK(m.decoder_num_heads == 16);
  CHECK(m.head_dim == 64);
  CHECK(m.intermediate_size == 4096);
  CHECK(m.decoder_intermediate_size == 4096);
  CHECK(m.max_position_embeddings == 1024);
  CHECK(m.hidden_act == "gelu");
  CHECK(m.resid_dropout == 0.1);
  CHECK(m.attn_dropout == 0.0);
  CHECK(m.activation_dropout == 0.0);
  CHECK_FALSE(m.scale_embedding);
  CHECK(m.learned_positions);
  // PegasusConfig: vocab 50265, otherwise the same sizes.
  const TransformerSpec p = import(R"({"model_type": "pegasus"})");
  CHECK(p.vocab_size == 50265);
  CHECK(p.hidden_size == 1024);
  CHECK(p.num_layers == 12);
  CHECK(p.num_decoder_layers == 12);
  CHECK(p.intermediate_size == 4096);
  CHECK(p.max_position_embeddings == 1024);
  CHECK(p.hidden_act == "gelu");
  CHECK(p.resid_dropout == 0.1);
  // the opus-mt shape: swish, attribute_map spellings, decoder_vocab_size equal to vocab_size accepted
  const TransformerSpec o = import(R"({"model_type": "marian", "hidden_size": 512, "num_hidden_layers": 6,
      "num_attention_heads": 8, "decoder_layers": 6, "decoder_attention_heads": 8, "encoder_ffn_dim": 2048,
      "decoder_ffn_dim": 2048, "activation_function": "swish", "scale_embedding": true, "vocab_size": 100,
      "decoder_vocab_size": 100, "share_encoder_decoder_embeddings": true})");
  CHECK(o.hidden_size == 512);
  CHECK(o.num_layers == 6);
  CHECK(o.num_heads == 8);
  CHECK(o.decoder_num_heads == 8);
  CHECK(o.hidden_act == "swish");
  CHECK(o.scale_embedding);
}

TEST_CASE("marian / pegasus importers: bad values name their field", "[family][set15]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "marian", "share_encoder_decoder_embeddings": false})",
       "config.share_encoder_decoder_embeddings:"},
      {R"({"model_type": "marian", "decoder_vocab_size": 1000})", "config.decoder_vocab_size:"},
      {R"({"model_type": "marian", "decoder_start_token_id": null})", "config.decoder_start_token_id:"},
      {R"({"model_type": "pegasus", "decoder_start_token_id": null})", "config.decoder_start_token_id:"},
      {R"({"model_type": "marian", "pad_token_id": null})", "config.pad_token_id:"},
      {R"({"model_type": "pegasus", "pad_token_id": null})", "config.pad_token_id:"},
      {R"({"model_type": "marian", "tie_word_embeddings": false})", "config.tie_word_embeddings:"},
      {R"({"model_type": "pegasus", "encoder_layerdrop": 0.1})", "config.encoder_layerdrop:"},
      {R"({"model_type": "marian", "activation_function": "quick_gelu"})", "config.activation_function:"},
      {R"({"model_type": "pegasus", "activation_function": "gelu_new"})", "config.activation_function:"},
      {R"({"model_type": "pegasus", "d_model": 1000})", "config.encoder_attention_heads:"},
      {R"({"model_type": "marian", "max_position_embeddings": 0})", "config.max_position_embeddings:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // The sinusoidal tables end at max_position_embeddings (512 for opus-mt): the encoder's seq_len, the decoder's
  // target_len and the generated tokens each need a row.
  const memplan::ModelSpec opus = memplan::load_zoo_model("opus-mt-en-de");
  using memplan::Mode;
  CHECK(error_of([&] { memplan::estimate(opus, run(Mode::training, 1, 513, 16, 0)); }).rfind("seq_len:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(opus, run(Mode::training, 1, 64, 513, 0)); }).rfind("target_len:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(opus, run(Mode::training, 1, 512, 512, 0)); }) == "no error");
  CHECK(error_of([&] { memplan::estimate(opus, run(Mode::inference, 1, 64, 0, 513)); }).rfind("generate_tokens:", 0) ==
        0);
}

TEST_CASE("marian / pegasus parameter counts: published checkpoints", "[family][set15]") {
  // Derived by hand from the modeling files' registrations. lm_head is tied to model.shared; final_logits_bias is a
  // buffer; each stack's sinusoidal embed_positions is a frozen nn.Embedding(max_position_embeddings, d): a
  // parameter (in the sum of p.numel()) that is never saved in the checkpoints (_keys_to_ignore_on_save).
  //   encoder layer: 4 (d*d + d) attention + 2 * 2d norms + d*F + F (fc1) + F*d + d (fc2)
  //   decoder layer: + 4 (d*d + d) cross attention + 2d norm.
  // opus-mt-en-de (d 512, F 2048, 6 + 6, V 58101, 512 positions):
  //   shared 58101 * 512 = 29,747,712; positions 2 * 512 * 512 = 524,288;
  //   encoder layer 1,050,624 + 2,048 + 1,050,624 + 1,049,088 = 3,152,384 (x 6 = 18,914,304);
  //   decoder layer 3,152,384 + 1,050,624 + 1,024 = 4,204,032 (x 6 = 25,224,192);
  //   total 74,410,496 (the measured rows' sum of p.numel(); ~74M published: 73,886,208 without the tables).
  // opus-mt-en-zh: V 65001, 6,900 more rows of 512: 74,410,496 + 3,532,800 = 77,943,296.
  // pegasus-large / pegasus-xsum (d 1024, F 4096, 16 + 16, V 96103, 1024 positions):
  //   shared 96103 * 1024 = 98,409,472; positions 2 * 1024 * 1024 = 2,097,152;
  //   encoder layer 4,198,400 + 4,096 + 4,198,400 + 4,195,328 = 12,596,224 (x 16 = 201,539,584);
  //   decoder layer 12,596,224 + 4,198,400 + 2,048 = 16,796,672 (x 16 = 268,746,752);
  //   the stacks' final layer_norm 2 * 2,048 = 4,096;
  //   total 570,797,056 (the card's ~568M is the checkpoint without the two position tables: 568,699,904).
  // The measured shapes: marian-big (d 1024, F 4096, 3 + 3, V 57059, 512 positions):
  //   58,428,416 + 1,048,576 + 3 * 12,596,224 + 3 * 16,796,672 = 147,655,680; pegasus 2 + 2:
  //   98,409,472 + 2,097,152 + 2 * 12,596,224 + 2 * 16,796,672 + 4,096 = 159,296,512 (checked against the
  //   measured `params` in check_family_cases too).
  CHECK(memplan::param_count(memplan::load_zoo_model("opus-mt-en-de")) == 74'410'496);
  CHECK(memplan::param_count(memplan::load_zoo_model("opus-mt-en-zh")) == 77'943'296);
  CHECK(memplan::param_count(memplan::load_zoo_model("pegasus-large")) == 570'797'056);
  CHECK(memplan::param_count(memplan::load_zoo_model("pegasus-xsum")) == 570'797'056);
  CHECK(memplan::param_count(import(R"({"model_type": "marian", "d_model": 1024, "encoder_layers": 3,
      "decoder_layers": 3, "vocab_size": 57059, "max_position_embeddings": 512})")) == 147'655'680);
  CHECK(memplan::param_count(import(R"({"model_type": "pegasus", "encoder_layers": 2, "decoder_layers": 2,
      "vocab_size": 96103})")) == 159'296'512);
}

TEST_CASE("marian / pegasus: measured H200 cases of family set 15", "[family][set15]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured
  // `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f15-marian", "f15-pegasus-"});
      },
      [](const std::string& id) {
        // Listed misses (data/validation/notes-f15/marian.md): marian generate() peak allocated -0.45 % (the
        // replay frees the step's [B, 1, V] logits before the processors, the recording at `del outputs`; -2.2 %
        // before the two logits processors were); the
        // eager fp32 marian-big row's reserved -8.9 %.
        if (id == "f15-marian-infer-bf16-b8s128-g32") return memplan::testing::FamilyBounds{0.006, 0.01};
        if (id == "f15-marianbig-fp32-b4s512t128-eager") return memplan::testing::FamilyBounds{0.001, 0.09};
        return memplan::testing::FamilyBounds{0.001, 0.01};
      });
  CHECK(checked.size() == 7);
}

TEST_CASE("marian / pegasus: the shapes of the held-out rows estimate", "[family][set15]") {
  // The opus-mt / marian-big / pegasus widths of the set-15 rows under other runs; each must replay without an
  // error and need more than its weights (no measured figure exists for them: nothing here is tuned to them).
  const TransformerSpec opus = import(R"({"model_type": "marian", "d_model": 512, "encoder_layers": 6,
      "decoder_layers": 6, "encoder_attention_heads": 8, "decoder_attention_heads": 8, "encoder_ffn_dim": 2048,
      "decoder_ffn_dim": 2048, "activation_function": "swish", "scale_embedding": true,
      "max_position_embeddings": 512, "pad_token_id": 58100})");
  const TransformerSpec big = import(R"({"model_type": "marian", "encoder_layers": 3, "decoder_layers": 3,
      "vocab_size": 57059, "activation_function": "relu", "scale_embedding": true, "max_position_embeddings": 512,
      "pad_token_id": 57058, "decoder_start_token_id": 57058})");
  const TransformerSpec peg = import(R"({"model_type": "pegasus", "encoder_layers": 2, "decoder_layers": 2,
      "vocab_size": 96103, "activation_function": "relu", "scale_embedding": true})");
  auto model = [](const TransformerSpec& s) {
    memplan::ModelSpec m;
    m.kind = memplan::ModelSpec::Kind::transformer;
    m.name = s.model_type;
    m.transformer = s;
    return m;
  };
  struct Run {
    const TransformerSpec* spec;
    memplan::Mode mode;
    memplan::Precision precision;
    int64_t batch, seq, target, tokens;
    bool ckpt;
    memplan::AttnImpl attn;
  };
  using memplan::AttnImpl;
  using memplan::Mode;
  using memplan::Precision;
  const Run runs[] = {
      {&opus, Mode::training, Precision::amp_bf16, 32, 128, 128, 0, false, AttnImpl::sdpa},
      {&opus, Mode::inference, Precision::bf16, 16, 96, 0, 24, false, AttnImpl::sdpa},
      {&big, Mode::training, Precision::bf16, 6, 384, 384, 0, true, AttnImpl::sdpa},
      {&peg, Mode::training, Precision::amp_fp16, 6, 768, 128, 0, false, AttnImpl::sdpa},
      {&peg, Mode::training, Precision::fp32, 2, 1024, 256, 0, false, AttnImpl::eager},
      {&peg, Mode::training, Precision::fp16, 2, 256, 64, 0, false, AttnImpl::eager},  // the fp16 encoder clamp
  };
  for (const Run& r : runs) {
    memplan::RunConfig cfg = run(r.mode, r.batch, r.seq, r.target, r.tokens);
    cfg.precision = r.precision;
    cfg.grad_checkpointing = r.ckpt;
    cfg.attn = r.attn;
    INFO(r.spec->model_type << " " << r.batch << " x " << r.seq);
    const memplan::Estimate e = memplan::estimate(model(*r.spec), cfg);
    CHECK(e.torch_peak_allocated_bytes() > e.params * 2);
  }
}
