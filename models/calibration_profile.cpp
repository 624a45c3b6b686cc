#include "models/calibration_profile.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "models/json_input.h"

namespace memplan {

namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 62;
constexpr double kMaxRate = 1e18;  // far above any device; keeps derived products finite

std::string field(const std::string& key) { return "calibration." + key; }

const nlohmann::json* find(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::optional<int64_t> opt_bytes(const nlohmann::json& j, const char* key) {
  const nlohmann::json* v = find(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(kMaxBytes)) ||
      v->get<int64_t>() < 0 || v->get<int64_t>() > kMaxBytes)
    throw InputError(field(key), dump_short(*v), "must be an integer number of bytes in [0, 2^62]");
  return v->get<int64_t>();
}

int64_t req_bytes(const nlohmann::json& j, const char* key) {
  if (auto b = opt_bytes(j, key)) return *b;
  throw InputError(field(key), "absent", "required");
}

std::optional<double> opt_rate(const nlohmann::json& j, const char* key, const std::string& prefix = "") {
  const nlohmann::json* v = find(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number() || !(v->get<double>() >= 0 && v->get<double>() <= kMaxRate))
    throw InputError(field(prefix + key), dump_short(*v), "must be a finite number >= 0 (at most 1e18) or null");
  return v->get<double>();
}

std::string opt_string(const nlohmann::json& j, const char* key) {
  const nlohmann::json* v = find(j, key);
  if (!v) return "";
  if (!v->is_string()) throw InputError(field(key), dump_short(*v), "must be a string");
  return v->get<std::string>();
}

}  // namespace

CalibrationProfile parse_calibration_profile(std::string_view json_text) {
  const nlohmann::json j = parse_json_input(json_text, "calibration");
  if (!j.is_object()) throw InputError("calibration", dump_short(j), "must be a JSON object");
  const std::string schema = opt_string(j, "schema");
  if (schema != "memplan-calibration/1")
    throw InputError(field("schema"), schema.empty() ? "absent" : schema, "must be \"memplan-calibration/1\"");
  if (const nlohmann::json* q = find(j, "quick")) {
    if (!q->is_boolean()) throw InputError(field("quick"), dump_short(*q), "must be true or false");
    if (q->get<bool>()) throw InputError(field("quick"), "true", "a smoke-test run is not a usable profile");
  }
  CalibrationProfile p;
  p.gpu_name = opt_string(j, "gpu_name");
  p.compute_capability = opt_string(j, "compute_capability");
  p.total_memory_bytes = req_bytes(j, "total_memory_bytes");
  if (p.total_memory_bytes == 0) throw InputError(field("total_memory_bytes"), "0", "must be positive");
  p.free_memory_bytes = req_bytes(j, "free_memory_bytes");
  p.cuda_context_lazy_bytes = req_bytes(j, "cuda_context_lazy_bytes");
  p.cuda_context_eager_bytes = req_bytes(j, "cuda_context_eager_bytes");
  p.cuda_context_plus_cublas_lazy_bytes = opt_bytes(j, "cuda_context_plus_cublas_lazy_bytes");
  p.cuda_malloc_granularity_bytes = req_bytes(j, "cuda_malloc_granularity_bytes");
  p.cublas_workspace_bytes = req_bytes(j, "cublas_workspace_bytes");
  p.cublaslt_workspace_bytes = req_bytes(j, "cublaslt_workspace_bytes");
  const std::pair<const char*, int64_t> within_total[] = {
      {"free_memory_bytes", p.free_memory_bytes},
      {"cuda_context_lazy_bytes", p.cuda_context_lazy_bytes},
      {"cuda_context_eager_bytes", p.cuda_context_eager_bytes},
      {"cuda_context_plus_cublas_lazy_bytes", p.cuda_context_plus_cublas_lazy_bytes.value_or(0)},
      {"cuda_malloc_granularity_bytes", p.cuda_malloc_granularity_bytes},
      {"cublas_workspace_bytes", p.cublas_workspace_bytes},
      {"cublaslt_workspace_bytes", p.cublaslt_workspace_bytes}};
  for (const auto& [key, v] : within_total)
    if (v > p.total_memory_bytes)
      throw InputError(field(key), std::to_string(v),
                       "exceeds total_memory_bytes (" + std::to_string(p.total_memory_bytes) + ")");
  if (const nlohmann::json* g = find(j, "gemm_tflops")) {
    if (!g->is_object()) throw InputError(field("gemm_tflops"), dump_short(*g), "must be an object");
    p.gemm_fp32_tflops = opt_rate(*g, "fp32", "gemm_tflops.");
    p.gemm_tf32_tflops = opt_rate(*g, "tf32", "gemm_tflops.");
    p.gemm_bf16_tflops = opt_rate(*g, "bf16", "gemm_tflops.");
    p.gemm_fp16_tflops = opt_rate(*g, "fp16", "gemm_tflops.");
    p.gemm_fp8_tflops = opt_rate(*g, "fp8", "gemm_tflops.");
  }
  p.hbm_bandwidth_bytes_per_s = opt_rate(j, "hbm_bandwidth_bytes_per_s").value_or(0);
  return p;
}

}  // namespace memplan
