// Statements Hugging Face's Swin (transformers 5.17 models/swin/modeling_swin.py) and Swin V2
// (models/swinv2/modeling_swinv2.py, whose window helpers say "Copied from transformers.models.swin") run the same:
// the layer's F.pad, the cyclic torch.roll over two dims and get_attn_mask's shift mask. Defined in hf_swin.cpp
// (engine/arch/vision/hf_swin.cpp, the measured builder they were written for), used by hf_swinv2.cpp.
#pragma once

#include "engine/graph_builder.h"

namespace memplan::hfswin {

// A new tensor of `shape` computed from x alone, whose backward writes a fresh x-sized gradient (pad, roll).
TensorId fresh(GraphBuilder& b, const char* name, TensorId x, Shape shape);

// torch.roll(x, shifts=(s, s), dims=(1, 2)): two single-dim rolls, the first a full-size intermediate; x stays
// referenced until both are done.
TensorId roll2(GraphBuilder& b, TensorId x);

// get_attn_mask(height_pad, width_pad, dtype): the [nW, N, N] shift mask in `dt`, built from small index tensors
// (every temporary dies with its statement).
TensorId shift_mask(GraphBuilder& b, int64_t pH, int64_t pW, int64_t ws, DType dt);

}  // namespace memplan::hfswin
