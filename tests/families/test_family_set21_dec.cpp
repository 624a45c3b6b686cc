// glm, helium, hunyuan_v1_moe, dots1, jetmoe, dbrx (family set 21, "decoders users bring"): importer defaults and
// refusals, parameter counts against the published checkpoints, and the measured H200 cases (measured before the
// builders were checked against them; data/validation/notes-f21/dec.md).
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

TEST_CASE("glm / helium importers: class defaults of transformers 5.17", "[family][set21]") {
  // GlmConfig: 151552 / 4096 / 13696 / 40 layers / 32 heads / 2 kv heads / head_dim 128 (a field), q / k / v biases,
  // untied, partial_rotary_factor 0.5 (__post_init__'s setdefault) -> rotary_dim 64.
  const TransformerSpec g = import(R"({"model_type": "glm"})");
  CHECK(g.vocab_size == 151552);
  CHECK(g.hidden_size == 4096);
  CHECK(g.intermediate_size == 13696);
  CHECK(g.num_layers == 40);
  CHECK(g.num_heads == 32);
  CHECK(g.num_kv_heads == 2);
  CHECK(g.head_dim == 128);
  CHECK(g.qkv_bias);
  CHECK_FALSE(g.o_bias);
  CHECK_FALSE(g.tie_word_embeddings);
  CHECK(g.rotary_dim == 64);
  CHECK(g.max_position_embeddings == 131072);
  CHECK(import(R"({"model_type": "glm", "partial_rotary_factor": 1.0})").rotary_dim == 128);
  // HeliumConfig: 48000 / 2560 / 7040 / 24 layers / 20 heads / 20 kv heads (an int field, not None) / head_dim 128
  // (a field: hidden 1024 with 8 heads keeps 128 and is refused, see below), untied, no biases.
  const TransformerSpec h = import(R"({"model_type": "helium"})");
  CHECK(h.vocab_size == 48000);
  CHECK(h.hidden_size == 2560);
  CHECK(h.intermediate_size == 7040);
  CHECK(h.num_layers == 24);
  CHECK(h.num_heads == 20);
  CHECK(h.num_kv_heads == 20);
  CHECK(h.head_dim == 128);
  CHECK(h.max_position_embeddings == 4096);
  CHECK_FALSE(h.tie_word_embeddings);
  CHECK_FALSE(h.qkv_bias);
  CHECK_FALSE(h.mlp_bias);
  // num_key_value_heads absent stays 20: with 10 heads the GQA check refuses it.
  CHECK(error_of([] { import(R"({"model_type": "helium", "num_attention_heads": 10, "hidden_size": 1280})"); })
            .find("num_key_value_heads") != std::string::npos);
}

TEST_CASE("hunyuan_v1_moe / dots1 importers: class defaults of transformers 5.17", "[family][set21]") {
  // HunYuanMoEV1Config: 290943 / 4096 / 11008 (shared MLP and every expert) / 32 layers / 32 heads, kv None ->
  // heads, num_experts 1, moe_topk 1; head_dim absent -> hidden // heads.
  const TransformerSpec y = import(R"({"model_type": "hunyuan_v1_moe"})");
  CHECK(y.vocab_size == 290943);
  CHECK(y.hidden_size == 4096);
  CHECK(y.intermediate_size == 11008);
  CHECK(y.moe_intermediate_size == 11008);
  CHECK(y.num_layers == 32);
  CHECK(y.num_kv_heads == 32);
  CHECK(y.head_dim == 128);
  CHECK(y.num_experts == 1);
  CHECK(y.num_experts_per_tok == 1);
  // moe_topk as a per-layer list of equal entries (the published Hunyuan-A13B form).
  const TransformerSpec y8 = import(
      R"({"model_type": "hunyuan_v1_moe", "num_hidden_layers": 2, "num_experts": 64, "moe_topk": [8, 8]})");
  CHECK(y8.num_experts == 64);
  CHECK(y8.num_experts_per_tok == 8);
  // Dots1Config: 152064 / 4608 / 10944 / moe 1408 / 62 layers / 32 heads / 32 kv heads, first_k_dense_replace 0,
  // n_group 1, topk_group 1, norm_topk_prob False, sliding_window 4096 but max_window_layers 62: no sliding layer.
  const TransformerSpec d = import(R"({"model_type": "dots1", "n_routed_experts": 128, "n_shared_experts": 2,
      "num_experts_per_tok": 6})");
  CHECK(d.vocab_size == 152064);
  CHECK(d.hidden_size == 4608);
  CHECK(d.intermediate_size == 10944);
  CHECK(d.moe_intermediate_size == 1408);
  CHECK(d.num_layers == 62);
  CHECK(d.num_kv_heads == 32);
  CHECK(d.head_dim == 144);
  CHECK(d.first_dense_layers == 0);
  CHECK(d.num_experts == 128);
  CHECK(d.num_shared_experts == 2);
  CHECK(d.moe_n_group == 1);
  CHECK(d.moe_topk_group == 1);
  CHECK(d.moe_topk_method == "noaux_tc");
  CHECK_FALSE(d.moe_norm_topk_prob);
  CHECK(d.sliding_window == 0);
  // A sliding layer past max_window_layers.
  const TransformerSpec ds = import(R"({"model_type": "dots1", "num_hidden_layers": 3, "first_k_dense_replace": 3,
      "max_window_layers": 2, "sliding_window": 512})");
  CHECK(ds.sliding_window == 512);
  CHECK(ds.sliding_layers == std::vector<uint8_t>{0, 0, 1});
}

TEST_CASE("jetmoe / dbrx importers: class defaults of transformers 5.17", "[family][set21]") {
  // JetMoeConfig: 32000 / 2048 / 12 layers / 16 kv heads of kv_channels 128 / 5632 / 8 experts top 2, tied;
  // num_attention_heads = kv heads * top-k whatever the config says.
  const TransformerSpec j = import(R"({"model_type": "jetmoe", "num_attention_heads": 5})");
  CHECK(j.vocab_size == 32000);
  CHECK(j.hidden_size == 2048);
  CHECK(j.num_layers == 12);
  CHECK(j.num_kv_heads == 16);
  CHECK(j.head_dim == 128);
  CHECK(j.num_heads == 32);
  CHECK(j.intermediate_size == 5632);
  CHECK(j.num_experts == 8);
  CHECK(j.num_experts_per_tok == 2);
  CHECK(j.tie_word_embeddings);
  // DbrxConfig: d_model 2048 / 16 heads / 24 layers / vocab 32000; attn_config kv_n_heads 1; ffn_config 3584 /
  // 4 experts / top 1, moe_normalize_expert_weights 1.0, no jitter. clip_qkv must be given (None raises).
  const TransformerSpec x = import(R"({"model_type": "dbrx", "attn_config": {"clip_qkv": 8}})");
  CHECK(x.hidden_size == 2048);
  CHECK(x.num_heads == 16);
  CHECK(x.num_layers == 24);
  CHECK(x.vocab_size == 32000);
  CHECK(x.num_kv_heads == 1);
  CHECK(x.head_dim == 128);
  CHECK(x.moe_intermediate_size == 3584);
  CHECK(x.num_experts == 4);
  CHECK(x.num_experts_per_tok == 1);
  CHECK(x.clip_qkv == 8.0);
  CHECK(x.dbrx_normalize_expert_weights);
  CHECK_FALSE(x.dbrx_moe_jitter);
  CHECK_FALSE(x.tie_word_embeddings);
  CHECK_FALSE(import(R"({"model_type": "dbrx", "attn_config": {"clip_qkv": 8},
      "ffn_config": {"moe_normalize_expert_weights": null}})").dbrx_normalize_expert_weights);
  CHECK(import(R"({"model_type": "dbrx", "attn_config": {"clip_qkv": 8}, "ffn_config": {"moe_jitter_eps": 0}})")
            .dbrx_moe_jitter);
}

TEST_CASE("family set 21 importers: bad values name their field", "[family][set21]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "glm", "head_dim": null})", "config.head_dim:"},
      {R"({"model_type": "glm", "sliding_window": 4096})", "config.sliding_window:"},
      {R"({"model_type": "glm", "rope_parameters": {"rope_type": "longrope"}})", "config.rope_parameters.rope_type:"},
      {R"({"model_type": "helium", "head_dim": 64})", "config.head_dim:"},
      {R"({"model_type": "helium", "hidden_act": "gelu"})", "config.hidden_act:"},
      {R"({"model_type": "helium", "num_key_value_heads": null})", "config.num_key_value_heads:"},
      {R"({"model_type": "hunyuan_v1_moe", "num_experts": [4, 4]})", "config.num_experts:"},
      {R"({"model_type": "hunyuan_v1_moe", "num_hidden_layers": 2, "num_experts": 8, "moe_topk": [2, 4]})",
       "config.moe_topk[1]:"},
      {R"({"model_type": "hunyuan_v1_moe", "num_experts": 4, "moe_topk": 8})", "config.moe_topk:"},
      {R"({"model_type": "dots1"})", "config.n_routed_experts:"},
      {R"({"model_type": "dots1", "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2,
          "n_group": null})", "config.n_group:"},
      {R"({"model_type": "dots1", "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2,
          "n_group": 3})", "config.n_group:"},
      {R"({"model_type": "jetmoe", "num_experts_per_tok": 9})", "config.num_experts_per_tok:"},
      {R"({"model_type": "jetmoe", "output_router_logits": true})", "config.output_router_logits:"},
      {R"({"model_type": "jetmoe", "activation_function": "gelu_new"})", "config.activation_function:"},
      {R"({"model_type": "dbrx"})", "config.attn_config.clip_qkv:"},
      {R"({"model_type": "dbrx", "attn_config": {"clip_qkv": 8}, "tie_word_embeddings": true})",
       "config.tie_word_embeddings:"},
      {R"({"model_type": "dbrx", "attn_config": {"clip_qkv": 8}, "ffn_config": {"ffn_act_fn": {"name": "gelu"}}})",
       "config.ffn_config.ffn_act_fn.name:"},
      {R"({"model_type": "dbrx", "attn_config": {"clip_qkv": 8}, "ffn_config": {"moe_top_k": 5}})",
       "config.ffn_config.moe_top_k:"},
      {R"({"model_type": "dbrx", "attn_config": {"clip_qkv": 8, "kv_n_heads": 3}})", "num_key_value_heads"},
  };
  for (const auto& b : bad) {
    INFO(b.config);
    const std::string msg = error_of([&] { import(b.config); });
    CHECK(msg.find(b.field) != std::string::npos);
  }
  // JetMoE refuses gradient checkpointing (supports_gradient_checkpointing = False).
  memplan::ModelSpec m;
  m.transformer = import(R"({"model_type": "jetmoe", "num_hidden_layers": 1})");
  memplan::RunConfig run;
  run.batch_size = 1;
  run.seq_len = 16;
  run.grad_checkpointing = true;
  CHECK(error_of([&] { memplan::estimate(m, run); }).find("grad_checkpointing") != std::string::npos);
}

TEST_CASE("family set 21 parameter counts: published checkpoints", "[family][set21]") {
  // databricks/dbrx-instruct, derived by hand: H 6144, 48 heads of 128, 8 KV heads, F 10752, E 16, V 100352, 40
  // blocks, untied:
  //   per block: norm_1 + norm_2 2*H = 12,288, Wqkv (H + 2*8*128)*H = 50,331,648, out_proj H*H = 37,748,736,
  //     router E*H = 98,304, w1 / v1 / w2 3*E*F*H = 3,170,893,824: 3,259,084,800
  //   40 * 3,259,084,800 + wte V*H 616,562,688 + lm_head 616,562,688 + norm_f H 6,144 = 131,596,523,520
  //   (the card's 132B).
  // kyutai/helium-1-preview-2b: H 2560, 20 heads of 128 (MHA), I 7040, V 48000, 24 layers, untied:
  //   per layer: q / k / v / o 4*H*H = 26,214,400, gate / up / down 3*H*I = 54,067,200, two norms 2*H = 5,120:
  //   80,286,720; 24 * 80,286,720 + embed + lm_head 2*V*H 245,760,000 + norm H 2,560 = 2,172,643,840 (the card's 2B).
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"dbrx-instruct", 131'596'523'520},
      {"helium-1-preview-2b", 2'172'643'840},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
  const memplan::ModelSpec d = memplan::load_zoo_model("dbrx-instruct");
  CHECK(d.transformer.dbrx_moe_jitter);  // moe_jitter_eps 0 is not None
}

TEST_CASE("glm / helium / hunyuan_v1_moe / dots1 / jetmoe / dbrx: measured H200 cases of family set 21",
          "[family][set21]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured `params`
  // exactly. f21-dbrx-infer-bf16-b4s1000-g16 was not measured in the tuning call (DBRX's construction outlasted
  // it); it is measured with the held-out rows.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) {
        return !c.holdout &&
               memplan::testing::has_any_prefix(c.id, {"f21-glm", "f21-hel", "f21-hy", "f21-dots", "f21-jet", "f21-dbrx"});
      },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 5);
}
