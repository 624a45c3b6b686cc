// Importers: HF config.json defaults and honoured keys, input errors, torchvision table, closed-form parameter
// counts against published PyTorch figures, the embedded zoo and `memplan models`.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "models/hf_config.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/torchvision.h"
#include "models/zoo.h"

using memplan::InputError;
using memplan::TransformerSpec;
using nlohmann::json;

namespace {

TransformerSpec import(const std::string& text, const std::string& hint = "") {
  return memplan::import_hf_config(json::parse(text), hint);
}

// Runs `fn`, requires an InputError, returns it for inspection.
InputError input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected InputError");
  return InputError("", "", "");
}

}  // namespace

TEST_CASE("HF defaults follow the transformers 5.x configuration classes", "[importer]") {
  SECTION("gpt2") {
    auto s = import(R"({"model_type": "gpt2"})");
    CHECK(s.family == TransformerSpec::Family::gpt2);
    CHECK(s.model_type == "gpt2");
    CHECK(s.vocab_size == 50257);
    CHECK(s.max_position_embeddings == 1024);
    CHECK(s.hidden_size == 768);
    CHECK(s.num_layers == 12);
    CHECK(s.num_heads == 12);
    CHECK(s.num_kv_heads == 12);
    CHECK(s.head_dim == 64);
    CHECK(s.intermediate_size == 4 * 768);
    CHECK(s.hidden_act == "gelu_new");
    CHECK(s.resid_dropout == 0.1);
    CHECK(s.embd_dropout == 0.1);
    CHECK(s.attn_dropout == 0.1);
    CHECK(s.tie_word_embeddings);
    CHECK((s.qkv_bias && s.o_bias && s.mlp_bias && s.attention_bias));
    CHECK(s.sliding_window == 0);
    CHECK(s.num_experts == 0);
  }
  SECTION("llama") {
    auto s = import("{}", "llama");
    CHECK(s.family == TransformerSpec::Family::llama);
    CHECK(s.vocab_size == 32000);
    CHECK(s.hidden_size == 4096);
    CHECK(s.intermediate_size == 11008);
    CHECK(s.num_layers == 32);
    CHECK(s.num_heads == 32);
    CHECK(s.num_kv_heads == 32);
    CHECK(s.head_dim == 128);
    CHECK(s.max_position_embeddings == 2048);
    CHECK(s.hidden_act == "silu");
    CHECK(s.attn_dropout == 0.0);
    CHECK(s.embd_dropout == 0.0);
    CHECK(s.resid_dropout == 0.0);
    CHECK_FALSE(s.tie_word_embeddings);
    CHECK_FALSE((s.attention_bias || s.qkv_bias || s.o_bias || s.mlp_bias));
    CHECK(s.sliding_window == 0);
  }
  SECTION("mistral") {
    auto s = import(R"({"model_type": "mistral"})");
    CHECK(s.intermediate_size == 14336);
    CHECK(s.num_kv_heads == 8);
    CHECK(s.head_dim == 128);
    CHECK(s.max_position_embeddings == 4096 * 32);
    CHECK(s.sliding_window == 4096);
    CHECK(s.first_sliding_layer == 0);
    CHECK_FALSE(s.tie_word_embeddings);
    CHECK_FALSE((s.qkv_bias || s.o_bias || s.mlp_bias));
  }
  SECTION("qwen2") {
    auto s = import(R"({"model_type": "qwen2"})");
    CHECK(s.vocab_size == 151936);
    CHECK(s.intermediate_size == 22016);
    CHECK(s.num_kv_heads == 32);
    CHECK(s.max_position_embeddings == 32768);
    CHECK(s.qkv_bias);
    CHECK_FALSE(s.o_bias);
    CHECK_FALSE(s.mlp_bias);
    CHECK(s.sliding_window == 0);  // use_sliding_window False => sliding_window ignored
    CHECK_FALSE(s.tie_word_embeddings);
  }
  SECTION("mixtral") {
    auto s = import(R"({"model_type": "mixtral"})");
    CHECK(s.num_experts == 8);
    CHECK(s.num_experts_per_tok == 2);
    CHECK(s.num_kv_heads == 8);
    CHECK(s.intermediate_size == 14336);
    CHECK(s.sliding_window == 0);
    CHECK_FALSE(s.tie_word_embeddings);
  }
  SECTION("bert") {
    auto s = import(R"({"model_type": "bert"})");
    CHECK(s.family == TransformerSpec::Family::bert);
    CHECK(s.vocab_size == 30522);
    CHECK(s.hidden_size == 768);
    CHECK(s.num_layers == 12);
    CHECK(s.num_heads == 12);
    CHECK(s.head_dim == 64);
    CHECK(s.intermediate_size == 3072);
    CHECK(s.type_vocab_size == 2);
    CHECK(s.max_position_embeddings == 512);
    CHECK(s.hidden_act == "gelu");
    CHECK(s.resid_dropout == 0.1);
    CHECK(s.embd_dropout == 0.1);
    CHECK(s.attn_dropout == 0.1);
    CHECK(s.tie_word_embeddings);
    CHECK((s.qkv_bias && s.o_bias && s.mlp_bias));
  }
}

TEST_CASE("every memory-relevant HF key is honoured", "[importer]") {
  using Check = std::function<bool(const TransformerSpec&)>;
  struct Case {
    const char* name;
    const char* config;
    Check check;
  };
  const std::vector<Case> cases = {
      {"gpt2 n_embd/n_head/n_layer", R"({"model_type":"gpt2","n_embd":1024,"n_head":16,"n_layer":24})",
       [](auto& s) { return s.hidden_size == 1024 && s.num_heads == 16 && s.num_layers == 24 && s.head_dim == 64 &&
                            s.intermediate_size == 4096; }},
      {"gpt2 hidden_size alias", R"({"model_type":"gpt2","hidden_size":512,"num_attention_heads":8})",
       [](auto& s) { return s.hidden_size == 512 && s.num_heads == 8; }},
      {"gpt2 n_inner", R"({"model_type":"gpt2","n_inner":1000})", [](auto& s) { return s.intermediate_size == 1000; }},
      {"gpt2 n_inner null", R"({"model_type":"gpt2","n_inner":null,"n_embd":96,"n_head":4})",
       [](auto& s) { return s.intermediate_size == 384; }},
      {"gpt2 n_positions", R"({"model_type":"gpt2","n_positions":2048})",
       [](auto& s) { return s.max_position_embeddings == 2048; }},
      {"gpt2 dropouts", R"({"model_type":"gpt2","resid_pdrop":0.0,"embd_pdrop":0.2,"attn_pdrop":0})",
       [](auto& s) { return s.resid_dropout == 0.0 && s.embd_dropout == 0.2 && s.attn_dropout == 0.0; }},
      {"gpt2 activation_function", R"({"model_type":"gpt2","activation_function":"relu"})",
       [](auto& s) { return s.hidden_act == "relu"; }},
      {"gpt2 untied", R"({"model_type":"gpt2","tie_word_embeddings":false})",
       [](auto& s) { return !s.tie_word_embeddings; }},
      {"gpt2 vocab_size", R"({"model_type":"gpt2","vocab_size":50304})", [](auto& s) { return s.vocab_size == 50304; }},
      {"llama num_key_value_heads", R"({"model_type":"llama","num_key_value_heads":8})",
       [](auto& s) { return s.num_kv_heads == 8; }},
      {"llama num_key_value_heads null", R"({"model_type":"llama","num_attention_heads":16,"num_key_value_heads":null})",
       [](auto& s) { return s.num_kv_heads == 16; }},
      {"llama head_dim", R"({"model_type":"llama","head_dim":64})", [](auto& s) { return s.head_dim == 64; }},
      {"llama head_dim lets heads not divide hidden",
       R"({"model_type":"llama","hidden_size":1000,"num_attention_heads":7,"num_key_value_heads":7,"head_dim":128})",
       [](auto& s) { return s.head_dim == 128 && s.num_heads == 7; }},
      {"llama attention_bias", R"({"model_type":"llama","attention_bias":true})",
       [](auto& s) { return s.attention_bias && s.qkv_bias && s.o_bias && !s.mlp_bias; }},
      {"llama mlp_bias", R"({"model_type":"llama","mlp_bias":true})", [](auto& s) { return s.mlp_bias && !s.qkv_bias; }},
      {"llama attention_dropout", R"({"model_type":"llama","attention_dropout":0.25})",
       [](auto& s) { return s.attn_dropout == 0.25; }},
      {"llama tie_word_embeddings", R"({"model_type":"llama","tie_word_embeddings":true})",
       [](auto& s) { return s.tie_word_embeddings; }},
      {"llama intermediate/vocab/positions",
       R"({"model_type":"llama","intermediate_size":5632,"vocab_size":128256,"max_position_embeddings":131072})",
       [](auto& s) { return s.intermediate_size == 5632 && s.vocab_size == 128256 &&
                            s.max_position_embeddings == 131072; }},
      {"llama hidden_act", R"({"model_type":"llama","hidden_act":"gelu"})", [](auto& s) { return s.hidden_act == "gelu"; }},
      {"mistral sliding_window", R"({"model_type":"mistral","sliding_window":8192})",
       [](auto& s) { return s.sliding_window == 8192; }},
      {"mistral sliding_window null", R"({"model_type":"mistral","sliding_window":null})",
       [](auto& s) { return s.sliding_window == 0; }},
      {"mistral attention_bias is not a MistralAttention option", R"({"model_type":"mistral","attention_bias":true})",
       [](auto& s) { return !s.qkv_bias && !s.o_bias; }},
      {"mistral head_dim", R"({"model_type":"mistral","head_dim":96})", [](auto& s) { return s.head_dim == 96; }},
      {"qwen2 sliding_window ignored without use_sliding_window", R"({"model_type":"qwen2","sliding_window":1024})",
       [](auto& s) { return s.sliding_window == 0; }},
      {"qwen2 use_sliding_window", R"({"model_type":"qwen2","use_sliding_window":true,"sliding_window":1024,"max_window_layers":20})",
       [](auto& s) { return s.sliding_window == 1024 && s.first_sliding_layer == 20; }},
      {"qwen2 max_window_layers 0 slides every layer",
       R"({"model_type":"qwen2","use_sliding_window":true,"max_window_layers":0})",
       [](auto& s) { return s.sliding_window == 4096 && s.first_sliding_layer == 0; }},
      {"qwen2 max_window_layers >= layers slides nothing",
       R"({"model_type":"qwen2","use_sliding_window":true,"max_window_layers":32})",
       [](auto& s) { return s.sliding_window == 0; }},
      {"qwen2 tie_word_embeddings", R"({"model_type":"qwen2","tie_word_embeddings":true})",
       [](auto& s) { return s.tie_word_embeddings; }},
      {"mixtral num_local_experts / num_experts_per_tok", R"({"model_type":"mixtral","num_local_experts":4,"num_experts_per_tok":1})",
       [](auto& s) { return s.num_experts == 4 && s.num_experts_per_tok == 1; }},
      {"mixtral num_experts alias", R"({"model_type":"mixtral","num_experts":16})",
       [](auto& s) { return s.num_experts == 16; }},
      {"mixtral sliding_window", R"({"model_type":"mixtral","sliding_window":4096})",
       [](auto& s) { return s.sliding_window == 4096; }},
      {"bert dropouts", R"({"model_type":"bert","hidden_dropout_prob":0.2,"attention_probs_dropout_prob":0.0})",
       [](auto& s) { return s.resid_dropout == 0.2 && s.embd_dropout == 0.2 && s.attn_dropout == 0.0; }},
      {"bert type_vocab_size / positions", R"({"model_type":"bert","type_vocab_size":1,"max_position_embeddings":4096})",
       [](auto& s) { return s.type_vocab_size == 1 && s.max_position_embeddings == 4096; }},
      {"bert sizes", R"({"model_type":"bert","hidden_size":1024,"num_attention_heads":16,"num_hidden_layers":24,"intermediate_size":4096})",
       [](auto& s) { return s.hidden_size == 1024 && s.head_dim == 64 && s.num_layers == 24 && s.intermediate_size == 4096; }},
      {"bert untied", R"({"model_type":"bert","tie_word_embeddings":false})",
       [](auto& s) { return !s.tie_word_embeddings; }},
      {"unknown keys are ignored", R"({"model_type":"llama","rope_scaling":{"type":"linear"},"foo":[1,2],"rms_norm_eps":"x"})",
       [](auto& s) { return s.hidden_size == 4096; }},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(c.check(import(c.config)));
  }
}

TEST_CASE("model_type comes from the hint, else from the config", "[importer]") {
  CHECK(import(R"({"model_type":"gpt2"})").model_type == "gpt2");
  CHECK(import(R"({"model_type":"gpt2"})", "llama").model_type == "llama");
  CHECK(import("{}", "bert").family == TransformerSpec::Family::bert);
}

TEST_CASE("malformed HF configs are InputErrors naming the key and value", "[importer]") {
  struct Case {
    const char* config;
    const char* field;
    const char* message;  // exact what()
  };
  const std::vector<Case> cases = {
      {R"({"model_type":"llama","num_attention_heads":-3})", "config.num_attention_heads",
       "config.num_attention_heads: must be a positive integer (got -3)"},
      {R"({"model_type":"llama","hidden_size":"4096"})", "config.hidden_size",
       R"(config.hidden_size: must be a positive integer (got "4096"))"},
      {R"({"model_type":"llama","hidden_size":4096.5})", "config.hidden_size",
       "config.hidden_size: must be a positive integer (got 4096.5)"},
      {R"({"model_type":"gpt2","n_layer":0})", "config.n_layer", "config.n_layer: must be a positive integer (got 0)"},
      {R"({"model_type":"bert","vocab_size":true})", "config.vocab_size",
       "config.vocab_size: must be a positive integer (got true)"},
      {R"({"model_type":"llama","hidden_size":1000,"num_attention_heads":3})", "config.num_attention_heads",
       "config.num_attention_heads: must divide hidden_size (1000) when head_dim is not given (got 3)"},
      {R"({"model_type":"gpt2","n_embd":100,"n_head":3})", "config.n_head",
       "config.n_head: must divide n_embd (100) when head_dim is not given (got 3)"},
      {R"({"model_type":"mistral","num_key_value_heads":5})", "config.num_key_value_heads",
       "config.num_key_value_heads: must divide num_attention_heads (32) (got 5)"},
      // An odd head_dim: rotate_half pairs dimensions (PyTorch's first forward fails to broadcast cos).
      {R"({"model_type":"llama","hidden_size":100,"num_attention_heads":4})", "config.hidden_size",
       "config.hidden_size: gives an odd head_dim 25; rotate_half pairs dimensions (got 100)"},
      {R"({"model_type":"olmo2","head_dim":63})", "config.head_dim",
       "config.head_dim: gives an odd head_dim 63; rotate_half pairs dimensions (got 63)"},
      {R"({"model_type":"mistral3","text_config":{"head_dim":63}})", "config.text_config.head_dim",
       "config.text_config.head_dim: gives an odd head_dim 63; rotate_half pairs dimensions (got 63)"},
      {R"({"model_type":"gpt2","attn_pdrop":1.0})", "config.attn_pdrop",
       "config.attn_pdrop: must be a number in [0, 1) (got 1.0)"},
      {R"({"model_type":"bert","hidden_dropout_prob":-0.1})", "config.hidden_dropout_prob",
       "config.hidden_dropout_prob: must be a number in [0, 1) (got -0.1)"},
      {R"({"model_type":"llama","attention_dropout":"0.1"})", "config.attention_dropout",
       R"(config.attention_dropout: must be a number in [0, 1) (got "0.1"))"},
      {R"({"model_type":"llama","tie_word_embeddings":1})", "config.tie_word_embeddings",
       "config.tie_word_embeddings: must be true or false (got 1)"},
      {R"({"model_type":"qwen2","use_sliding_window":"yes"})", "config.use_sliding_window",
       R"(config.use_sliding_window: must be true or false (got "yes"))"},
      {R"({"model_type":"llama","hidden_act":7})", "config.hidden_act",
       "config.hidden_act: must be a non-empty string (got 7)"},
      {R"({"model_type":"mixtral","num_experts_per_tok":9})", "config.num_experts_per_tok",
       "config.num_experts_per_tok: must not exceed num_local_experts (8) (got 9)"},
      {R"({"model_type":"qwen2","max_window_layers":-1})", "config.max_window_layers",
       "config.max_window_layers: must be a non-negative integer (got -1)"},
      {R"({"model_type":"mixtral","num_local_experts":0})", "config.num_local_experts",
       "config.num_local_experts: must be a positive integer (got 0)"},
      // Nearest by edit distance: "qwen" is 1 from qwen2 and qwen3 (one insertion), 2 from swin (two
      // substitutions), 3 from qwen3_5 (three insertions), more from the rest; ties keep the list order.
      {R"({"model_type":"qwen"})", "config.model_type",
       R"(config.model_type: unsupported model_type; nearest supported: qwen2, qwen3, swin (all: gpt2, llama, mistral, qwen2, mixtral, bert, deepseek_v2, gemma2, qwen3, qwen3_moe, olmo2, gemma, gemma3_text, phi3, gpt_neox, starcoder2, deepseek_v3, gpt_oss, t5, gemma3, granite, phi, stablelm, cohere, roberta, xlm-roberta, opt, qwen2_moe, distilbert, glm4, nemotron, modernbert, olmoe, smollm3, olmo, gpt_bigcode, gptj, falcon, bloom, ernie4_5, exaone4, seed_oss, arcee, granitemoe, granitemoeshared, bart, llama4_text, llama4, hunyuan_v1_dense, apertus, deberta-v2, mbart, whisper, cohere2, vit, gpt_neo, marian, pegasus, camembert, electra, m2m_100, glm4_moe, mt5, umt5, albert, mpnet, dinov2, deit, phimoe, olmo3, lfm2, ernie4_5_moe, mistral4, ministral3, mistral3, minimax_m2, lfm2_moe, gemma4_text, gemma4, qwen3_next, qwen3_5_text, qwen3_5_moe_text, qwen3_5, qwen3_5_moe, qwen2_vl, qwen2_5_vl, helium, glm, hunyuan_v1_moe, dots1, dbrx, jetmoe, wav2vec2, hubert, wavlm, mamba, mamba2, qwen3_vl, qwen3_vl_moe, clip, siglip, siglip2, idefics3, smolvlm, granitemoehybrid, bamba, falcon_mamba, falcon_h1, nemotron_h, convnext, convnextv2, swin, llava, paligemma, jamba, esm, resnet, dinov3_vit, beit, data2vec-vision, segformer, llava_next, mllama, mllama_text_model, internvl, gemma3n_text, llava_onevision, ernie, biogpt, xlm-roberta-xl, data2vec-text, mpt, codegen, swinv2, qwen2_audio, glm4_moe_lite, afmoe, nanochat, vaultgemma, deepseek_v32, t5gemma, cohere2_moe, ministral, deepseek_v4, granite_swa, granitemoe_swa, glm_moe_dsa, solar_open, minicpm3, longcat_flash, cwm, jais2, hyperclovax, exaone_moe, hy_v3, mimo_v2_flash, laguna); other architectures can be described in the native JSON format (models/NATIVE-FORMAT.md) (got "qwen"))"},
      {R"({"model_type":5})", "config.model_type", "config.model_type: must be a non-empty string (got 5)"},
      {R"({"hidden_size":8})", "config.model_type",
       "config.model_type: must name the architecture (see memplan models) (got absent)"},
      {R"([1,2])", "config", "config: must be a JSON object (got [1,2])"},
  };
  for (const auto& c : cases) {
    INFO(c.config);
    auto e = input_error([&] { import(c.config); });
    CHECK(e.field() == c.field);
    CHECK(std::string(e.what()) == c.message);
  }
}

TEST_CASE("torchvision table", "[importer]") {
  auto r50 = memplan::vision_spec_for("resnet50");
  CHECK(r50.family == memplan::VisionSpec::Family::resnet);
  CHECK(r50.blocks_per_stage == std::vector<int64_t>{3, 4, 6, 3});
  CHECK(r50.bottleneck);
  CHECK(r50.num_classes == 1000);
  CHECK_FALSE(memplan::vision_spec_for("resnet34").bottleneck);
  CHECK(memplan::vision_spec_for("resnet152").blocks_per_stage == std::vector<int64_t>{3, 8, 36, 3});
  auto vl = memplan::vision_spec_for("vit_l_16", 10);
  CHECK(vl.family == memplan::VisionSpec::Family::vit);
  CHECK((vl.patch_size == 16 && vl.num_layers == 24 && vl.num_heads == 16 && vl.hidden_dim == 1024 &&
         vl.mlp_dim == 4096 && vl.num_classes == 10 && vl.default_image_size == 224));
  CHECK(memplan::vision_spec_for("vit_b_32").patch_size == 32);

  auto e = input_error([] { memplan::vision_spec_for("resnet51"); });
  CHECK(e.field() == "model");
  CHECK(std::string(e.what()).find("(got resnet51)") != std::string::npos);
  CHECK(input_error([] { memplan::vision_spec_for("resnet50", 0); }).field() == "num_classes");
}

// Published figures: sum(p.numel() for p in model.parameters()) of the PyTorch model (HF *ForCausalLM /
// GPT2LMHeadModel / BertForMaskedLM, torchvision classifiers with 1000 classes).
TEST_CASE("closed-form parameter counts equal PyTorch", "[importer]") {
  struct Case {
    const char* name;
    const char* config;  // HF config.json subset, or empty for a torchvision name
    int64_t params;
  };
  const std::vector<Case> cases = {
      {"gpt2", R"({"model_type":"gpt2"})", 124'439'808},
      {"gpt2-medium", R"({"model_type":"gpt2","n_embd":1024,"n_head":16,"n_layer":24})", 354'823'168},
      {"tinyllama-1.1b",
       R"({"model_type":"llama","hidden_size":2048,"intermediate_size":5632,"num_hidden_layers":22,
           "num_attention_heads":32,"num_key_value_heads":4,"vocab_size":32000})",
       1'100'048'384},
      {"llama-2-7b", R"({"model_type":"llama","max_position_embeddings":4096})", 6'738'415'616},
      {"mistral-7b", R"({"model_type":"mistral"})", 7'241'732'096},
      {"mixtral-8x7b", R"({"model_type":"mixtral"})", 46'702'792'704},
      {"qwen2.5-0.5b",
       R"({"model_type":"qwen2","hidden_size":896,"intermediate_size":4864,"num_hidden_layers":24,
           "num_attention_heads":14,"num_key_value_heads":2,"tie_word_embeddings":true})",
       494'032'768},
      {"bert-base MLM", R"({"model_type":"bert"})", 109'514'298},
      // Small configs measured with transformers 5.17.0 (sum of numel on the meta device): they pin down
      // biases, head_dim overrides, aliases and untied heads per class.
      {"llama attention_bias+mlp_bias",
       R"({"model_type":"llama","hidden_size":256,"intermediate_size":512,"num_hidden_layers":2,
           "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000,"attention_bias":true,"mlp_bias":true})",
       1'697'024},
      {"mistral ignores attention_bias; head_dim",
       R"({"model_type":"mistral","hidden_size":256,"intermediate_size":512,"num_hidden_layers":2,
           "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000,"attention_bias":true,"head_dim":32})",
       1'496'320},
      {"qwen2 head_dim; qkv bias",
       R"({"model_type":"qwen2","hidden_size":256,"intermediate_size":512,"num_hidden_layers":2,
           "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000,"head_dim":32})",
       1'496'832},
      {"mixtral 4 experts; head_dim",
       R"({"model_type":"mixtral","hidden_size":256,"intermediate_size":512,"num_hidden_layers":2,
           "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000,"num_local_experts":4,"head_dim":32})",
       3'857'664},
      {"gpt2 n_inner; untied",
       R"({"model_type":"gpt2","n_embd":256,"n_layer":2,"n_head":4,"n_inner":300,"vocab_size":1000,
           "tie_word_embeddings":false})",
       1'611'352},
      {"gpt2 hidden_size aliases",
       R"({"model_type":"gpt2","hidden_size":256,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":1000})",
       2'098'176},
      {"bert untied; type_vocab_size",
       R"({"model_type":"bert","hidden_size":256,"num_hidden_layers":2,"num_attention_heads":4,
           "intermediate_size":300,"vocab_size":1000,"type_vocab_size":3,"tie_word_embeddings":false})",
       1'549'352},
      {"bert-large MLM",
       R"({"model_type":"bert","hidden_size":1024,"num_hidden_layers":24,"num_attention_heads":16,
           "intermediate_size":4096})",
       335'174'458},
      {"resnet18", "", 11'689'512},
      {"resnet34", "", 21'797'672},
      {"resnet152", "", 60'192'808},
      {"vit_b_32", "", 88'224'232},
      {"resnet50", "", 25'557'032},
      {"resnet101", "", 44'549'160},
      {"vit_b_16", "", 86'567'656},
      {"vit_l_16", "", 304'326'632},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    int64_t got = *c.config ? memplan::param_count(import(c.config)) : memplan::param_count(memplan::vision_spec_for(c.name));
    CHECK(got == c.params);
  }

  SECTION("untying adds exactly one vocab x hidden matrix") {
    auto tied = import(R"({"model_type":"gpt2"})");
    auto untied = import(R"({"model_type":"gpt2","tie_word_embeddings":false})");
    CHECK(memplan::param_count(untied) - memplan::param_count(tied) == 50257 * 768);
  }
  SECTION("biases add their widths") {
    auto base = memplan::param_count(import("{}", "llama"));
    CHECK(memplan::param_count(import(R"({"attention_bias":true})", "llama")) - base == 32 * (3 * 4096 + 4096));
    CHECK(memplan::param_count(import(R"({"mlp_bias":true})", "llama")) - base == 32 * (2 * 11008 + 4096));
  }
  SECTION("num_classes changes the classifier only") {
    CHECK(memplan::param_count(memplan::vision_spec_for("resnet50", 10)) == 25'557'032 - 2049 * 990);
  }
}

TEST_CASE("zoo: every entry loads and matches its published parameter count", "[importer]") {
  // Published counts of the checkpoints the zoo configs come from.
  const std::map<std::string, int64_t> published = {
      {"gpt2", 124'439'808},         {"gpt2-medium", 354'823'168},     {"gpt2-large", 774'030'080},
      {"gpt2-xl", 1'557'611'200},    {"llama-2-7b", 6'738'415'616},     {"llama-2-13b", 13'015'864'320},
      {"llama-2-70b", 68'976'648'192}, {"llama-3.1-8b", 8'030'261'248}, {"llama-3.1-70b", 70'553'706'496},
      {"llama-3.2-1b", 1'235'814'400}, {"llama-3.2-3b", 3'212'749'824}, {"mistral-7b", 7'241'732'096},
      {"mixtral-8x7b", 46'702'792'704}, {"qwen2.5-0.5b", 494'032'768},  {"qwen2.5-7b", 7'615'616'512},
      {"qwen2.5-72b", 72'706'203'648}, {"bert-base", 109'514'298},       {"bert-large", 335'174'458},
      {"tinyllama-1.1b", 1'100'048'384},
      {"resnet18", 11'689'512},      {"resnet34", 21'797'672},         {"resnet50", 25'557'032},
      {"resnet101", 44'549'160},     {"resnet152", 60'192'808},        {"vit_b_16", 86'567'656},
      {"vit_b_32", 88'224'232},      {"vit_l_16", 304'326'632},
  };
  const auto entries = memplan::zoo_entries();
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back(e.name);
  for (const auto& [name, count] : published) {
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  CHECK(std::is_sorted(names.begin(), names.end()));

  for (const auto& e : entries) {
    INFO(e.name);
    auto m = memplan::load_zoo_model(e.name);
    CHECK(m.name == e.name);
    CHECK_FALSE(e.description.empty());
    CHECK(e.description.find("params") != std::string::npos);
    if (auto it = published.find(e.name); it != published.end()) CHECK(memplan::param_count(m) == it->second);
    if (e.source == memplan::ZooEntry::Source::torchvision)
      CHECK(m.kind == memplan::ModelSpec::Kind::vision);
    else
      CHECK(m.transformer.model_type == e.family);
  }
  // Spot checks of memory-relevant fields as the configs state them.
  CHECK(memplan::load_zoo_model("mistral-7b").transformer.sliding_window == 4096);
  CHECK(memplan::load_zoo_model("mixtral-8x7b").transformer.sliding_window == 0);
  CHECK(memplan::load_zoo_model("qwen2.5-7b").transformer.sliding_window == 0);
  CHECK(memplan::load_zoo_model("llama-3.2-1b").transformer.tie_word_embeddings);
  CHECK(memplan::load_zoo_model("llama-3.2-3b").transformer.head_dim == 128);
}

TEST_CASE("zoo: unknown names list close matches", "[importer]") {
  auto e = input_error([] { memplan::load_zoo_model("llama-2-7"); });
  CHECK(e.field() == "model");
  std::string msg = e.what();
  CHECK(msg.find("llama-2-7b") != std::string::npos);
  CHECK(msg.find("(got llama-2-7)") != std::string::npos);
  CHECK(memplan::zoo_close_matches("resnet5").front() == "resnet50");
  CHECK(memplan::zoo_close_matches("GPT2").front() == "gpt2");
}

TEST_CASE("load_model: zoo names, HF files, graphs", "[importer]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "memplan_test_importers";
  fs::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };

  CHECK(memplan::load_model("gpt2").transformer.hidden_size == 768);

  auto hf = memplan::load_model(write("config.json", R"({"model_type":"qwen2","hidden_size":896,
      "num_attention_heads":14,"num_key_value_heads":2,"intermediate_size":4864,"num_hidden_layers":24,
      "tie_word_embeddings":true})"));
  CHECK(hf.kind == memplan::ModelSpec::Kind::transformer);
  CHECK(memplan::param_count(hf) == 494'032'768);

  auto tv = memplan::load_model(write("tv.json", R"({"source":"torchvision","name":"resnet18","num_classes":10})"));
  CHECK(tv.kind == memplan::ModelSpec::Kind::vision);
  CHECK(tv.vision.num_classes == 10);

  auto graph = input_error([&] { memplan::load_model(write("graph.json", R"({"memplan_graph":{"version":1}})")); });
  CHECK(graph.field() == "memplan_graph");  // native graphs are parsed (tests/test_native_graph.cpp)

  CHECK(input_error([&] { memplan::load_model(write("bad.json", "{not json")); }).field() == "model");
  CHECK(input_error([&] { memplan::load_model(write("other.json", R"({"hidden_size":8})")); }).field() == "model");
  CHECK(input_error([&] { memplan::load_model(write("src.json", R"({"source":"timm","name":"x"})")); }).field() ==
        "model.source");
  CHECK(input_error([&] { memplan::load_model(write("neg.json", R"({"model_type":"gpt2","n_head":-1})")); })
            .field() == "config.n_head");
  auto missing = input_error([] { memplan::load_model("no-such-model-or-file"); });
  CHECK(missing.field() == "model");
  fs::remove_all(dir);
}

TEST_CASE("memplan models lists the embedded zoo from any directory", "[importer]") {
  const std::string cmd = std::string("cd / && '") + MEMPLAN_BIN + "' models --json";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  REQUIRE(pclose(p) == 0);
  auto j = json::parse(out);
  REQUIRE(j.is_array());
  CHECK(j.size() == memplan::zoo_entries().size());
  bool saw_llama = false;
  for (const auto& row : j) {
    if (row["name"] != "llama-2-7b") continue;
    saw_llama = true;
    CHECK(row["family"] == "llama");
    CHECK(row["params"] == 6'738'415'616);
    CHECK(row["layers"] == 32);
    CHECK(row["hidden"] == 4096);
    CHECK(row["heads"] == 32);
    CHECK(row["kv_heads"] == 32);
    CHECK(row["vocab"] == 32000);
  }
  CHECK(saw_llama);

  const std::string table_cmd = std::string("'") + MEMPLAN_BIN + "' models";
  FILE* t = popen(table_cmd.c_str(), "r");
  REQUIRE(t);
  std::string table;
  while (size_t n = fread(buf, 1, sizeof buf, t)) table.append(buf, n);
  REQUIRE(pclose(t) == 0);
  CHECK(table.find("mixtral-8x7b") != std::string::npos);
  CHECK(table.find("46,702,792,704") != std::string::npos);
}
