// segformer (family set 37): SegformerForSemanticSegmentation (task semantic_seg) and SegformerForImageClassification
// (task lm). The importer's class defaults, refusals naming the field, the semantic_seg task's surface, and
// parameter counts derived by hand from modeling_segformer.py; the held-out rows are predicted blind in
// data/validation/predictions/families37-holdout.json and wait for a device.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "models/hf_config.h"
#include "models/param_count.h"
#include "models/validation_case.h"

#include <nlohmann/json.hpp>

using memplan::ModelSpec;
using memplan::RunConfig;
using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
ModelSpec model_of(const std::string& config) { return memplan::testing::model_of_config(config); }

RunConfig run(const ModelSpec& m, memplan::Task task, memplan::Mode mode, int64_t batch) {
  RunConfig c;
  c.mode = mode;
  c.task = task;
  c.batch_size = batch;
  c.attn = memplan::AttnImpl::eager;
  c.seq_len = memplan::hf_image_tokens(m.transformer);
  c.image_size = m.transformer.image_size;
  return c;
}

// The published MiT-b2 encoder (nvidia/mit-b2, segformer-b2-finetuned-ade-512-512): 64 .. 512 wide, 3-4-6-3
// layers, the decode head 768 wide.
constexpr const char* kB2 = R"("hidden_sizes": [64, 128, 320, 512], "depths": [3, 4, 6, 3],
    "decoder_hidden_size": 768)";

}  // namespace

TEST_CASE("segformer: the importer's class defaults", "[family][set37]") {
  // SegformerConfig (the MiT-b0 shape): 4 blocks 32 / 64 / 160 / 256 wide, 2 layers each, 1 / 2 / 5 / 8 heads,
  // sr 8 / 4 / 2 / 1, patches 7 / 3 / 3 / 3 at strides 4 / 2 / 2 / 2, Mix-FFN 4x wide, decode head 256, dropouts
  // 0.0 (hidden, attention) and 0.1 (classifier), drop_path_rate 0.1; no image size in the config: 224; 2 labels.
  const TransformerSpec s = import(R"({"model_type": "segformer"})");
  CHECK(s.stage_widths == std::vector<int64_t>{32, 64, 160, 256});
  CHECK(s.stage_depths == std::vector<int64_t>{2, 2, 2, 2});
  CHECK(s.seg_heads == std::vector<int64_t>{1, 2, 5, 8});
  CHECK(s.seg_sr_ratios == std::vector<int64_t>{8, 4, 2, 1});
  CHECK(s.seg_patch_sizes == std::vector<int64_t>{7, 3, 3, 3});
  CHECK(s.seg_strides == std::vector<int64_t>{4, 2, 2, 2});
  CHECK(s.seg_mlp == std::vector<int64_t>{128, 256, 640, 1024});
  CHECK(s.seg_decoder_hidden_size == 256);
  CHECK(s.seg_classifier_dropout == Approx(0.1));
  CHECK(s.drop_path_rate == Approx(0.1));
  CHECK(s.resid_dropout == 0.0);
  CHECK(s.attn_dropout == 0.0);
  CHECK(s.hidden_act == "gelu");
  CHECK(s.num_layers == 8);
  CHECK(s.image_size == 224);
  CHECK(s.num_channels == 3);
  CHECK(s.image_num_labels == 2);
  CHECK(memplan::hf_image_tokens(s) == 56 * 56 + 1);  // routing only: (224 / stride 4)^2 + 1
  // An image_size key (PreTrainedConfig keeps it as an attribute; the harness feeds that size); mlp_ratios may be
  // fractional (int(C * ratio)).
  const TransformerSpec t = import(R"({"model_type": "segformer", "image_size": 512, "mlp_ratios": [4, 4, 4, 2.5],
                                       "id2label": {"0": "a", "1": "b", "2": "c"}})");
  CHECK(t.image_size == 512);
  CHECK(t.seg_mlp.back() == 640);
  CHECK(t.image_num_labels == 3);
}

TEST_CASE("segformer: bad values and unmodelled settings name their field", "[family][set37]") {
  const struct {
    const char* config;
    const char* field;
  } bad[] = {
      {R"({"model_type": "segformer", "depths": [2, 2, 2]})", "config.depths:"},
      {R"({"model_type": "segformer", "sr_ratios": [8, 4, 2, 1, 1]})", "config.sr_ratios:"},
      {R"({"model_type": "segformer", "num_encoder_blocks": 3})", "config.depths:"},
      {R"({"model_type": "segformer", "num_encoder_blocks": 0})", "config.num_encoder_blocks:"},
      {R"({"model_type": "segformer", "hidden_sizes": [32, 64, 161, 256]})", "config.num_attention_heads:"},
      {R"({"model_type": "segformer", "hidden_sizes": [32, 0, 160, 256]})", "config.hidden_sizes:"},
      {R"({"model_type": "segformer", "mlp_ratios": [4, 4]})", "config.mlp_ratios:"},
      {R"({"model_type": "segformer", "mlp_ratios": [4, 4, 4, 0.001]})", "config.mlp_ratios:"},
      {R"({"model_type": "segformer", "num_labels": 0})", "config.num_labels:"},
      {R"({"model_type": "segformer", "num_labels": 1})", "config.num_labels:"},
      {R"({"model_type": "segformer", "hidden_act": "relu"})", "config.hidden_act:"},
      {R"({"model_type": "segformer", "reshape_last_stage": false})", "config.reshape_last_stage:"},
      {R"({"model_type": "segformer", "decoder_hidden_size": 0})", "config.decoder_hidden_size:"},
      {R"({"model_type": "segformer", "classifier_dropout_prob": 1.5})", "config.classifier_dropout_prob:"},
      {R"({"model_type": "segformer", "semantic_loss_ignore_index": "x"})", "config.semantic_loss_ignore_index:"},
      // 16 pixels: block 0's 7x7 / 4 conv leaves 4 a side, below its sr_ratio 8 (the sr conv would have no output).
      {R"({"model_type": "segformer", "image_size": 16})", "config.image_size:"},
      {R"({"model_type": "segformer", "image_size": [512, 256]})", "config.image_size:"},
      // 65536 / 4 = 16384 positions a side: 268M first-block positions, past kMaxDim.
      {R"({"model_type": "segformer", "image_size": 65536})", "config.image_size:"},
  };
  for (const auto& c : bad) {
    INFO(c.config);
    CHECK(error_of([&] { import(c.config); }).rfind(c.field, 0) == 0);
  }
  // 29 pixels is the smallest square the default blocks take: (29 + 6 - 7) // 4 + 1 = 8, then 4, 2, 1 against sr 8,
  // 4, 2, 1; at 28 block 0's side is 7.
  CHECK(error_of([&] { import(R"({"model_type": "segformer", "image_size": 29})"); }) == "no error");
  CHECK(error_of([&] { import(R"({"model_type": "segformer", "image_size": 28})"); }).rfind("config.image_size:", 0) == 0);

  const ModelSpec m = model_of(R"({"model_type": "segformer", "image_size": 64, "num_labels": 5})");
  using memplan::Mode;
  using memplan::Task;
  for (Task t : {Task::lm, Task::semantic_seg})
    for (Mode mode : {Mode::training, Mode::inference}) {
      INFO(memplan::task_name(t) << " " << static_cast<int>(mode));
      CHECK(error_of([&] { memplan::estimate(m, run(m, t, mode, 2)); }) == "no error");
    }
  // transformers 5.17's SegformerPreTrainedModel sets _supports_sdpa and supports_gradient_checkpointing (the
  // copy set 37 was first written from set neither): both are modelled (family set 44), with either task.
  for (Task t : {Task::lm, Task::semantic_seg}) {
    RunConfig sdpa = run(m, t, Mode::training, 2);
    sdpa.attn = memplan::AttnImpl::sdpa;
    CHECK(error_of([&] { memplan::estimate(m, sdpa); }) == "no error");
    sdpa.grad_checkpointing = true;
    CHECK(error_of([&] { memplan::estimate(m, sdpa); }) == "no error");
  }
  CHECK(error_of([&] { memplan::estimate(m, run(m, Task::seq_cls, Mode::training, 2)); }).rfind("task:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(m, run(m, Task::feature, Mode::inference, 2)); }).rfind("task:", 0) == 0);
  // The classifier's regression / multi-label losses are refused for image classification only (the
  // segmentation head never reads problem_type).
  const ModelSpec reg = model_of(R"({"model_type": "segformer", "image_size": 64, "problem_type": "regression"})");
  CHECK(error_of([&] { memplan::estimate(reg, run(reg, Task::lm, Mode::training, 2)); })
            .rfind("config.problem_type:", 0) == 0);
  CHECK(error_of([&] { memplan::estimate(reg, run(reg, Task::semantic_seg, Mode::training, 2)); }) == "no error");
}

TEST_CASE("semantic_seg is segformer's task only, refused naming task for every other model", "[family][set37]") {
  using memplan::Mode;
  using memplan::Task;
  for (const char* cfg : {R"({"model_type": "bert", "num_hidden_layers": 2})",
                          R"({"model_type": "convnext", "depths": [1, 1, 1, 1]})",
                          R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
                              "intermediate_size": 512, "num_attention_heads": 4, "vocab_size": 1000})"}) {
    INFO(cfg);
    const ModelSpec m = model_of(cfg);
    RunConfig c = run(m, Task::semantic_seg, Mode::training, 2);
    if (c.seq_len == 0) c.seq_len = 64;
    const std::string e = error_of([&] { memplan::estimate(m, c); });
    CHECK(e.rfind("task:", 0) == 0);
    CHECK(e.find("segformer only") != std::string::npos);
  }
  // A case names the task; the label count is the config's (a case num_labels is refused naming it).
  const auto case_of = [](const std::string& task, const std::string& extra) {
    return nlohmann::json::parse(R"({"id": "t", "model": {"source": "huggingface", "model_type": "segformer",
      "config": {"image_size": 64, "num_labels": 7}, "attn_implementation": "eager"}, "mode": "training",
      "batch_size": 2, "precision": "fp32", "task": ")" + task + "\"" + extra + "}");
  };
  const memplan::ValidationCase vc = memplan::parse_validation_case(case_of("semantic_seg", ""));
  CHECK(vc.run.task == memplan::Task::semantic_seg);
  CHECK(vc.model.transformer.image_num_labels == 7);
  CHECK(error_of([&] { memplan::parse_validation_case(case_of("semantic_seg", R"(, "num_labels": 7)")); })
            .find("num_labels:") != std::string::npos);
  CHECK(error_of([&] { memplan::parse_validation_case(case_of("segmentation", "")); }).find("task:") !=
        std::string::npos);
  memplan::Task t{};
  CHECK(memplan::parse_task("semantic_seg", t));
  CHECK(t == memplan::Task::semantic_seg);
  CHECK(memplan::task_name(memplan::Task::semantic_seg) == "semantic_seg");
}

TEST_CASE("segformer: parameter counts derived by hand", "[family][set37]") {
  // Per block of width C (heads, sr, Mix-FFN 4C): the overlapping embedding conv in x C x k x k + C and its
  // LayerNorm 2C; per layer layer_norm_1 2C, query / key / value 3 (C^2 + C), sr (when sr > 1) C^2 sr^2 + C and
  // its LayerNorm 2C, dense C^2 + C, layer_norm_2 2C, dense1 4C^2 + 4C, the depthwise 3x3 over 4C channels 36C + 4C,
  // dense2 4C^2 + C: 12 C^2 + 53 C (+ C^2 sr^2 + 3C); the block's final LayerNorm 2C.
  // MiT-b0 (32 / 64 / 160 / 256, 2-2-2-2):
  //   embeddings 3*32*49 + 32 + 64 = 4,800; 32*64*9 + 64 + 128 = 18,624; 64*160*9 + 160 + 320 = 92,640;
  //     160*256*9 + 256 + 512 = 369,408: 485,472.
  //   layers 2 x (13,984 + 65,632) = 159,232; 2 x (52,544 + 65,728) = 236,544; 2 x (315,680 + 102,880) = 837,120;
  //     2 x 800,000 = 1,600,000: 2,832,896. Final norms 2 x 512 = 1,024. Encoder 3,319,392.
  //   Decode head (256 wide, 150 ADE20k labels): linear_c (32 + 64 + 160 + 256) x 256 + 4 x 256 = 132,096;
  //     linear_fuse 1024 x 256 = 262,144 (no bias); batch_norm 512; classifier 256 x 150 + 150 = 38,550: 433,302.
  //   segformer-b0-finetuned-ade-512-512: 3,752,694 (the published 3.75M). mit-b0's ImageNet classifier
  //   256 x 1000 + 1000 = 257,000: 3,576,392.
  // MiT-b2 (64 / 128 / 320 / 512, 3-4-6-3, decode head 768):
  //   embeddings 3*64*49 + 64 + 128 = 9,600; 64*128*9 + 128 + 256 = 74,112; 128*320*9 + 320 + 640 = 369,600;
  //     320*512*9 + 512 + 1024 = 1,476,096: 1,929,408.
  //   layers 3 x (52,544 + 262,336) = 944,640; 4 x (203,392 + 262,528) = 1,863,680; 6 x (1,245,760 + 410,560)
  //     = 9,937,920; 3 x 3,172,864 = 9,518,592: 22,264,832. Final norms 2 x 1,024 = 2,048. Encoder 24,196,288
  //     (the published 24.2M of MiT-B2).
  //   Decode head: linear_c 1024 x 768 + 4 x 768 = 789,504; linear_fuse 3072 x 768 = 2,359,296; batch_norm 1,536;
  //     classifier 768 x 150 + 150 = 115,350: 3,265,686. segformer-b2 ADE: 27,461,974 (the published 27.5M);
  //   19 Cityscapes labels: classifier 768 x 19 + 19 = 14,611, 27,361,235.
  using memplan::Mode;
  using memplan::Task;
  const std::string b2 = std::string(R"({"model_type": "segformer", )") + kB2;
  const struct {
    std::string config;
    Task task;
    int64_t params;
  } rows[] = {
      {R"({"model_type": "segformer", "num_labels": 150})", Task::semantic_seg, 3'752'694},
      {R"({"model_type": "segformer", "num_labels": 1000})", Task::lm, 3'576'392},
      {b2 + R"(, "num_labels": 150})", Task::semantic_seg, 27'461'974},
      {b2 + R"(, "num_labels": 19})", Task::semantic_seg, 27'361'235},
      {b2 + R"(, "num_labels": 1000})", Task::lm, 24'196'288 + 512 * 1000 + 1000},
  };
  for (const auto& r : rows) {
    INFO(r.config);
    const ModelSpec m = model_of(r.config);
    CHECK(memplan::estimate(m, run(m, r.task, Mode::training, 1)).params == r.params);
  }
  // param_count() builds the default head (the image classifier).
  CHECK(memplan::param_count(model_of(R"({"model_type": "segformer", "num_labels": 1000})")) == 3'576'392);
}

TEST_CASE("segformer semantic segmentation: the loss's full-resolution maps scale with labels and pixels",
          "[family][set37]") {
  // The logits upsampled to the image ([B, labels, R, R]; fp32 under amp, the upsample being fp32-policy) and cross
  // entropy's log-probabilities outweigh the b0 encoder at 512 pixels and 150 labels, where the peak is the
  // forward's log_softmax: the upsampled logits, the contiguous copy its kernel makes of them and its output, 12
  // bytes a label-pixel (as many at its backward: the saved output, nll's gradient and log_softmax's). At 19 labels
  // the peak lies elsewhere, so the step from 19 to 150 labels adds less than those 12 bytes per extra label-pixel,
  // but at least 8 - far more than the classifier's 131 x 257 extra parameters.
  using memplan::Mode;
  using memplan::Task;
  const ModelSpec m19 = model_of(R"({"model_type": "segformer", "image_size": 512, "num_labels": 19})");
  const ModelSpec m150 = model_of(R"({"model_type": "segformer", "image_size": 512, "num_labels": 150})");
  RunConfig c = run(m19, Task::semantic_seg, Mode::training, 4);
  c.precision = memplan::Precision::amp_bf16;
  const int64_t p19 = memplan::estimate(m19, c).peak_allocated_bytes();
  const int64_t p150 = memplan::estimate(m150, c).peak_allocated_bytes();
  CHECK(p150 - p19 >= int64_t{8} * 4 * 131 * 512 * 512);
  // Inference keeps only the quarter-resolution logits: far below training.
  RunConfig inf = run(m150, Task::semantic_seg, Mode::inference, 4);
  inf.precision = memplan::Precision::amp_bf16;
  CHECK(memplan::estimate(m150, inf).peak_allocated_bytes() * 3 < p150);
}

TEST_CASE("family set 37, held out: SegFormer predicted blind, with its listed misses", "[family][set37][holdout]") {
  // Predicted at 06a37ec before any device saw it, measured on an H100 in the twenty-eighth session
  // (data/validation/h100-families.jsonl). Blind: the amp_bf16 rows and the fp32 ADE row within 0.06 % allocated;
  // the pure-bf16 rows short (city768 training -21.3 %, city1024 inference -53.5 %): the installed 5.17 file's
  // eager_attention_forward runs softmax(dtype=float32).to(q.dtype) (the copy written from had no dtype), now
  // modelled (not blind): inference exact, training +5.25 %. The twenty-ninth session re-read the rest of the 5.17
  // file and measured what the misses pointed at (NOTES.md "SegFormer after 5.17 re-read"): the norms' outputs,
  // the dropout's and the Mix-FFN's outputs bound until their consumers return, in training too (the amp b0 ADE
  // row's reserved -14.6 -> 0.00 %, its recorded stream); the decode head's channels-last 1x1 convs ask cuDNN for
  // a few MiB of workspace, not the contiguous class's 1.2x the activation (conv_workspace.py --hf-segformer: the
  // bf16 row +5.25 -> 0.00 %, the amp city1024 row's reserved +6.2 -> 0.00 %); the fold copy of the head's linear
  // hands its gradient back as a view, so in fp32 the stage outputs' second gradient is summed into a fresh buffer
  // (the fp32 city1024 row's reserved +15.5 -> 0.00 %, its recorded stream); the deeper stages' channels-last
  // depthwise 3x3 workspaces and the 224-px convs at batches 24 .. 128, measured in a second run (the fp32 MiT-b2
  // classifier +1.9 / +27 -> 0.00 / 0.00 %). Every row now within 0.05 % allocated and 0.02 % reserved.
  const auto checked = memplan::testing::check_family_cases(
      [](const memplan::ValidationCase& c) { return c.holdout && c.id.rfind("f37-", 0) == 0; },
      [](const std::string&) { return memplan::testing::FamilyBounds{0.0006, 0.0003}; },
      "h100-families.jsonl");
  CHECK(checked.size() == 11);  // the twelfth ran out of memory under its cap, as predicted
}
