// AfmoeForCausalLM (engine/arch/decoders/moe/afmoe.cpp): declared here, read by the builder table (common.cpp).
#pragma once
#include "engine/arch/builders.h"

namespace memplan {

void build_afmoe(GraphBuilder& b, const TransformerSpec& s);

}  // namespace memplan
