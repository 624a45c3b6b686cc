// CwmForCausalLM (transformers 5.17 models/cwm/modeling_cwm.py, modular_cwm.py; Meta's Code World Model, facebook/cwm),
// training forward + causal-LM loss or one inference pass. modular_cwm.py builds it from Llama's and Qwen2's classes:
// LlamaDecoderLayer, LlamaRMSNorm, LlamaMLP (gate / up / down with config.mlp_bias), Qwen2RotaryEmbedding (Llama's
// statements; the llama3 rope type changes only inv_freq's values) and CwmAttention = Qwen2Attention with its q / k /
// v projections replaced by bias-free ones (o_proj has none either; CwmConfig deletes attention_bias), each layer's
// window config.sliding_window when config.layer_types[i] == "sliding_attention", else None. The memory-relevant
// statements of CwmModel.forward are MinistralModel.forward's: causal_mask_mapping calls create_causal_mask AND
// create_sliding_window_causal_mask (with a copy of the same kwargs) on every forward, whatever layer_types holds,
// before the rotary embedding; each layer reads its type's mask; DynamicCache(config=...) keeps a
// DynamicSlidingWindowLayer for a sliding layer and a DynamicLayer for a full one (both_masks_parts.h). What differs
// from the ministral build is only in the importer (class defaults: every fourth layer full from layer 0, window 8192,
// mlp_bias read) and, in CwmModel, statements that allocate nothing (use_cache not passed to the layers, the cache
// returned whatever use_cache says).
#include "engine/arch/builders.h"

#include <string>

#include "engine/arch/decoders/parts/both_masks_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_cwm(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts > 0) throw InputError("model.num_experts", std::to_string(s.num_experts), "cwm has no experts");
  if (s.qkv_bias || s.o_bias)
    throw InputError("model.attention_bias", "true", "CwmAttention's q / k / v / o projections have no biases");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  if (static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (s.head_dim % 2 != 0)
    throw InputError("model.head_dim", std::to_string(s.head_dim), "must be even (rotate_half halves it)");
  build_both_masks_causal_lm(b, s);
}

}  // namespace memplan
