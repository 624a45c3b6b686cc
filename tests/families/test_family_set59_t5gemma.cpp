// t5gemma (family set 59): T5GemmaForConditionalGeneration, two Gemma 2 stacks (the decoder's layers with
// cross-attention over the encoder output) whose widths may differ. Written from the installed 5.17 modeling file
// without a device: the importer's class defaults, the encoder's own widths, refusals naming the field, the
// EncoderDecoderCache after the first decoder step and the zoo entries' parameter counts, each derived by hand. The
// held-out rows (calibrate/cases/families59-input.jsonl) are predicted in
// data/validation/predictions/families59-holdout.json.
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

TEST_CASE("t5gemma importer: class defaults", "[family][set59][importer]") {
  // T5GemmaConfig() builds both stacks from T5GemmaModuleConfig(): Gemma 2 2B's widths (2304, intermediate 9216,
  // 26 layers of 8 heads, 4 kv heads, head_dim 256), vocabulary 256000, gelu_pytorch_tanh, sliding_window 4096 on
  // the even layers, softcapping 50 / 30; dropout_rate 0.0, tied lm_head.
  const TransformerSpec s = import(R"({"model_type": "t5gemma"})");
  CHECK(s.model_type == "t5gemma");
  CHECK(s.family == TransformerSpec::Family::t5);
  CHECK(s.vocab_size == 256000);
  CHECK(s.hidden_size == 2304);
  CHECK(s.intermediate_size == 9216);
  CHECK(s.num_layers == 26);
  CHECK(s.num_decoder_layers == 26);
  CHECK(s.num_heads == 8);
  CHECK(s.num_kv_heads == 4);
  CHECK(s.head_dim == 256);
  CHECK(s.hidden_act == "gelu_pytorch_tanh");
  CHECK(s.sliding_window == 4096);
  REQUIRE(s.sliding_layers.size() == 26);
  CHECK(s.sliding_layers[0] == 1);
  CHECK(s.sliding_layers[1] == 0);
  CHECK(s.attn_logit_softcapping == 50.0);
  CHECK(s.final_logit_softcapping == 30.0);
  CHECK(s.tie_word_embeddings);
  CHECK(s.resid_dropout == 0.0);
  CHECK(s.attn_dropout == 0.0);
  CHECK(s.generate_decoder_prompt == 1);
  CHECK_FALSE(s.generate_without_eos);
  CHECK(s.t5gemma_enc_vocab == 256000);
  CHECK(s.t5gemma_enc_hidden == 2304);
  CHECK(s.t5gemma_enc_intermediate == 9216);
  CHECK(s.t5gemma_enc_heads == 8);
  CHECK(s.t5gemma_enc_kv_heads == 4);
  CHECK(s.t5gemma_enc_head_dim == 256);
  CHECK(s.t5gemma_enc_sliding_window == 4096);
  CHECK(s.t5gemma_enc_sliding_layers.size() == 26);
  CHECK(s.t5gemma_enc_attn_softcap == 50.0);
}

TEST_CASE("t5gemma importer: each stack keeps its own widths", "[family][set59][importer]") {
  // 9B-2B: the encoder is Gemma 2 9B's, the decoder 2B's; the spec's own fields are the decoder's, num_layers the
  // encoder's count (layer indices count the encoder first); dropout_rate reaches both stacks.
  const TransformerSpec s = import(R"({"model_type": "t5gemma", "dropout_rate": 0.1,
      "encoder": {"hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16,
                  "num_key_value_heads": 8, "attn_logit_softcapping": null},
      "decoder": {"num_hidden_layers": 3, "final_logit_softcapping": null}})");
  CHECK(s.num_layers == 42);
  CHECK(s.num_decoder_layers == 3);
  CHECK(s.hidden_size == 2304);
  CHECK(s.t5gemma_enc_hidden == 3584);
  CHECK(s.t5gemma_enc_intermediate == 14336);
  CHECK(s.t5gemma_enc_heads == 16);
  CHECK(s.t5gemma_enc_kv_heads == 8);
  CHECK(s.t5gemma_enc_attn_softcap == 0.0);
  CHECK(s.final_logit_softcapping == 0.0);
  CHECK(s.resid_dropout == 0.1);
  CHECK(s.embd_dropout == 0.1);
  REQUIRE(s.sliding_layers.size() == 3);
  CHECK(s.sliding_layers[2] == 1);
  // an explicit layer_types list replaces the alternating default; one of the wrong length is refused
  const TransformerSpec e = import(R"({"model_type": "t5gemma", "encoder": {"num_hidden_layers": 2,
      "layer_types": ["full_attention", "sliding_attention"]}})");
  REQUIRE(e.t5gemma_enc_sliding_layers.size() == 2);
  CHECK(e.t5gemma_enc_sliding_layers[0] == 0);
  CHECK(e.t5gemma_enc_sliding_layers[1] == 1);
  CHECK(starts_with(error_of([&] { import(R"({"model_type": "t5gemma", "encoder": {"num_hidden_layers": 2,
      "layer_types": ["full_attention", "sliding_attention", "full_attention"]}})"); }),
                    "config.encoder.layer_types:"));
}

TEST_CASE("t5gemma: refusals name the field", "[family][set59]") {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"model_type": "t5gemma", "encoder": {"num_key_value_heads": 3}})", "config.encoder.num_key_value_heads:"},
      {R"({"model_type": "t5gemma", "decoder": {"hidden_size": 2300}})", "config.decoder.num_attention_heads:"},
      {R"({"model_type": "t5gemma", "encoder": {"sliding_window": null}})", "config.encoder.sliding_window:"},
      {R"({"model_type": "t5gemma", "decoder": {"pad_token_id": null}})", "config.decoder.pad_token_id:"},
      {R"({"model_type": "t5gemma", "decoder": {"bos_token_id": null}})", "config.decoder.bos_token_id:"},
      {R"({"model_type": "t5gemma", "encoder": {"hidden_activation": "tanh"}})", "config.encoder.hidden_activation:"},
      {R"({"model_type": "t5gemma", "encoder": {"head_dim": 63}})", "config.encoder.head_dim:"},
      {R"({"model_type": "t5gemma", "encoder": [1, 2]})", "config.encoder:"},
      {R"({"model_type": "t5gemma", "dropout_rate": 1.5})", "config.dropout_rate:"},
      {R"({"model_type": "t5gemma", "decoder": {"vocab_size": 100, "pad_token_id": 100}})", "config.decoder.pad_token_id:"},
  };
  for (const auto& row : bad) {  // not a structured binding: clang 14 cannot capture those in the lambda
    const char* text = row.first;
    CAPTURE(text);
    CHECK(starts_with(error_of([&] { import(text); }), row.second));
  }
}

TEST_CASE("t5gemma: the cache after the first decoder step, derived by hand", "[family][set59]") {
  // t5gemma-b-b in bf16, B 4, prompt 500: the measured forward runs the encoder and one decoder step with
  // use_cache, leaving per decoder layer the self-attention's k and v [4, 12, 1, 64] (6,144 bytes each) and the
  // cross-attention's k and v [4, 12, 500, 64] (3,072,000 bytes each, multiples of 512): 12 * 2 * (6,144 +
  // 3,072,000) = 73,875,456 bytes.
  const ModelSpec m = memplan::load_zoo_model("t5gemma-b-b");
  RunConfig cfg;
  cfg.mode = memplan::Mode::inference;
  cfg.batch_size = 4;
  cfg.seq_len = 500;
  cfg.generate_tokens = 4;
  cfg.precision = memplan::Precision::bf16;
  for (memplan::AttnImpl a : {memplan::AttnImpl::sdpa, memplan::AttnImpl::eager}) {
    cfg.attn = a;
    CHECK(memplan::estimate(m, cfg).inference.kv_cache_entries_bytes == int64_t{12} * 2 * (6'144 + 3'072'000));
  }
}

TEST_CASE("t5gemma: parameter counts, derived by hand", "[family][set59]") {
  // A stack: embed_tokens V*H, norm H, per layer q and o H*(nh*hd) each, k and v H*(nkv*hd) each, gate / up / down
  // 3*H*I, four norms 4H; a decoder layer adds cross_attn (q, o: H*(nh*hd); k, v: He*(nkv*hd), He the encoder's
  // hidden size) and two norms. lm_head.out_proj is tied to the decoder's embed_tokens. V = 256000 everywhere.
  // S/S (H 512, I 1024, 8 layers, 8 heads of 64, MHA): encoder layer 4*512*512 + 3*512*1024 + 2,048 = 2,623,488;
  // decoder layer + 1,048,576 + 1,024 = 3,673,088; 8 * 6,296,576 + 2 * 131,072,000 + 2 * 512 = 312,517,632
  // (keras-hub's t5gemma_s_s preset says 312517632).
  CHECK(memplan::param_count(memplan::load_zoo_model("t5gemma-s-s")) == 312'517'632);
  // B/B (H 768, I 2048, 12 layers, 12 heads of 64): 7,080,960 and 9,441,792 a layer; 12 * 16,522,752 + 2 *
  // 196,608,000 + 2 * 768 = 591,490,560 (keras-hub's t5gemma_b_b preset says 591490560).
  CHECK(memplan::param_count(memplan::load_zoo_model("t5gemma-b-b")) == 591'490'560);
  // 2B-2B (H 2304, I 9216, 26 layers, 8 heads, 4 kv heads of 256): attention 2*2304*2048 + 2*2304*1024 =
  // 14,155,776, MLP 63,700,992, norms 9,216: 77,865,984 an encoder layer, 92,026,368 a decoder layer;
  // 26 * 169,892,352 + 2 * 589,824,000 + 2 * 2,304 = 5,596,853,760.
  CHECK(memplan::param_count(memplan::load_zoo_model("t5gemma-2b-2b")) == 5'596'853'760);
  // 9B-2B: a 9B encoder layer (H 3584, I 14336, 16 heads, 8 kv heads of 256) 2*3584*4096 + 2*3584*2048 +
  // 3*3584*14336 + 4*3584 = 198,195,200, x 42 = 8,324,198,400, + 917,504,000 + 3,584; the 2B decoder's layers with
  // cross k / v of 3584 features: 77,865,984 + 2*2304*2048 + 2*3584*1024 + 4,608 = 94,647,808, x 26 =
  // 2,460,843,008, + 589,824,000 + 2,304: 12,292,375,296 in all.
  CHECK(memplan::param_count(memplan::load_zoo_model("t5gemma-9b-2b")) == 12'292'375'296);
  // 9B-9B: 42 * (198,195,200 + 198,195,200 + 2*3584*4096 + 2*3584*2048 + 2*3584) + 2 * 917,504,000 + 2 * 3,584
  // = 20,333,401,088.
  CHECK(memplan::param_count(memplan::load_zoo_model("t5gemma-9b-9b")) == 20'333'401'088);
}
