// DeepseekV2ForCausalLM (transformers 5.17 models/deepseek_v2/modeling_deepseek_v2.py).
// Placeholder until the builder lands: refuses with a clear error (KV sizing and serve's analytic bound cover it).
#include "engine/arch/builders.h"

#include "engine/errors.h"

namespace memplan {

void build_deepseek_v2(GraphBuilder& b, const TransformerSpec& s) {
  throw InputError("model", s.model_type, std::string(b.training() ? "training" : "inference") +
                                              " replay of multi-head latent attention (deepseek_v2) is not modelled "
                                              "yet; KV sizing (engine/kv_cache.h) and serve's analytic bound are");
}

}  // namespace memplan
