// A calibration profile written by memplan-calibrate (schema memplan-calibration/1, calibrate/README.md):
// the measured figures of one GPU that replace built-in defaults.
//
// Loader rules (from the schema's notes): `schema` is required and exact; `quick: true` (a smoke-test run) is
// refused; unknown keys and the free-form `detail` object are ignored; a null rate means "not available".
// Sizes are integers of bytes in [0, 2^62]; rates are finite numbers >= 0. Cross-field checks: free <= total,
// every context / workspace figure <= total.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memplan {

struct CalibrationProfile {
  std::string gpu_name;
  std::string compute_capability;              // "" when absent
  int64_t total_memory_bytes = 0;              // cudaMemGetInfo total
  int64_t free_memory_bytes = 0;
  int64_t cuda_context_lazy_bytes = 0;
  int64_t cuda_context_eager_bytes = 0;
  std::optional<int64_t> cuda_context_plus_cublas_lazy_bytes;  // optional in the schema
  int64_t cuda_malloc_granularity_bytes = 0;
  int64_t cublas_workspace_bytes = 0;
  int64_t cublaslt_workspace_bytes = 0;
  std::optional<double> gemm_fp32_tflops, gemm_tf32_tflops, gemm_bf16_tflops, gemm_fp16_tflops, gemm_fp8_tflops;
  double hbm_bandwidth_bytes_per_s = 0;
};

// Throws InputError naming the key ("calibration.total_memory_bytes") for anything the rules above refuse.
CalibrationProfile parse_calibration_profile(std::string_view json_text);

}  // namespace memplan
