// HyperCLOVAXForCausalLM's own value (engine/arch/decoders/dense/hyperclovax.cpp), set by models/hf/import_hyperclovax.cpp.
#pragma once
#include "engine/arch/spec.h"

namespace memplan {

struct HyperclovaxFields : FamilyFields {
  // config.use_post_norm (class default True): HyperCLOVAXDecoderLayer's post_norm1 / post_norm2 are RMSNorms of
  // hidden_size (Peri-Layer Normalization, a weight [H] each, after the attention and after the MLP); False makes
  // them nn.Identity (no parameters, the sub-layer's output passed on unchanged: Granite's layer).
  bool use_post_norm = true;
};

}  // namespace memplan
