// HYV3Config's values no TransformerSpec field means (models/hf/import_hy_v3.cpp; read by
// engine/arch/decoders/moe/hy_v3.cpp only). The defaults are the class's (transformers 5.17
// models/hy_v3/configuration_hy_v3.py).
#pragma once
#include "engine/arch/spec.h"

namespace memplan {

struct HyV3Fields : FamilyFields {
  // config.enable_moe_fp32_combine (default true): HYV3MoE.forward adds the routed experts' output and the shared
  // experts' output in fp32 ((routed.float() + shared(x).float()).to(dtype): for a 16-bit stream two fp32 [T, H]
  // copies, their fp32 sum and the cast back); false: `routed + shared(x)` in the stream's dtype.
  bool moe_fp32_combine = true;
};

}  // namespace memplan
