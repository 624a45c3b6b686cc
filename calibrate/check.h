// Error checks for every CUDA runtime, cuBLAS/cuBLASLt, cuDNN and NCCL call and every kernel launch.
// A failed check prints the call, the library's message and file:line to stderr and exits with status 2:
// a calibration profile is either measured or absent, never half-measured.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace memplan::cal {

[[noreturn]] inline void check_failed(const char* call, const char* detail, const char* file, int line) {
  std::fprintf(stderr, "memplan-calibrate: %s failed: %s (%s:%d)\n", call, detail, file, line);
  std::exit(2);
}

}  // namespace memplan::cal

#define CUDA_CHECK(expr)                                                                   \
  do {                                                                                     \
    cudaError_t cal_err_ = (expr);                                                         \
    if (cal_err_ != cudaSuccess)                                                           \
      ::memplan::cal::check_failed(#expr, cudaGetErrorString(cal_err_), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(expr)                                                                     \
  do {                                                                                         \
    cublasStatus_t cal_st_ = (expr);                                                           \
    if (cal_st_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::memplan::cal::check_failed(#expr, cublasGetStatusString(cal_st_), __FILE__, __LINE__); \
  } while (0)

// After every <<<...>>> launch: launch-configuration errors surface here, execution errors at the next sync.
#define KERNEL_CHECK() CUDA_CHECK(cudaGetLastError())
