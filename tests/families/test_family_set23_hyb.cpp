// granitemoehybrid, bamba (the Mamba2 / attention hybrids) and falcon_mamba (family set 23): importer defaults
// and refusals, parameter counts derived by hand at the published widths, the attention refusal of falcon_mamba,
// and the measured H200 cases (measured before the builders were checked against them; notes-f23/hyb.md).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/param_count.h"

using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }

memplan::ModelSpec model_of(const std::string& text) {
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::transformer;
  m.transformer = import(text);
  m.name = m.transformer.model_type;
  return m;
}

}  // namespace

TEST_CASE("granitemoehybrid importer: class defaults of transformers 5.17", "[family][set23]") {
  // GraniteMoeHybridConfig: 32000 / 4096 / intermediate 11008 / 32 layers / 32 heads (kv None => 32), 8 experts of
  // 11008, top 2, shared MLP 1024, position_embedding_type None (no rotary), layer_types None => every layer
  // "linear_attention"; mamba: 128 heads, "auto" head dim = 2 * 4096 / 128 = 64, 1 group, state 256, conv 4,
  // chunk 256, conv bias, no projection bias; untied head.
  const TransformerSpec x = import(R"({"model_type": "granitemoehybrid"})");
  CHECK(x.vocab_size == 32000);
  CHECK(x.hidden_size == 4096);
  CHECK(x.num_layers == 32);
  CHECK(x.num_heads == 32);
  CHECK(x.num_kv_heads == 32);
  CHECK(x.head_dim == 128);
  CHECK(x.num_experts == 8);
  CHECK(x.num_experts_per_tok == 2);
  CHECK(x.moe_intermediate_size == 11008);
  CHECK(x.granite_shared_intermediate_size == 1024);
  CHECK_FALSE(x.hybrid_rope);
  CHECK(x.hybrid_attention_layers == std::vector<uint8_t>(32, 0));
  CHECK(x.ssm_num_heads == 128);
  CHECK(x.ssm_head_dim == 64);
  CHECK(x.ssm_groups == 1);
  CHECK(x.ssm_state_size == 256);
  CHECK(x.ssm_conv_kernel == 4);
  CHECK(x.ssm_chunk_size == 256);
  CHECK(x.ssm_inner_size == 8192);
  CHECK(x.ssm_conv_bias);
  CHECK_FALSE(x.ssm_bias);
  CHECK_FALSE(x.tie_word_embeddings);
  CHECK(x.max_position_embeddings == 2048);
  // The published configs' legacy names and the attribute_map's alias; "rope" builds the rotary embedding; 0
  // experts leaves the shared MLP alone.
  const TransformerSpec y = import(R"({"model_type": "granitemoehybrid", "num_hidden_layers": 4,
      "layers_block_type": ["mamba", "attention", "linear_attention", "full_attention"], "position_embedding_type":
      "rope", "num_local_experts": 0, "hidden_size": 1536, "mamba_n_heads": 48})");
  CHECK(y.hybrid_attention_layers == std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(y.hybrid_rope);
  CHECK(y.num_experts == 0);
  CHECK(y.ssm_head_dim == 64);
  CHECK_FALSE(import(R"({"model_type": "granitemoehybrid", "position_embedding_type": "nope"})").hybrid_rope);
}

TEST_CASE("bamba importer: class defaults of transformers 5.17", "[family][set23]") {
  // BambaConfig: 128000 / 4096 / 14336 / 32 layers / 32 heads / 8 kv heads, attn_layer_indices None (all mamba),
  // mamba 128 heads of 64, state 256; partial_rotary_factor 0.5 => 64 of head_dim 128 rotated; untied.
  const TransformerSpec x = import(R"({"model_type": "bamba"})");
  CHECK(x.vocab_size == 128000);
  CHECK(x.hidden_size == 4096);
  CHECK(x.intermediate_size == 14336);
  CHECK(x.num_layers == 32);
  CHECK(x.num_kv_heads == 8);
  CHECK(x.head_dim == 128);
  CHECK(x.rotary_dim == 64);
  CHECK(x.hybrid_rope);
  CHECK(x.hybrid_attention_layers == std::vector<uint8_t>(32, 0));
  CHECK(x.ssm_num_heads == 128);
  CHECK(x.ssm_head_dim == 64);
  CHECK(x.ssm_state_size == 256);
  CHECK_FALSE(x.tie_word_embeddings);
  CHECK_FALSE(x.mlp_bias);
  // Indices outside [0, layers) match no layer; a top-level partial_rotary_factor is overridden by __post_init__'s
  // 0.5, a rope dict's own value wins.
  const TransformerSpec y = import(R"({"model_type": "bamba", "num_hidden_layers": 4, "attn_layer_indices": [2, 9],
      "partial_rotary_factor": 1.0})");
  CHECK(y.hybrid_attention_layers == std::vector<uint8_t>{0, 0, 1, 0});
  CHECK(y.rotary_dim == 64);
  CHECK(import(R"({"model_type": "bamba", "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
      "partial_rotary_factor": 0.25}})").rotary_dim == 32);
}

TEST_CASE("falcon_mamba importer: class defaults of transformers 5.17", "[family][set23]") {
  // FalconMambaConfig: 50280 / 768 / state 16 / 32 layers / expand 2 / conv 4 / time_step_rank "auto" = 48, tied.
  const TransformerSpec x = import(R"({"model_type": "falcon_mamba"})");
  CHECK(x.vocab_size == 50280);
  CHECK(x.hidden_size == 768);
  CHECK(x.num_layers == 32);
  CHECK(x.ssm_state_size == 16);
  CHECK(x.ssm_inner_size == 1536);
  CHECK(x.ssm_time_step_rank == 48);
  CHECK(x.ssm_residual_in_fp32);
  CHECK(x.tie_word_embeddings);
  // The published falcon-mamba-7b config says expand 16 and intermediate_size 8192: the key wins (the weights are
  // 8192 wide).
  CHECK(import(R"({"model_type": "falcon_mamba", "hidden_size": 4096, "expand": 16, "intermediate_size": 8192})")
            .ssm_inner_size == 8192);
}

TEST_CASE("granitemoehybrid / bamba / falcon_mamba importers: bad values name their field", "[family][set23]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "granitemoehybrid", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "granitemoehybrid", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "granitemoehybrid", "num_hidden_layers": 2, "layer_types": ["mamba"]})",
       "config.layer_types:"},
      {R"({"model_type": "granitemoehybrid", "num_hidden_layers": 2, "layer_types": ["mamba", "moe"]})",
       "config.layer_types[1]:"},
      {R"({"model_type": "granitemoehybrid", "mamba_n_heads": 100})", "config.mamba_n_heads:"},
      {R"({"model_type": "granitemoehybrid", "mamba_d_head": 32})", "config.mamba_d_head:"},
      {R"({"model_type": "granitemoehybrid", "mamba_n_groups": 3})", "config.mamba_n_groups:"},
      {R"({"model_type": "granitemoehybrid", "shared_intermediate_size": 0})", "config.shared_intermediate_size:"},
      {R"({"model_type": "granitemoehybrid", "num_experts_per_tok": 9})", "config.num_experts_per_tok:"},
      {R"({"model_type": "granitemoehybrid", "position_embedding_type": 1})", "config.position_embedding_type:"},
      {R"({"model_type": "granitemoehybrid", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "bamba", "z_loss_coefficient": 0.001})", "config.z_loss_coefficient:"},
      {R"({"model_type": "bamba", "num_logits_to_keep": null})", "config.num_logits_to_keep:"},
      {R"({"model_type": "bamba", "num_logits_to_keep": 4})", "config.num_logits_to_keep:"},
      {R"({"model_type": "bamba", "layers_block_type": ["mamba"]})", "config.layers_block_type:"},
      {R"({"model_type": "bamba", "attn_layer_indices": "9"})", "config.attn_layer_indices:"},
      {R"({"model_type": "bamba", "mamba_chunk_size": 0})", "config.mamba_chunk_size:"},
      {R"({"model_type": "bamba", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "falcon_mamba", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "falcon_mamba", "use_falcon_mambapy": true})", "config.use_falcon_mambapy:"},
      {R"({"model_type": "falcon_mamba", "expand": 0})", "config.expand:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("falcon_mamba: attn_implementation sdpa is refused naming attn", "[family][set23]") {
  const memplan::ModelSpec m = model_of(R"({"model_type": "falcon_mamba", "num_hidden_layers": 1,
      "hidden_size": 64, "vocab_size": 100})");
  memplan::RunConfig run;
  run.batch_size = 1;
  run.seq_len = 8;
  run.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(m, run); }).rfind("attn:", 0) == 0);
  run.attn = memplan::AttnImpl::eager;
  CHECK(error_of([&] { memplan::estimate(m, run); }) == "no error");
}

TEST_CASE("granitemoehybrid / bamba / falcon_mamba parameter counts at the published widths", "[family][set23]") {
  // Derived by hand from the modeling files' registrations.
  // Mamba2 mixer with H, I = 2H = nh * dh, G groups of state N (conv_dim = I + 2GN), K 4: conv conv_dim * K +
  //   conv_dim (bias) + in_proj (I + conv_dim + nh) * H + dt_bias / A_log / D 3 nh + gated norm I + out_proj H * I.
  // Attention: q H * nh * hd + k, v 2 * H * nkv * hd + o nh * hd * H.
  // granitemoehybrid layer: norms 2H + (experts) router E * H + gate_up E * 2 Ie * H + down E * H * Ie + shared
  //   input_linear 2 Is * H + output_linear H * Is, plus the mixer or the attention; tied head.
  //   ibm-granite/granite-4.0-h-tiny (H 1536, 36 mamba + 4 attention layers, 12 heads / 4 kv of 128, 64 experts
  //   of 512, Is 1024, 48 mamba heads of 64, N 128, V 100352): mixer 16,640 + 9,904,128 + 144 + 3,072 +
  //   4,718,592 = 14,642,576; attention 2,359,296 + 1,572,864 + 2,359,296 = 6,291,456; common 3,072 + 98,304 +
  //   100,663,296 + 50,331,648 + 3,145,728 + 1,572,864 = 155,814,912; 36 * 170,457,488 + 4 * 162,106,368 +
  //   embedding 154,140,672 + norm 1,536 = 6,939,037,248 (the card's 7B)
  //   ibm-granite/granite-4.0-h-micro (H 2048, no experts, Is 8192, 32 heads / 8 kv of 64, 64 mamba heads of 64):
  //   mixer 21,760 + 17,432,576 + 192 + 4,096 + 8,388,608 = 25,847,232; attention 4,194,304 + 2,097,152 +
  //   4,194,304 = 10,485,760; common 4,096 + 33,554,432 + 16,777,216 = 50,335,744; 36 * 76,182,976 + 4 *
  //   60,821,504 + 205,520,896 + 2,048 = 3,191,396,096 (the card's 3B)
  // bamba layer: feed_forward 3 * H * I + norms 2H, plus the mixer or the attention; untied head.
  //   ibm-ai-platform/Bamba-9B (H 4096, I 14336, 29 mamba + 3 attention layers, 32 heads / 8 kv of 128, 128 mamba
  //   heads of 64, N 128, V 128256): mixer 42,240 + 68,681,728 + 384 + 8,192 + 33,554,432 = 102,286,976;
  //   attention 16,777,216 + 8,388,608 + 16,777,216 = 41,943,040; common 176,160,768 + 8,192 = 176,168,960;
  //   29 * 278,455,936 + 3 * 218,112,000 + 2 * 525,336,576 + 4,096 = 9,780,235,392 (the card's 9.78B)
  // falcon_mamba layer with H, D, N, R, K 4: norm H + conv D * K + D + in_proj 2D * H + x_proj (R + 2N) * D +
  //   dt_proj D * R + D + A_log D * N + D + out_proj H * D (the three norms' ones are buffers, not parameters).
  //   tiiuae/falcon-mamba-7b (H 4096, D 8192, N 16, R 256, 64 layers, V 65024, untied): 4,096 + 40,960 +
  //   67,108,864 + 2,359,296 + 2,105,344 + 131,072 + 8,192 + 33,554,432 = 105,312,256 per layer; 64 layers
  //   6,739,984,384 + 2 * 266,338,304 + 4,096 = 7,272,665,088 (the card's 7.27B)
  std::string tiny_types, micro_types;
  for (int i = 0; i < 40; ++i) {
    const bool attn = i == 5 || i == 15 || i == 25 || i == 35;
    tiny_types += std::string(i ? ", " : "") + (attn ? "\"attention\"" : "\"mamba\"");
  }
  micro_types = tiny_types;
  const struct {
    std::string config;
    int64_t params;
  } widths[] = {
      {R"({"model_type": "granitemoehybrid", "vocab_size": 100352, "hidden_size": 1536, "num_hidden_layers": 40,
           "num_attention_heads": 12, "num_key_value_heads": 4, "intermediate_size": 512,
           "shared_intermediate_size": 1024, "num_local_experts": 64, "num_experts_per_tok": 6,
           "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_d_state": 128, "tie_word_embeddings": true,
           "layer_types": [)" + tiny_types + "]}",
       6'939'037'248},
      {R"({"model_type": "granitemoehybrid", "vocab_size": 100352, "hidden_size": 2048, "num_hidden_layers": 40,
           "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
           "shared_intermediate_size": 8192, "num_local_experts": 0, "num_experts_per_tok": 0,
           "mamba_n_heads": 64, "mamba_d_head": 64, "mamba_d_state": 128, "tie_word_embeddings": true,
           "layer_types": [)" + micro_types + "]}",
       3'191'396'096},
      {R"({"model_type": "bamba", "vocab_size": 128256, "num_hidden_layers": 32, "attn_layer_indices": [9, 18, 27],
           "mamba_d_state": 128, "mamba_d_head": 64})",
       9'780'235'392},
      {R"({"model_type": "falcon_mamba", "vocab_size": 65024, "hidden_size": 4096, "num_hidden_layers": 64,
           "expand": 16, "intermediate_size": 8192, "state_size": 16, "time_step_rank": 256,
           "tie_word_embeddings": false})",
       7'272'665'088},
  };
  for (const auto& w : widths) {
    INFO(w.config);
    CHECK(memplan::param_count(model_of(w.config)) == w.params);
  }
}

TEST_CASE("granitemoehybrid / bamba: measured H200 cases of family set 23", "[family][set23]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, and the measured `params` exactly
  // (tests/family_test_helpers.h). The measuring call ran three of the six tuning rows (gmh tiny6 bf16, gmh micro8
  // amp_bf16 checkpointed, bamba 9b3 amp_fp16 eager acc2); the two inference rows and falcon_mamba's are measured
  // blind with the held-out rows. No listed miss (notes-f23/hyb.md).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return !c.holdout && memplan::testing::has_any_prefix(c.id, {"f23-gmh-", "f23-bam-", "f23-fm-"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 3);
}
