#include "models/calibration_profile.h"

#include "engine/errors.h"
#include "models/zoo_embedded.h"
#include "models/json_input.h"

namespace memplan {

namespace {
int64_t get_bytes(const nlohmann::json& d, const char* key, bool required) {
  if (!d.contains(key) || d.at(key).is_null()) {
    if (required) throw InputError(std::string("calibration.") + key, "missing", "required field");
    return 0;
  }
  const auto& v = d.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0)
    throw InputError(std::string("calibration.") + key, dump_short(v, 40), "must be a non-negative integer of bytes");
  return v.get<int64_t>();
}
double get_rate(const nlohmann::json& d, const char* key, const char* prefix = "calibration.") {
  if (!d.contains(key) || d.at(key).is_null()) return 0;
  const auto& v = d.at(key);
  if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e18)
    throw InputError(std::string(prefix) + key, dump_short(v, 40), "must be a non-negative finite number");
  return v.get<double>();
}
}  // namespace

CalibrationProfile parse_calibration_profile(const nlohmann::json& doc) {
  if (!doc.is_object()) throw InputError("calibration", dump_short(doc, 40), "must be a JSON object");
  if (!doc.contains("schema") || doc.at("schema") != "memplan-calibration/1")
    throw InputError("calibration.schema", doc.contains("schema") ? dump_short(doc.at("schema")) : "missing",
                     "expected \"memplan-calibration/1\"");
  CalibrationProfile p;
  if (doc.contains("gpu_name") && doc.at("gpu_name").is_string()) p.gpu_name = doc.at("gpu_name").get<std::string>();
  if (doc.contains("compute_capability") && doc.at("compute_capability").is_string())
    p.compute_capability = doc.at("compute_capability").get<std::string>();
  p.total_memory_bytes = get_bytes(doc, "total_memory_bytes", true);
  if (p.total_memory_bytes == 0) throw InputError("calibration.total_memory_bytes", "0", "must be positive");
  p.cuda_context_lazy_bytes = get_bytes(doc, "cuda_context_lazy_bytes", true);
  p.cuda_context_plus_cublas_lazy_bytes = get_bytes(doc, "cuda_context_plus_cublas_lazy_bytes", false);
  const int64_t g = get_bytes(doc, "cuda_malloc_granularity_bytes", false);
  if (g > 0) p.cuda_malloc_granularity_bytes = g;
  if (doc.contains("gemm_tflops") && !doc.at("gemm_tflops").is_null()) {
    const auto& t = doc.at("gemm_tflops");
    if (!t.is_object()) throw InputError("calibration.gemm_tflops", dump_short(t, 40), "must be an object");
    const char* g = "calibration.gemm_tflops.";
    p.bf16_tflops = get_rate(t, "bf16", g);
    p.fp16_tflops = get_rate(t, "fp16", g);
    p.tf32_tflops = get_rate(t, "tf32", g);
    p.fp32_tflops = get_rate(t, "fp32", g);
    p.fp8_tflops = get_rate(t, "fp8", g);
  }
  p.hbm_bandwidth_bytes_per_s = get_rate(doc, "hbm_bandwidth_bytes_per_s");
  p.h2d_pinned_bytes_per_s = get_rate(doc, "h2d_pinned_bytes_per_s");
  p.d2h_pinned_bytes_per_s = get_rate(doc, "d2h_pinned_bytes_per_s");
  return p;
}

CalibrationProfile load_calibration_profile(const std::string& path) {
  // Regular files only, size-capped and depth-capped (models/json_input.h).
  const nlohmann::json doc = parse_json_input(read_input_file(path, "--calibration"), "--calibration", path);
  return parse_calibration_profile(doc);
}

std::optional<CalibrationProfile> shipped_calibration_profile(const std::string& stem) {
  for (const auto& f : calibration_embedded::files())
    if (stem == f.name) return parse_calibration_profile(nlohmann::json::parse(f.json));
  return std::nullopt;
}

}  // namespace memplan
