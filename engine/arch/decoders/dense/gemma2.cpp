// Gemma2ForCausalLM (transformers 5.17 models/gemma2/modeling_gemma2.py): the shared Gemma builder
// (engine/arch/decoders/parts/gemma_parts.cpp) with four norms per layer, the full and sliding-window masks chosen per
// layer_types, eager attention logit softcapping and final logit softcapping.
#include "engine/arch/decoders/parts/gemma_parts.h"

namespace memplan {

void build_gemma2(GraphBuilder& b, const TransformerSpec& s) { build_gemma_decoder(b, s, GemmaVersion::v2); }

}  // namespace memplan
