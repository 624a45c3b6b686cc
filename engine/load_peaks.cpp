#include "engine/load_peaks.h"

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

LoadPeaks load_peaks(const LoadInputs& in, LoadStrategy s) {
  if (in.params <= 0) throw InputError("params", std::to_string(in.params), "must be positive");
  if (in.largest_tensor_params <= 0 || in.largest_tensor_params > in.params)
    throw InputError("largest_tensor_params", std::to_string(in.largest_tensor_params), "must be in (0, params]");
  const int64_t target = checked_mul(in.params, dtype_bytes(in.target_dtype), "model bytes");
  const int64_t tensor_ckpt = checked_mul(in.largest_tensor_params, dtype_bytes(in.checkpoint_dtype));
  LoadPeaks p;
  switch (s) {
    case LoadStrategy::fp32_then_cast:
      p.host_peak_bytes = checked_add(checked_mul(in.params, 4, "fp32 model bytes"), in.largest_shard_bytes);
      p.gpu_peak_bytes = checked_add(checked_mul(in.params, 4, "fp32 model bytes"),
                                     in.target_dtype == DType::f32 ? 0 : checked_mul(in.largest_tensor_params, dtype_bytes(in.target_dtype)));
      break;
    case LoadStrategy::meta_target_dtype:
      p.host_peak_bytes = in.largest_shard_bytes;
      p.gpu_peak_bytes = checked_add(target, in.checkpoint_dtype == in.target_dtype ? 0 : tensor_ckpt);
      break;
    case LoadStrategy::sharded_streaming:
      p.host_peak_bytes = tensor_ckpt;
      p.gpu_peak_bytes = checked_add(target, in.checkpoint_dtype == in.target_dtype ? 0 : tensor_ckpt);
      break;
  }
  return p;
}

}  // namespace memplan
