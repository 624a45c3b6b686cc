// The pieces the per-layer-embedding Gemma text decoders share: Gemma3nForCausalLM (transformers 5.17
// models/gemma3n/modeling_gemma3n.py; engine/arch/decoders/dense/gemma3n.cpp) and Gemma4ForCausalLM
// (models/gemma4/modeling_gemma4.py; engine/arch/decoders/dense/gemma4.cpp). Both files write the same RMSNorm
// (torch.pow form, optional scale), the same final softcapping, attention with scaling 1.0 over q / k / v norms,
// and shared_kv_states for their KV-shared layers; each builder keeps its own statement order around them.
#pragma once
#include <string>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/errors.h"

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

// The KV-sharing setup over the layers' parameter structs (each with `sliding` and `store_kv`), the last
// `kv_shared` of them reusing an earlier layer's keys and values: store_full_length_kv marks the last layer of each
// attention type before the first shared one (Gemma 3n in every model; Gemma 4 only when some layer shares, which
// `store_without_sharing` says), and a shared layer whose type no earlier layer has is refused naming
// model.gemma4_kv_shared_layers (the modeling code raises).
template <class Layer>
void mark_kv_sharing(std::vector<Layer>& layers, int64_t kv_shared, bool store_without_sharing) {
  const int64_t first_shared = static_cast<int64_t>(layers.size()) - kv_shared;
  for (int64_t i = first_shared - 1, seen_s = 0, seen_f = 0; i >= 0; --i) {
    Layer& w = layers[static_cast<size_t>(i)];
    int64_t& seen = w.sliding ? seen_s : seen_f;
    if (!seen) w.store_kv = store_without_sharing || kv_shared > 0;
    seen = 1;
  }
  for (int64_t i = first_shared; i < static_cast<int64_t>(layers.size()); ++i) {
    const bool sl = layers[static_cast<size_t>(i)].sliding;
    bool found = false;
    for (int64_t j = 0; j < first_shared; ++j) found = found || layers[static_cast<size_t>(j)].sliding == sl;
    if (!found)
      throw InputError("model.gemma4_kv_shared_layers", std::to_string(kv_shared),
                       "leaves KV-shared layer " + std::to_string(i) + " no earlier " + (sl ? "sliding" : "full") +
                           "-attention layer to share from");
  }
}

}  // namespace memplan::gemma_ple
