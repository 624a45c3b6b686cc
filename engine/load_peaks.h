// Load-time peaks: host RAM and GPU memory while a checkpoint is turned into a model on the GPU, for three
// loading paths (so "my 70B load dies before the first token" has an answer). A closed-form model over a few
// facts of the checkpoint; no replay (loading is a sequence of whole-tensor copies).
//
//   fp32_then_cast     the model is built with fp32 parameters on the host (no torch_dtype), the state dict of one
//                      shard at a time is copied in, the model is moved to the GPU and cast there (.to(dtype)):
//                      host = P x 4 + largest shard; GPU = P x 4 + largest tensor in the target dtype (a cast
//                      allocates the new tensor before the old one is freed).
//   meta_target_dtype  low_cpu_mem_usage / device_map (transformers 5 default): parameters on the meta device,
//                      each shard loaded whole on the host (torch.load of a .bin, or a fully touched mmap) and
//                      every tensor materialised on the GPU in the target dtype: host = largest shard;
//                      GPU = P x target + one tensor in the checkpoint dtype while it is cast.
//   sharded_streaming  safetensors read tensor by tensor straight to the GPU: host = largest tensor;
//                      GPU = P x target + one tensor in the checkpoint dtype.
// P = parameter count; bytes are exact products, no allocator rounding (whole tensors are far above 512 B).
#pragma once
#include <cstdint>

#include "engine/dtype.h"

namespace memplan {

enum class LoadStrategy : uint8_t { fp32_then_cast, meta_target_dtype, sharded_streaming };

struct LoadInputs {
  int64_t params = 0;
  DType checkpoint_dtype = DType::bf16;
  DType target_dtype = DType::bf16;
  int64_t largest_shard_bytes = 0;   // safetensors / .bin shard on disk (e.g. 5 GB for HF's default sharding)
  int64_t largest_tensor_params = 0; // usually the embedding or lm_head
};

struct LoadPeaks {
  int64_t host_peak_bytes = 0;
  int64_t gpu_peak_bytes = 0;
};

LoadPeaks load_peaks(const LoadInputs& in, LoadStrategy s);

}  // namespace memplan
