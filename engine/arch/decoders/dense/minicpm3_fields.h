// MiniCPM3's own config values (transformers 5.17 models/minicpm3/configuration_minicpm3.py), which no
// TransformerSpec field means: set by models/hf/import_minicpm3.cpp, read by engine/arch/decoders/dense/minicpm3.cpp.
#pragma once
#include "engine/arch/spec.h"

namespace memplan {

struct MiniCPM3Fields : FamilyFields {
  // scale_emb: MiniCPM3ScaledWordEmbedding multiplies the looked-up rows by nn.Buffer(torch.tensor(scale_emb)).
  double scale_emb = 12.0;
  // Whether config.json writes scale_emb as an integer (the class default 12 and the published config do):
  // torch.tensor(12) is then an int64 0-dim buffer, which model.to(dtype) leaves alone, so every forward's
  // embed_scale.to(weight.dtype) makes a fresh 0-dim tensor (kept by MulBackward when the rows need a gradient).
  // A float scale_emb makes a buffer of the default dtype, the weights' own: .to() returns it unchanged.
  bool scale_emb_integer = true;
  // scale_depth: each residual branch is multiplied by scale_depth / sqrt(num_hidden_layers) (a Python float: a
  // fresh tensor per branch, whatever its value). null in config.json: sqrt(num_hidden_layers).
  double scale_depth = 1.4;
  // dim_model_base: the final hidden states are divided by hidden_size / dim_model_base before lm_head (a fresh
  // tensor, whatever the ratio). null: hidden_size.
  int64_t dim_model_base = 256;
};

}  // namespace memplan
