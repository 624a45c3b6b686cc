#include "models/gpu_specs.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "models/zoo_embedded.h"

namespace memplan {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
double num_or_zero(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j.at(k).is_number() ? j.at(k).get<double>() : 0.0;
}

std::vector<GpuSpec> load() {
  std::vector<GpuSpec> out;
  for (const auto& f : data_embedded::files()) {
    if (std::string(f.name) != "gpus") continue;
    const auto doc = nlohmann::json::parse(f.json);
    for (const auto& g : doc.at("gpus")) {
      GpuSpec s;
      s.id = g.at("id").get<std::string>();
      s.name = g.at("name").get<std::string>();
      s.memory_bytes = g.at("memory_bytes").get<int64_t>();
      s.memory_bandwidth_bytes_per_s = num_or_zero(g, "memory_bandwidth_bytes_per_s");
      if (g.contains("dense_tflops")) {
        const auto& t = g.at("dense_tflops");
        s.bf16_tflops = num_or_zero(t, "bf16");
        s.fp16_tflops = num_or_zero(t, "fp16");
        s.tf32_tflops = num_or_zero(t, "tf32");
        s.fp32_tflops = num_or_zero(t, "fp32");
        s.fp8_tflops = num_or_zero(t, "fp8");
      }
      s.nvlink_bytes_per_s = num_or_zero(g, "nvlink_bytes_per_s");
      s.pcie_bytes_per_s = num_or_zero(g, "pcie_bytes_per_s");
      s.cuda_context_bytes = static_cast<int64_t>(num_or_zero(g, "cuda_context_bytes"));
      if (g.contains("compute_capability") && g.at("compute_capability").is_string())
        s.compute_capability = g.at("compute_capability").get<std::string>();
      out.push_back(std::move(s));
    }
  }
  return out;
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
