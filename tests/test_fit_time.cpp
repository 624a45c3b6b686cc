// `memplan fit` ranks its remedies by the step-time model fitted on the H200 timing corpus (engine/time/): on the
// H200 its step time for a measured timing case is exactly timing::case_time's (same graph, same features, same
// coefficients; no scaling on the GPU the rates were measured on), and on the H100 SXM at its own measured rates.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "engine/time/case_time.h"
#include "models/validation_case.h"
#include "data_dir.h"

using memplan::cli::CliOutput;
using memplan::cli::run_cli_captured;

namespace {
nlohmann::json corpus_case(const std::string& id) {
  std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/validation/h200-timing.jsonl");
  REQUIRE(in.good());
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.at("id") == id) return j;
  }
  FAIL("no timing case " << id);
  return {};
}
}  // namespace

TEST_CASE("fit: the step time of a measured timing case is timing::case_time's", "[fit][time][cli]") {
  // GPT-2 medium, AMP bf16, foreach AdamW, seq 1024: batch 8 with every layer checkpointed, and 4 x 2
  // accumulation (both measured in the corpus; the fidelity test holds their predictions to the measurements).
  for (const char* id : {"t-gpt2m-ampbf16-adamw-b8s1024-ckpt", "t-gpt2m-ampbf16-adamw-b4x2s1024"}) {
    INFO(id);
    const nlohmann::json j = corpus_case(id);
    const memplan::ValidationCase c = memplan::parse_validation_case(j);
    const double expected_s = memplan::timing::case_time(c.model, c.run).step_ms / 1e3;
    REQUIRE(expected_s > 0);
    // The case's config.json, as a user would pass it.
    nlohmann::json cfg = j.at("model").at("config");
    cfg["model_type"] = j.at("model").at("model_type");
    const std::string path = std::string("/tmp/memplan-test-fit-time-") + id + ".json";
    std::ofstream(path) << cfg.dump();
    // fit with the case's flags on a GPU
    const auto fit_on = [&](const char* gpu) {
      return run_cli_captured({"fit", "--model", path, "--gpu", gpu, "--json", "--attn", "sdpa", "--batch-size",
                               std::to_string(j.at("batch_size").get<int>()), "--seq-len",
                               std::to_string(j.at("seq_len").get<int>()), "--precision", "amp_bf16", "--optimizer",
                               "adamw", "--optimizer-impl", "foreach", "--grad-accum-steps",
                               std::to_string(j.at("grad_accum_steps").get<int>()), "--grad-checkpointing",
                               j.at("grad_checkpointing").get<bool>() ? "all" : "off"});
    };
    const CliOutput ok = fit_on("h200");
    INFO(ok.err);
    REQUIRE(ok.exit_code == 0);
    const nlohmann::json out = nlohmann::json::parse(ok.out);
    CHECK(out.at("step_time_s").get<double>() == Approx(expected_s).epsilon(1e-9));
    // The H100 SXM has its own measured rates (engine/time/step_time.h measured_gpu): fit prices the step at them,
    // unscaled, exactly as timing::case_time does with those rates.
    {
      const double h100_s = memplan::timing::case_time(c.model, c.run, memplan::timing::h100_op_rates()).step_ms / 1e3;
      const CliOutput h100 = fit_on("h100-sxm-80gb");
      INFO(h100.err);
      REQUIRE(h100.exit_code == 0);
      CHECK(nlohmann::json::parse(h100.out).at("step_time_s").get<double>() == Approx(h100_s).epsilon(1e-9));
      CHECK(h100_s != Approx(expected_s).epsilon(1e-3));
    }
    // Another GPU: the H200's seconds scaled by slower GEMM and HBM rates, so slower than on the H200.
    std::vector<std::string> args = {"fit", "--model", path, "--gpu", "a100-sxm4-80gb", "--json", "--batch-size",
                                     std::to_string(j.at("batch_size").get<int>()), "--seq-len",
                                     std::to_string(j.at("seq_len").get<int>()), "--precision", "amp_bf16",
                                     "--grad-accum-steps", std::to_string(j.at("grad_accum_steps").get<int>()),
                                     "--grad-checkpointing", j.at("grad_checkpointing").get<bool>() ? "all" : "off"};
    const CliOutput a100 = run_cli_captured(args);
    REQUIRE(a100.exit_code == 0);
    CHECK(nlohmann::json::parse(a100.out).at("step_time_s").get<double>() > expected_s);
  }
}
