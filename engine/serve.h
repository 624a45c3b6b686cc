// Serving capacity: the vLLM-style memory budget of one tensor-parallel replica and what it buys in KV blocks,
// concurrent sequences and context length.
//
// Stages (vLLM's gpu_worker.determine_num_available_blocks, reproduced with this engine's parts):
//   1. shard the model for tensor parallelism T (heads, KV heads (replicated below T), intermediate size and
//      vocabulary divided by T; hidden size and norms whole);
//   2. weights per rank from the weight format (weight_format.h) of the sharded model;
//   3. activation peak of the profile run: a prefill of max_num_batched_tokens tokens (one sequence) replayed by
//      the inference replay of the sharded model, minus its weights and its own K/V copies (the paged cache is
//      preallocated); models without an inference builder (MLA) use a stated analytic bound instead, with
//      weights from the importer's parameter count (unquantized, split evenly over the ranks);
//   4. budget = utilization x capacity - weights - activation peak - non-PyTorch memory (CUDA context, NCCL
//      when T > 1);
//   5. KV blocks = budget / (block_size x KV bytes per token of all layers, per rank); a sequence of C tokens
//      needs its layers' tokens in whole blocks (sliding layers: the window only, vLLM's hybrid allocator).
// "Does not fit" (budget <= 0) is a normal result.
#pragma once
#include <cstdint>
#include <string>

#include "engine/arch/spec.h"
#include "engine/kv_cache.h"
#include "engine/weight_format.h"

namespace memplan {

struct ServeOptions {
  int64_t capacity_bytes = 0;             // one GPU's memory
  int64_t gpus = 1;                        // total; replicas = gpus / tensor_parallel
  int64_t tensor_parallel = 1;
  double gpu_memory_utilization = 0.9;
  int64_t block_size = 16;                 // tokens per KV block
  int64_t max_model_len = 0;               // 0: the model's max_position_embeddings
  int64_t max_num_batched_tokens = 0;      // profile prefill; 0: min(max_model_len, 8192)
  KvDtype kv_dtype = KvDtype::auto_;
  WeightFormatOptions weights;
  int64_t non_torch_bytes = 0;             // CUDA context and kernels per rank
  int64_t nccl_bytes = int64_t{558} << 20;  // per rank when tensor_parallel > 1 (MECHANICS §2)
  int64_t context_tokens = 0;              // "how many sequences at this context" (0: max_model_len)
  int64_t concurrency = 1;                 // "how long a context at this many sequences"
  int64_t params_without_builder = 0;      // parameter count for architectures without an inference builder
};

struct ServeResult {
  TransformerSpec shard;                   // one rank's model
  WeightBytes weights;                     // per rank
  int64_t activation_peak_bytes = 0;       // per rank
  bool activation_analytic = false;        // true: the analytic bound of stage 3 was used
  int64_t non_torch_bytes = 0;             // per rank, NCCL included
  int64_t kv_budget_bytes = 0;             // per rank (negative: does not fit)
  int64_t kv_bytes_per_token = 0;          // per rank, all layers, every token kept
  int64_t block_bytes = 0;
  int64_t num_blocks = 0;
  int64_t max_model_len = 0;
  int64_t max_num_batched_tokens = 0;
  int64_t context_tokens = 0;
  int64_t max_sequences_at_context = 0;    // per replica
  int64_t replicas = 1;
  int64_t max_context_at_concurrency = 0;  // 0: not even one token per sequence fits
  bool fits = false;                       // weights + activations fit and at least one full-length sequence
};

ServeResult plan_serving(const ModelSpec& model, const ServeOptions& opt);

}  // namespace memplan
