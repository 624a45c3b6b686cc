#include "lt_plan.h"

#include "check.h"

namespace memplan::cal {

bool LtPlan::init(cublasLtHandle_t handle, cudaDataType_t ab_type, cudaDataType_t cd_type, bool trans_a, int m,
                  int n, int k, size_t max_workspace_bytes) {
  handle_ = handle;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
  // A is stored k x m when transposed, m x k otherwise.
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, ab_type, trans_a ? k : m, trans_a ? m : k, trans_a ? k : m));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, ab_type, k, n, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, cd_type, m, n, m));

  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &max_workspace_bytes, sizeof max_workspace_bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(handle, desc_, a_, b_, d_, d_, pref, 1, &result, &found);
  CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  // NOT_SUPPORTED / no result is an expected answer (dtype not available on this GPU), not an error.
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found == 0)) return false;
  CUBLAS_CHECK(st);
  algo_ = result.algo;
  algo_workspace_bytes_ = result.workspaceSize;
  ok_ = true;
  return true;
}

void LtPlan::run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &algo_, workspace,
                              algo_workspace_bytes_, stream));
}

LtPlan::~LtPlan() {
  // Destroy failures at teardown are not worth a non-zero exit; ignore their status.
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

}  // namespace memplan::cal
