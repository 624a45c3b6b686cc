// Entry points of the benchmark families. Each measures on the current device, prints one progress line per
// benchmark to stderr, and returns its headline numbers plus a `detail` object for the profile.
#pragma once

#include <string>

#include "json_writer.h"

namespace memplan::cal {

// context_probe.cpp — CUDA context size, measured in child processes (see the file's header).
struct ContextSizes {
  long long lazy_bytes = -1;
  long long eager_bytes = -1;
  long long lazy_plus_cublas_bytes = -1;   // context + cublasCreate + one GEMM, per process
  long long eager_plus_cublas_bytes = -1;
  JsonObject detail;
};
ContextSizes probe_context_sizes(const std::string& self_exe, int device);
int run_context_child(int device);  // child side of the probe: `memplan-calibrate --probe-context`

// library_memory.cpp — cudaMalloc granularity and what library handles take outside any allocator.
struct LibraryMemory {
  long long malloc_granularity_bytes = -1;
  long long cublas_workspace_bytes = -1;
  long long cublaslt_workspace_bytes = -1;
  JsonObject detail;
};
LibraryMemory measure_library_memory();

// gemm_bench.cu — achieved GEMM throughput per dtype; a dtype the device cannot run is NaN (null in JSON).
struct GemmResult {
  double fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0;  // best TFLOP/s over the shapes
  JsonObject detail;
};
GemmResult bench_gemm(int cc_major, int cc_minor, bool quick);

// bandwidth_bench.cu — HBM copy bandwidth and pinned host<->device bandwidth.
struct BandwidthResult {
  double hbm_bytes_per_s = 0;  // best of cudaMemcpy D2D and a copy kernel; bytes read + bytes written
  double h2d_bytes_per_s = 0;
  double d2h_bytes_per_s = 0;
  JsonObject detail;
};
BandwidthResult bench_bandwidth(bool quick);

// nccl_bench.cpp — all-reduce / all-gather over every visible GPU. `measured` false => skipped, `reason` says why.
struct NcclResult {
  bool measured = false;
  std::string reason;
  JsonObject detail;
};
NcclResult bench_nccl(int device_count);

}  // namespace memplan::cal
