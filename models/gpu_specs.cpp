#include "models/gpu_specs.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "models/json_input.h"
#include "models/zoo_embedded.h"

namespace memplan {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
// Optional figures: absent or null -> 0; otherwise a finite number >= 0 (bounded so later products stay finite).
double opt_figure(const nlohmann::json& j, const char* k, const std::string& where) {
  if (!j.contains(k) || j.at(k).is_null()) return 0.0;
  const auto& v = j.at(k);
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1e18))
    throw InputError(where + k, dump_short(v), "must be a non-negative number (at most 1e18) or null");
  return v.get<double>();
}

std::string req_string(const nlohmann::json& g, const char* k, const std::string& where) {
  if (!g.contains(k) || !g.at(k).is_string() || g.at(k).get<std::string>().empty())
    throw InputError(where + k, g.contains(k) ? dump_short(g.at(k)) : "absent", "must be a non-empty string");
  return g.at(k).get<std::string>();
}

int64_t req_bytes(const nlohmann::json& g, const char* k, const std::string& where) {
  const auto& v = g.contains(k) ? g.at(k) : nlohmann::json();
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{1} << 62) ||
      v.get<int64_t>() <= 0 || v.get<int64_t>() > int64_t{1} << 62)
    throw InputError(where + k, g.contains(k) ? dump_short(v) : "absent", "must be a positive integer of bytes below 2^62");
  return v.get<int64_t>();
}
}  // namespace

std::vector<GpuSpec> parse_gpu_specs(std::string_view json_text) {
  const nlohmann::json doc = parse_json_input(json_text, "gpus");
  if (!doc.is_object() || !doc.contains("gpus") || !doc.at("gpus").is_array())
    throw InputError("gpus", dump_short(doc), "must be an object with a \"gpus\" array");
  std::vector<GpuSpec> out;
  for (const auto& g : doc.at("gpus")) {
    const std::string where = "gpus[" + std::to_string(out.size()) + "].";
    if (!g.is_object()) throw InputError("gpus[" + std::to_string(out.size()) + "]", dump_short(g), "must be an object");
    GpuSpec s;
    s.id = req_string(g, "id", where);
    s.name = req_string(g, "name", where);
    for (const auto& prev : out)
      if (prev.id == s.id) throw InputError(where + "id", s.id, "duplicate GPU id");
    s.memory_bytes = req_bytes(g, "memory_bytes", where);
    s.memory_bandwidth_bytes_per_s = opt_figure(g, "memory_bandwidth_bytes_per_s", where);
    if (g.contains("dense_tflops") && !g.at("dense_tflops").is_null()) {
      const auto& t = g.at("dense_tflops");
      if (!t.is_object()) throw InputError(where + "dense_tflops", dump_short(t), "must be an object");
      const std::string tw = where + "dense_tflops.";
      s.bf16_tflops = opt_figure(t, "bf16", tw);
      s.fp16_tflops = opt_figure(t, "fp16", tw);
      s.tf32_tflops = opt_figure(t, "tf32", tw);
      s.fp32_tflops = opt_figure(t, "fp32", tw);
      s.fp8_tflops = opt_figure(t, "fp8", tw);
    }
    s.nvlink_bytes_per_s = opt_figure(g, "nvlink_bytes_per_s", where);
    s.pcie_bytes_per_s = opt_figure(g, "pcie_bytes_per_s", where);
    // Bounded by 1e18 above, so the conversion is defined; a context is far below the device's memory.
    s.cuda_context_bytes = static_cast<int64_t>(opt_figure(g, "cuda_context_bytes", where));
    if (s.cuda_context_bytes > s.memory_bytes)
      throw InputError(where + "cuda_context_bytes", std::to_string(s.cuda_context_bytes), "exceeds memory_bytes");
    if (g.contains("compute_capability") && g.at("compute_capability").is_string())
      s.compute_capability = g.at("compute_capability").get<std::string>();
    out.push_back(std::move(s));
  }
  return out;
}

namespace {
std::vector<GpuSpec> load() {
  for (const auto& f : data_embedded::files())
    if (std::string(f.name) == "gpus") return parse_gpu_specs(f.json);
  return {};
}
}  // namespace

const std::vector<GpuSpec>& gpu_specs() {
  static const std::vector<GpuSpec> kSpecs = load();
  return kSpecs;
}

const GpuSpec& find_gpu(const std::string& query, const std::string& field) {
  const std::string q = lower(query);
  const GpuSpec* hit = nullptr;
  int hits = 0;
  for (const auto& g : gpu_specs()) {
    if (lower(g.id) == q) return g;
    if (lower(g.id).find(q) != std::string::npos || lower(g.name).find(q) != std::string::npos) {
      hit = &g;
      ++hits;
    }
  }
  if (hits == 1) return *hit;
  std::string known;
  for (const auto& g : gpu_specs()) known += (known.empty() ? "" : ", ") + g.id;
  throw InputError(field, query, hits == 0 ? "unknown GPU; known: " + known : "ambiguous GPU; known: " + known);
}

}  // namespace memplan
