// One cuBLASLt matmul D = alpha * op(A) * B (column-major, C == D), planned once and run many times.
// op(A) is A^T when trans_a (required for fp8 on Hopper: the "TN" layout). Scale/compute type is fp32.
#pragma once

#include <cstddef>

#include <cublasLt.h>

namespace memplan::cal {

class LtPlan {
 public:
  // Returns false (and leaves the plan unusable) when cuBLASLt has no algorithm for this combination,
  // e.g. fp8 before compute capability 8.9. Any other cuBLASLt failure exits via CUBLAS_CHECK.
  bool init(cublasLtHandle_t handle, cudaDataType_t ab_type, cudaDataType_t cd_type, bool trans_a, int m, int n,
            int k, size_t max_workspace_bytes);
  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const;
  size_t workspace_bytes() const { return algo_workspace_bytes_; }
  ~LtPlan();

 private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t algo_workspace_bytes_ = 0;
  bool ok_ = false;
};

}  // namespace memplan::cal
