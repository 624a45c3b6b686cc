// Cohere2MoeConfig's choices no other family has (models/hf/import_cohere2_moe.cpp sets them; read by
// engine/arch/decoders/moe/cohere2_moe.cpp through family_fields). The defaults are the class's.
#pragma once
#include "engine/arch/spec.h"

namespace memplan {

struct Cohere2MoeFields : FamilyFields {
  bool sigmoid_router = false;  // expert_selection_fn "sigmoid" (default "softmax": over the top-k logits)
  bool shared_sum = false;      // shared_expert_combination_strategy "sum" (default "average": (routed + shared) / 2)
  bool rms_norm = false;        // rms_norm_eps set: the norms are Cohere2MoeRMSNorm, else Cohere2MoeLayerNorm
};

}  // namespace memplan
