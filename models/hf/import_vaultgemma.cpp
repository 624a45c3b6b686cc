// VaultGemmaConfig (transformers 5.17 models/vaultgemma/configuration_vaultgemma.py) and what the modeling file reads
// of it (models/vaultgemma/modeling_vaultgemma.py).
//
// The class is Gemma2Config field for field, with the same defaults (read side by side in the installed 5.17 files):
// vocab 256000, hidden 2304, intermediate 9216, 26 layers, 8 heads, 4 kv heads, head_dim 256 (a field, not
// hidden // heads), hidden_activation gelu_pytorch_tanh, max_position_embeddings 8192, tied, attention_bias false,
// attention_dropout 0.0, query_pre_attn_scalar 256, sliding_window 4096, layer_types None => sliding for even i,
// full for odd i, final / attn logit softcapping 30.0 / 50.0 (None: none), validate_architecture hidden % heads == 0.
// The one field it lacks is use_bidirectional_attention: VaultGemmaAttention is always causal, so the key would be
// ignored, yet a config carrying it true is refused as Gemma 2's reading refuses it (conservative; no published
// VaultGemma config has it). Otherwise the Gemma 2 reading (import_gemma.cpp, its refusals naming the same keys) is
// this class's; hf_config.cpp sets model_type afterwards.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_vaultgemma(const ConfigReader& r) { return import_gemma(r, "gemma2"); }

}  // namespace memplan::hf
