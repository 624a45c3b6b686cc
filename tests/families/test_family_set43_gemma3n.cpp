// gemma3n_text (family set 43): Gemma3nForCausalLM trained or served, written from transformers 5.17's
// modeling_gemma3n.py without a device (the harness plugin is calibrate/harness_kinds/gemma3n.py). The importer's
// class defaults, refusals naming the field (the multimodal gemma3n among them), the zoo entries' parameter counts
// derived by hand, and what the builder must show of AltUp, activation sparsity and KV sharing. The held-out rows
// (calibrate/cases/families43-input.jsonl) are predicted in data/validation/predictions/families43-holdout.json.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
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

// A small gemma3n_text: 6 layers (full at 1 and 4), sparsity on the first two, the last two KV-shared, E2B widths
// cut to hidden 512, 4 heads / 2 KV heads of 128, MLP 1024, vocabulary 4096 (per-layer table 4096 rows of 64).
constexpr const char* kSmall = R"({"model_type": "gemma3n_text", "vocab_size": 4096,
    "vocab_size_per_layer_input": 4096, "hidden_size": 512, "hidden_size_per_layer_input": 64,
    "intermediate_size": 1024, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 128, "sliding_window": 64, "laurel_rank": 32,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention"],
    "activation_sparsity_pattern": [0.95, 0.95, 0.0, 0.0, 0.0, 0.0], "num_kv_shared_layers": 2})";

ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }

// `base` with the first occurrence of `from` replaced by `to`.
std::string with(const std::string& base, const std::string& from, const std::string& to) {
  std::string s = base;
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

RunConfig training(int64_t batch, int64_t seq, memplan::Precision p = memplan::Precision::bf16) {
  RunConfig c;
  c.mode = memplan::Mode::training;
  c.batch_size = batch;
  c.seq_len = seq;
  c.precision = p;
  return c;
}

}  // namespace

TEST_CASE("gemma3n_text importer: class defaults of transformers 5.17", "[family][set43]") {
  // Gemma3nTextConfig: 262400 / 2048 / 16384 / 35 layers / 8 heads / 2 KV heads of 256, tied, sliding_window 512,
  // layer_types None => full where (i + 1) % 5 == 0, activation_sparsity_pattern None => 0.95 on the first 10
  // layers (35 > 10), per-layer inputs 256 over 262144 rows, 15 KV-shared layers, AltUp 4 streams, LAuReL 64,
  // altup_correct_scale, final softcapping 30.
  const TransformerSpec x = import(R"({"model_type": "gemma3n_text"})");
  CHECK(x.model_type == "gemma3n_text");
  CHECK(x.vocab_size == 262400);
  CHECK(x.hidden_size == 2048);
  CHECK(x.num_layers == 35);
  CHECK(x.gemma3n_intermediate == std::vector<int64_t>(35, 16384));
  CHECK(x.intermediate_size == 16384);
  CHECK(x.num_heads == 8);
  CHECK(x.num_kv_heads == 2);
  CHECK(x.head_dim == 256);
  CHECK(x.max_position_embeddings == 32768);
  CHECK(x.tie_word_embeddings);
  CHECK(x.hidden_act == "gelu_pytorch_tanh");
  CHECK(x.sliding_window == 512);
  REQUIRE(x.sliding_layers.size() == 35);
  for (size_t i = 0; i < 35; ++i) CHECK(x.sliding_layers[i] == ((i + 1) % 5 != 0));
  REQUIRE(x.gemma3n_sparse_layers.size() == 35);
  for (size_t i = 0; i < 35; ++i) CHECK(x.gemma3n_sparse_layers[i] == (i < 10));
  CHECK(x.gemma4_ple_size == 256);
  CHECK(x.gemma4_ple_vocab == 262144);
  CHECK(x.gemma4_kv_shared_layers == 15);
  CHECK(x.gemma3n_altup_inputs == 4);
  CHECK(x.gemma3n_laurel_rank == 64);
  CHECK(x.gemma3n_altup_correct_scale);
  CHECK(x.final_logit_softcapping == 30.0);
  // Ten layers or fewer: no sparse layer by default; final_logit_softcapping null: none; a per-layer list.
  const TransformerSpec y = import(R"({"model_type": "gemma3n_text", "num_hidden_layers": 10,
      "num_kv_shared_layers": 2, "final_logit_softcapping": null, "altup_correct_scale": false,
      "intermediate_size": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]})");
  CHECK(y.gemma3n_sparse_layers == std::vector<uint8_t>(10, 0));
  CHECK(y.final_logit_softcapping == 0.0);
  CHECK_FALSE(y.gemma3n_altup_correct_scale);
  CHECK(y.gemma3n_intermediate == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

TEST_CASE("gemma3n_text importer: bad values name their field; the multimodal gemma3n is refused",
          "[family][set43]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "gemma3n", "text_config": {}})", "config.model_type:"},
      {R"({"model_type": "gemma3n_text", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "gemma3n_text", "num_hidden_layers": 2, "num_kv_shared_layers": 0,
          "layer_types": ["full_attention"]})", "config.layer_types:"},
      {R"({"model_type": "gemma3n_text", "num_hidden_layers": 2, "intermediate_size": [8, 8, 8],
          "num_kv_shared_layers": 0})", "config.intermediate_size:"},
      {R"({"model_type": "gemma3n_text", "num_hidden_layers": 2, "intermediate_size": [8, 0],
          "num_kv_shared_layers": 0})", "config.intermediate_size:"},
      {R"({"model_type": "gemma3n_text", "activation_sparsity_pattern": 0.95})",
       "config.activation_sparsity_pattern:"},
      {R"({"model_type": "gemma3n_text", "num_hidden_layers": 2, "num_kv_shared_layers": 0,
          "activation_sparsity_pattern": [0.95]})", "config.activation_sparsity_pattern:"},
      {R"({"model_type": "gemma3n_text", "num_hidden_layers": 2, "num_kv_shared_layers": 0,
          "activation_sparsity_pattern": [1.0, 0.0]})", "config.activation_sparsity_pattern:"},
      {R"({"model_type": "gemma3n_text", "altup_num_inputs": 1})", "config.altup_num_inputs:"},
      {R"({"model_type": "gemma3n_text", "altup_active_idx": 4})", "config.altup_active_idx:"},
      {R"({"model_type": "gemma3n_text", "altup_coef_clip": "x"})", "config.altup_coef_clip:"},
      {R"({"model_type": "gemma3n_text", "laurel_rank": 0})", "config.laurel_rank:"},
      {R"({"model_type": "gemma3n_text", "hidden_size_per_layer_input": 0})", "config.hidden_size_per_layer_input:"},
      {R"({"model_type": "gemma3n_text", "num_kv_shared_layers": 35})", "config.num_kv_shared_layers:"},
      {R"({"model_type": "gemma3n_text", "num_hidden_layers": 4, "num_kv_shared_layers": 1,
          "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]})",
       "config.num_kv_shared_layers:"},
      {R"({"model_type": "gemma3n_text", "hidden_size": 2049})", "config.hidden_size:"},
      {R"({"model_type": "gemma3n_text", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
      {R"({"model_type": "gemma3n_text", "head_dim": 255})", "config.head_dim:"},
      {R"({"model_type": "gemma3n_text", "hidden_activation": "gelu_new"})", "config.hidden_activation:"},
      {R"({"model_type": "gemma3n_text", "use_bidirectional_attention": true})",
       "config.use_bidirectional_attention:"},
      {R"({"model_type": "gemma3n_text", "rope_scaling": {"rope_type": "linear", "factor": 2.0}})",
       "config.rope_scaling.rope_type:"},
      {R"({"model_type": "gemma3n_text", "rope_parameters": {"full_attention": {"rope_type": "yarn"}}})",
       "config.rope_parameters.full_attention.rope_type:"},
      {R"({"model_type": "gemma3n_text", "rope_parameters": {"chunked": {}}})", "config.rope_parameters.chunked:"},
      {R"({"model_type": "gemma3n_text", "pad_token_id": 262400})", "config.pad_token_id:"},
      {R"({"model_type": "gemma3n_text", "vocab_size_per_layer_input": 128, "pad_token_id": 200})",
       "config.pad_token_id:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // The multimodal refusal says why (its towers' parameters are not derived) and what to give instead.
  const std::string mm = error_of([] { import(R"({"model_type": "gemma3n"})"); });
  CHECK(mm.find("MobileNetV5") != std::string::npos);
  CHECK(mm.find("gemma3n_text") != std::string::npos);
  // num_kv_shared_layers 0 and a shared layer whose type has an earlier producer are accepted.
  CHECK(error_of([] { import(R"({"model_type": "gemma3n_text", "num_kv_shared_layers": 0})"); }) == "no error");
  CHECK(error_of([] { model_of(kSmall); }) == "no error");
}

TEST_CASE("gemma3n_text parameter counts: published checkpoints (text decoder), derived by hand", "[family][set43]") {
  // Gemma3nForCausalLM's registrations (lm_head tied), H 2048, nh 8 x hd 256, nkv 2, P 256, Vp 262144, K 4, R 64:
  //   model: V*H (embed_tokens) 262400*2048 = 537,395,200; norm 2,048; embed_tokens_per_layer Vp*L*P;
  //          per_layer_model_projection L*P*H; per_layer_projection_norm 256; altup_projections and
  //          altup_unembed_projections 2 * 3 * H*H = 25,165,824.
  //   layer: q 2048*2048 = 4,194,304, q_norm 256, o 4,194,304; unless KV-shared k and v 2 * 512*2048 = 2,097,152
  //          and k_norm 256 (a shared layer has 2,097,408 fewer); MLP 3*H*I; four norms 8,192; altup
  //          correct_output_scale 2,048 + correction_coefs 16 + prediction_coefs 64 + modality_router 8,192 +
  //          router_norm 2,048 = 12,368; laurel 2 * 64*2048 + 2,048 = 264,192; per-layer gate / projection
  //          2 * 256*2048 + post norm 2,048 = 1,050,624. Own-KV layer 10,486,272 + 3*H*I + 1,335,376.
  //  E2B (L 30, I 8192, last 10 shared): own-KV layer 10,486,272 + 50,331,648 + 1,335,376 = 62,153,296, shared
  //  60,055,888: layers 20 * 62,153,296 + 10 * 60,055,888 = 1,843,624,800; PLE 262144*7680 = 2,013,265,920 +
  //  7680*2048 = 15,728,640 + 256. Total 537,395,200 + 1,843,624,800 + 2,048 + 2,013,265,920 + 15,728,640 + 256 +
  //  25,165,824 = 4,435,182,688 (the card's "5B raw" with the vision and audio towers).
  //  E4B (L 35, I 16384, last 15 shared): own-KV layer 10,486,272 + 100,663,296 + 1,335,376 = 112,484,944, shared
  //  110,387,536: layers 20 * 112,484,944 + 15 * 110,387,536 = 3,905,511,920; PLE 262144*8960 = 2,348,810,240 +
  //  8960*2048 = 18,350,080 + 256. Total 537,395,200 + 3,905,511,920 + 2,048 + 2,348,810,240 + 18,350,080 + 256 +
  //  25,165,824 = 6,835,235,568 (the card's "8B raw" with the towers).
  CHECK(memplan::param_count(memplan::load_zoo_model("gemma-3n-e2b")) == 4'435'182'688);
  CHECK(memplan::param_count(memplan::load_zoo_model("gemma-3n-e4b")) == 6'835'235'568);
  const ModelSpec e2b = memplan::load_zoo_model("gemma-3n-e2b");
  CHECK(e2b.transformer.gemma4_kv_shared_layers == 10);
  CHECK(e2b.transformer.gemma3n_sparse_layers[9] == 1);
  CHECK(e2b.transformer.gemma3n_sparse_layers[10] == 0);
  // The small model: own-KV layer q 512*512, q_norm 128, k / v 2 * 256*512, k_norm 128, o 512*512 (786,688);
  // MLP 3 * 512*1024 = 1,572,864; norms 2,048; altup 512 + 16 + 64 + 2,048 + 512 = 3,152; laurel 2 * 32*512 + 512
  // = 33,280; per-layer 2 * 64*512 + 512 = 66,048 => 2,464,080; shared (layers 4, 5) 262,272 fewer => 2,201,808.
  // Model: 4 * 2,464,080 + 2 * 2,201,808 = 14,259,936; embed 4096*512 = 2,097,152; norm 512; PLE 4096*384 =
  // 1,572,864 + 384*512 = 196,608 + 64; altup 6 * 512*512 = 1,572,864. Total 14,259,936 + 2,097,152 + 512 +
  // 1,572,864 + 196,608 + 64 + 1,572,864 = 19,700,000.
  CHECK(memplan::param_count(model_of(kSmall)) == 19'700'000);
}

TEST_CASE("gemma3n_text: every mode the set uses replays", "[family][set43]") {
  const ModelSpec m = model_of(kSmall);
  for (const auto p : {memplan::Precision::bf16, memplan::Precision::amp_bf16, memplan::Precision::fp32}) {
    for (const int64_t seq : {48, 100}) {  // inside and past the sliding window (64)
      CAPTURE(static_cast<int>(p), seq);
      RunConfig c = training(3, seq, p);
      CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
      c.attn = memplan::AttnImpl::eager;
      CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
      c.attn = memplan::AttnImpl::sdpa;
      c.grad_checkpointing = true;
      CHECK(error_of([&] { memplan::estimate(m, c); }) == "no error");
    }
  }
  RunConfig l = training(2, 100);
  l.lora.r = 16;
  l.lora.alpha = 32;
  l.lora.target_modules = {"q_proj", "v_proj"};
  CHECK(error_of([&] { memplan::estimate(m, l); }) == "no error");
  RunConfig inf;
  inf.mode = memplan::Mode::inference;
  inf.batch_size = 2;
  inf.seq_len = 100;
  inf.generate_tokens = 5;
  CHECK(error_of([&] { memplan::estimate(m, inf); }) == "no error");
}

TEST_CASE("gemma3n_text: sparsity and KV sharing move memory the way the modeling code does", "[family][set43]") {
  const ModelSpec base = model_of(kSmall);
  // _gaussian_topk keeps the gate projection for std's backward beside relu's output: a sparse layer saves one
  // more [B, S, I] tensor, so the dense pattern peaks lower.
  const ModelSpec dense = model_of(with(kSmall, "[0.95, 0.95, 0.0,", "[0.0, 0.0, 0.0,"));
  const RunConfig t = training(4, 100);
  CHECK(memplan::estimate(dense, t).peak_allocated_bytes() < memplan::estimate(base, t).peak_allocated_bytes());
  CHECK(memplan::estimate(dense, t).params == memplan::estimate(base, t).params);
  // KV sharing drops k_proj / v_proj / k_norm of the shared layers: 2 * 262,272 fewer parameters.
  const ModelSpec unshared = model_of(with(kSmall, "\"num_kv_shared_layers\": 2", "\"num_kv_shared_layers\": 0"));
  CHECK(memplan::estimate(unshared, t).params - memplan::estimate(base, t).params == 2 * 262'272);
}
