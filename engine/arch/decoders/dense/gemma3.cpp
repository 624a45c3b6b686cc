// Gemma3ForCausalLM, gemma3_text (transformers 5.17 models/gemma3/modeling_gemma3.py): the shared Gemma builder
// (engine/arch/decoders/parts/gemma_parts.cpp) with gemma2's layer plus q_norm / k_norm, a rotary embedding per layer type and no
// attention softcapping (Gemma3Attention never passes it to the attention function).
#include "engine/arch/decoders/parts/gemma_parts.h"

namespace memplan {

void build_gemma3(GraphBuilder& b, const TransformerSpec& s) { build_gemma_decoder(b, s, GemmaVersion::v3); }

}  // namespace memplan
