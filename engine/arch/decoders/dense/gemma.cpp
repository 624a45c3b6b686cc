// GemmaForCausalLM (transformers 5.17 models/gemma/modeling_gemma.py): the shared Gemma builder
// (engine/arch/decoders/parts/gemma_parts.cpp) with gemma's two norms per layer and one causal mask.
#include "engine/arch/decoders/parts/gemma_parts.h"

namespace memplan {

void build_gemma(GraphBuilder& b, const TransformerSpec& s) { build_gemma_decoder(b, s, GemmaVersion::v1); }

}  // namespace memplan
