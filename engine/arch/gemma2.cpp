// Gemma2ForCausalLM (transformers 5.17 models/gemma2/modeling_gemma2.py).
// Placeholder until the builder lands: inference rides on the llama builder (its extra norms and embedding
// normaliser only), training is refused with a clear error.
#include "engine/arch/builders.h"

#include "engine/errors.h"

namespace memplan {

void build_gemma2(GraphBuilder& b, const TransformerSpec& s) {
  if (!b.training()) return build_llama(b, s);
  throw InputError("model", s.model_type, "training replay of gemma2 is not modelled yet");
}

}  // namespace memplan
