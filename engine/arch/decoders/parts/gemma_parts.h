// The Gemma decoders (transformers 5.17 models/gemma/modeling_gemma.py, gemma2/modeling_gemma2.py,
// gemma3/modeling_gemma3.py): one builder for the three modelling files, which share their embedding, norm,
// MLP and layer loop and differ where each version's statements differ (named per piece below).
#pragma once
#include "engine/arch/builders.h"

namespace memplan {

enum class GemmaVersion : uint8_t {
  v1,  // gemma: two norms per layer, one causal mask, one rotary embedding
  v2,  // gemma2: four norms per layer, full + sliding masks, eager attention logit softcapping, final softcapping
  v3,  // gemma3_text: gemma2's layer plus q_norm / k_norm, one rotary embedding per layer type, no attention softcap
};

// GemmaRMSNorm / Gemma2RMSNorm / Gemma3RMSNorm.forward: output = _norm(x.float()) (x * rsqrt(x.pow(2).mean(-1) +
// eps), in fp32), then output * (1.0 + weight.float()) in fp32, returned .type_as(x). Unlike LlamaRMSNorm (cast to
// the input dtype before the weight product), the product runs in fp32: a bf16 model keeps an fp32 copy of x
// (saved by pow and the first mul), the fp32 normalised x (saved by the weight product) and a transient fp32
// product before the bf16 result; fp32 and amp models (fp32 x) make no copies.
TensorId gemma_rms_norm(GraphBuilder& b, TensorId x, TensorId w);

// GemmaForCausalLM / Gemma2ForCausalLM / Gemma3ForCausalLM (training forward + loss, or one inference pass).
void build_gemma_decoder(GraphBuilder& b, const TransformerSpec& s, GemmaVersion v);

}  // namespace memplan
