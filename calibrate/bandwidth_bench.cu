// Device-memory (HBM) copy bandwidth and pinned host<->device bandwidth.
//
// HBM: a 1 GiB buffer copied device-to-device by cudaMemcpyAsync and by a plain 16-byte-per-thread grid-stride
// copy kernel; bandwidth counts bytes read + bytes written (2 x size), the convention of a copy's traffic.
// The buffer is ~17x the H200's 60 MB L2, so the cache cannot serve it. The kernel's copy is verified.
// Pinned: a 256 MiB cudaMallocHost buffer copied each way with cudaMemcpyAsync; bytes = size.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "benchmarks.h"
#include "check.h"
#include "timing.h"

namespace memplan::cal {
namespace {

__global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void iota_words(uint32_t* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<uint32_t>(i * 2654435761u);
}

__global__ void count_mismatch(const uint32_t* p, size_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += p[i] != static_cast<uint32_t>(i * 2654435761u);
  if (local) atomicAdd(bad, local);
}

}  // namespace

BandwidthResult bench_bandwidth(bool quick) {
  BandwidthResult r;
  const size_t bytes = quick ? (256u << 20) : (1ull << 30);
  const int reps = quick ? 5 : 20;
  void *src, *dst;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  iota_words<<<1024, 256>>>(static_cast<uint32_t*>(src), bytes / 4);
  KERNEL_CHECK();
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaDeviceSynchronize());

  const double memcpy_ms = time_median_ms(stream, 3, reps, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  const double memcpy_bw = 2.0 * bytes / (memcpy_ms * 1e-3);
  progress("HBM cudaMemcpy D2D: %.0f GB/s (read + write)", memcpy_bw / 1e9);

  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int blocks = sms * 8, threads = 512;
  CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream));
  const double kernel_ms = time_median_ms(stream, 3, reps, [&] {
    copy_kernel<<<blocks, threads, 0, stream>>>(static_cast<const int4*>(src), static_cast<int4*>(dst),
                                                bytes / sizeof(int4));
    KERNEL_CHECK();
  });
  const double kernel_bw = 2.0 * bytes / (kernel_ms * 1e-3);
  unsigned long long* bad;
  CUDA_CHECK(cudaMalloc(&bad, sizeof *bad));
  CUDA_CHECK(cudaMemset(bad, 0, sizeof *bad));
  count_mismatch<<<1024, 256>>>(static_cast<const uint32_t*>(dst), bytes / 4, bad);
  KERNEL_CHECK();
  unsigned long long h_bad = 0;
  CUDA_CHECK(cudaMemcpy(&h_bad, bad, sizeof h_bad, cudaMemcpyDeviceToHost));
  if (h_bad != 0) {
    std::fprintf(stderr, "memplan-calibrate: copy kernel wrote %llu wrong words\n", h_bad);
    std::exit(2);
  }
  progress("HBM copy kernel:    %.0f GB/s (read + write)", kernel_bw / 1e9);
  r.hbm_bytes_per_s = std::max(memcpy_bw, kernel_bw);

  const size_t host_bytes = quick ? (64u << 20) : (256u << 20);
  void* pinned;
  CUDA_CHECK(cudaMallocHost(&pinned, host_bytes));
  std::memset(pinned, 0x5a, host_bytes);
  const double h2d_ms = time_median_ms(stream, 2, reps / 2, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst, pinned, host_bytes, cudaMemcpyHostToDevice, stream));
  });
  r.h2d_bytes_per_s = host_bytes / (h2d_ms * 1e-3);
  progress("pinned H2D: %.1f GB/s", r.h2d_bytes_per_s / 1e9);
  const double d2h_ms = time_median_ms(stream, 2, reps / 2, [&] {
    CUDA_CHECK(cudaMemcpyAsync(pinned, src, host_bytes, cudaMemcpyDeviceToHost, stream));
  });
  r.d2h_bytes_per_s = host_bytes / (d2h_ms * 1e-3);
  progress("pinned D2H: %.1f GB/s", r.d2h_bytes_per_s / 1e9);

  JsonObject hbm;
  hbm.set_int("buffer_bytes", static_cast<long long>(bytes));
  hbm.set_num("memcpy_d2d_bytes_per_s", memcpy_bw);
  hbm.set_num("copy_kernel_bytes_per_s", kernel_bw);
  hbm.set_str("counting", "bytes read + bytes written per copy");
  hbm.set_str("copy_kernel", "int4 grid-stride, " + std::to_string(blocks) + " blocks x " +
                                 std::to_string(threads) + " threads");
  r.detail.set_obj("hbm", std::move(hbm));
  JsonObject pin;
  pin.set_int("buffer_bytes", static_cast<long long>(host_bytes));
  pin.set_num("h2d_median_ms", h2d_ms);
  pin.set_num("d2h_median_ms", d2h_ms);
  r.detail.set_obj("pinned", std::move(pin));
  r.detail.set_int("repeats", reps);

  CUDA_CHECK(cudaFreeHost(pinned));
  CUDA_CHECK(cudaFree(bad));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return r;
}

}  // namespace memplan::cal
