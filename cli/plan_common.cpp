#include "cli/plan_common.h"

#include <cstdio>

#include "engine/checked.h"
#include "models/calibration_profile.h"

namespace memplan::cli {

plan::DeviceRates device_rates(const GpuSpec& g, int64_t gpus_per_node, const std::string& calibration_path,
                               const timing::OpRates* tables) {
  plan::DeviceRates r;
  r.matmul_flops_per_s = 0.7 * g.bf16_tflops * 1e12;
  r.fp32_matmul_flops_per_s = 0.7 * g.fp32_tflops * 1e12;
  r.hbm_bytes_per_s = 0.8 * g.memory_bandwidth_bytes_per_s;
  r.intra_node_bytes_per_s = g.nvlink_bytes_per_s > 0 ? g.nvlink_bytes_per_s / 2 : g.pcie_bytes_per_s / 2;
  r.host_link_bytes_per_s = g.pcie_bytes_per_s / 2;
  r.gpus_per_node = gpus_per_node;
  // Measured rates replace the vendor figures: a --calibration profile, else the shipped profile of this GPU.
  std::optional<CalibrationProfile> p;
  if (!calibration_path.empty()) p = load_calibration_profile(calibration_path);
  else if (g.id.rfind("h200", 0) == 0) p = shipped_calibration_profile("h200");
  if (p) {
    if (p->bf16_tflops > 0) r.matmul_flops_per_s = p->bf16_tflops * 1e12;
    if (p->fp32_tflops > 0) r.fp32_matmul_flops_per_s = p->fp32_tflops * 1e12;
    if (p->hbm_bandwidth_bytes_per_s > 0) r.hbm_bytes_per_s = p->hbm_bandwidth_bytes_per_s;
    if (p->h2d_pinned_bytes_per_s > 0) r.host_link_bytes_per_s = p->h2d_pinned_bytes_per_s;
  }
  // The step-time model's H200 seconds on this GPU (DeviceRates::time_scale_*): the H200's rates over these;
  // rates measured for the run (`tables`) or on this GPU are costed as they are instead.
  if (tables != nullptr) {
    r.op_rates = tables;
  } else if (const timing::MeasuredGpu* m = timing::measured_gpu(g.id); m != nullptr && g.id.rfind("h200", 0) != 0) {
    r.op_rates = &m->rates();
  } else if (g.id.rfind("h200", 0) != 0) {
    const plan::DeviceRates h = device_rates(find_gpu("h200-sxm-141gb"), gpus_per_node);
    auto ratio = [](double h200, double here) { return h200 > 0 && here > 0 ? h200 / here : 1.0; };
    r.time_scale_matmul = ratio(h.matmul_flops_per_s, r.matmul_flops_per_s);
    r.time_scale_fp32_matmul = ratio(h.fp32_matmul_flops_per_s, r.fp32_matmul_flops_per_s);
    r.time_scale_hbm = ratio(h.hbm_bytes_per_s, r.hbm_bytes_per_s);
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
