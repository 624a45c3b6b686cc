// gemma4 (family set 19): importer defaults and refusals, parameter counts against the published checkpoints, and
// the measured H200 cases (measured before the builder existed and used to write it; notes-f19/gemma4.md).
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

TEST_CASE("gemma4 importer: class defaults of transformers 5.17", "[family][set19]") {
  // Gemma4TextConfig: 262144 / 2304 / 9216 / 30 layers / 8 heads / 4 kv heads, head_dim 256, global_head_dim 512
  // on full layers (no num_global_key_value_heads: the kv heads stay 4), tied, sliding_window 512, layer_types
  // None => every sixth layer full (and the last), per-layer inputs 256 wide over 262144 rows, no KV sharing, no
  // MoE, no softcapping.
  const TransformerSpec x = import(R"({"model_type": "gemma4_text"})");
  CHECK(x.model_type == "gemma4_text");
  CHECK(x.vocab_size == 262144);
  CHECK(x.hidden_size == 2304);
  CHECK(x.intermediate_size == 9216);
  CHECK(x.num_layers == 30);
  CHECK(x.num_heads == 8);
  CHECK(x.num_kv_heads == 4);
  CHECK(x.head_dim == 256);
  CHECK(x.gemma4_global_head_dim == 512);
  CHECK(x.gemma4_global_kv_heads == 4);
  CHECK_FALSE(x.gemma4_k_eq_v);
  CHECK(x.max_position_embeddings == 131072);
  CHECK(x.tie_word_embeddings);
  CHECK(x.hidden_act == "gelu_pytorch_tanh");
  CHECK(x.sliding_window == 512);
  REQUIRE(x.sliding_layers.size() == 30);
  CHECK(x.sliding_layers[0] == 1);
  CHECK(x.sliding_layers[4] == 1);
  CHECK(x.sliding_layers[5] == 0);
  CHECK(x.sliding_layers[29] == 0);
  CHECK(x.gemma4_ple_size == 256);
  CHECK(x.gemma4_ple_vocab == 262144);
  CHECK(x.gemma4_kv_shared_layers == 0);
  CHECK_FALSE(x.gemma4_double_wide_mlp);
  CHECK_FALSE(x.gemma4_moe);
  CHECK(x.num_experts == 0);
  CHECK(x.final_logit_softcapping == 0.0);
  // The last layer is forced to full attention; num_global_key_value_heads counts only under attention_k_eq_v.
  const TransformerSpec y = import(R"({"model_type": "gemma4_text", "num_hidden_layers": 3,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention"], "num_global_key_value_heads": 2})");
  CHECK(y.sliding_layers == std::vector<uint8_t>{1, 0, 0});
  CHECK(y.gemma4_global_kv_heads == 4);
  const TransformerSpec z = import(R"({"model_type": "gemma4_text", "attention_k_eq_v": true,
      "num_global_key_value_heads": 2, "global_head_dim": 384, "hidden_size_per_layer_input": 0,
      "enable_moe_block": true, "num_experts": 16, "top_k_experts": 4, "moe_intermediate_size": 64,
      "final_logit_softcapping": 30.0, "num_kv_shared_layers": 6, "use_double_wide_mlp": true})");
  CHECK(z.gemma4_k_eq_v);
  CHECK(z.gemma4_global_kv_heads == 2);
  CHECK(z.gemma4_global_head_dim == 384);
  CHECK(z.gemma4_ple_size == 0);
  CHECK(z.gemma4_moe);
  CHECK(z.num_experts == 16);
  CHECK(z.num_experts_per_tok == 4);
  CHECK(z.moe_intermediate_size == 64);
  CHECK(z.final_logit_softcapping == 30.0);
  CHECK(z.gemma4_kv_shared_layers == 6);
  CHECK(z.gemma4_double_wide_mlp);
  // The multimodal config: its text_config's decoder, built as gemma4_text.
  const TransformerSpec mm = import(R"({"model_type": "gemma4", "text_config": {"hidden_size": 1536}})");
  CHECK(mm.model_type == "gemma4_text");
  CHECK(mm.hidden_size == 1536);
  CHECK(mm.modelled_part == "text decoder only");
}

TEST_CASE("gemma4 importer: bad values name their field", "[family][set19]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "gemma4_text", "sliding_window": null})", "config.sliding_window:"},
      {R"({"model_type": "gemma4_text", "num_hidden_layers": 2, "layer_types": ["full_attention"]})",
       "config.layer_types:"},
      {R"({"model_type": "gemma4_text", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]})",
       "config.layer_types[0]:"},
      {R"({"model_type": "gemma4_text", "hidden_activation": "gelu_new"})", "config.hidden_activation:"},
      {R"({"model_type": "gemma4_text", "use_bidirectional_attention": "all"})",
       "config.use_bidirectional_attention:"},
      {R"({"model_type": "gemma4_text", "per_layer_config": {"5": {"head_dim": 512}}})", "config.per_layer_config:"},
      {R"({"model_type": "gemma4_text", "rope_parameters": {"full_attention": {"rope_type": "default"}}})",
       "config.rope_parameters.full_attention.rope_type:"},
      {R"({"model_type": "gemma4_text", "rope_parameters": {"sliding_attention": {"rope_type": "yarn"}}})",
       "config.rope_parameters.sliding_attention.rope_type:"},
      {R"({"model_type": "gemma4_text", "rope_scaling": {"rope_type": "linear"}})", "config.rope_scaling:"},
      {R"({"model_type": "gemma4_text", "num_key_value_heads": 3})", "config.num_key_value_heads:"},
      {R"({"model_type": "gemma4_text", "attention_k_eq_v": true, "num_global_key_value_heads": 3})",
       "config.num_global_key_value_heads:"},
      {R"({"model_type": "gemma4_text", "global_head_dim": 511})", "config.global_head_dim:"},
      {R"({"model_type": "gemma4_text", "head_dim": 255})", "config.head_dim:"},
      {R"({"model_type": "gemma4_text", "num_kv_shared_layers": 30})", "config.num_kv_shared_layers:"},
      {R"({"model_type": "gemma4_text", "num_hidden_layers": 4, "num_kv_shared_layers": 1,
          "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]})",
       "config.num_kv_shared_layers:"},
      {R"({"model_type": "gemma4_text", "enable_moe_block": true, "num_experts": 8, "top_k_experts": 2})",
       "config.moe_intermediate_size:"},
      {R"({"model_type": "gemma4_text", "enable_moe_block": true, "num_experts": 4, "top_k_experts": 8,
          "moe_intermediate_size": 64})",
       "config.top_k_experts:"},
      {R"({"model_type": "gemma4_text", "pad_token_id": 262144})", "config.pad_token_id:"},
      {R"({"model_type": "gemma4_text", "vocab_size_per_layer_input": 128, "pad_token_id": 200})",
       "config.pad_token_id:"},
      {R"({"model_type": "gemma4", "text_config": 3})", "config.text_config:"},
      {R"({"model_type": "gemma4", "text_config": {"hidden_activation": "tanh"}})",
       "config.text_config.hidden_activation:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // A KV-shared layer whose type has a producer is accepted.
  CHECK(error_of([] {
          import(R"({"model_type": "gemma4_text", "num_hidden_layers": 4, "num_kv_shared_layers": 1,
              "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]})");
        }) == "no error");
}

TEST_CASE("gemma4 parameter counts: published checkpoints (text decoder)", "[family][set19]") {
  // Derived by hand from Gemma4ForCausalLM's registrations (lm_head tied), H hidden, I intermediate, nh heads, V
  // vocab, L layers; sliding layers use head_dim d and nkv KV heads, full layers global_head_dim D and gkv heads:
  //   model: V*H (embed_tokens) + H (norm) [+ PLE: Vp*L*P (embed_tokens_per_layer) + L*P*H (projection) + P (norm)]
  //   layer: H*nh*d_l (q) + d_l (q_norm) + nh*d_l*H (o)
  //          + unless KV-shared: d_l (k_norm) + H*kv_l*d_l (k) + H*kv_l*d_l (v; none on a k_eq_v full layer)
  //          + 3*H*I_l (mlp; I_l = 2I on KV-shared layers with use_double_wide_mlp) + 4*H (norms)
  //          [+ PLE: 2*P*H + H] [+ MoE: E*H (router proj) + H (scale) + E (per_expert_scale) + 3*E*Im*H + 3*H]
  //  E2B (H 1536, I 6144, L 35 with full at 4, 9, ..., 34, 8 heads, nkv 1, d 256, D 512, P 256, Vp 262144, last
  //  20 layers shared with 2I): embed 402,653,184 + 1,536 + PLE 2,348,810,240 + 13,762,560 + 256; layers 0-14:
  //  12 sliding x 36,184,064 + 3 full x 43,262,464; layers 15-34: 16 sliding x 63,708,928 + 4 full x 70,000,640
  //  => 4,628,569,344 (the card's 5.1B with the ~0.45B vision and audio towers; 2.3B "effective" without the PLE
  //  table).
  //  E4B (H 2560, I 10240, L 42, full every sixth, 8 / 2 heads, last 18 shared, no double-wide MLP):
  //  sliding 100,938,752 / full 106,182,144 (own KV), 90,452,736 / 93,074,432 (shared) => 7,463,013,376 (the
  //  card's 8B with the towers).
  //  31B (H 5376, I 21504, L 60, 32 / 16 heads, full layers k_eq_v with 4 KV heads, no PLE): sliding 478,959,104,
  //  full 534,009,856 => 1,409,286,144 + 5,376 + 50 * 478,959,104 + 10 * 534,009,856 = 30,697,345,280.
  //  26B-A4B (H 2816, I 2112, L 30, 16 / 8 heads, 2 global KV heads, k_eq_v, 128 experts of 704 top 8): sliding
  //  814,094,976, full 828,513,408 => 738,197,504 + 2,816 + 25 * 814,094,976 + 5 * 828,513,408 = 25,233,141,760.
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"gemma-4-e2b", 4'628'569'344},
      {"gemma-4-e4b", 7'463'013'376},
      {"gemma-4-31b", 30'697'345'280},
      {"gemma-4-26b-a4b", 25'233'141'760},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    const memplan::ModelSpec m = memplan::load_zoo_model(z.name);
    CHECK(memplan::param_count(m) == z.params);
    CHECK(m.transformer.modelled_part == "text decoder only");
  }
  const memplan::ModelSpec e2b = memplan::load_zoo_model("gemma-4-e2b");
  CHECK(e2b.transformer.gemma4_kv_shared_layers == 20);
  CHECK(e2b.transformer.sliding_layers[4] == 0);
  CHECK(e2b.transformer.sliding_layers[5] == 1);
  const memplan::ModelSpec g31 = memplan::load_zoo_model("gemma-4-31b");
  CHECK(g31.transformer.gemma4_global_kv_heads == 4);
  CHECK(g31.transformer.gemma4_k_eq_v);
  CHECK(g31.transformer.sliding_window == 1024);
}

TEST_CASE("gemma4: measured H200 cases of family set 19", "[family][set19]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured `params`
  // exactly. One listed miss: f19-g4-e2b-bf16-b2s1024's reserved (+10.9 %). Every replayed allocation of 1 MiB or
  // more matches the recording but for the order of 1-2 MiB ExpandBackward sums, and the recorded stream itself,
  // replayed through engine/alloc's CachingAllocator, also gives 20858 MiB against the measured 18810: in step 3
  // the real allocator serves the fourth 2 GiB loss buffer (log_softmax's gradient) from a segment step 1 made,
  // the model cudaMallocs one more (an allocator-model placement difference, not the graph; notes-f19/gemma4.md).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return !c.holdout && memplan::testing::has_any_prefix(c.id, {"f19-g4-"});  // blind ones: set 20's test
      },
      [](const std::string& id) {
        if (id == "f19-g4-e2b-bf16-b2s1024") return memplan::testing::FamilyBounds{0.001, 0.12};
        return memplan::testing::FamilyBounds{0.001, 0.01};
      });
  CHECK(checked.size() == 3);
}
