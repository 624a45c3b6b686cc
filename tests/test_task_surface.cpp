// The task-head surface (thirteenth session): `--task` / `--num-labels` and the case keys `task` / `num_labels` into
// RunConfig, every bad value refused naming the flag or key, and check_task's refusals (a pair no builder replays,
// vision and native models, inference, LoRA), each naming `task` or `num_labels`. Also `--attn` left out: the
// implementation transformers 5.17's from_config picks (sdpa where `_supports_sdpa`, else eager: GPT-J, BLOOM and
// gpt-oss set it False in their modeling files). Which families replay which head is pinned by the family tests
// against measured rows (tests/families/test_family_set13_*.cpp), not here.
#include <catch2/catch.hpp>

#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_flags.h"
#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "models/load_model.h"
#include "models/validation_case.h"

namespace {

memplan::InputError input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const memplan::InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return memplan::InputError("", "", "");
}

nlohmann::json bert_case() {
  return nlohmann::json::parse(R"({"id": "t", "model": {"source": "huggingface", "model_type": "bert",
    "config": {"num_hidden_layers": 2}, "attn_implementation": "sdpa"}, "mode": "training", "batch_size": 2,
    "seq_len": 128, "precision": "fp32", "optimizer": "adamw"})");
}

}  // namespace

TEST_CASE("attn flag left out: what from_config picks", "[cli][task]") {
  memplan::cli::RunFlags f;
  f.seq_len = 512;
  CHECK(memplan::cli::run_config_from(f, memplan::load_model("llama-2-7b")).attn == memplan::AttnImpl::sdpa);
  // SegFormer: 5.17's SegformerPreTrainedModel sets _supports_sdpa (modeling_segformer.py, read on the device).
  CHECK(memplan::cli::run_config_from(memplan::cli::RunFlags{}, memplan::load_model("nvidia-segformer-b0-finetuned-ade-512-512"))
            .attn == memplan::AttnImpl::sdpa);
  for (const char* m : {"gpt-j-6b", "bloom-560m", "gpt-oss-20b"}) {
    INFO(m);
    CHECK(memplan::cli::run_config_from(f, memplan::load_model(m)).attn == memplan::AttnImpl::eager);
  }
  f.attn = "sdpa";  // asked for: kept, and the builder refuses it naming attn
  const memplan::ModelSpec gptj = memplan::load_model("gpt-j-6b");
  const memplan::RunConfig c = memplan::cli::run_config_from(f, gptj);
  CHECK(c.attn == memplan::AttnImpl::sdpa);
  CHECK(input_error([&] { memplan::build_graph(gptj, c); }).field() == "attn");
  f.attn = "flash";
  CHECK(input_error([&] { memplan::cli::run_config_from(f, gptj); }).field() == "--attn");
}

TEST_CASE("task flags (--task, --num-labels) into RunConfig", "[cli][task]") {
  const memplan::ModelSpec m = memplan::load_model("bert-base");
  memplan::cli::RunFlags f;
  CHECK(memplan::cli::run_config_from(f, m).task == memplan::Task::lm);
  f.task = "token_cls";
  f.num_labels = 9;
  const memplan::RunConfig c = memplan::cli::run_config_from(f, m);
  CHECK(c.task == memplan::Task::token_cls);
  CHECK(c.num_labels == 9);
  f.task = "classification";
  CHECK(input_error([&] { memplan::cli::run_config_from(f, m); }).field() == "--task");
  f.task = "seq_cls";
  for (int64_t bad : {int64_t{0}, int64_t{-3}, int64_t{1} << 40}) {
    f.num_labels = bad;
    CHECK(input_error([&] { memplan::cli::run_config_from(f, m); }).field() == "--num-labels");
  }
}

TEST_CASE("pad token flag (--pad-token-id) lets a zoo decoder pool at batch > 1", "[cli][task]") {
  // The zoo's Llama-3.2-1B config has no pad_token_id (as published): its sequence head at batch 4 is refused as
  // transformers raises, until the flag sets one, as a fine-tuning script sets model.config.pad_token_id.
  std::istringstream none;
  memplan::cli::RunFlags f;
  f.model = "llama-3.2-1b";
  f.task = "seq_cls";
  f.batch_size = 4;
  f.seq_len = 256;
  const memplan::ModelSpec plain = memplan::cli::load_model_for(f, none);
  CHECK_FALSE(plain.transformer.has_pad_token_id);
  CHECK(input_error([&] { memplan::build_graph(plain, memplan::cli::run_config_from(f, plain)); }).field() ==
        "config.pad_token_id");
  f.pad_token_id = 128004;
  const memplan::ModelSpec padded = memplan::cli::load_model_for(f, none);
  CHECK(padded.transformer.has_pad_token_id);
  CHECK_FALSE(memplan::build_graph(padded, memplan::cli::run_config_from(f, padded)).ops.empty());
  for (int64_t bad : {int64_t{-1}, padded.transformer.vocab_size, int64_t{1} << 40}) {
    f.pad_token_id = bad;
    CHECK(input_error([&] { memplan::cli::load_model_for(f, none); }).field() == "--pad-token-id");
  }
  f.model = "resnet50";
  f.pad_token_id = 0;
  CHECK(input_error([&] { memplan::cli::load_model_for(f, none); }).field() == "--pad-token-id");
}

TEST_CASE("case keys task and num_labels", "[task][validation]") {
  nlohmann::json j = bert_case();
  j["task"] = "token_cls";
  j["num_labels"] = 7;
  const memplan::ValidationCase c = memplan::parse_validation_case(j);
  CHECK(c.run.task == memplan::Task::token_cls);
  CHECK(c.run.num_labels == 7);
  j["task"] = "ner";
  CHECK(input_error([&] { memplan::parse_validation_case(j); }).field() == "t: task");  // a case error names its id
  j["task"] = "seq_cls";
  j["num_labels"] = 0;
  CHECK(input_error([&] { memplan::parse_validation_case(j); }).field() == "t: num_labels");
}

TEST_CASE("case keys of images and waveforms are refused on models that never read them", "[task][validation]") {
  // A BERT case given a VLM's or a speech encoder's input keys: each refused naming the key (and the case id),
  // not estimated as if it were absent.
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"image_grid", nlohmann::json::array({1, 16, 16})},
           {"images_per_sample", 1},
           {"max_num_patches", 256},
           {"audio_samples", 16000}}) {
    nlohmann::json j = bert_case();
    j[key] = value;
    INFO(key);
    CHECK(input_error([&] { memplan::parse_validation_case(j); }).field() == "t: " + key);
  }
}

TEST_CASE("check_task: what is refused, naming task or num_labels", "[task]") {
  memplan::RunConfig cfg;
  cfg.seq_len = 128;
  cfg.task = memplan::Task::seq_cls;
  SECTION("the language-modelling head is every family's") {
    CHECK(memplan::task_modelled("anything", memplan::Task::lm));
    cfg.task = memplan::Task::lm;
    CHECK_NOTHROW(memplan::check_task(memplan::load_model("resnet50"), cfg));
  }
  SECTION("a vision model's classifier is its own head") {
    CHECK(input_error([&] { memplan::check_task(memplan::load_model("resnet50"), cfg); }).field() == "task");
  }
  SECTION("a family without the pair lists the families that have it") {
    const auto e = input_error([&] { memplan::check_task(memplan::load_model("gpt-j-6b"), cfg); });
    CHECK(e.field() == "task");
    CHECK_THAT(std::string(e.what()), Catch::Contains("model_type gptj"));
  }
  SECTION("a decoder's inference with a head, QLoRA with a head and feature in training are not modelled") {
    const memplan::ModelSpec m = memplan::load_model("bert-base");
    cfg.mode = memplan::Mode::inference;
    CHECK_NOTHROW(memplan::check_task(m, cfg));  // an encoder's inference replays its head (forward only)
    CHECK(input_error([&] { memplan::check_task(memplan::load_model("llama-3.2-1b"), cfg); }).field() == "task");
    cfg.mode = memplan::Mode::training;
    cfg.task = memplan::Task::feature;
    CHECK(input_error([&] { memplan::check_task(m, cfg); }).field() == "task");
    cfg.task = memplan::Task::seq_cls;
    cfg.lora.r = 8;
    CHECK_NOTHROW(memplan::check_task(m, cfg));  // peft's task_type SEQ_CLS: the head trains as a full copy
    cfg.quant.base = memplan::QuantBase::nf4;
    CHECK(input_error([&] { memplan::check_task(m, cfg); }).field() == "task");
  }
  SECTION("num_labels must be positive") {
    cfg.num_labels = 0;
    CHECK(input_error([&] { memplan::check_task(memplan::load_model("bert-base"), cfg); }).field() ==
          "num_labels");
  }
}

TEST_CASE("default sequence (no --seq-len): 2048, encoders 512, or the position table's limit where lower", "[cli][task]") {
  // The published configs' tables: CLIP's text tower 77 positions (openai/clip-vit-base-patch32), BERT-base 512,
  // RoBERTa 514 less its padding offset of 2, GPT-2 n_positions 1024, BART 1024, Opus-MT (Marian) 512, NLLB's
  // sinusoidal table (max_position_embeddings 1024 + 2 rows, ids from pad_token_id 1 + 1: 1024); Llama-2 has
  // rotary positions (no table: 2048). Each default must also estimate without an error.
  const memplan::cli::RunFlags f;
  const std::pair<const char*, int64_t> want[] = {
      {"clip-vit-base-patch32", 77}, {"bert-base", 512}, {"roberta-base", 512}, {"gpt2", 1024},
      {"bart-base", 1024}, {"opus-mt-en-de", 512}, {"nllb-200-distilled-600m", 1024}, {"llama-2-7b", 2048}};
  for (const auto& [m, seq] : want) {
    INFO(m);
    const memplan::ModelSpec spec = memplan::load_model(m);
    const memplan::RunConfig c = memplan::cli::run_config_from(f, spec);
    CHECK(c.seq_len == seq);
    if (std::string(m) != "llama-2-7b") CHECK_NOTHROW(memplan::estimate(spec, c));
  }
  // Whisper: its 3000 log-mel frames, and labels up to its decoder's max_target_positions (448)
  const memplan::RunConfig w = memplan::cli::run_config_from(f, memplan::load_model("whisper-tiny"));
  CHECK(w.seq_len == 3000);
  CHECK(w.target_len == 448);
}

TEST_CASE("image flags (--images-per-sample, --image-grid, --image-splits) into RunConfig", "[cli][task]") {
  memplan::cli::RunFlags f;
  f.seq_len = 1200;
  f.images_per_sample = 1;
  f.image_grid = "1,32,48";  // a 448 x 672 image in 14-pixel patches: 384 image tokens after the 2 x 2 merge
  const memplan::ModelSpec q2 = memplan::load_model("qwen2-vl-2b-instruct");
  const memplan::RunConfig c = memplan::cli::run_config_from(f, q2);
  CHECK(c.images_per_sample == 1);
  CHECK(c.image_grid == std::vector<int64_t>{1, 32, 48});
  f.mode = "inference";  // served with images too
  CHECK_NOTHROW(memplan::estimate(q2, memplan::cli::run_config_from(f, q2)));
  // refused naming the flag: on a model without images, malformed, out of range
  CHECK(input_error([&] { memplan::cli::run_config_from(f, memplan::load_model("llama-2-7b")); }).field() ==
        "--images-per-sample");
  for (const char* bad : {"1,32", "1,32,48,2", "1,0,48", "a,b,c", "1,,48"}) {
    INFO(bad);
    f.image_grid = bad;
    CHECK(input_error([&] { memplan::cli::run_config_from(f, q2); }).field() == "--image-grid");
  }
  f.image_grid.clear();
  f.image_splits = "2,2";
  const memplan::ModelSpec smol = memplan::load_model("smolvlm-256m-instruct");
  CHECK(memplan::cli::run_config_from(f, smol).image_splits == std::vector<int64_t>{2, 2});
  f.image_splits = "2,-1";
  CHECK(input_error([&] { memplan::cli::run_config_from(f, smol); }).field() == "--image-splits");
  f.images_per_sample = -1;
  f.image_splits.clear();
  CHECK(input_error([&] { memplan::cli::run_config_from(f, q2); }).field() == "--images-per-sample");
}
