// Step time on an H100 SXM: the engine's tables measured on the lent H100 (data/calibration/h100/, the reference
// host's tables and the H200's fitted coefficients) against the first H100 timing set
// (data/validation/h100-timing.jsonl: rows of the H200 corpus chosen by a fixed rule, calibrate/cases/
// make_h100_timing.py, predicted in data/validation/predictions/h100-timing1.json before any was timed). The rows
// are not in the fit: every figure here is a transfer to a GPU the coefficients never saw.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "cli/time_fit.h"
#include "fidelity_cases.h"
#include "engine/time/kernel_tables.h"
#include "engine/time/step_time.h"
#include "data_dir.h"

namespace {
// Rows outside the set's per-row bar (15 %, the hidden-case bar), each with its bound (the blind error rounded up,
// plus a point) and what is not modelled:
//  - decode per token: generate()'s per-token host work; the same four rows read +13 .. +42 % on the H100 where the
//    H200 model read their H200 timings at -32 .. +19 %: the H100's host ran these decodes up to 2x faster than the H200 call that
//    timed them (a host-bound figure, NOTES-time.md, twenty-fourth round);
//  - Cohere fp16 b3 x 1000 (+17.8 %; +6.3 % on the H200 by the same model): the optimizer's column (14 of the
//    model's 41 ms) at the H100's optimizer-kernel rates (1.31 .. 1.35x the H200's per parameter); not traced;
//  - DenseNet-121 fp32 b32 (+16.2 %): its H200 row read -29 % (measured 64 ms there, 40 here): a host-sensitive row;
//  - ViT-B/16 LoRA b48 (+16.9 %; +16.9 % at the H200's tables too, +10.4 % on the H200): not traced.
struct Miss {
  const char* id;
  const char* what;
  double bound_pct;
};
constexpr Miss kMisses[] = {
    {"h100-hi7-gemma3_1b-infer-bf16-b8s2048-g8", "decode_token", 44},
    {"h100-hi6-q3_06-infer-bf16-b16s2048-g8", "decode_token", 33},
    {"h100-ht30-q15-infer-b3s3000-g12", "decode_token", 15},
    {"h100-hmi12-mixtral-infer-bf16-b4s2048-g8-L4", "decode_token", 22},
    {"h100-ht6-cohere-bias-ampfp16-adamw-b3s1000", "step", 19},
    {"h100-hv5-densenet121-fp32-sgdmom-b32", "step", 18},
    {"h100-f28-vitb-ampbf16-r16-qv-b48", "step", 18},
};
double bound_for(const std::string& id, const std::string& what) {
  for (const auto& m : kMisses)
    if (id == m.id && what == m.what) return m.bound_pct;
  return 15.0;
}
using memplan::testing::median;
}  // namespace

TEST_CASE("step time: the H100 timing set, at the H100's measured rates", "[time][fidelity][h100]") {
  const auto rows = memplan::cli::time_rows({std::string(MEMPLAN_DATA_DIR) + "/validation/h100-timing.jsonl"});
  REQUIRE(rows.size() == 31);  // 23 training steps, 4 prefills, 4 decodes (27 cases timed of the 147 written)
  const auto& c = memplan::timing::h200_coefficients();
  std::vector<double> steps, prefills;
  for (const auto& r : rows) {
    const double pred = memplan::timing::predict(r.x, c).total_s;
    const double err = 100.0 * (pred - r.measured_s) / r.measured_s;
    std::printf("%-50s %-13s %9.2f %9.2f %+7.2f\n", r.id.c_str(), r.what.c_str(), pred * 1e3, r.measured_s * 1e3, err);
    INFO(r.id << " " << r.what << ": predicted " << pred * 1e3 << " ms, measured " << r.measured_s * 1e3 << " ms");
    CHECK(std::fabs(err) <= bound_for(r.id, r.what));
    if (r.what == "step") steps.push_back(std::fabs(err));
    if (r.what == "prefill") prefills.push_back(std::fabs(err));
  }
  // Blind (predictions/h100-timing1.json, 1aa4845): training steps median 5.85 %, 19 of 23 within 10 %, 20 within
  // 15 %, the median error +5.1 % (the same rows by the H200's tables read -4.6 %, and taking the H200's measured
  // time as the H100's 10.1 %); prefills within 4.6 %.
  std::printf("H100: %zu steps, median |error| %.2f %%; %zu prefills, median %.2f %%\n", steps.size(), median(steps),
              prefills.size(), median(prefills));
  CHECK(median(steps) <= 6.0);
  CHECK(median(prefills) <= 5.0);
}

TEST_CASE("step time: which GPUs have measured rates", "[time][h100]") {
  using memplan::timing::measured_gpu;
  REQUIRE(measured_gpu("h200-sxm-141gb") != nullptr);
  REQUIRE(measured_gpu("h100-sxm-80gb") != nullptr);
  CHECK(&measured_gpu("h200-sxm-141gb")->rates() == &memplan::timing::h200_op_rates());
  CHECK(&measured_gpu("h100-sxm-80gb")->rates() == &memplan::timing::h100_op_rates());
  // the PCIe card runs at other clocks and bandwidth: its figure is the H200's scaled (the planner), not the SXM's
  CHECK(measured_gpu("h100-pcie-80gb") == nullptr);
  CHECK(measured_gpu("a100-sxm4-80gb") == nullptr);
  CHECK(measured_gpu("") == nullptr);
}

TEST_CASE("step time: the H100's tables are its own, its host the reference's", "[time][h100]") {
  const auto& h = memplan::timing::h100_op_rates();
  const auto& ref = memplan::timing::h200_op_rates();
  // data/calibration/h100/h100-op-rates.tsv: the median streaming bandwidth measured there (bf16 2913 GB/s,
  // fp32 2965.4) against the H200's (3801.7, 4158.4)
  CHECK(h.mem_bf16_bytes_per_s == Approx(2913e9));
  CHECK(h.mem_fp32_bytes_per_s == Approx(2965.4e9));
  CHECK(ref.mem_bf16_bytes_per_s == Approx(3801.7e9));
  // the host's side is the reference host's (data/calibration/h100/README.md)
  CHECK(h.dispatch_s == ref.dispatch_s);
  CHECK(h.ckpt_host.fwd_layer_s == ref.ckpt_host.fwd_layer_s);
  for (size_t i = 0; i < h.host_by_class.size(); ++i) CHECK(h.host_by_class[i].bwd_s == ref.host_by_class[i].bwd_s);
  // per-shape tables, all 1072 conv shapes x 4 batches x 2 dtypes and 285 batch-norm shapes x 4 x 3 measured
  CHECK(memplan::timing::h100_op_rates().conv_time->rows() == 8576);
  CHECK(memplan::timing::h100_op_rates().bn_time->rows() == 3420);
  // the first row of h100-conv-time.tsv: MobileNetV3's stem, 3 -> 16 channels, 3x3 stride 2 at 224 px, batch 1,
  // bf16: 5.86 us forward, 29.96 us backward (grad_weight only: the image needs no gradient)
  memplan::timing::ConvKernelShape s;
  s.n = 1, s.c_in = 3, s.h = 224, s.w = 224, s.c_out = 16, s.kernel = 3, s.stride = 2, s.pad = 1;
  s.dtype = memplan::DType::bf16;
  memplan::timing::KernelSeconds ks;
  REQUIRE(memplan::timing::h100_op_rates().conv_time->lookup(s, ks));
  CHECK(ks.forward_s == Approx(5.86e-6));
  CHECK(ks.backward_s == Approx(29.96e-6));
}

TEST_CASE("estimate prices the step on the GPU it is asked about", "[time][h100][cli]") {
  // GPT-2 medium amp bf16 b8 x 1024 (the first timing row): a GPU with measured rates is costed at them and
  // says so (step_time_on); one without is costed at the H200's and says that instead
  struct Row {
    const char* gpu;
    const char* on;
    bool h200_keys;
  };
  const Row rows[] = {{"h200-sxm-141gb", "h200-sxm-141gb", true},
                      {"h100-sxm-80gb", "h100-sxm-80gb", false},
                      {"a100-sxm4-80gb", "h200-sxm-141gb", true}};
  double h200_ms = 0, h100_ms = 0;
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.gpu) {
      const auto r = memplan::cli::run_cli_captured({"estimate", "--model", "gpt2-medium", "--precision", "amp_bf16",
                                                     "--batch-size", "8", "--seq-len", "1024", "--gpu", row.gpu,
                                                     "--json", "--quiet"});
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j.at("step_time_on").get<std::string>() == row.on);
      CHECK(j.contains("step_time_ms_h200") == row.h200_keys);
      CHECK(j.at("step_time_ms").get<double>() > 0);
    }
  }
  for (const char* gpu : {"h200-sxm-141gb", "h100-sxm-80gb"}) {
    const auto r = memplan::cli::run_cli_captured({"estimate", "--model", "gpt2-medium", "--precision", "amp_bf16",
                                                   "--batch-size", "8", "--seq-len", "1024", "--gpu", gpu, "--json",
                                                   "--quiet"});
    (std::string(gpu) == "h200-sxm-141gb" ? h200_ms : h100_ms) = nlohmann::json::parse(r.out).at("step_time_ms").get<double>();
  }
  // Measured: 126.1 ms on the H200 (h200-timing.jsonl t-gpt2m-ampbf16-adamw-b8s1024); the H100 ran the same
  // model 1.17x slower at b16 (h100-timing.jsonl). The H100's lower bandwidth prices it slower; by how much is the
  // tables' to say, the timing test above checks the figures.
  CHECK(h100_ms > h200_ms);
}

TEST_CASE("estimate prices an inference run's prefill and decode step on the GPU asked about", "[time][h100][cli]") {
  // The H100 set's Llama-3.2-1B row shape (ht30-l1b-infer-b6s1500-g12: prefill measured 45.4 ms on the H200,
  // decode 10.7 ms a token), from the zoo: both figures, priced on the GPU asked about.
  for (const char* gpu : {"h100-sxm-80gb", "h200-sxm-141gb"}) {
    DYNAMIC_SECTION(gpu) {
      const auto r = memplan::cli::run_cli_captured({"estimate", "--model", "llama-3.2-1b", "--mode", "inference",
                                                     "--batch-size", "6", "--seq-len", "1500", "--generate-tokens",
                                                     "12", "--gpu", gpu, "--json", "--quiet"});
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j.at("step_time_on").get<std::string>() == gpu);
      const double prefill = j.at("inference").at("prefill_ms").get<double>();
      const double decode = j.at("inference").at("decode_ms_per_token").get<double>();
      CHECK(prefill > decode);
      CHECK(decode > 0);
    }
  }
  // one token generated: no decode step to price (generate(N) - generate(1) needs N > 1)
  const auto one = memplan::cli::run_cli_captured({"estimate", "--model", "llama-3.2-1b", "--mode", "inference",
                                                   "--batch-size", "2", "--seq-len", "128", "--generate-tokens", "1",
                                                   "--json", "--quiet"});
  REQUIRE(one.exit_code == 0);
  const auto j = nlohmann::json::parse(one.out);
  CHECK(j.at("inference").contains("prefill_ms"));
  CHECK_FALSE(j.at("inference").contains("decode_ms_per_token"));
}

TEST_CASE("time tables from a directory: a directory of tables prices the step as the embedded ones do", "[time][h100][cli]") {
  // data/calibration/h100 is what calibrate/time_tables.sh reduce writes for the H100 (h100-NAME.tsv names): read from
  // disk it must price every step exactly as the embedded copy does, whatever --gpu says about memory.
  const std::string dir = std::string(MEMPLAN_DATA_DIR) + "/calibration/h100";
  const std::vector<std::string> base = {"--model", "gpt2-medium", "--precision", "amp_bf16", "--batch-size", "8",
                                         "--seq-len", "1024", "--json", "--quiet"};
  auto run = [&](const std::string& cmd, std::vector<std::string> extra) {
    std::vector<std::string> args = {cmd};
    args.insert(args.end(), base.begin(), base.end());
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = memplan::cli::run_cli_captured(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto embedded = run("estimate", {"--gpu", "h100-sxm-80gb"});
  const auto read = run("estimate", {"--gpu", "a100-sxm4-80gb", "--time-tables", dir});
  CHECK(read.at("step_time_ms").get<double>() == embedded.at("step_time_ms").get<double>());
  CHECK(read.at("step_time_on").get<std::string>() == "tables:" + dir);
  const auto fit_read = run("fit", {"--gpu", "a100-sxm4-80gb", "--time-tables", dir});
  const auto fit_h100 = run("fit", {"--gpu", "h100-sxm-80gb"});
  CHECK(fit_read.at("step_time_s").get<double>() == Approx(fit_h100.at("step_time_s").get<double>()).epsilon(1e-12));
  CHECK(fit_read.at("step_time_on").get<std::string>() == "tables:" + dir);
  CHECK_FALSE(fit_read.at("step_time_scaled").get<bool>());
  CHECK(fit_h100.at("step_time_on").get<std::string>() == "h100-sxm-80gb");
  CHECK_FALSE(fit_h100.at("step_time_scaled").get<bool>());
  // a GPU with no tables of its own: the H200's rates scaled to it (plan_common.cpp device_rates), and fit says so
  const auto fit_a100 = run("fit", {"--gpu", "a100-sxm4-80gb"});
  CHECK(fit_a100.at("step_time_on").get<std::string>() == "h200-sxm-141gb");
  CHECK(fit_a100.at("step_time_scaled").get<bool>());
}

TEST_CASE("time tables from a directory: a missing or malformed directory is refused naming the flag", "[time][cli]") {
  const std::string bad = "/tmp/memplan-test-time-tables-bad";
  std::filesystem::create_directories(bad);
  std::ofstream(bad + "/op-rates.tsv") << "gemm_dims 128 x\n";
  const std::string empty = "/tmp/memplan-test-time-tables-empty";
  std::filesystem::create_directories(empty);
  for (const std::string& dir : {std::string("/nonexistent/memplan"), empty, bad}) {
    DYNAMIC_SECTION(dir) {
      const auto r = memplan::cli::run_cli_captured({"estimate", "--model", "gpt2", "--time-tables", dir});
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("--time-tables") != std::string::npos);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') <= 1);
    }
  }
}
