// Weight bytes of a decoder-only model under an inference weight format, computed parameter by parameter
// from the same Graph the replay builds (so every parameter is counted exactly once).
//
// Contract:
//  - fp32 / bf16 / fp16: every parameter in that dtype.
//  - Quantized formats apply to the 2-d (and stacked 3-d expert) weight matrices inside decoder layers;
//    embeddings, lm_head, norms, biases and MoE routers stay in `base_dtype` (bf16 by default), as GPTQ, AWQ,
//    bitsandbytes and FP8 checkpoints ship them, unless quantize_embeddings / quantize_lm_head say otherwise.
//  - fp8 (e4m3): 1 B per element + one fp32 scale per output channel.
//  - int8 per-channel (W8A16, LLM.int8-style): 1 B per element + one fp16 scale per output channel.
//  - int4 group-wise (GPTQ / AWQ): 0.5 B per element; per group of `group_size` input elements of each output
//    channel one fp16 scale and one packed 4-bit zero point (qzeros: 8 per int32). GPTQ's g_idx (int32 per
//    input channel) is counted when gptq_g_idx is set.
#pragma once
#include <cstdint>
#include <string_view>

#include "engine/dtype.h"
#include "engine/graph.h"

namespace memplan {

enum class WeightFormat : uint8_t { fp32, bf16, fp16, fp8, int8, int4 };
bool parse_weight_format(std::string_view s, WeightFormat& out);
std::string_view weight_format_name(WeightFormat f);

struct WeightFormatOptions {
  WeightFormat format = WeightFormat::bf16;
  DType base_dtype = DType::bf16;  // dtype of what stays unquantized (and the activation dtype)
  int64_t group_size = 128;        // int4
  bool quantize_embeddings = false;
  bool quantize_lm_head = false;
  bool gptq_g_idx = false;
};

struct WeightBytes {
  int64_t quantized_bytes = 0;    // packed quantized matrices
  int64_t scale_bytes = 0;        // scales, zero points, g_idx
  int64_t unquantized_bytes = 0;  // embeddings, lm_head, norms, biases, routers in base_dtype
  int64_t quantized_params = 0;
  int64_t unquantized_params = 0;
  int64_t total() const { return quantized_bytes + scale_bytes + unquantized_bytes; }
};

// `g` is any graph of the model (its params carry names and shapes).
WeightBytes weight_bytes(const Graph& g, const WeightFormatOptions& opt);

}  // namespace memplan
