// Device memory that the CUDA runtime and the math libraries take outside any framework allocator.
//
// Every figure is a difference of total - free (cudaMemGetInfo) around one action, after a synchronize, in this
// process whose context already exists. The driver reports free memory in 2 MiB pages on current GPUs, so every
// figure here is a multiple of that page.
//   1. cudaMalloc granularity: one 1-byte cudaMalloc (after a warm-up allocation), 32 of them averaged,
//      and one of 2 MiB + 1 byte.
//   2. cuBLAS: create handle #1, run its first GEMM, create handle #2, run its first GEMM. The first GEMM of
//      handle #1 also loads cuBLAS kernels (lazy loading); handle #2 sees them loaded, so
//      cublas_workspace_bytes = handle #2's create + first GEMM = what one more (thread, stream) handle costs.
//   3. cuBLASLt: the same with cublasLtMatmul (bf16, caller-provided workspace allocated beforehand).
//   4. cuDNN, when built with it: two handles, the same way.
#include <vector>

#include "benchmarks.h"
#include "check.h"
#include "lt_plan.h"
#include "timing.h"

#ifdef MEMPLAN_CAL_HAVE_CUDNN
#include <cudnn.h>
#define CUDNN_CHECK(expr)                                                                    \
  do {                                                                                       \
    cudnnStatus_t cal_st_ = (expr);                                                          \
    if (cal_st_ != CUDNN_STATUS_SUCCESS)                                                     \
      ::memplan::cal::check_failed(#expr, cudnnGetErrorString(cal_st_), __FILE__, __LINE__); \
  } while (0)
#endif

namespace memplan::cal {
namespace {

long long synced_used() {
  CUDA_CHECK(cudaDeviceSynchronize());
  return device_used_bytes();
}

JsonObject malloc_granularity(long long& single_bytes) {
  void* warm = nullptr;
  CUDA_CHECK(cudaMalloc(&warm, 1));
  CUDA_CHECK(cudaFree(warm));

  long long u0 = synced_used();
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, 1));
  single_bytes = synced_used() - u0;
  CUDA_CHECK(cudaFree(p));

  constexpr int kMany = 32;
  std::vector<void*> ps(kMany);
  u0 = synced_used();
  for (auto& q : ps) CUDA_CHECK(cudaMalloc(&q, 1));
  const long long many = synced_used() - u0;
  for (auto q : ps) CUDA_CHECK(cudaFree(q));

  u0 = synced_used();
  CUDA_CHECK(cudaMalloc(&p, (2 << 20) + 1));
  const long long two_mib_plus_one = synced_used() - u0;
  CUDA_CHECK(cudaFree(p));

  JsonObject d;
  d.set_int("one_byte_malloc_bytes", single_bytes);
  d.set_num("one_byte_malloc_avg_of_32_bytes", static_cast<double>(many) / kMany);
  d.set_int("two_mib_plus_one_malloc_bytes", two_mib_plus_one);
  return d;
}

JsonObject cublas_memory(long long& per_handle_bytes) {
  constexpr int n = 1024;
  float *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, sizeof(float) * n * n));
  CUDA_CHECK(cudaMalloc(&b, sizeof(float) * n * n));
  CUDA_CHECK(cudaMalloc(&c, sizeof(float) * n * n));
  CUDA_CHECK(cudaMemset(a, 0, sizeof(float) * n * n));
  CUDA_CHECK(cudaMemset(b, 0, sizeof(float) * n * n));
  const float alpha = 1.f, beta = 0.f;
  auto gemm = [&](cublasHandle_t h) {
    CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n));
  };
  cublasHandle_t h1, h2;
  const long long u0 = synced_used();
  CUBLAS_CHECK(cublasCreate(&h1));
  const long long u1 = synced_used();
  gemm(h1);
  const long long u2 = synced_used();
  CUBLAS_CHECK(cublasCreate(&h2));
  const long long u3 = synced_used();
  gemm(h2);
  const long long u4 = synced_used();
  // What PyTorch does next: hand the handle a workspace of its own (32 MiB on Hopper). Does cuBLAS release its
  // internal one? Then what does destroying the handle give back?
  void* ws = nullptr;
  CUDA_CHECK(cudaMalloc(&ws, 32u << 20));
  const long long u5 = synced_used();
  CUBLAS_CHECK(cublasSetWorkspace(h2, ws, 32u << 20));
  const long long u6 = synced_used();
  gemm(h2);
  const long long u7 = synced_used();
  CUBLAS_CHECK(cublasDestroy(h2));
  const long long u8 = synced_used();
  CUBLAS_CHECK(cublasDestroy(h1));
  CUDA_CHECK(cudaFree(ws));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));

  per_handle_bytes = u4 - u2;
  JsonObject d;
  d.set_int("first_handle_create_bytes", u1 - u0);
  d.set_int("first_handle_first_sgemm_bytes", u2 - u1);
  d.set_int("second_handle_create_bytes", u3 - u2);
  d.set_int("second_handle_first_sgemm_bytes", u4 - u3);
  d.set_int("first_use_total_bytes", u2 - u0);
  d.set_int("set_user_workspace_32mib_delta_bytes", u6 - u5);
  d.set_int("gemm_after_set_workspace_delta_bytes", u7 - u6);
  d.set_int("destroy_handle_delta_bytes", u8 - u7);
  return d;
}

JsonObject cublaslt_memory(long long& per_handle_bytes) {
  constexpr int n = 1024;
  constexpr size_t kWorkspace = 32u << 20;
  void *a, *b, *c, *ws;
  CUDA_CHECK(cudaMalloc(&a, 2 * n * n));
  CUDA_CHECK(cudaMalloc(&b, 2 * n * n));
  CUDA_CHECK(cudaMalloc(&c, 2 * n * n));
  CUDA_CHECK(cudaMalloc(&ws, kWorkspace));
  CUDA_CHECK(cudaMemset(a, 0, 2 * n * n));
  CUDA_CHECK(cudaMemset(b, 0, 2 * n * n));
  cublasLtHandle_t h1, h2;
  size_t algo_ws = 0;
  auto matmul = [&](cublasLtHandle_t h) {
    LtPlan plan;
    if (!plan.init(h, CUDA_R_16BF, CUDA_R_16BF, false, n, n, n, kWorkspace))
      check_failed("LtPlan::init(bf16)", "no cuBLASLt algorithm", __FILE__, __LINE__);
    plan.run(a, b, c, ws, nullptr);
    algo_ws = plan.workspace_bytes();
  };
  const long long u0 = synced_used();
  CUBLAS_CHECK(cublasLtCreate(&h1));
  const long long u1 = synced_used();
  matmul(h1);
  const long long u2 = synced_used();
  CUBLAS_CHECK(cublasLtCreate(&h2));
  const long long u3 = synced_used();
  matmul(h2);
  const long long u4 = synced_used();
  CUBLAS_CHECK(cublasLtDestroy(h2));
  CUBLAS_CHECK(cublasLtDestroy(h1));
  for (void* p : {a, b, c, ws}) CUDA_CHECK(cudaFree(p));

  per_handle_bytes = u4 - u2;
  JsonObject d;
  d.set_int("first_handle_create_bytes", u1 - u0);
  d.set_int("first_handle_first_matmul_bytes", u2 - u1);
  d.set_int("second_handle_create_bytes", u3 - u2);
  d.set_int("second_handle_first_matmul_bytes", u4 - u3);
  d.set_int("first_use_total_bytes", u2 - u0);
  d.set_int("bf16_1024_heuristic_workspace_bytes", static_cast<long long>(algo_ws));
  d.set_str("note", "cuBLASLt takes its workspace from the caller (PyTorch: from its caching allocator); "
                    "these deltas are what the library itself allocates");
  return d;
}

#ifdef MEMPLAN_CAL_HAVE_CUDNN
JsonObject cudnn_memory() {
  cudnnHandle_t h1, h2;
  const long long u0 = synced_used();
  CUDNN_CHECK(cudnnCreate(&h1));
  const long long u1 = synced_used();
  CUDNN_CHECK(cudnnCreate(&h2));
  const long long u2 = synced_used();
  CUDNN_CHECK(cudnnDestroy(h2));
  CUDNN_CHECK(cudnnDestroy(h1));
  JsonObject d;
  d.set_int("first_handle_create_bytes", u1 - u0);
  d.set_int("second_handle_create_bytes", u2 - u1);
  d.set_int("version", static_cast<long long>(cudnnGetVersion()));
  return d;
}
#endif

}  // namespace

LibraryMemory measure_library_memory() {
  LibraryMemory out;
  out.detail.set_str("method", "differences of total - free (cudaMemGetInfo) around each action, after a sync");
  out.detail.set_obj("cuda_malloc", malloc_granularity(out.malloc_granularity_bytes));
  progress("cudaMalloc(1 B) took %.2f MiB", out.malloc_granularity_bytes / 1048576.0);
  out.detail.set_obj("cublas", cublas_memory(out.cublas_workspace_bytes));
  progress("cuBLAS handle + workspace: %.1f MiB per extra handle", out.cublas_workspace_bytes / 1048576.0);
  out.detail.set_obj("cublaslt", cublaslt_memory(out.cublaslt_workspace_bytes));
  progress("cuBLASLt handle: %.1f MiB per extra handle", out.cublaslt_workspace_bytes / 1048576.0);
#ifdef MEMPLAN_CAL_HAVE_CUDNN
  JsonObject dnn = cudnn_memory();
  out.detail.set_obj("cudnn", std::move(dnn));
  progress("cuDNN handles measured");
#else
  out.detail.set_null("cudnn");
  progress("cuDNN: skipped (built without cudnn.h)");
#endif
  return out;
}

}  // namespace memplan::cal
