// A calibration profile written by `memplan calibrate` (schema memplan-calibration/1, calibrate/README.md):
// what one real GPU measured — memory, CUDA context, library handles, GEMM throughput, bandwidths.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace memplan {

struct CalibrationProfile {
  std::string gpu_name;
  std::string compute_capability;
  int64_t total_memory_bytes = 0;
  int64_t cuda_context_lazy_bytes = 0;
  int64_t cuda_context_plus_cublas_lazy_bytes = 0;
  int64_t cuda_malloc_granularity_bytes = 2 << 20;
  double bf16_tflops = 0, fp16_tflops = 0, tf32_tflops = 0, fp32_tflops = 0, fp8_tflops = 0;
  double hbm_bandwidth_bytes_per_s = 0;
  double h2d_pinned_bytes_per_s = 0, d2h_pinned_bytes_per_s = 0;
};

// Throws InputError naming the field for a malformed or foreign document.
CalibrationProfile parse_calibration_profile(const nlohmann::json& doc);
CalibrationProfile load_calibration_profile(const std::string& path);

}  // namespace memplan
