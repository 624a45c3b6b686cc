// lfm2 (family set 17): importer defaults and refusals, parameter counts against the published checkpoints, and
// the measured H200 cases (measured before the builder existed and used to write it; notes-f17/lfm2.md).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

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

}  // namespace

TEST_CASE("lfm2 importer: class defaults of transformers 5.17", "[family][set17]") {
  // Lfm2Config: 65536 / 2560 / intermediate_size 12288 / 32 layers / 32 heads / 8 kv heads, tied, conv_L_cache 3,
  // no conv bias, full_attn_idxs None => every layer attends. Lfm2MLP's width with block_auto_adjust_ff_dim and
  // the multiplier 1.0: int(2 * 12288 / 3) = 8192, int(1.0 * 8192) = 8192, rounded up to a multiple of 256: 8192.
  const TransformerSpec x = import(R"({"model_type": "lfm2"})");
  CHECK(x.vocab_size == 65536);
  CHECK(x.hidden_size == 2560);
  CHECK(x.intermediate_size == 8192);
  CHECK(x.num_layers == 32);
  CHECK(x.num_heads == 32);
  CHECK(x.num_kv_heads == 8);
  CHECK(x.head_dim == 80);
  CHECK(x.max_position_embeddings == 128000);
  CHECK(x.tie_word_embeddings);
  CHECK(x.lfm2_conv_kernel == 3);
  CHECK_FALSE(x.lfm2_conv_bias);
  CHECK(x.lfm2_conv_layers == std::vector<uint8_t>(32, 0));
  // LFM2-350M's block_ff_dim 6656: int(13312 / 3) = 4437, rounded up to 4608; LFM2-700M's 10240: 6826 -> 6912.
  CHECK(import(R"({"model_type": "lfm2", "block_ff_dim": 6656})").intermediate_size == 4608);
  CHECK(import(R"({"model_type": "lfm2", "intermediate_size": 10240})").intermediate_size == 6912);
  // block_ff_dim wins over intermediate_size (__post_init__ pops it into intermediate_size).
  CHECK(import(R"({"model_type": "lfm2", "intermediate_size": 10240, "block_ff_dim": 6656})").intermediate_size ==
        4608);
  // A multiplier: int(1.5 * 8192) = 12288; 1.3: int(10649.6) = 10649 -> 10752. None: no rounding, 2/3 only:
  // int(2 * 1000 / 3) = 666. Without the adjustment the width is intermediate_size itself.
  CHECK(import(R"({"model_type": "lfm2", "block_ffn_dim_multiplier": 1.5})").intermediate_size == 12288);
  CHECK(import(R"({"model_type": "lfm2", "block_ffn_dim_multiplier": 1.3})").intermediate_size == 10752);
  CHECK(import(R"({"model_type": "lfm2", "intermediate_size": 1000, "block_ffn_dim_multiplier": null})")
            .intermediate_size == 666);
  CHECK(import(R"({"model_type": "lfm2", "intermediate_size": 1000, "block_auto_adjust_ff_dim": false})")
            .intermediate_size == 1000);
  // tie_embedding wins over tie_word_embeddings.
  CHECK_FALSE(import(R"({"model_type": "lfm2", "tie_embedding": false, "tie_word_embeddings": true})")
                  .tie_word_embeddings);
  // full_attn_idxs: listed layers attend, the others convolve; an index past the layers matches none.
  const TransformerSpec f = import(R"({"model_type": "lfm2", "num_hidden_layers": 4, "full_attn_idxs": [1, 3, 9]})");
  CHECK(f.lfm2_conv_layers == std::vector<uint8_t>{1, 0, 1, 0});
  // layer_types wins over full_attn_idxs.
  const TransformerSpec lt = import(R"({"model_type": "lfm2", "num_hidden_layers": 2, "full_attn_idxs": [0],
      "layer_types": ["conv", "full_attention"], "conv_L_cache": 4, "conv_bias": true, "head_dim": 32})");
  CHECK(lt.lfm2_conv_layers == std::vector<uint8_t>{1, 0});
  CHECK(lt.lfm2_conv_kernel == 4);
  CHECK(lt.lfm2_conv_bias);
  CHECK(lt.head_dim == 32);
}

TEST_CASE("lfm2 importer: bad values name their field", "[family][set17]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "lfm2", "num_hidden_layers": 2, "layer_types": ["conv"]})", "config.layer_types:"},
      {R"({"model_type": "lfm2", "num_hidden_layers": 1, "layer_types": ["sliding_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "lfm2", "layer_types": "conv"})", "config.layer_types:"},
      {R"({"model_type": "lfm2", "full_attn_idxs": 3})", "config.full_attn_idxs:"},
      {R"({"model_type": "lfm2", "full_attn_idxs": ["2"]})", "config.full_attn_idxs:"},
      {R"({"model_type": "lfm2", "conv_L_cache": 0})", "config.conv_L_cache:"},
      {R"({"model_type": "lfm2", "conv_bias": "no"})", "config.conv_bias:"},
      {R"({"model_type": "lfm2", "block_ffn_dim_multiplier": 0})", "config.block_ffn_dim_multiplier:"},
      {R"({"model_type": "lfm2", "block_multiple_of": 0})", "config.block_multiple_of:"},
      {R"({"model_type": "lfm2", "block_ff_dim": 1, "block_ffn_dim_multiplier": null})", "config.block_ff_dim:"},
      {R"({"model_type": "lfm2", "intermediate_size": -5})", "config.intermediate_size:"},
      {R"({"model_type": "lfm2", "num_key_value_heads": 5})", "config.num_key_value_heads:"},
      {R"({"model_type": "lfm2", "hidden_size": 16, "num_attention_heads": 32})", "config.num_attention_heads:"},
      {R"({"model_type": "lfm2", "head_dim": 63})", "config.head_dim:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("lfm2 parameter counts: published checkpoints", "[family][set17]") {
  // Derived by hand from the modeling file's registrations (tied head counted once), H hidden, I the MLP width
  // (block_auto_adjust_ff_dim), nh / nkv heads, D = H // nh = 64, V = 65536, 16 layers of which 6 attend:
  //  V*H + 16 * (3*H*I (w1, w3, w2) + 2*H (operator_norm, ffn_norm))
  //      + 10 * (3*H (conv.conv [H, 1, 3]) + 3*H*H (in_proj) + H*H (out_proj))
  //      + 6 * (H*nh*D + 2*H*nkv*D + nh*D*H (q, k, v, out_proj) + 2*D (q_ / k_layernorm)) + H (embedding_norm)
  //  LFM2-350M (H 1024, I 4608, 16 / 8 heads): 67,108,864 + 16 * 14,157,824 + 10 * 4,197,376 + 6 * 3,145,856
  //    + 1,024 = 354,483,968 (the card's 354M; the measured sum of p.numel() below too)
  //  LFM2-700M (H 1536, I 6912, 24 / 8): 100,663,296 + 16 * 31,853,568 + 10 * 9,441,792 + 6 * 6,291,584 + 1,536
  //    = 742,489,344 (the card's 742M)
  //  LFM2-1.2B (H 2048, I 8192, 32 / 8): 134,217,728 + 16 * 50,335,744 + 10 * 16,783,360 + 6 * 10,485,888 + 2,048
  //    = 1,170,340,608 (the card's 1.17B)
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"lfm2-350m", 354'483'968},
      {"lfm2-700m", 742'489'344},
      {"lfm2-1.2b", 1'170'340'608},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
  const memplan::ModelSpec m = memplan::load_zoo_model("lfm2-1.2b");
  CHECK(m.transformer.lfm2_conv_layers ==
        std::vector<uint8_t>{1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  CHECK(m.transformer.intermediate_size == 8192);
}

TEST_CASE("lfm2: measured H200 cases of family set 17", "[family][set17]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache (K / V of the attention layers and the
  // conv states) within 1 %, and the measured `params` exactly.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f17-lfm2"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 5);
}
