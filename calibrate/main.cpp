// memplan-calibrate: measures one GPU and writes a calibration profile (schema memplan-calibration/1, see
// README.md). Stages, in this order because each can disturb the next:
//   1. context probes in child processes (before this process creates a context of its own);
//   2. this process's context; device properties; total and free memory before any allocation;
//   3. cudaMalloc granularity and library handle memory (before the benchmarks load more kernels);
//   4. GEMM throughput per dtype; 5. HBM and pinned bandwidth; 6. NCCL when more than one GPU is visible.
// Usage: memplan-calibrate [--out FILE] [--device N] [--quick]
//        memplan-calibrate --probe-context [--device N]   (internal: one context probe child)
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#include "benchmarks.h"
#include "check.h"
#include "timing.h"

#ifdef MEMPLAN_CAL_HAVE_CUDNN
#include <cudnn.h>
#endif
#ifdef MEMPLAN_CAL_HAVE_NCCL
#include <nccl.h>
#endif

namespace memplan::cal {
namespace {

struct Args {
  std::string out;
  int device = 0;
  bool quick = false;
  bool probe_child = false;
};

[[noreturn]] void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: memplan-calibrate [--out FILE] [--device N] [--quick]\n"
               "  --out FILE   write the calibration profile here (default: stdout)\n"
               "  --device N   CUDA device to measure (default 0)\n"
               "  --quick      smaller shapes and fewer repeats (a smoke test, not a profile)\n");
  std::exit(code);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(1);
      return argv[++i];
    };
    if (s == "--out") a.out = value();
    else if (s == "--device") a.device = std::atoi(value().c_str());
    else if (s == "--quick") a.quick = true;
    else if (s == "--probe-context") a.probe_child = true;
    else if (s == "-h" || s == "--help") usage(0);
    else usage(1);
  }
  return a;
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) {
    std::fprintf(stderr, "memplan-calibrate: cannot read /proc/self/exe\n");
    std::exit(2);
  }
  return std::string(buf, static_cast<size_t>(n));
}

std::string version_string(int v) {  // CUDA encodes 13.0 as 13000
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The kernel driver's release (e.g. 580.159.03) through NVML, loaded at run time so that the binary does not need
// libnvidia-ml to start; falls back to /proc/driver/nvidia/version, else "unknown".
std::string driver_release() {
  if (void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW)) {
    using InitFn = int (*)();
    using VerFn = int (*)(char*, unsigned);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    auto ver = reinterpret_cast<VerFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    auto shut = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
    char buf[96] = {};
    if (init && ver && shut && init() == 0) {
      const bool ok = ver(buf, sizeof buf) == 0;
      shut();
      if (ok) return buf;
    }
  }
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(f, line)) {
    const auto pos = line.find("Kernel Module");
    if (pos != std::string::npos) {
      std::string rest = line.substr(pos + 13);
      rest.erase(0, rest.find_first_not_of(' '));
      return rest.substr(0, rest.find(' '));
    }
  }
  return "unknown";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

JsonObject environment(double wall_s) {
  JsonObject e;
  int drv = 0, rt = 0;
  CUDA_CHECK(cudaDriverGetVersion(&drv));
  CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  e.set_str("driver", driver_release());
  e.set_str("driver_cuda_version", version_string(drv));
  e.set_str("cuda_runtime", version_string(rt));
  int maj = 0, min = 0, pat = 0;
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &maj));
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &min));
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &pat));
  e.set_str("cublas", std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(pat));
#ifdef MEMPLAN_CAL_HAVE_CUDNN
  e.set_int("cudnn", static_cast<long long>(cudnnGetVersion()));
#else
  e.set_null("cudnn");
#endif
#ifdef MEMPLAN_CAL_HAVE_NCCL
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) e.set_int("nccl", nccl);
  else e.set_null("nccl");
#else
  e.set_null("nccl");
#endif
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  e.set_str("CUDA_MODULE_LOADING", loading ? loading : "(unset: driver default, lazy)");
  e.set_str("date", utc_now());
  e.set_num("calibration_wall_s", wall_s);
  return e;
}

int run(const Args& args) {
  const auto t0 = std::chrono::steady_clock::now();
  progress("memplan-calibrate: device %d%s", args.device, args.quick ? " (quick)" : "");

  // 1. Context probes: children only; this process has no context yet.
  ContextSizes ctx = probe_context_sizes(self_exe(), args.device);

  // 2. Our own context, properties, memory before any allocation.
  CUDA_CHECK(cudaSetDevice(args.device));
  CUDA_CHECK(cudaFree(nullptr));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, args.device));
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  int device_count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&device_count));
  progress("%s, compute capability %d.%d, %.0f MiB total, %.0f MiB free, %d GPU(s) visible", prop.name,
           prop.major, prop.minor, total_b / 1048576.0, free_b / 1048576.0, device_count);

  // 3-6.
  LibraryMemory lib = measure_library_memory();
  GemmResult gemm = bench_gemm(prop.major, prop.minor, args.quick);
  BandwidthResult bw = bench_bandwidth(args.quick);
  NcclResult nccl = bench_nccl(device_count);
  CUDA_CHECK(cudaSetDevice(args.device));

  JsonObject p;
  p.set_str("schema", "memplan-calibration/1");
  p.set_str("gpu_name", prop.name);
  p.set_str("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
  p.set_int("total_memory_bytes", static_cast<long long>(total_b));
  p.set_int("free_memory_bytes", static_cast<long long>(free_b));
  p.set_int("multiprocessor_count", prop.multiProcessorCount);
  p.set_int("l2_cache_bytes", prop.l2CacheSize);
  p.set_int("cuda_context_lazy_bytes", ctx.lazy_bytes);
  p.set_int("cuda_context_eager_bytes", ctx.eager_bytes);
  p.set_int("cuda_context_plus_cublas_lazy_bytes", ctx.lazy_plus_cublas_bytes);
  p.set_int("cuda_context_plus_cublas_eager_bytes", ctx.eager_plus_cublas_bytes);
  p.set_int("cuda_malloc_granularity_bytes", lib.malloc_granularity_bytes);
  p.set_int("cublas_workspace_bytes", lib.cublas_workspace_bytes);
  p.set_int("cublaslt_workspace_bytes", lib.cublaslt_workspace_bytes);
  JsonObject tf;
  tf.set_num("fp32", gemm.fp32).set_num("tf32", gemm.tf32).set_num("bf16", gemm.bf16);
  tf.set_num("fp16", gemm.fp16).set_num("fp8", gemm.fp8);
  p.set_obj("gemm_tflops", std::move(tf));
  p.set_num("hbm_bandwidth_bytes_per_s", bw.hbm_bytes_per_s);
  p.set_num("h2d_pinned_bytes_per_s", bw.h2d_bytes_per_s);
  p.set_num("d2h_pinned_bytes_per_s", bw.d2h_bytes_per_s);
  if (nccl.measured) {
    p.set_obj("nccl", std::move(nccl.detail));
  } else {
    p.set_null("nccl");
    p.set_str("nccl_status", nccl.reason);
  }
  p.set_bool("quick", args.quick);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.set_obj("environment", environment(wall_s));
  JsonObject detail;
  detail.set_obj("context", std::move(ctx.detail));
  detail.set_obj("library_memory", std::move(lib.detail));
  detail.set_obj("gemm", std::move(gemm.detail));
  detail.set_obj("bandwidth", std::move(bw.detail));
  p.set_obj("detail", std::move(detail));

  const std::string text = p.dump() + "\n";
  if (args.out.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    std::ofstream f(args.out);
    f << text;
    if (!f) {
      std::fprintf(stderr, "memplan-calibrate: cannot write %s\n", args.out.c_str());
      return 2;
    }
  }
  progress("done in %.1f s%s%s", wall_s, args.out.empty() ? "" : ", profile written to ", args.out.c_str());
  return 0;
}

}  // namespace
}  // namespace memplan::cal

int main(int argc, char** argv) {
  const memplan::cal::Args args = memplan::cal::parse(argc, argv);
  if (args.probe_child) return memplan::cal::run_context_child(args.device);
  return memplan::cal::run(args);
}
