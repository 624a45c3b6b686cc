// Olmo2ForCausalLM (transformers 5.17 models/olmo2/modeling_olmo2.py).
// Placeholder until the builder lands: refuses with a clear error rather than falling back to another family.
#include "engine/arch/builders.h"

#include "engine/errors.h"

namespace memplan {

void build_olmo2(GraphBuilder& b, const TransformerSpec& s) {
  throw InputError("model", s.model_type, std::string(b.training() ? "training" : "inference") + " replay of " +
                                              s.model_type + " is not modelled yet");
}

}  // namespace memplan
