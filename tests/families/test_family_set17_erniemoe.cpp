// ernie4_5_moe (family set 17): importer defaults and refusals, the published checkpoints' parameter counts derived
// by hand, and the measured H200 cases (measured before the builder existed and used to write it;
// data/validation/notes-f17/ernie4_5_moe.md).
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

// The shape of the measured rows (calibrate/cases/make_families17.py ERNIE_MOE).
const char* kSmallBody = R"("hidden_size": 2560, "intermediate_size": 12288, "moe_intermediate_size": 1536,
    "num_hidden_layers": 3, "num_attention_heads": 20, "num_key_value_heads": 4, "moe_num_experts": 64, "moe_k": 6,
    "moe_num_shared_experts": 2, "vocab_size": 103424)";

std::vector<int> sparse_layers(const TransformerSpec& s) {
  std::vector<int> out;
  for (size_t i = 0; i < s.moe_layers.size(); ++i)
    if (s.moe_layers[i]) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace

TEST_CASE("ernie4_5_moe importer: Ernie4_5_MoeConfig defaults of transformers 5.17", "[family][set17]") {
  // The class defaults are ERNIE-4.5-21B-A3B's: 103424 / 2560 / intermediate 12288 / 28 layers / 20 heads / 4 kv
  // heads, head_dim 2560 // 20 = 128 (no head_dim field), 64 experts top 6 of 1536, 2 shared experts, MoE from layer
  // 1 to the last (end index -1), every layer (interval 1), tied, no biases, 131072 positions.
  const TransformerSpec s = import(R"({"model_type": "ernie4_5_moe"})");
  CHECK(s.model_type == "ernie4_5_moe");
  CHECK(s.vocab_size == 103424);
  CHECK(s.hidden_size == 2560);
  CHECK(s.intermediate_size == 12288);
  CHECK(s.num_layers == 28);
  CHECK(s.num_heads == 20);
  CHECK(s.num_kv_heads == 4);
  CHECK(s.head_dim == 128);
  CHECK(s.moe_intermediate_size == 1536);
  CHECK(s.num_experts == 64);
  CHECK(s.num_experts_per_tok == 6);
  CHECK(s.num_shared_experts == 2);
  CHECK(s.tie_word_embeddings);
  CHECK_FALSE(s.attention_bias);
  CHECK_FALSE(s.qkv_bias);
  CHECK_FALSE(s.o_bias);
  CHECK_FALSE(s.mlp_bias);
  CHECK(s.hidden_act == "silu");
  CHECK(s.max_position_embeddings == 131072);
  CHECK(s.sliding_window == 0);
  std::vector<int> all_but_first;
  for (int i = 1; i < 28; ++i) all_but_first.push_back(i);
  CHECK(sparse_layers(s) == all_but_first);
  // attribute_map: num_experts spells moe_num_experts, num_experts_per_tok moe_k; use_bias puts a bias everywhere.
  const TransformerSpec a = import(R"({"model_type": "ernie4_5_moe", "num_experts": 16, "num_experts_per_tok": 2,
      "use_bias": true, "head_dim": 64})");
  CHECK(a.num_experts == 16);
  CHECK(a.num_experts_per_tok == 2);
  CHECK(a.qkv_bias);
  CHECK(a.o_bias);
  CHECK(a.mlp_bias);
  CHECK(a.head_dim == 64);
  // Layer i is sparse iff (i + 1) % interval == 0 and start <= i <= end (Ernie4_5_MoeDecoderLayer.__init__).
  CHECK(sparse_layers(import(R"({"model_type": "ernie4_5_moe", "num_hidden_layers": 4, "moe_layer_interval": 2})")) ==
        std::vector<int>{1, 3});
  CHECK(sparse_layers(import(R"({"model_type": "ernie4_5_moe", "num_hidden_layers": 8, "moe_layer_start_index": 3,
      "moe_layer_end_index": 5})")) == std::vector<int>{3, 4, 5});
  CHECK(sparse_layers(import(R"({"model_type": "ernie4_5_moe", "num_hidden_layers": 6, "moe_layer_start_index": 0,
      "moe_layer_interval": 3})")) == std::vector<int>{2, 5});
  // No layer in the range: every layer dense (no router, no experts).
  CHECK(import(R"({"model_type": "ernie4_5_moe", "num_hidden_layers": 2, "moe_layer_start_index": 2})")
            .moe_layers.empty());
}

TEST_CASE("ernie4_5_moe importer: bad values name their field", "[family][set17]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "ernie4_5_moe", "num_key_value_heads": null})", "config.num_key_value_heads:"},
      {R"({"model_type": "ernie4_5_moe", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
      {R"({"model_type": "ernie4_5_moe", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "ernie4_5_moe", "head_dim": 63})", "config.head_dim:"},
      {R"({"model_type": "ernie4_5_moe", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "ernie4_5_moe", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "ernie4_5_moe", "moe_k": 65})", "config.moe_k:"},
      {R"({"model_type": "ernie4_5_moe", "moe_k": null})", "config.moe_k:"},
      {R"({"model_type": "ernie4_5_moe", "moe_num_experts": 0})", "config.moe_num_experts:"},
      {R"({"model_type": "ernie4_5_moe", "moe_num_experts": null})", "config.moe_num_experts:"},
      {R"({"model_type": "ernie4_5_moe", "moe_layer_interval": 0})", "config.moe_layer_interval:"},
      {R"({"model_type": "ernie4_5_moe", "moe_layer_start_index": 1.5})", "config.moe_layer_start_index:"},
      {R"({"model_type": "ernie4_5_moe", "moe_num_shared_experts": -1})", "config.moe_num_shared_experts:"},
      {R"({"model_type": "ernie4_5_moe", "moe_intermediate_size": 0})", "config.moe_intermediate_size:"},
      {R"({"model_type": "ernie4_5_moe", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "ernie4_5_moe", "rope_parameters": {"rope_type": "longrope"}})",
       "config.rope_parameters.rope_type:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("ernie4_5_moe parameter count: the published checkpoints, derived by hand", "[family][set17]") {
  // Ernie4_5_MoeForCausalLM registers, per layer: q_proj [nh * 128, H], k_proj and v_proj [nkv * 128, H], o_proj
  // [H, nh * 128] (no biases), input_layernorm and post_attention_layernorm [H]; a dense layer's mlp gate / up
  // [I, H] and down [H, I]; a MoE layer's gate.weight [E, H], gate.moe_statics.e_score_correction_bias [1, E] (a
  // parameter with requires_grad False: counted by p.numel()), experts.gate_up_proj [E, 2 * Im, H],
  // experts.down_proj [E, H, Im] and shared_experts gate / up / down (Im * n_shared wide). Model: embed_tokens
  // [103424, H], the final norm [H], lm_head [103424, H] unless tied.
  //
  // ERNIE-4.5-21B-A3B (H 2560, 28 layers, 20 / 4 heads, I 12288, Im 1536, E 64, 2 shared, MoE on layers 1..27):
  //   attention 6,553,600 + 2 * 1,310,720 + 6,553,600 = 15,728,640; norms 5,120; dense MLP 3 * 2560 * 12288 =
  //   94,371,840; MoE 163,840 + 64 + 64 * 3072 * 2560 + 64 * 2560 * 1536 + 3 * 2560 * 3072 = 163,904 +
  //   503,316,480 + 251,658,240 + 23,592,960 = 778,731,584;
  //   28 * 15,733,760 + 94,371,840 + 27 * 778,731,584 + 264,765,440 (tied) + 2,560
  //   = 440,545,280 + 94,371,840 + 21,025,752,768 + 264,765,440 + 2,560 = 21,825,437,888 (published: 21B).
  CHECK(memplan::param_count(memplan::load_zoo_model("ernie-4.5-21b-a3b")) == 21'825'437'888);
  // ERNIE-4.5-300B-A47B (H 8192, 54 layers, 64 / 8 heads, I 28672, Im 3584, E 64, no shared, MoE on layers 3..53):
  //   attention 67,108,864 + 2 * 8,388,608 + 67,108,864 = 150,994,944; norms 16,384; dense MLP 3 * 8192 * 28672 =
  //   704,643,072; MoE 524,288 + 64 + 64 * 7168 * 8192 + 64 * 8192 * 3584 = 524,352 + 3,758,096,384 +
  //   1,879,048,192 = 5,637,668,928;
  //   54 * 151,011,328 + 3 * 704,643,072 + 51 * 5,637,668,928 + 2 * 847,249,408 (untied) + 8,192
  //   = 8,154,611,712 + 2,113,929,216 + 287,521,115,328 + 1,694,498,816 + 8,192 = 299,484,163,264 (published: 300B).
  CHECK(memplan::param_count(memplan::load_zoo_model("ernie-4.5-300b-a47b")) == 299'484'163'264);
  // The measured rows' shapes: 3 layers (layer 0 dense, 1 and 2 MoE):
  //   3 * 15,733,760 + 94,371,840 + 2 * 778,731,584 + 264,765,440 + 2,560 = 1,963,804,288, the sum of p.numel() the
  //   H200 harness recorded for f17-erniemoe-* (trainable: 128 fewer, the two correction biases);
  const std::string small = std::string(R"({"model_type": "ernie4_5_moe", )") + kSmallBody;
  CHECK(memplan::param_count(import(small + "}")) == 1'963'804'288);
  //   4 layers, 16 experts top 4, interval 2 (layers 1 and 3 MoE): MoE 40,960 + 16 + 16 * 3072 * 2560 + 16 * 2560 *
  //   1536 + 23,592,960 = 212,377,616; 4 * 15,733,760 + 2 * 94,371,840 + 2 * 212,377,616 + 264,765,440 + 2,560 =
  //   941,201,952 (f17-erniemoe16-*).
  CHECK(memplan::param_count(import(small + R"(, "moe_num_experts": 16, "moe_k": 4, "num_hidden_layers": 4,
      "moe_layer_interval": 2})")) == 941'201'952);
}

TEST_CASE("ernie4_5_moe: measured H200 cases of family set 17", "[family][set17]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, the measured `params`
  // exactly (data/validation/notes-f17/ernie4_5_moe.md has the table).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return memplan::testing::has_any_prefix(c.id, {"f17-erniemoe"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 4);
}
