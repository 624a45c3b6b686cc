// gpt_neo (family set 15): importer defaults and refusals, parameter counts against the published checkpoints,
// the attn refusal, and the measured H200 cases (measured before the builder existed and used to write it;
// data/validation/notes-f15/gptneo.md).
#include <catch2/catch.hpp>

#include <cstdio>
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

TEST_CASE("gpt_neo importer: class defaults of transformers 5.17", "[family][set15]") {
  // GPTNeoConfig: vocab 50257, 2048 positions, hidden 2048, 24 layers, 16 heads, attention_types None =>
  // [[["global", "local"], 12]], intermediate_size None => 4 * hidden, window 256, gelu_new, dropouts 0, tied.
  const TransformerSpec d = import(R"({"model_type": "gpt_neo"})");
  CHECK(d.vocab_size == 50257);
  CHECK(d.max_position_embeddings == 2048);
  CHECK(d.hidden_size == 2048);
  CHECK(d.num_layers == 24);
  CHECK(d.num_heads == 16);
  CHECK(d.head_dim == 128);
  CHECK(d.intermediate_size == 8192);
  CHECK(d.gpt_neo_window_size == 256);
  CHECK(d.hidden_act == "gelu_new");
  CHECK(d.tie_word_embeddings);
  CHECK(d.learned_positions);
  CHECK(d.resid_dropout == 0.0);
  CHECK(d.embd_dropout == 0.0);
  CHECK(d.attn_dropout == 0.0);
  REQUIRE(d.gpt_neo_local_layers.size() == 24);
  CHECK(d.gpt_neo_local_layers[0] == 0);
  CHECK(d.gpt_neo_local_layers[1] == 1);
  CHECK(d.gpt_neo_local_layers[22] == 0);
  CHECK(d.gpt_neo_local_layers[23] == 1);
  // attribute_map aliases, an explicit intermediate size, and a list of several groups expanded in order.
  const TransformerSpec e = import(R"({"model_type": "gpt_neo", "num_hidden_layers": 5, "num_attention_heads": 4,
                                       "hidden_size": 256, "intermediate_size": 1000, "window_size": 16,
                                       "attention_types": [[["local"], 2], [["global", "local", "global"], 1]],
                                       "tie_word_embeddings": false, "resid_dropout": 0.1})");
  CHECK(e.num_layers == 5);
  CHECK(e.num_heads == 4);
  CHECK(e.head_dim == 64);
  CHECK(e.intermediate_size == 1000);
  CHECK(e.gpt_neo_window_size == 16);
  CHECK(e.gpt_neo_local_layers == std::vector<uint8_t>{1, 1, 0, 1, 0});
  CHECK_FALSE(e.tie_word_embeddings);
  CHECK(e.resid_dropout == 0.1);
}

TEST_CASE("gpt_neo importer: bad values name their field", "[family][set15]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      // the default attention_types has 24 entries: validate_architecture raises for another num_layers
      {R"({"model_type": "gpt_neo", "num_layers": 12})", "config.attention_types:"},
      {R"({"model_type": "gpt_neo", "num_layers": 2, "attention_types": [[["global", "local"], 2]]})",
       "config.attention_types:"},
      {R"({"model_type": "gpt_neo", "num_layers": 2, "attention_types": [[["global", "sparse"], 1]]})",
       "config.attention_types:"},
      {R"({"model_type": "gpt_neo", "num_layers": 2, "attention_types": [["global", 2]]})", "config.attention_types:"},
      {R"({"model_type": "gpt_neo", "num_layers": 2, "attention_types": [[["global"], -1]]})",
       "config.attention_types:"},
      {R"({"model_type": "gpt_neo", "num_layers": 2, "attention_types": "global"})", "config.attention_types:"},
      {R"({"model_type": "gpt_neo", "num_layers": 2, "attention_types": [[["global"], 100000000000]]})",
       "config.attention_types:"},
      {R"({"model_type": "gpt_neo", "hidden_size": 2050, "num_heads": 16})", "config.num_heads:"},
      {R"({"model_type": "gpt_neo", "activation_function": "gelu_fast"})", "config.activation_function:"},
      {R"({"model_type": "gpt_neo", "window_size": "wide"})", "config.window_size:"},
      {R"({"model_type": "gpt_neo", "attention_dropout": 1.5})", "config.attention_dropout:"},
      {R"({"model_type": "gpt_neo", "tie_word_embeddings": "yes"})", "config.tie_word_embeddings:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
}

TEST_CASE("gpt_neo: SDPA and the classification heads are refused, naming the field", "[family][set15]") {
  memplan::ModelSpec m = memplan::load_zoo_model("gpt-neo-125m");
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 128;
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(error_of([&] { memplan::estimate(m, cfg); }).rfind("attn:", 0) == 0);
  cfg.attn = memplan::AttnImpl::eager;
  cfg.task = memplan::Task::seq_cls;
  cfg.num_labels = 2;
  CHECK(error_of([&] { memplan::estimate(m, cfg); }).rfind("task:", 0) == 0);
  cfg.task = memplan::Task::lm;
  cfg.seq_len = 2049;  // learned positions end at max_position_embeddings (and the mask buffer with them)
  CHECK(error_of([&] { memplan::estimate(m, cfg); }).rfind("seq_len:", 0) == 0);
}

TEST_CASE("gpt_neo parameter counts: published checkpoints", "[family][set15]") {
  // Derived by hand from the modeling file's registrations (tied head counted once; the per-layer bool `bias`
  // masks are buffers, not parameters). H hidden, I = 4H, V = 50257, 2048 positions, L layers:
  //   V*H (wte) + 2048*H (wpe) + L * (2H (ln_1) + 4*H*H + H (k, v, q, out_proj + its bias) + 2H (ln_2)
  //   + H*I + I (c_fc) + I*H + H (c_proj)) + 2H (ln_f)
  //   125m: 38,597,376 + 1,572,864 + 12 * (1,536 + 2,360,064 + 1,536 + 2,362,368 + 2,360,064 = 7,085,568)
  //         + 1,536 = 125,198,592 (the measured sum of p.numel() of the set 15 rows with this shape)
  //   1.3B: 102,926,336 + 4,194,304 + 24 * (4,096 + 16,779,264 + 4,096 + 16,785,408 + 16,779,264 = 50,352,128)
  //         + 4,096 = 1,315,575,808
  //   2.7B: 128,657,920 + 5,242,880 + 32 * (5,120 + 26,216,960 + 5,120 + 26,224,640 + 26,216,960 = 78,668,800)
  //         + 5,120 = 2,651,307,520
  const struct {
    const char* name;
    int64_t params;
  } zoo[] = {
      {"gpt-neo-125m", 125'198'592},
      {"gpt-neo-1.3b", 1'315'575'808},
      {"gpt-neo-2.7b", 2'651'307'520},
  };
  for (const auto& z : zoo) {
    INFO(z.name);
    CHECK(memplan::param_count(memplan::load_zoo_model(z.name)) == z.params);
  }
}

TEST_CASE("gpt_neo: measured H200 cases of family set 15", "[family][set15]") {
  // Peak allocated within 0.1 % per case, reserved within 1 %, the KV cache within 1 %, and the measured `params`
  // exactly (bf16, amp fp16 + checkpointing, fp32 + accumulation, generate()).
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return memplan::testing::has_any_prefix(c.id, {"f15-gptneo"}); },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.001, 0.01}; });
  CHECK(checked.size() == 4);
}

TEST_CASE("gpt_neo: an untied head adds V * H parameters; local and global layers cost the same", "[family][set15]") {
  // 125m shape untied: 125,198,592 + 50,257 * 768 (lm_head, no bias) = 163,795,968.
  const char* base = R"({"model_type": "gpt_neo", "hidden_size": 768, "num_layers": 12, "num_heads": 12,
                         "attention_types": %s, "tie_word_embeddings": %s})";
  auto model = [&](const char* types, const char* tied) {
    char text[512];
    std::snprintf(text, sizeof text, base, types, tied);
    return memplan::load_model_text(text, "gpt-neo-test");
  };
  CHECK(memplan::param_count(model(R"([[["global", "local"], 6]])", "false")) == 163'795'968);
  // Every layer slices the same [1, 1, P, P] bool buffer and the DynamicCache keeps every token of local layers
  // (GPTNeoConfig has no sliding_window): the attention pattern moves no byte, in training or in generate().
  for (const memplan::Mode mode : {memplan::Mode::training, memplan::Mode::inference}) {
    memplan::RunConfig cfg;
    cfg.mode = mode;
    cfg.batch_size = 2;
    cfg.seq_len = 600;  // past the window (256)
    cfg.generate_tokens = mode == memplan::Mode::inference ? 8 : 0;
    cfg.attn = memplan::AttnImpl::eager;
    const auto alternating = memplan::estimate(model(R"([[["global", "local"], 6]])", "true"), cfg);
    const auto local = memplan::estimate(model(R"([[["local"], 12]])", "true"), cfg);
    const auto global = memplan::estimate(model(R"([[["global"], 12]])", "true"), cfg);
    CHECK(alternating.torch_peak_allocated_bytes() == local.torch_peak_allocated_bytes());
    CHECK(alternating.torch_peak_allocated_bytes() == global.torch_peak_allocated_bytes());
    CHECK(alternating.torch_kv_cache_bytes() == global.torch_kv_cache_bytes());
  }
}
