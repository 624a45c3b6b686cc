// Achieved GEMM throughput per dtype through cuBLAS (fp32, tf32, bf16, fp16: cublasGemmEx with fp32 accumulation,
// as PyTorch calls it) and cuBLASLt (fp8 e4m3 inputs, bf16 output, "TN" layout).
//
// Stages, per dtype and shape: fill A and B with uniform [-1, 1) values (never zeros: they run faster than real
// data), poison C with NaN, time the GEMM (warm-up, then the median of CUDA-event-timed repeats), then check
// sampled outputs against an fp64 reference computed on the device from the same inputs. A wrong result exits 2.
// The headline per dtype is the best TFLOP/s over the shapes (what a cost model should treat as achievable).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks.h"
#include "check.h"
#include "lt_plan.h"
#include "timing.h"

namespace memplan::cal {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;  // what PyTorch gives cuBLAS on Hopper
constexpr int kSamples = 16;

struct Shape {
  int m, n, k;
};

__device__ inline double to_d(float x) { return x; }
__device__ inline double to_d(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline double to_d(__half x) { return __half2float(x); }
__device__ inline double to_d(__nv_fp8_e4m3 x) { return static_cast<float>(x); }

template <class T>
__device__ inline T from_f(float x) { return T(x); }
template <>
__device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <>
__device__ inline __half from_f<__half>(float x) { return __float2half(x); }

template <class T>
__global__ void fill_uniform(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;  // integer hash, cheap and deterministic
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    p[i] = from_f<T>(static_cast<float>(h) * (2.0f / 4294967296.0f) - 1.0f);
  }
}

// One thread per sample: out[s] = |got - ref| / sum_k |a_ik * b_kj| (NaN if C was never written).
template <class TA, class TC>
__global__ void check_samples(const TA* a, bool trans_a, const TA* b, const TC* c, int m, int n, int k,
                              double* out) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= kSamples) return;
  const int i = static_cast<int>((1000003ull * s + 17) % m);
  const int j = static_cast<int>((999983ull * s + 5) % n);
  double ref = 0, mag = 0;
  for (int p = 0; p < k; ++p) {
    const double av = to_d(trans_a ? a[size_t(i) * k + p] : a[size_t(p) * m + i]);
    const double bv = to_d(b[size_t(j) * k + p]);
    ref += av * bv;
    mag += fabs(av * bv);
  }
  const double got = to_d(c[size_t(j) * m + i]);
  out[s] = fabs(got - ref) / (mag > 0 ? mag : 1.0);
}

template <class T>
void fill(void* p, size_t n, uint32_t seed) {
  fill_uniform<T><<<1024, 256>>>(static_cast<T*>(p), n, seed);
  KERNEL_CHECK();
}

template <class TA, class TC>
double max_sample_error(const void* a, bool trans_a, const void* b, const void* c, const Shape& s, double* d_err) {
  check_samples<TA, TC><<<1, kSamples>>>(static_cast<const TA*>(a), trans_a, static_cast<const TA*>(b),
                                         static_cast<const TC*>(c), s.m, s.n, s.k, d_err);
  KERNEL_CHECK();
  std::vector<double> h(kSamples);
  CUDA_CHECK(cudaMemcpy(h.data(), d_err, sizeof(double) * kSamples, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (double e : h) {
    if (std::isnan(e)) return NAN;  // an output never written stays NaN-poisoned
    worst = std::max(worst, e);
  }
  return worst;
}

struct Buffers {
  void *a = nullptr, *b = nullptr, *c = nullptr, *ws = nullptr;
  double* err = nullptr;
};

struct DtypeSpec {
  const char* name;
  cudaDataType_t type;           // A, B and C for cublasGemmEx
  cublasComputeType_t compute;
  double tolerance;              // on |got - ref| / sum |a*b|
};

using Fill = void (*)(void*, size_t, uint32_t);
using Check = double (*)(const void*, bool, const void*, const void*, const Shape&, double*);

void record(JsonObject& shape_obj, const Shape& s, double ms, double err, double tol, const char* dtype) {
  if (!(err <= tol)) {
    std::fprintf(stderr, "memplan-calibrate: %s GEMM %dx%dx%d wrong: sampled error %.3g > %.3g\n", dtype, s.m, s.n,
                 s.k, err, tol);
    std::exit(2);
  }
  shape_obj.set_int("m", s.m).set_int("n", s.n).set_int("k", s.k);
  shape_obj.set_num("median_ms", ms);
  shape_obj.set_num("tflops", 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12);
  shape_obj.set_num("max_sample_rel_error", err);
}

double bench_gemm_ex(cublasHandle_t h, const DtypeSpec& d, Fill fill_fn, Check check_fn, size_t elem_bytes,
                     const std::vector<Shape>& shapes, const Buffers& buf, int reps, JsonObject& detail) {
  std::vector<JsonObject> per_shape;
  double best = 0;
  for (const Shape& s : shapes) {
    fill_fn(buf.a, size_t(s.m) * s.k, 0x1234u);
    fill_fn(buf.b, size_t(s.k) * s.n, 0xbeefu);
    CUDA_CHECK(cudaMemset(buf.c, 0xff, elem_bytes * s.m * s.n));  // NaN in every float format used here
    const float alpha = 1.f, beta = 0.f;
    auto gemm = [&] {
      CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n, s.k, &alpha, buf.a, d.type, s.m, buf.b,
                                d.type, s.k, &beta, buf.c, d.type, s.m, d.compute, CUBLAS_GEMM_DEFAULT));
    };
    const double ms = time_median_ms(nullptr, 2, reps, gemm);
    const double err = check_fn(buf.a, false, buf.b, buf.c, s, buf.err);
    JsonObject o;
    record(o, s, ms, err, d.tolerance, d.name);
    best = std::max(best, 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12);
    progress("GEMM %-4s %5dx%5dx%5d: %7.1f TFLOP/s", d.name, s.m, s.n, s.k, 2.0 * s.m * s.n * s.k / (ms * 1e9));
    per_shape.push_back(std::move(o));
  }
  JsonObject o;
  o.set_str("api", "cublasGemmEx");
  o.set_arr("shapes", std::move(per_shape));
  detail.set_obj(d.name, std::move(o));
  return best;
}

double bench_fp8(cublasLtHandle_t lt, const std::vector<Shape>& shapes, const Buffers& buf, int reps,
                 JsonObject& detail) {
  std::vector<JsonObject> per_shape;
  double best = 0;
  for (const Shape& s : shapes) {
    LtPlan plan;
    if (!plan.init(lt, CUDA_R_8F_E4M3, CUDA_R_16BF, true, s.m, s.n, s.k, kWorkspaceBytes)) {
      JsonObject o;
      o.set_str("skipped", "cuBLASLt found no fp8 e4m3 algorithm");
      detail.set_obj("fp8", std::move(o));
      progress("GEMM fp8: skipped (no cuBLASLt algorithm)");
      return NAN;
    }
    fill<__nv_fp8_e4m3>(buf.a, size_t(s.m) * s.k, 0x1234u);
    fill<__nv_fp8_e4m3>(buf.b, size_t(s.k) * s.n, 0xbeefu);
    CUDA_CHECK(cudaMemset(buf.c, 0xff, 2ull * s.m * s.n));
    const double ms = time_median_ms(nullptr, 2, reps, [&] { plan.run(buf.a, buf.b, buf.c, buf.ws, nullptr); });
    const double err = max_sample_error<__nv_fp8_e4m3, __nv_bfloat16>(buf.a, true, buf.b, buf.c, s, buf.err);
    JsonObject o;
    record(o, s, ms, err, 1e-2, "fp8");
    o.set_int("workspace_bytes", static_cast<long long>(plan.workspace_bytes()));
    best = std::max(best, 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12);
    progress("GEMM fp8  %5dx%5dx%5d: %7.1f TFLOP/s", s.m, s.n, s.k, 2.0 * s.m * s.n * s.k / (ms * 1e9));
    per_shape.push_back(std::move(o));
  }
  JsonObject o;
  o.set_str("api", "cublasLtMatmul e4m3 x e4m3 -> bf16, A transposed, unit scales");
  o.set_arr("shapes", std::move(per_shape));
  detail.set_obj("fp8", std::move(o));
  return best;
}

}  // namespace

GemmResult bench_gemm(int cc_major, int cc_minor, bool quick) {
  const std::vector<Shape> shapes = quick ? std::vector<Shape>{{4096, 4096, 4096}}
                                          : std::vector<Shape>{{4096, 4096, 4096}, {8192, 8192, 8192},
                                                               {16384, 4096, 4096}, {8192, 8192, 1024}};
  const int reps = quick ? 5 : 10;
  size_t max_elems = 0;
  for (const Shape& s : shapes)
    max_elems = std::max({max_elems, size_t(s.m) * s.k, size_t(s.k) * s.n, size_t(s.m) * s.n});

  Buffers buf;
  CUDA_CHECK(cudaMalloc(&buf.a, 4 * max_elems));
  CUDA_CHECK(cudaMalloc(&buf.b, 4 * max_elems));
  CUDA_CHECK(cudaMalloc(&buf.c, 4 * max_elems));
  CUDA_CHECK(cudaMalloc(&buf.ws, kWorkspaceBytes));
  CUDA_CHECK(cudaMalloc(&buf.err, sizeof(double) * kSamples));

  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  CUBLAS_CHECK(cublasSetWorkspace(h, buf.ws, kWorkspaceBytes));

  GemmResult r;
  r.detail.set_str("data", "uniform [-1, 1) inputs, beta = 0, column-major NN (fp8: TN)");
  r.detail.set_int("repeats", reps);
  const DtypeSpec fp32{"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, 1e-4};
  const DtypeSpec tf32{"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 5e-3};
  const DtypeSpec bf16{"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1e-2};
  const DtypeSpec fp16{"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 1e-2};
  r.fp32 = bench_gemm_ex(h, fp32, fill<float>, max_sample_error<float, float>, 4, shapes, buf, reps, r.detail);
  r.tf32 = bench_gemm_ex(h, tf32, fill<float>, max_sample_error<float, float>, 4, shapes, buf, reps, r.detail);
  r.bf16 = bench_gemm_ex(h, bf16, fill<__nv_bfloat16>, max_sample_error<__nv_bfloat16, __nv_bfloat16>, 2, shapes,
                         buf, reps, r.detail);
  r.fp16 = bench_gemm_ex(h, fp16, fill<__half>, max_sample_error<__half, __half>, 2, shapes, buf, reps, r.detail);
  CUBLAS_CHECK(cublasDestroy(h));

  if (cc_major * 10 + cc_minor >= 89) {
    cublasLtHandle_t lt;
    CUBLAS_CHECK(cublasLtCreate(&lt));
    r.fp8 = bench_fp8(lt, shapes, buf, reps, r.detail);
    CUBLAS_CHECK(cublasLtDestroy(lt));
  } else {
    r.fp8 = NAN;
    JsonObject o;
    o.set_str("skipped", "fp8 GEMM needs compute capability 8.9 or later");
    r.detail.set_obj("fp8", std::move(o));
    progress("GEMM fp8: skipped (compute capability %d.%d)", cc_major, cc_minor);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  for (void* p : {buf.a, buf.b, buf.c, buf.ws, static_cast<void*>(buf.err)}) CUDA_CHECK(cudaFree(p));
  return r;
}

}  // namespace memplan::cal
