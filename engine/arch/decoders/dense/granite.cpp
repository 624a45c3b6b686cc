// GraniteForCausalLM (transformers 5.17 models/granite/modeling_granite.py), training forward + causal-LM loss or
// one inference pass. LlamaForCausalLM's statements (GraniteAttention, GraniteMLP, GraniteRMSNorm and the rotary
// embedding are Llama's: llama_parts.h) with four scalar multipliers, each a statement of its own:
//   GraniteModel.forward: `inputs_embeds = inputs_embeds * embedding_multiplier` (always executed, also at 1.0):
//     the embedding's output dies at the rebinding; the product is what the model keeps bound (as
//     inputs_embeds and the first hidden_states) until it returns.
//   GraniteAttention: scaling = attention_multiplier (a Python float given to the attention interface: no tensor).
//   GraniteDecoderLayer: `hidden_states = residual + hidden_states * residual_multiplier`, after the attention and
//     after the MLP: the block's output stays bound to hidden_states until the add rebinds it, the product is a
//     temporary of that statement; MulBackward0 by a Python scalar saves nothing and hands back a fresh gradient.
//   GraniteForCausalLM: `logits = logits / logits_scaling` after lm_head: the head's output dies at the
//     rebinding, the loss reads the quotient (DivBackward0 by a Python scalar: a fresh gradient, nothing saved).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// GraniteDecoderLayer.forward (the skeleton holds its input until it returns).
TensorId granite_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const LlamaDecoderParams d = llama_decoder_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  const LlamaLayerParams& w = d.attn;
  TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = llama_attention(b, s, w, n1, c.cos, c.sin, c.mask, 0, attn_weights);
  b.drop(n1);
  TensorId h1 = granite_scaled_residual(b, h, a);
  TensorId n2 = rms_norm(b, h1, w.post_norm);
  b.hold(n2);
  const FfnParams& f = d.ffn;
  TensorId m = swiglu_mlp(b, n2, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b);
  b.drop(n2);
  TensorId out = granite_scaled_residual(b, h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

TensorId granite_scaled_residual(GraphBuilder& b, TensorId residual, TensorId x) {
  b.hold(x);
  TensorId sum = b.add(residual, b.scalar_op("mul_scalar", x, false));
  b.drop(x);
  return sum;
}

TensorId granite_embedding_multiplier(GraphBuilder& b, TensorId x) { return b.scalar_op("mul_scalar", x, false); }
TensorId granite_logits_scaling(GraphBuilder& b, TensorId x) { return b.scalar_op("div_scalar", x, false); }

void build_granite(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "granite has no sliding-window attention or experts");
  SkeletonSpec k{"embed_tokens.weight", "norm", false, false, granite_layer};
  k.embed_op = granite_embedding_multiplier;
  k.logits_op = granite_logits_scaling;
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
