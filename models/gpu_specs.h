// GPU specifications from data/gpus.json (embedded in the binary): memory, bandwidth, throughput.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

struct GpuSpec {
  std::string id;                 // "h200-sxm", "rtx-4090", ...
  std::string name;               // vendor name
  int64_t memory_bytes = 0;       // total memory as the driver reports it
  double memory_bandwidth_bytes_per_s = 0;
  double bf16_tflops = 0, fp16_tflops = 0, tf32_tflops = 0, fp32_tflops = 0, fp8_tflops = 0;
  double nvlink_bytes_per_s = 0, pcie_bytes_per_s = 0;
  int64_t cuda_context_bytes = 0;  // 0 when unknown
  std::string compute_capability;
};

// The table embedded from data/gpus.json, parsed once.
const std::vector<GpuSpec>& gpu_specs();
// Parses a GPU spec document (the data/gpus.json schema). Throws InputError naming the entry and key
// ("gpus[3].memory_bytes") for a missing or ill-typed id, name or memory_bytes, a negative or non-finite
// figure, or a duplicate id; other keys are ignored.
std::vector<GpuSpec> parse_gpu_specs(std::string_view json_text);
// Finds by id, or by a case-insensitive substring of id or name ("h200", "4090", "a100-80"). Throws InputError
// naming `field` when nothing or more than one GPU matches.
const GpuSpec& find_gpu(const std::string& query, const std::string& field = "gpu");

}  // namespace memplan
