// The forward that MinistralModel (ministral.cpp) and CwmModel (cwm.cpp) write alike in transformers 5.17: the
// causal and the sliding-window masks both made on every forward, whatever config.layer_types holds, each layer
// reading its type's mask and keeping its type's cache layer, around LlamaDecoderLayer's statements (llama_parts.h;
// Qwen2's decoder layer is the same code).
#pragma once
#include "engine/arch/builders.h"

namespace memplan {

// From the embedding to the loss (training) or the last logits (inference): embed_tokens -> position_ids -> both
// masks (cohere_parts.h cohere2_masks: generate()'s sliding SDPA mask nested in the padding mask's and_masks) ->
// rotary cos / sin (in the hidden dtype) -> N x decoder layer (llama_decoder_params: q / k / v / o biases with
// s.qkv_bias / s.o_bias, MLP biases with s.mlp_bias; layer i sliding when s.sliding_layers[i]) -> norm -> lm_head.
// inputs_embeds, both masks and cos / sin stay bound until the final norm has returned. The caller checks the spec
// (a positive sliding_window, one sliding_layers entry per layer, an even head_dim, no experts).
void build_both_masks_causal_lm(GraphBuilder& b, const TransformerSpec& s);

}  // namespace memplan
