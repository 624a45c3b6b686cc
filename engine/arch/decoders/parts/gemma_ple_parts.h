// The pieces the per-layer-embedding Gemma text decoders share: Gemma3nForCausalLM (transformers 5.17
// models/gemma3n/modeling_gemma3n.py; engine/arch/decoders/dense/gemma3n.cpp) and Gemma4ForCausalLM
// (models/gemma4/modeling_gemma4.py; engine/arch/decoders/dense/gemma4.cpp). Both files write the same RMSNorm
// (torch.pow form, optional scale), the same final softcapping, attention with scaling 1.0 over q / k / v norms,
// and shared_kv_states for their KV-shared layers; each builder keeps its own statement order around them.
#pragma once
#include <string>

#include "engine/arch/builders.h"

namespace memplan::gemma_ple {

// Gemma3nRMSNorm / Gemma4RMSNorm.forward: normed = _norm(x.float()) (mean_squared = x.pow(2).mean(-1, keepdim) +
// eps; x * torch.pow(mean_squared, -0.5)), then `normed * weight.float()` when with_scale (w != kNoTensor),
// returned .type_as(x). A 16-bit x gives an fp32 copy (saved by pow and the product) and an fp32 normalised x;
// fp32 and amp (fp32 stream) inputs make no copy.
TensorId norm(GraphBuilder& b, TensorId x, TensorId w);
// `x = norm(x)`: the variable keeps the input bound until the norm returns.
TensorId norm_rebinding(GraphBuilder& b, TensorId x, TensorId w);
// ForCausalLM's final_logit_softcapping: logits / cap, tanh (saves its output), * cap, each rebinding `logits`.
TensorId softcap(GraphBuilder& b, TensorId logits);
// ACT2FN[hidden_activation]: one kernel; relu saves its output, the gelu / silu family their input.
TensorId activation(GraphBuilder& b, const std::string& act, TensorId x);
// The attention function from the cache update on (sdpa_attention_forward or eager_attention_forward, scaling
// 1.0) for a layer of head_dim `hd` and `nkv` KV heads: q [B, nh, S, hd], k / v [B, nkv, Lk, hd]. repeat_kv where
// SDPA cannot take grouped heads (a mask, or hd > 256) and in eager attention. Returns the context
// [B, S, nh, hd]; `weights`: eager's probabilities, held (the decoder layer binds them to `_`), else kNoTensor.
TensorId attention_core(GraphBuilder& b, const TransformerSpec& s, int64_t hd, int64_t nkv, TensorId q, TensorId k,
                        TensorId v, TensorId mask, TensorId& weights);

// shared_kv_states: the (key, value) the last non-shared layer of each attention type stored, held until the
// model's forward returns (the UserDict is a local of the text model's forward).
struct SharedKv {
  TensorId k_sliding = kNoTensor, v_sliding = kNoTensor, k_full = kNoTensor, v_full = kNoTensor;
};

}  // namespace memplan::gemma_ple
