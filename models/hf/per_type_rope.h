// The rotary width of one layer type where rope_parameters is keyed by layer type (MiMoV2FlashRotaryEmbedding and
// LagunaRotaryEmbedding read rope_parameters[layer_type] for each type in layer_types): int(head_dim x that type's
// partial_rotary_factor). Each failed check names its field and value (exit 2).
#pragma once
#include <cstdint>
#include <string>

#include "models/hf_config_reader.h"

namespace memplan::hf {

// `rope`: config.rope_parameters (null where the config has none: `absent_factor` applies); its `type` entry must be a
// dict whose rope_type leaves the tables' sizes alone (default, linear, yarn, llama3) and whose partial_rotary_factor
// (`missing_factor` when the dict has none) lies in (0, 1]; the width must be a positive even number.
// `rotary_class` / `model_type` name the reader in the messages.
int64_t per_type_rotary_dim(const ConfigReader& r, const json* rope, const char* type, double absent_factor,
                            double missing_factor, int64_t head_dim, const std::string& rotary_class,
                            const std::string& model_type);

}  // namespace memplan::hf
