// Timing helpers shared by the benchmarks.
// Contract: time_median_ms runs `warmup` untimed calls of fn (module loading, heuristics and clocks settle there),
// then `reps` calls each bracketed by its own pair of CUDA events on `stream`, and returns the median in ms.
// fn must enqueue its work on `stream` only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "check.h"

namespace memplan::cal {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <class F>
double time_median_ms(cudaStream_t stream, int warmup, int reps, F&& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(ev[2 * i], stream));
    fn();
    CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms(reps);
  for (int i = 0; i < reps; ++i) {
    float t = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
    ms[i] = t;
  }
  for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
  return median(ms);
}

// One progress line per benchmark on stderr, prefixed with seconds since the first call.
inline void progress(const char* fmt, ...) {
  static const auto t0 = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "[calibrate %6.1fs] ", s);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

// Bytes of device memory in use as the driver sees it (all processes, all contexts): total - free.
inline long long device_used_bytes() {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return static_cast<long long>(total_b) - static_cast<long long>(free_b);
}

}  // namespace memplan::cal
