// qwen2_audio (family set 52): Qwen2AudioForConditionalGeneration trained with 30 s audio clips (the harness plugin
// calibrate/harness_kinds/qwen2_audio.py), text only, or serving text-only prompts. Written from the modeling file
// without a device: the importer's class defaults, refusals naming the field, each clip's audio token count (derived
// by hand below from _get_feat_extract_output_lengths and the encoder's AvgPool1d), and the zoo entries' parameter
// counts derived by hand. The held-out rows (calibrate/cases/families52-input.jsonl) are predicted in
// data/validation/predictions/.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/arch/builders.h"
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

using memplan::testing::starts_with;
TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }
RunConfig run(int64_t batch, int64_t seq, int64_t clips) {
  RunConfig c;
  c.mode = memplan::Mode::training;
  c.batch_size = batch;
  c.seq_len = seq;
  c.audio_clips = clips;
  return c;
}

// A small qwen2_audio: the published 128 mel bins and 1500 positions (750 audio tokens a clip), 2 encoder layers of
// 64, 2 Qwen2 layers of 256.
const char* kSmall = R"({"model_type": "qwen2_audio",
  "text_config": {"model_type": "qwen2", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 152000},
  "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 64, "encoder_attention_heads": 4,
                   "encoder_ffn_dim": 128, "encoder_layers": 2}})";

}  // namespace

TEST_CASE("qwen2_audio importer: class defaults", "[family][set52][importer]") {
  // Qwen2AudioConfig(): Qwen2Config() text, Qwen2AudioEncoderConfig(d_model 1280, 20 heads, FFN 5120, 32 layers,
  // 128 mel bins, 1500 positions, gelu), no dropout; lm_head never tied (the class declares no tied weights).
  const TransformerSpec s = import(R"({"model_type": "qwen2_audio"})");
  CHECK(s.model_type == "qwen2_audio");
  CHECK(s.mm_text_type == "qwen2");
  CHECK(s.audio_d_model == 1280);
  CHECK(s.audio_heads == 20);
  CHECK(s.audio_ffn == 5120);
  CHECK(s.audio_layers == 32);
  CHECK(s.num_mel_bins == 128);
  CHECK(s.max_source_positions == 1500);
  CHECK(s.audio_act == "gelu");
  CHECK(s.audio_dropout == 0.0);
  CHECK_FALSE(s.tie_word_embeddings);
  // A dict without model_type is the encoder config; its class defaults are the same sizes.
  const TransformerSpec d = import(R"({"model_type": "qwen2_audio", "audio_config": {"encoder_layers": 4}})");
  CHECK(d.audio_layers == 4);
  CHECK(d.audio_d_model == 1280);
}

TEST_CASE("qwen2_audio: refusals name the field", "[family][set52]") {
  CHECK(starts_with(error_of([] { import(R"({"model_type": "qwen2_audio", "text_config": {"model_type": "llama"}})"); }),
                    "config.text_config.model_type:"));
  CHECK(starts_with(error_of([] {
                      import(R"({"model_type": "qwen2_audio", "audio_config": {"model_type": "whisper"}})");
                    }),
                    "config.audio_config.model_type:"));
  CHECK(starts_with(error_of([] {
                      import(R"({"model_type": "qwen2_audio", "audio_config": {"encoder_attention_heads": 7}})");
                    }),
                    "config.audio_config.encoder_attention_heads:"));
  CHECK(starts_with(error_of([] {
                      import(R"({"model_type": "qwen2_audio", "audio_config": {"activation_function": "relu"}})");
                    }),
                    "config.audio_config.activation_function:"));
  CHECK(starts_with(error_of([] {
                      import(R"({"model_type": "qwen2_audio", "audio_config": {"encoder_layerdrop": 0.1}})");
                    }),
                    "config.audio_config.encoder_layerdrop:"));
  CHECK(starts_with(error_of([] {
                      import(R"({"model_type": "qwen2_audio", "audio_config": {"max_source_positions": 1}})");
                    }),
                    "config.audio_config.max_source_positions:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "qwen2_audio", "audio_config": [1]})"); }),
                    "config.audio_config:"));
  const ModelSpec m = model_of(kSmall);
  RunConfig inf = run(1, 1000, 1);
  inf.mode = memplan::Mode::inference;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, inf); }), "audio_clips:"));
  RunConfig img = run(1, 1000, 1);
  img.images_per_sample = 1;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, img); }), "images_per_sample:"));
  RunConfig sub = run(1, 1000, 1);
  sub.grad_checkpointing = true;
  sub.checkpoint_layers = {0};
  CHECK(starts_with(error_of([&] { memplan::estimate(m, sub); }), "grad_checkpointing_layers:"));
  RunConfig q = run(1, 1000, 1);
  q.lora.r = 16;
  q.lora.target_modules = {"q_proj", "v_proj"};
  q.quant.base = memplan::QuantBase::nf4;
  CHECK(error_of([&] { memplan::estimate(m, q); }) != "no error");  // QLoRA: not replayed
}

TEST_CASE("qwen2_audio: audio tokens per clip, derived by hand", "[family][set52]") {
  // A clip is 2 x 1500 = 3000 mel frames (the encoder raises on any other length). _get_feat_extract_output_lengths
  // (3000): (3000 - 1) // 2 + 1 = 1500 (conv2's stride), then (1500 - 2) // 2 + 1 = 750, the AvgPool1d(2, 2)
  // output's 1500 / 2 rows: 750 audio tokens. The harness lays out 4 text tokens, then each clip's 750 tokens and 3
  // more: seq_len 4 + k * 753 fits, one token fewer is refused naming seq_len.
  const ModelSpec m = model_of(kSmall);
  CHECK(error_of([&] { memplan::estimate(m, run(1, 757, 1)); }) == "no error");
  CHECK(starts_with(error_of([&] { memplan::estimate(m, run(1, 756, 1)); }), "seq_len:"));
  CHECK(error_of([&] { memplan::estimate(m, run(2, 4 + 2 * 753, 2)); }) == "no error");
  CHECK(starts_with(error_of([&] { memplan::estimate(m, run(2, 4 + 2 * 753 - 1, 2)); }), "seq_len:"));
  // An odd table: 101 positions, 202 frames: (202 - 1) // 2 + 1 = 101, (101 - 2) // 2 + 1 = 50 = floor(101 / 2).
  std::string odd = kSmall;
  odd.replace(odd.find("\"encoder_layers\": 2"), 19, "\"encoder_layers\": 2, \"max_source_positions\": 101");
  const ModelSpec mo = model_of(odd);
  CHECK(error_of([&] { memplan::estimate(mo, run(1, 57, 1)); }) == "no error");
  CHECK(starts_with(error_of([&] { memplan::estimate(mo, run(1, 56, 1)); }), "seq_len:"));
}

TEST_CASE("qwen2_audio: text only, LoRA, checkpointing and serving build", "[family][set52]") {
  const ModelSpec m = model_of(kSmall);
  CHECK(error_of([&] { memplan::estimate(m, run(2, 300, 0)); }) == "no error");
  RunConfig l = run(2, 800, 1);
  l.lora.r = 16;
  l.lora.alpha = 32;
  l.lora.target_modules = {"q_proj", "v_proj"};
  CHECK(error_of([&] { memplan::estimate(m, l); }) == "no error");
  RunConfig ck = run(3, 800, 1);
  ck.grad_checkpointing = true;
  CHECK(error_of([&] { memplan::estimate(m, ck); }) == "no error");
  RunConfig inf = run(2, 64, 0);
  inf.mode = memplan::Mode::inference;
  inf.generate_tokens = 4;
  CHECK(error_of([&] { memplan::estimate(m, inf); }) == "no error");
  // The audio step costs more than the same text-only step (the encoder's activations and the scatter).
  const auto audio = memplan::estimate(m, run(2, 800, 1));
  const auto text = memplan::estimate(m, run(2, 800, 0));
  CHECK(audio.peak_allocated_bytes() > text.peak_allocated_bytes());
}

TEST_CASE("qwen2_audio: parameter counts, derived by hand", "[family][set52]") {
  // Audio encoder (d 1280, FFN 5120, 32 layers, 128 mel bins, 1500 positions): conv1 1280*128*3 + 1280 = 492,800,
  // conv2 1280*1280*3 + 1280 = 4,916,480, embed_positions 1500*1280 = 1,920,000; a layer: k_proj 1280*1280 =
  // 1,638,400 (no bias), v / q / out_proj 3 * (1,638,400 + 1,280) = 4,919,040, two LayerNorms 5,120, fc1 5120*1280 +
  // 5120 = 6,558,720, fc2 1280*5120 + 1280 = 6,554,880 -> 19,676,160, x 32 = 629,637,120; layer_norm 2,560.
  // Encoder 636,968,960. Projector 1280*4096 + 4096 = 5,246,976.
  // Qwen2 text (hidden 4096, 32 heads / 32 KV, MLP 11008, vocabulary 156032, untied): embed_tokens and lm_head
  // 2 * 156032*4096 = 1,278,214,144; a layer: q / k / v 3 * (4096*4096 + 4096) = 50,343,936, o 16,777,216, MLP
  // 3 * 4096*11008 = 135,266,304, norms 8,192 -> 202,395,648, x 32 = 6,476,660,736; norm 4,096. Text 7,754,878,976.
  // Total 7,754,878,976 + 636,968,960 + 5,246,976 = 8,397,094,912: the model card's 8.4B.
  CHECK(memplan::param_count(memplan::load_zoo_model("qwen2-audio-7b")) == 8'397'094'912);
  CHECK(memplan::param_count(memplan::load_zoo_model("qwen2-audio-7b-instruct")) == 8'397'094'912);
}
