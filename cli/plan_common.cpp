#include "cli/plan_common.h"

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/checked.h"

namespace memplan::cli {

plan::DeviceRates device_rates(const GpuSpec& g, int64_t gpus_per_node) {
  plan::DeviceRates r;
  r.matmul_flops_per_s = 0.7 * g.bf16_tflops * 1e12;
  r.fp32_matmul_flops_per_s = 0.7 * g.fp32_tflops * 1e12;
  r.hbm_bytes_per_s = 0.8 * g.memory_bandwidth_bytes_per_s;
  r.intra_node_bytes_per_s = g.nvlink_bytes_per_s > 0 ? g.nvlink_bytes_per_s / 2 : g.pcie_bytes_per_s / 2;
  r.host_link_bytes_per_s = g.pcie_bytes_per_s / 2;
  r.gpus_per_node = gpus_per_node;
  if (g.id.rfind("h200", 0) == 0) {
    std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/calibration/h200.json");
    if (in) {
      try {
        const auto j = nlohmann::json::parse(in);
        r.matmul_flops_per_s = j.at("gemm_tflops").at("bf16").get<double>() * 1e12;
        r.fp32_matmul_flops_per_s = j.at("gemm_tflops").at("fp32").get<double>() * 1e12;
        r.hbm_bytes_per_s = j.at("hbm_bandwidth_bytes_per_s").get<double>();
        r.host_link_bytes_per_s = j.at("h2d_pinned_bytes_per_s").get<double>();
      } catch (const std::exception&) {
        // a malformed profile leaves the vendor figures in place
      }
    }
  }
  return r;
}

std::string parallel_text(const plan::ParallelConfig& p) {
  std::string s = "tp" + std::to_string(p.tp) + (p.sequence_parallel ? "+sp" : "") + " pp" + std::to_string(p.pp) +
                  " dp" + std::to_string(p.dp) + " " + std::string(plan::data_parallel_name(p.dp_kind));
  if (p.offload != plan::Offload::none) s += "+offload(" + std::string(plan::offload_name(p.offload)) + ")";
  return s;
}

std::string seconds_text(double s) {
  char buf[32];
  if (s < 1) std::snprintf(buf, sizeof buf, "%.0f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return buf;
}

}  // namespace memplan::cli
