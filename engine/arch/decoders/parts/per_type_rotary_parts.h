// The model forward up to the layer loop, and its releases after the final norm, of a decoder whose full and sliding
// layers each rotate over a width of their own: one rotary embedding per layer type (MiMoV2FlashModel and
// LagunaModel in transformers 5.17, whose forwards run the same statements here).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan {

// What a layer reads by its type (kNoTensor for a type no layer has).
struct PerTypeRotaryContext {
  TensorId full_mask = kNoTensor, sliding_mask = kNoTensor;
  TensorId full_cos = kNoTensor, full_sin = kNoTensor, sliding_cos = kNoTensor, sliding_sin = kNoTensor;
};

struct PerTypeRotaryInputs {
  TensorId ids = kNoTensor;            // input_ids [B, S] (the causal-LM tail's labels)
  TensorId inputs_embeds = kNoTensor;  // held until the model returns
  TensorId position_ids = kNoTensor;   // arange(S) + past_seen_tokens when the caller passes none; held
  CausalMasks masks;                   // causal_mask_mapping, held
  PerTypeRotaryContext ctx;
  std::vector<TensorId> tables;        // position_embeddings[type]'s cos / sin, held
};

// The rotary embedding's {type}_inv_freq and {type}_original_inv_freq buffers (fp32, non-persistent), full then
// sliding, for each type some layer has.
void per_type_rotary_buffers(GraphBuilder& b, bool any_full, bool any_sliding, int64_t full_rot, int64_t sliding_rot);

// input_ids (and generate()'s attention mask), inputs_embeds = embed_tokens(ids), position_ids, both masks as
// full_and_sliding_masks builds them, then each type's cos / sin [P, S, rot] in the embedding's dtype; every tensor
// the model's forward binds is held.
PerTypeRotaryInputs per_type_rotary_inputs(GraphBuilder& b, const TransformerSpec& s, TensorId embed, bool any_full,
                                           bool any_sliding, int64_t full_rot, int64_t sliding_rot);

// After the final norm has returned: the last hidden state `h`, then inputs_embeds, the masks, position_ids and the
// rotary tables die (the forward's return).
void release_per_type_rotary_inputs(GraphBuilder& b, TensorId h, const PerTypeRotaryInputs& in);

}  // namespace memplan
