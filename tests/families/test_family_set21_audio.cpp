// wav2vec2, hubert and wavlm (family set 21): speech encoders over raw waveforms (engine/arch/audio/). Importer
// defaults and refusals, the case keys (audio_samples sets the frames; freeze_feature_encoder), parameter counts of
// the published checkpoints' shapes derived by hand, and the measured H200 cases (measured before the builders
// existed).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "cli/run_flags.h"
#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/param_count.h"
#include "models/validation_case.h"
#include "models/zoo.h"

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

memplan::ModelSpec model_of(const TransformerSpec& s) {
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::transformer;
  m.name = "speech-test";
  m.transformer = s;
  return m;
}

memplan::RunConfig ctc_run(const TransformerSpec& s, int64_t samples, int64_t target) {
  memplan::RunConfig cfg;
  cfg.batch_size = 2;
  cfg.audio_samples = samples;
  cfg.seq_len = memplan::speech_frames(s, samples);
  cfg.target_len = target;
  cfg.attn = memplan::default_attn(model_of(s));
  return cfg;
}

}  // namespace

TEST_CASE("wav2vec2 / hubert / wavlm importer: class defaults of transformers 5.17", "[family][set21]") {
  for (const char* type : {"wav2vec2", "hubert", "wavlm"}) {
    INFO(type);
    const TransformerSpec s = import(std::string(R"({"model_type": ")") + type + "\"}");
    CHECK(s.model_type == type);
    CHECK(s.vocab_size == 32);
    CHECK(s.hidden_size == 768);
    CHECK(s.num_layers == 12);
    CHECK(s.num_heads == 12);
    CHECK(s.head_dim == 64);
    CHECK(s.intermediate_size == 3072);
    CHECK(s.hidden_act == "gelu");
    CHECK(s.resid_dropout == 0.1);
    CHECK(s.activation_dropout == 0.1);
    CHECK(s.attn_dropout == 0.1);
    CHECK(s.speech_feat_proj_dropout == 0.0);
    CHECK(s.speech_final_dropout == 0.1);
    CHECK(s.speech_layerdrop == 0.1);
    CHECK(s.speech_conv_dim == std::vector<int64_t>(7, 512));
    CHECK(s.speech_conv_stride == std::vector<int64_t>{5, 2, 2, 2, 2, 2, 2});
    CHECK(s.speech_conv_kernel == std::vector<int64_t>{10, 3, 3, 3, 3, 2, 2});
    CHECK_FALSE(s.speech_conv_bias);
    CHECK_FALSE(s.speech_layer_norm_convs);
    CHECK(s.speech_pos_conv_kernel == 128);
    CHECK(s.speech_pos_conv_groups == 16);
    CHECK_FALSE(s.speech_stable_layer_norm);
    CHECK(s.speech_feat_proj_layer_norm);
    CHECK(s.speech_spec_augment);
    CHECK(s.speech_mask_time_prob == 0.05);
    CHECK(s.speech_mask_time_length == 10);
    CHECK(s.speech_mask_time_min_masks == 2);
    CHECK(s.speech_masked_spec_embed);
    CHECK(s.speech_blank == 0);
    CHECK(s.speech_classifier_proj_size == 256);
    // ctc_loss_reduction: "sum" for wav2vec2 / hubert, "mean" for wavlm
    CHECK(s.speech_ctc_mean == (std::string(type) == "wavlm"));
    // WavLM has no SDPA path (_supports_sdpa = False)
    CHECK((memplan::default_attn(model_of(s)) == memplan::AttnImpl::eager) == (std::string(type) == "wavlm"));
  }
  const TransformerSpec w = import(R"({"model_type": "wavlm"})");
  CHECK(w.wavlm_num_buckets == 320);
  CHECK(w.wavlm_max_distance == 800);
  // The frames of a waveform: floor((L - k) / s) + 1 per conv layer. 16000 samples (1 s): 3199, 1599, 799, 399,
  // 199, 99, 49; 160000: 31999, 15999, 7999, 3999, 1999, 999, 499; 199999: 39998, 19998, 9998, 4998, 2498, 1248,
  // 624; 10 samples: one frame of the first conv, none of the second.
  CHECK(memplan::speech_frames(w, 16000) == 49);
  CHECK(memplan::speech_frames(w, 160000) == 499);
  CHECK(memplan::speech_frames(w, 199999) == 624);
  CHECK(memplan::speech_frames(w, 10) == 0);
  CHECK_FALSE(import(R"({"model_type": "hubert", "feat_proj_layer_norm": false})").speech_feat_proj_layer_norm);
  CHECK(import(R"({"model_type": "wav2vec2", "mask_time_prob": 0.0})").speech_masked_spec_embed == false);
  CHECK(import(R"({"model_type": "wav2vec2", "feat_extract_norm": "layer", "do_stable_layer_norm": true})")
            .speech_layer_norm_convs);
}

TEST_CASE("wav2vec2 / hubert / wavlm: refusals name the field", "[family][set21]") {
  const struct {
    std::string config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "wav2vec2", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "wav2vec2", "feat_extract_activation": "relu"})", "config.feat_extract_activation:"},
      {R"({"model_type": "wav2vec2", "feat_extract_norm": "batch"})", "config.feat_extract_norm:"},
      {R"({"model_type": "wav2vec2", "conv_dim": [512, 512]})", "config.conv_dim:"},
      {R"({"model_type": "wav2vec2", "conv_kernel": [10, 0, 3, 3, 3, 2, 2]})", "config.conv_kernel:"},
      {R"({"model_type": "wav2vec2", "num_attention_heads": 5})", "config.num_attention_heads:"},
      {R"({"model_type": "wav2vec2", "num_conv_pos_embedding_groups": 5})", "config.num_conv_pos_embedding_groups:"},
      {R"({"model_type": "wav2vec2", "mask_feature_prob": 0.1})", "config.mask_feature_prob:"},
      {R"({"model_type": "wav2vec2", "use_weighted_layer_sum": true})", "config.use_weighted_layer_sum:"},
      {R"({"model_type": "wav2vec2", "add_adapter": true})", "config.add_adapter:"},
      {R"({"model_type": "wav2vec2", "adapter_attn_dim": 16})", "config.adapter_attn_dim:"},
      {R"({"model_type": "wav2vec2", "ctc_loss_reduction": "none"})", "config.ctc_loss_reduction:"},
      {R"({"model_type": "wav2vec2", "vocab_size": null})", "config.vocab_size:"},
      {R"({"model_type": "wav2vec2", "pad_token_id": 32})", "config.pad_token_id:"},
      {R"({"model_type": "wav2vec2", "layerdrop": 1.0})", "config.layerdrop:"},
      {R"({"model_type": "hubert", "conv_pos_batch_norm": true})", "config.conv_pos_batch_norm:"},
      {R"({"model_type": "wavlm", "num_buckets": 2})", "config.num_buckets:"},
      {R"({"model_type": "wav2vec2", "problem_type": "ranking"})", "config.problem_type:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  const TransformerSpec s = import(R"({"model_type": "wav2vec2", "num_hidden_layers": 2})");
  const memplan::ModelSpec m = model_of(s);
  memplan::RunConfig ok = ctc_run(s, 32000, 20);
  CHECK(error_of([&] { memplan::estimate(m, ok); }) == "no error");
  memplan::RunConfig no_target = ok;
  no_target.target_len = 0;
  CHECK(error_of([&] { memplan::estimate(m, no_target); }).rfind("target_len:", 0) == 0);
  memplan::RunConfig long_target = ok;
  long_target.target_len = 1000;  // 99 frames
  CHECK(error_of([&] { memplan::estimate(m, long_target); }).rfind("target_len:", 0) == 0);
  memplan::RunConfig no_audio = ok;
  no_audio.audio_samples = 0;
  CHECK(error_of([&] { memplan::estimate(m, no_audio); }).rfind("audio_samples:", 0) == 0);
  memplan::RunConfig wrong_seq = ok;
  wrong_seq.seq_len = 100;
  CHECK(error_of([&] { memplan::estimate(m, wrong_seq); }).rfind("seq_len:", 0) == 0);
  memplan::RunConfig regression = ok;  // the sequence classifier's MSELoss is not modelled
  regression.task = memplan::Task::seq_cls;
  regression.num_labels = 1;
  CHECK(error_of([&] { memplan::estimate(m, regression); }).rfind("num_labels:", 0) == 0);
  memplan::RunConfig token = ok;
  token.task = memplan::Task::token_cls;
  token.num_labels = 3;
  CHECK(error_of([&] { memplan::estimate(m, token); }).rfind("task:", 0) == 0);
  // WavLM refuses SDPA naming attn.
  const TransformerSpec w = import(R"({"model_type": "wavlm", "num_hidden_layers": 2})");
  memplan::RunConfig sdpa = ctc_run(w, 32000, 20);
  sdpa.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(model_of(w), sdpa); }).rfind("attn:", 0) == 0);
  // Each task and inference estimates.
  for (const char* type : {"wav2vec2", "hubert", "wavlm"}) {
    INFO(type);
    const TransformerSpec t = import(std::string(R"({"model_type": ")") + type + R"(", "num_hidden_layers": 2,
        "feat_extract_norm": "layer", "do_stable_layer_norm": true, "conv_bias": true})");
    memplan::RunConfig cfg = ctc_run(t, 48000, 30);
    cfg.freeze_feature_encoder = true;
    CHECK(error_of([&] { memplan::estimate(model_of(t), cfg); }) == "no error");
    memplan::RunConfig cls = cfg;
    cls.task = memplan::Task::seq_cls;
    cls.num_labels = 4;
    CHECK(error_of([&] { memplan::estimate(model_of(t), cls); }) == "no error");
    for (memplan::Task task : {memplan::Task::lm, memplan::Task::feature}) {
      memplan::RunConfig inf = cfg;
      inf.mode = memplan::Mode::inference;
      inf.task = task;
      CHECK(error_of([&] { memplan::estimate(model_of(t), inf); }) == "no error");
    }
  }
}

TEST_CASE("speech cases: audio_samples sets the frames, freeze_feature_encoder is read", "[family][set21]") {
  const auto parse = [](const std::string& text) { return memplan::parse_validation_case(nlohmann::json::parse(text)); };
  const std::string model = R"("model": {"source": "huggingface", "model_type": "wav2vec2", "config": {}})";
  const auto c = parse(R"({"id": "a", )" + model + R"(, "batch_size": 2, "audio_samples": 160000, "target_len": 50,
      "precision": "fp32", "freeze_feature_encoder": true})");
  CHECK(c.run.seq_len == 499);
  CHECK(c.run.audio_samples == 160000);
  CHECK(c.run.freeze_feature_encoder);
  CHECK(error_of([&] {
          parse(R"({"id": "b", )" + model + R"(, "batch_size": 2, "audio_samples": 160000, "seq_len": 499,
              "precision": "fp32"})");
        }).find("seq_len:") != std::string::npos);
  CHECK(error_of([&] { parse(R"({"id": "c", )" + model + R"(, "batch_size": 2, "precision": "fp32"})"); })
            .find("audio_samples:") != std::string::npos);
  CHECK(error_of([&] {
          parse(R"({"id": "d", )" + model + R"(, "batch_size": 2, "audio_samples": 5, "precision": "fp32"})");
        }).find("audio_samples:") != std::string::npos);
  CHECK(error_of([&] {
          parse(R"({"id": "e", "model": {"source": "huggingface", "model_type": "bert"}, "batch_size": 2,
              "seq_len": 16, "precision": "fp32", "freeze_feature_encoder": true})");
        }).find("freeze_feature_encoder:") != std::string::npos);
}

TEST_CASE("speech encoders on the command line: --audio-samples, --freeze-feature-encoder", "[family][set21]") {
  const memplan::ModelSpec m = memplan::load_zoo_model("wav2vec2-base-960h");
  memplan::cli::RunFlags f;
  f.batch_size = 4;
  f.precision = "amp_bf16";
  f.target_len = 100;
  CHECK(memplan::cli::run_config_from(f, m).seq_len == 49);  // default 16000 samples: 1 s, 49 frames
  f.audio_samples = 160000;
  f.freeze_feature_encoder = true;
  const memplan::RunConfig c = memplan::cli::run_config_from(f, m);
  CHECK(c.seq_len == 499);
  CHECK(c.audio_samples == 160000);
  CHECK(c.freeze_feature_encoder);
  CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
  memplan::cli::RunFlags seq = f;
  seq.seq_len = 499;
  CHECK(error_of([&] { memplan::cli::run_config_from(seq, m); }).rfind("--seq-len:", 0) == 0);
  memplan::cli::RunFlags text;
  text.model = "llama-2-7b";
  text.audio_samples = 16000;
  CHECK(error_of([&] { memplan::cli::run_config_from(text, memplan::load_zoo_model("llama-2-7b")); })
            .rfind("--audio-samples:", 0) == 0);
  memplan::cli::RunFlags text_freeze;
  text_freeze.freeze_feature_encoder = true;
  CHECK(error_of([&] { memplan::cli::run_config_from(text_freeze, memplan::load_zoo_model("llama-2-7b")); })
            .rfind("--freeze-feature-encoder:", 0) == 0);
}

TEST_CASE("wav2vec2 / hubert / wavlm parameter counts: published checkpoints' shapes", "[family][set21]") {
  // Derived from the modules' registrations, conv_dim 512 x 7, kernels (10, 3, 3, 3, 3, 2, 2):
  //   feature encoder, "group" without conv bias: conv weights 512*10 + 4 x 512*512*3 + 2 x 512*512*2 =
  //     5,120 + 3,145,728 + 1,048,576 = 4,199,424, GroupNorm 1,024: 4,200,448;
  //     "layer" with conv bias: 4,199,424 + 7 x 512 biases + 7 x 1,024 LayerNorms = 4,210,176
  //   feature projection: LayerNorm 1,024 + Linear(512, H) 512H + H; masked_spec_embed H
  //   positional conv: g 128 + v H * (H / 16) * 128 + bias H; encoder LayerNorm 2H
  //   per layer: attention 4(H^2 + H), layer_norm 2H, feed_forward H*I + I + I*H + H, final_layer_norm 2H;
  //     wavlm adds gru_rel_pos_linear 8 * hd + 8 and gru_rel_pos_const heads, layer 0 rel_attn_embed 320 * heads
  //   lm_head H * 32 + 32.
  // facebook/wav2vec2-base-960h (H 768, I 3072, 12 layers): 4,200,448 + 394,752 + 1,024 - 768 ... summed:
  //   projection 1,024 + 393,216 + 768 = 395,008; masked 768; pos conv 128 + 4,718,592 + 768 = 4,719,488;
  //   encoder LN 1,536; layer 2,362,368 + 1,536 + 4,722,432 + 1,536 = 7,087,872, x 12 = 85,054,464; lm_head
  //   24,608: 94,396,320 (card: 94.4M).
  CHECK(memplan::param_count(memplan::load_zoo_model("wav2vec2-base-960h")) == 94'396'320);
  CHECK(memplan::param_count(import(R"({"model_type": "wav2vec2"})")) == 94'396'320);
  // facebook/hubert-large-ls960-ft and facebook/wav2vec2-large-960h-lv60-self (H 1024, I 4096, 24 layers,
  // "layer" convs with bias): 4,210,176 + projection 526,336 + masked 1,024 + pos conv 128 + 8,388,608 + 1,024 +
  // encoder LN 2,048 + 24 x (4,198,400 + 2,048 + 8,393,728 + 2,048 = 12,596,224) = 302,309,376 + lm_head 32,800:
  // 315,471,520 (cards: 315M / 317M).
  const std::string large = R"("hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
      "intermediate_size": 4096, "feat_extract_norm": "layer", "do_stable_layer_norm": true, "conv_bias": true)";
  CHECK(memplan::param_count(import(R"({"model_type": "hubert", )" + large + "}")) == 315'471'520);
  CHECK(memplan::param_count(import(R"({"model_type": "wav2vec2", )" + large + "}")) == 315'471'520);
  // microsoft/wavlm-base-plus (H 768, 12 layers, 12 heads): wav2vec2-base's 94,396,320 + 12 x (8 * 64 + 8 + 12) +
  // 320 * 12 = 94,396,320 + 6,384 + 3,840 = 94,406,544 with the CTC head; WavLMModel without lm_head 94,381,936
  // (card: 94.4M).
  CHECK(memplan::param_count(import(R"({"model_type": "wavlm"})")) == 94'406'544);
}

TEST_CASE("wav2vec2 / hubert / wavlm: measured H200 cases (family set 21)", "[family][set21]") {
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f21-w2v", "f21-hub", "f21-wlm"});
      },
      [](const std::string& id) {
        // Listed misses (notes-f21/audio.md):
        //  - the amp fp16 WavLM row: GradScaler skipped steps 1 and 2 (inf gradients at the initial scale), so the
        //    AdamW states first appear in step 3's optimizer step, after the run's peak (step 3's forward); memplan
        //    predicts the steady state with the states (+688 MiB). The recording's own run skipped all three steps
        //    and peaks at 2529.6 MiB, memplan's replayed stream less the states to 0.1 MiB.
        if (id == "f21-wlm-baseplus-ctc-ampfp16-b4-s160000") return memplan::testing::FamilyBounds{0.28, 0.28};
        //  - reserved, fp32: the SDPA (memory-efficient) backward's and the positional conv's backward transients
        //    differ from the recording by a few MiB each (8.77 + 9.01 vs 8.79; 44.78 vs 2 x 35.56 MiB), and the
        //    caching allocator's segments follow: +7.7 %.
        if (id == "f21-w2v-base-ctc-fp32-b6-s160000") return memplan::testing::FamilyBounds{0.001, 0.08};
        //  - the classification row: its replayed stream peaks at the recording's peak to 0.1 MiB; the measured run
        //    peaks 42.1 MiB above its own recording; reserved +2.9 % (segment reuse in the unfrozen feature
        //    encoder's backward).
        if (id == "f21-w2v-base-cls-ampbf16-b32-s16000") return memplan::testing::FamilyBounds{0.002, 0.03};
        return memplan::testing::FamilyBounds{0.001, 0.01};
      });
  CHECK(checked.size() == 6);
}
