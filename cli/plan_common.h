// Shared by `plan` and `fit`: device rates for the step-time model and table helpers.
#pragma once
#include <string>

#include "engine/plan/search.h"
#include "models/gpu_specs.h"

namespace memplan::cli {

// Achieved rates of one GPU: the measured calibration profile when data/calibration/<gpu>.json exists
// (H200: GEMM TFLOPS, HBM and pinned host bandwidth), else the vendor figures of data/gpus.json scaled to
// what dense GEMMs and streaming kernels reach in practice (0.7 x peak TFLOPS, 0.8 x peak bandwidth).
// NVLink figures are both directions: one direction is half.
// Throughputs for the time model: vendor figures, replaced by a calibration profile's measurements when one is
// given (path) or shipped for this GPU.
// `tables`: step-time rates measured for this run (cli/time_tables.h read_time_tables), costed unscaled in place of
// the GPU's own or the H200's.
plan::DeviceRates device_rates(const GpuSpec& g, int64_t gpus_per_node, const std::string& calibration_path = "",
                               const timing::OpRates* tables = nullptr);

// "tp2 pp4 dp8 fsdp2+offload" style summary of a parallel configuration.
std::string parallel_text(const plan::ParallelConfig& p);
// Human seconds: "812 ms" / "3.41 s".
std::string seconds_text(double s);
std::string gib(int64_t bytes);  // "12.34"

}  // namespace memplan::cli
