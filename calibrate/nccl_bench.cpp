// NCCL all-reduce and all-gather bandwidth over every visible GPU, from one process (ncclCommInitAll).
// Skipped with a reason when fewer than two GPUs are visible or the build had no nccl.h.
// Figures follow nccl-tests: algbw = bytes / time; busbw = algbw * 2(n-1)/n (all-reduce), * (n-1)/n (all-gather),
// where bytes is the full buffer (all-reduce) or the gathered output (all-gather). Host-timed around a group call
// plus a sync of every device, median of repeats after warm-up.
// NVLink multicast (NVLS) is forced off: on the shared machines a program using it can take the host's GPUs out.
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks.h"
#include "check.h"
#include "timing.h"

#ifdef MEMPLAN_CAL_HAVE_NCCL
#include <nccl.h>
#define NCCL_CHECK(expr)                                                                     \
  do {                                                                                       \
    ncclResult_t cal_r_ = (expr);                                                            \
    if (cal_r_ != ncclSuccess)                                                               \
      ::memplan::cal::check_failed(#expr, ncclGetErrorString(cal_r_), __FILE__, __LINE__);  \
  } while (0)
#endif

namespace memplan::cal {

#ifdef MEMPLAN_CAL_HAVE_NCCL
namespace {

template <class F>
double host_median_ms(int ndev, int warmup, int reps, F&& fn) {
  auto sync_all = [&] {
    for (int d = 0; d < ndev; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  };
  for (int i = 0; i < warmup; ++i) fn();
  sync_all();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    sync_all();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

}  // namespace
#endif

NcclResult bench_nccl(int device_count) {
  NcclResult r;
  if (device_count < 2) {
    r.reason = "skipped: " + std::to_string(device_count) + " GPU";
    progress("NCCL: %s", r.reason.c_str());
    return r;
  }
#ifndef MEMPLAN_CAL_HAVE_NCCL
  r.reason = "skipped: built without nccl.h";
  progress("NCCL: %s", r.reason.c_str());
#else
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  const int n = device_count;
  const size_t bytes = 256u << 20;  // per-rank all-reduce buffer, and the all-gather output
  const size_t count = bytes / sizeof(float);
  std::vector<ncclComm_t> comms(n);
  NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));
  std::vector<float*> buf(n), out(n);
  std::vector<cudaStream_t> streams(n);
  for (int d = 0; d < n; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaMalloc(&buf[d], bytes));
    CUDA_CHECK(cudaMalloc(&out[d], bytes));
    CUDA_CHECK(cudaMemset(buf[d], 0, bytes));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
  }
  const double ar_ms = host_median_ms(n, 3, 10, [&] {
    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < n; ++d)
      NCCL_CHECK(ncclAllReduce(buf[d], buf[d], count, ncclFloat, ncclSum, comms[d], streams[d]));
    NCCL_CHECK(ncclGroupEnd());
  });
  const double ag_ms = host_median_ms(n, 3, 10, [&] {
    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < n; ++d)
      NCCL_CHECK(ncclAllGather(buf[d], out[d], count / n, ncclFloat, comms[d], streams[d]));
    NCCL_CHECK(ncclGroupEnd());
  });
  const double ar_alg = bytes / (ar_ms * 1e-3), ag_alg = bytes / (ag_ms * 1e-3);
  JsonObject ar, ag;
  ar.set_int("bytes", static_cast<long long>(bytes)).set_num("median_ms", ar_ms);
  ar.set_num("algbw_bytes_per_s", ar_alg).set_num("busbw_bytes_per_s", ar_alg * 2.0 * (n - 1) / n);
  ag.set_int("bytes", static_cast<long long>(bytes)).set_num("median_ms", ag_ms);
  ag.set_num("algbw_bytes_per_s", ag_alg).set_num("busbw_bytes_per_s", ag_alg * (n - 1.0) / n);
  int version = 0;
  NCCL_CHECK(ncclGetVersion(&version));
  r.detail.set_int("world_size", n).set_int("nccl_version", version).set_str("dtype", "fp32");
  r.detail.set_obj("all_reduce", std::move(ar));
  r.detail.set_obj("all_gather", std::move(ag));
  progress("NCCL all-reduce busbw %.0f GB/s, all-gather busbw %.0f GB/s over %d GPUs",
           ar_alg * 2.0 * (n - 1) / n / 1e9, ag_alg * (n - 1.0) / n / 1e9, n);
  for (int d = 0; d < n; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaFree(buf[d]));
    CUDA_CHECK(cudaFree(out[d]));
    CUDA_CHECK(cudaStreamDestroy(streams[d]));
    NCCL_CHECK(ncclCommDestroy(comms[d]));
  }
  CUDA_CHECK(cudaSetDevice(0));
  r.measured = true;
#endif
  return r;
}

}  // namespace memplan::cal
