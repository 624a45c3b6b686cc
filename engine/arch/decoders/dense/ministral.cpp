// MinistralForCausalLM (transformers 5.17 models/ministral/modeling_ministral.py; Ministral-8B-Instruct-2410), training
// forward + causal-LM loss or one inference pass. modular_ministral.py builds it from Qwen2's classes: Qwen2's
// decoder layer, RMSNorm, rotary embedding and SwiGLU MLP (llama_parts.h, the same statements as Llama's), with
// MinistralAttention = Qwen2Attention without the q / k / v biases and a per-layer window
// (config.layer_types[i] == "sliding_attention" => config.sliding_window, else None). What differs in memory from
// the mistral / qwen2 builds (build_llama) is MinistralModel.forward's causal_mask_mapping: it calls
// create_causal_mask AND create_sliding_window_causal_mask on every forward, whatever layer_types holds (Qwen2Model
// makes the sliding one only with sliding layers, MistralModel makes one of the two), before the rotary embedding,
// both held until the model's forward returns. These are Cohere2Model's statements (cohere_parts.h cohere2_masks:
// full_and_sliding_masks, but inside generate() the sliding SDPA mask is sdpa_mask's and_masks(mask_function,
// padding_mask_function) around sliding_window_causal_mask_function's own and_masks: one more [1, 1, q, kv] bool). Each layer then reads its type's
// mask and, in inference, keeps a DynamicSlidingWindowLayer (sliding) or a DynamicLayer (full) in the cache.
// The ministral3 type (Ministral 3, ministral3.cpp) is a different class: Llama's layers with a position-scaled
// query and one mask kind; this one has no query scaling.
// Stages: embed_tokens -> position_ids -> both masks -> rotary cos / sin (in the hidden dtype) -> N x decoder layer
// -> norm -> lm_head -> loss (training) or the last logits (inference).
#include "engine/arch/builders.h"

#include <string>

#include "engine/arch/decoders/parts/both_masks_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_ministral(GraphBuilder& b, const TransformerSpec& s) {
  const int64_t hd = s.head_dim;
  if (s.num_experts > 0) throw InputError("model.num_experts", std::to_string(s.num_experts), "ministral has no experts");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  if (static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (hd % 2 != 0) throw InputError("model.head_dim", std::to_string(hd), "must be even (rotate_half halves it)");
  build_both_masks_causal_lm(b, s);  // shared with CwmModel (both_masks_parts.h)
}

}  // namespace memplan
