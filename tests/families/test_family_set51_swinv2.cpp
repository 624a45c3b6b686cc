// swinv2 (family set 51): Swinv2ForImageClassification, post-norm windows with scaled cosine attention and a
// continuous position bias MLP (engine/arch/vision/hf_swinv2.cpp). Written from the installed 5.17 modeling file
// without a device: the importer's class defaults, refusals naming the field, what the shifted layers' doubled mask
// sum costs (derived by hand), and the zoo entries' parameter counts (derived by hand; the coords table and the
// position index are buffers, not parameters). The held-out rows (calibrate/cases/families51-input.jsonl) are
// predicted in data/validation/predictions/families51-holdout.json.
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

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
using memplan::testing::starts_with;

// A training step of `m` as the case loader sets it: seq_len is hf_image_tokens' (image_size / patch_size)^2 + 1
// (the builder reads the image, not the sequence).
RunConfig train_cfg(const ModelSpec& m, int64_t batch) {
  RunConfig cfg;
  cfg.precision = memplan::Precision::amp_bf16;
  cfg.batch_size = batch;
  cfg.seq_len = memplan::hf_image_tokens(m.transformer);
  cfg.attn = memplan::AttnImpl::eager;
  return cfg;
}

}  // namespace

TEST_CASE("swinv2 importer: class defaults", "[family][set51][importer]") {
  // Swinv2Config(): image 224, patch 4, embed 96, depths 2/2/6/2, heads 3/6/12/24, window 7, MLP 4 x width,
  // drop_path_rate 0.1, qkv_bias True; 2 labels (PreTrainedConfig's default).
  const TransformerSpec s = import(R"({"model_type": "swinv2"})");
  CHECK(s.model_type == "swinv2");
  CHECK(s.image_size == 224);
  CHECK(s.patch_size == 4);
  CHECK(s.stage_widths == std::vector<int64_t>{96, 192, 384, 768});
  CHECK(s.stage_depths == std::vector<int64_t>{2, 2, 6, 2});
  CHECK(s.swin_stage_heads == std::vector<int64_t>{3, 6, 12, 24});
  CHECK(s.swin_stage_mlp == std::vector<int64_t>{384, 768, 1536, 3072});
  CHECK(s.swin_window_size == 7);
  CHECK(s.drop_path_rate == 0.1);
  CHECK(s.qkv_bias);
  CHECK(s.image_num_labels == 2);
  CHECK(s.num_layers == 12);
  // Each stage's window is clamped to its construction grid (56 / 28 / 14 / 7 at 224 px: the last stage's side
  // equals the window, so it is unshifted), and sides below the window are fine (the CPB MLP has no fixed table).
  const TransformerSpec small = import(R"({"model_type": "swinv2", "image_size": 64, "window_size": 8})");
  CHECK(small.image_size == 64);
}

TEST_CASE("swinv2: refusals name the field", "[family][set51]") {
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "use_absolute_embeddings": true})"); }),
                    "config.use_absolute_embeddings:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "pretrained_window_sizes": [0, 0]})"); }),
                    "config.pretrained_window_sizes:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "pretrained_window_sizes": "0"})"); }),
                    "config.pretrained_window_sizes:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "pretrained_window_sizes": [0, -1, 0, 0]})"); }),
                    "config.pretrained_window_sizes:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "depths": [2, 2, 2, 2, 2],
                                              "num_heads": [1, 2, 4, 8, 16]})"); }),
                    "config.pretrained_window_sizes:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "attention_probs_dropout_prob": 0.1})"); }),
                    "config.attention_probs_dropout_prob:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "hidden_act": "relu"})"); }),
                    "config.hidden_act:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "num_heads": [3, 6, 12]})"); }),
                    "config.num_heads:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "num_heads": [5, 6, 12, 24]})"); }),
                    "config.num_heads:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "image_size": 226})"); }), "config.image_size:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "swinv2", "image_size": 16})"); }), "config.image_size:"));
  // Only eager attention exists (no _supports_sdpa), and only the image classifier is modelled.
  const ModelSpec m = memplan::testing::model_of_config(R"({"model_type": "swinv2", "image_size": 64,
                                                            "window_size": 8, "depths": [1, 1, 1, 1]})");
  RunConfig cfg = train_cfg(m, 2);
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "attn:"));
}

TEST_CASE("swinv2: the shifted layer's doubled mask sum, derived by hand", "[family][set51]") {
  // One stage of two blocks at 64 px, patch 4, window 4: a 16 x 16 grid, 16 windows of N = 16 tokens; block 1 is
  // shifted (by 2). Its scores get the [nW, N, N] mask added twice, each sum a new fp32 [BW, heads, N, N] tensor
  // under autocast; the first dies as the second is made, the second is the softmax's input, which
  // Swinv2SelfAttention keeps bound until it returns. With depths [2] against depths [1] the second block adds at
  // least its saved attention tensors: the bf16 scores the logit-scale product keeps (2 B), the fp32 softmax output
  // (4 B) and its bf16 cast the context matmul keeps (2 B): 8 B a score. B 3, 2 heads: 3 * 16 * 2 * 16 * 16 =
  // 24,576 scores -> 196,608 B at least.
  const std::string base = R"("model_type": "swinv2", "image_size": 64, "patch_size": 4, "window_size": 4,
                               "embed_dim": 32, "num_heads": [2], "pretrained_window_sizes": [0], "num_labels": 10)";
  const ModelSpec one = memplan::testing::model_of_config("{" + base + R"(, "depths": [1]})");
  const ModelSpec two = memplan::testing::model_of_config("{" + base + R"(, "depths": [2]})");
  const RunConfig cfg = train_cfg(one, 3);
  const auto r1 = memplan::estimate(one, cfg);
  const auto r2 = memplan::estimate(two, cfg);
  CHECK(r2.peak_allocated_bytes() - r1.peak_allocated_bytes() >= 196'608);
}

TEST_CASE("swinv2: parameter counts, derived by hand", "[family][set51]") {
  // A Swinv2Layer of width c, h heads (MLP 4c): logit_scale h; continuous_position_bias_mlp Linear(2, 512) 1,536 +
  // Linear(512, h, no bias) 512h; query c^2 + c, key c^2 (no bias), value c^2 + c; output dense c^2 + c;
  // layernorm_before 2c; intermediate 4c^2 + 4c; output 4c^2 + c; layernorm_after 2c:
  //   12c^2 + 12c + 513h + 1,536.
  // Patch merging after stage i: reduction 4c x 2c (no bias) 8c^2, norm(2c) 4c. Embeddings: Conv2d(3, E, 4, 4)
  // 48E + E, norm 2E. Model layernorm 2F, classifier F x labels + labels (F = 8E).
  // swinv2-tiny-patch4-window8-256 (E 96, depths 2/2/6/2, heads 3/6/12/24, 1000 labels):
  //   embeddings 4,608 + 96 + 192 = 4,896;
  //   c 96, h 3:   110,592 + 1,152 + 1,539 + 1,536 = 114,819 x 2 = 229,638; merge 73,728 + 384 = 74,112;
  //   c 192, h 6:  442,368 + 2,304 + 3,078 + 1,536 = 449,286 x 2 = 898,572; merge 294,912 + 768 = 295,680;
  //   c 384, h 12: 1,769,472 + 4,608 + 6,156 + 1,536 = 1,781,772 x 6 = 10,690,632; merge 1,179,648 + 1,536 =
  //   1,181,184;
  //   c 768, h 24: 7,077,888 + 9,216 + 12,312 + 1,536 = 7,100,952 x 2 = 14,201,904;
  //   layernorm 1,536; classifier 768,000 + 1,000 = 769,000. Sum 28,347,154 (the model card's 28.3M).
  CHECK(memplan::param_count(memplan::load_zoo_model("swinv2-tiny-patch4-window8-256")) == 28'347'154);
  // swinv2-small-patch4-window8-256: the tiny with 18 blocks in stage 2: + 12 x 1,781,772 = 21,381,264:
  // 49,728,418 (the model card's 49.7M).
  CHECK(memplan::param_count(memplan::load_zoo_model("swinv2-small-patch4-window8-256")) == 49'728'418);
  // swinv2-base-patch4-window16-256 (E 128, depths 2/2/18/2, heads 4/8/16/32, 1000 labels):
  //   embeddings 6,144 + 128 + 256 = 6,528;
  //   c 128, h 4:   196,608 + 1,536 + 2,052 + 1,536 = 201,732 x 2 = 403,464; merge 131,072 + 512 = 131,584;
  //   c 256, h 8:   786,432 + 3,072 + 4,104 + 1,536 = 795,144 x 2 = 1,590,288; merge 524,288 + 1,024 = 525,312;
  //   c 512, h 16:  3,145,728 + 6,144 + 8,208 + 1,536 = 3,161,616 x 18 = 56,909,088; merge 2,097,152 + 2,048 =
  //   2,099,200;
  //   c 1024, h 32: 12,582,912 + 12,288 + 16,416 + 1,536 = 12,613,152 x 2 = 25,226,304;
  //   layernorm 2,048; classifier 1,024,000 + 1,000 = 1,025,000. Sum 87,918,816 (the model card's 87.9M).
  CHECK(memplan::param_count(memplan::load_zoo_model("swinv2-base-patch4-window16-256")) == 87'918'816);
  // swinv2-large-patch4-window12-192-22k (E 192, depths 2/2/18/2, heads 6/12/24/48, 21,841 labels):
  //   embeddings 9,216 + 192 + 384 = 9,792;
  //   c 192, h 6:   442,368 + 2,304 + 3,078 + 1,536 = 449,286 x 2 = 898,572; merge 294,912 + 768 = 295,680;
  //   c 384, h 12:  1,769,472 + 4,608 + 6,156 + 1,536 = 1,781,772 x 2 = 3,563,544; merge 1,179,648 + 1,536 =
  //   1,181,184;
  //   c 768, h 24:  7,077,888 + 9,216 + 12,312 + 1,536 = 7,100,952 x 18 = 127,817,136; merge 4,718,592 + 3,072 =
  //   4,721,664;
  //   c 1536, h 48: 28,311,552 + 18,432 + 24,624 + 1,536 = 28,356,144 x 2 = 56,712,288;
  //   layernorm 3,072; classifier 1536 x 21,841 + 21,841 = 33,569,617. Sum 228,772,549.
  CHECK(memplan::param_count(memplan::load_zoo_model("swinv2-large-patch4-window12-192-22k")) == 228'772'549);
}
