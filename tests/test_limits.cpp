// Limits on absurd inputs (engine/limits.h) and the loaders added for robustness: each refusal is an
// InputError naming the field and the limit, and real inputs stay inside every limit.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>

#include "cli/run_cli.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "engine/limits.h"
#include "engine/oom_explain.h"
#include "models/calibration_profile.h"
#include "models/gpu_specs.h"
#include "models/hf_config.h"
#include "models/json_input.h"
#include "models/zoo.h"
#include "data_dir.h"

using namespace memplan;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

RunConfig small_run() {
  RunConfig c;
  c.seq_len = 16;
  c.precision = Precision::bf16;
  return c;
}

}  // namespace

TEST_CASE("limits name the field and the limit", "[limits]") {
  const ModelSpec base = load_zoo_model("llama-3.2-1b");
  struct Row {
    const char* name;
    std::function<void(ModelSpec&, RunConfig&)> edit;
    const char* field;
  };
  const Row rows[] = {
      {"layers 10^7", [](ModelSpec& m, RunConfig&) { m.transformer.num_layers = 10'000'000; }, "model.num_layers"},
      {"vocab 10^12", [](ModelSpec& m, RunConfig&) { m.transformer.vocab_size = 1'000'000'000'000; }, "model.vocab_size"},
      {"experts", [](ModelSpec& m, RunConfig&) { m.transformer.num_experts = 5000; m.transformer.num_experts_per_tok = 2; }, "model.num_experts"},
      {"top-k above experts", [](ModelSpec& m, RunConfig&) { m.transformer.num_experts = 8; m.transformer.num_experts_per_tok = 9; }, "model.num_experts_per_tok"},
      {"batch", [](ModelSpec&, RunConfig& c) { c.batch_size = kMaxBatch + 1; }, "batch_size"},
      {"seq", [](ModelSpec&, RunConfig& c) { c.seq_len = kMaxSeqLen + 1; }, "seq_len"},
      {"grad accum", [](ModelSpec&, RunConfig& c) { c.grad_accum_steps = kMaxGradAccumSteps + 1; }, "grad_accum_steps"},
      {"replay work", [](ModelSpec&, RunConfig& c) { c.grad_accum_steps = kMaxGradAccumSteps; }, "grad_accum_steps"},
      {"frozen list", [](ModelSpec&, RunConfig& c) { c.frozen_layers.assign(kMaxLayers + 1, 0); }, "frozen_layers"},
  };
  for (const auto& r : rows) {
    DYNAMIC_SECTION(r.name) {
      ModelSpec m = base;
      RunConfig c = small_run();
      r.edit(m, c);
      const std::string msg = error_of([&] { (void)estimate(m, c); });
      INFO(msg);
      CHECK(msg.rfind(r.field, 0) == 0);
      CHECK(msg.find("limit") != std::string::npos);
    }
  }
}

TEST_CASE("a graph over kMaxGraphOps stops the build", "[limits]") {
  ModelSpec m = load_zoo_model("mixtral-8x7b");
  m.transformer.num_layers = kMaxLayers;
  m.transformer.num_experts = 256;  // ~15 ops per expert and layer: the cap is hit after ~130 layers
  const std::string msg = error_of([&] { (void)estimate(m, small_run()); });
  CHECK(msg.rfind("model: graph exceeds the limit of " + std::to_string(kMaxGraphOps) + " ops", 0) == 0);
}

TEST_CASE("every zoo model and the largest real configurations are inside the limits", "[limits]") {
  for (const auto& e : zoo_entries()) {
    const ModelSpec m = load_zoo_model(e.name);
    RunConfig c = small_run();
    CHECK_NOTHROW(check_limits(m, c));
  }
}

TEST_CASE("HF importer refuses sizes above the limits under the config key", "[limits]") {
  auto cfg = nlohmann::json::parse(R"({"model_type": "llama"})");
  cfg["num_hidden_layers"] = 10'000'000;
  CHECK_THROWS_WITH(import_hf_config(cfg), Catch::StartsWith("config.num_hidden_layers: exceeds the limit of 10000"));
  cfg.erase("num_hidden_layers");
  cfg["vocab_size"] = int64_t{1'000'000'000'000};
  CHECK_THROWS_WITH(import_hf_config(cfg), Catch::StartsWith("config.vocab_size: exceeds the limit"));
}

TEST_CASE("JSON input: depth cap, invalid UTF-8, non-finite numbers", "[limits]") {
  CHECK_NOTHROW(parse_json_input(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), "f"));
  CHECK_THROWS_WITH(parse_json_input(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']'), "f"),
                    Catch::Contains("nested deeper than 64"));
  CHECK_THROWS_WITH(parse_json_input(std::string(100000, '['), "f"), Catch::StartsWith("f: JSON nested deeper"));
  CHECK_THROWS_WITH(parse_json_input("\"\xff\"", "f"), Catch::StartsWith("f: invalid JSON"));
  CHECK_THROWS_WITH(parse_json_input("NaN", "f"), Catch::StartsWith("f: invalid JSON"));
  CHECK(dump_short(nlohmann::json(std::string(200, 'x'))).size() == 60);
}

TEST_CASE("GPU spec parser: the embedded table parses; bad entries name entry and key", "[limits]") {
  CHECK(gpu_specs().size() >= 10);
  CHECK_THROWS_WITH(parse_gpu_specs(R"({"gpus": [{"id": "a", "name": "A", "memory_bytes": 1}, {"id": "b", "name": "B"}]})"),
                    Catch::StartsWith("gpus[1].memory_bytes: "));
  CHECK_THROWS_WITH(parse_gpu_specs(R"({"gpus": [{"id": "a", "name": "A", "memory_bytes": 1, "pcie_bytes_per_s": -1}]})"),
                    Catch::StartsWith("gpus[0].pcie_bytes_per_s: "));
}

TEST_CASE("calibration profile: the measured H200 profile loads through the capped reader", "[limits]") {
  const CalibrationProfile p = load_calibration_profile(std::string(MEMPLAN_DATA_DIR) + "/calibration/h200.json");
  CHECK(p.gpu_name == "NVIDIA H200");
  CHECK(p.total_memory_bytes == 150109880320);
  CHECK(p.cuda_context_lazy_bytes == 548995072);
  CHECK(p.bf16_tflops == Approx(778.409));
  CHECK_THROWS_WITH(load_calibration_profile("/dev/zero"), Catch::StartsWith("--calibration: not a readable regular file"));
  CHECK_THROWS_WITH(parse_calibration_profile(parse_json_input(R"({"schema": [[[1]]]})", "f")),
                    Catch::StartsWith("calibration.schema: "));
}

TEST_CASE("run_cli: in process, one stderr line, control characters escaped", "[limits]") {
  const char* argv[] = {"memplan", "estimate", "--model", "no\nsuch\tmodel"};
  std::istringstream in;
  std::ostringstream out, err;
  CHECK(cli::run_cli(4, argv, in, out, err) == 2);
  CHECK(err.str().find('\n') == err.str().size() - 1);
  CHECK(err.str().find("no\\nsuch\\tmodel") != std::string::npos);
  CHECK(one_line("a\x1b[0m\r") == "a\\x1b[0m\\r");
}

TEST_CASE("OOM text with inconsistent sizes is still answered, percentages clamped", "[limits]") {
  // Found by fuzz_oom_message (fuzz/regressions/oom_message/): a unit-less capacity is bytes, so allocated is
  // ~10^10 % of it; converting that percentage to int was undefined behaviour.
  const OomReport r = parse_oom_message(
      "CUDA out of memory. Tried to allocate 352.00 MiB. GPU 0 has a total capacity of 139.80 of which 114.71 GiB "
      "is free. Of the allocated memory 23.88 GiB is allocated by PyTorch, and 20.88 MiB is reserved by PyTorch but "
      "unallocated.");
  CHECK(r.total_bytes == 140);
  const OomDiagnosis d = classify(r);
  bool clamped = false;
  for (const auto& s : d.reasons) clamped = clamped || s.find(">999999%") != std::string::npos;
  CHECK(clamped);
}
