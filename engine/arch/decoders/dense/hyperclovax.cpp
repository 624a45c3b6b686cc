// HyperCLOVAXForCausalLM (transformers 5.17 models/hyperclovax/modeling_hyperclovax.py, modular_hyperclovax.py;
// NAVER's HyperCLOVA X SEED), training forward + causal-LM loss or one inference pass. modular_hyperclovax.py builds
// it from Granite's classes (granite.cpp: GraniteModel's `inputs_embeds * embedding_multiplier` before the mask and
// the rotary embedding, GraniteAttention with scaling = attention_multiplier, a Python float, GraniteMLP = SwiGLU,
// GraniteRMSNorm = Llama's), with two changes:
//   HyperCLOVAXDecoderLayer (Peri-Layer Normalization, config.use_post_norm, HyperclovaxFields):
//       residual = hidden_states; hidden_states = input_layernorm(hidden_states)
//       hidden_states, _ = self_attn(...)              the normed input dies at the rebinding
//       hidden_states = post_norm1(hidden_states)      RMSNorm: the attention output is bound to hidden_states
//                                                      until the norm returns (rms_norm's held_input)
//       hidden_states = residual + hidden_states * residual_multiplier   (granite_scaled_residual)
//       residual = hidden_states; hidden_states = post_attention_layernorm(hidden_states)
//       hidden_states = mlp(hidden_states); hidden_states = post_norm2(hidden_states)   (likewise)
//       hidden_states = residual + hidden_states * residual_multiplier
//     With use_post_norm False both norms are nn.Identity, which returns its argument: Granite's layer exactly.
//   HyperCLOVAXForCausalLM: `logits = self.lm_head(hidden_states[:, slice_indices, :]) * logits_scaling`, one
//     statement where Granite divides in a second one: the head's output is the product's temporary argument and
//     dies when the product exists, as Granite's rebinding frees it; MulBackward0 by a Python float saves nothing.
// Parameters per layer, in registration order: self_attn q / k / v / o (biases with attention_bias), mlp gate / up /
// down (biases with mlp_bias), input_layernorm, post_attention_layernorm, then post_norm1 and post_norm2 (created in
// HyperCLOVAXDecoderLayer.__init__ after GraniteDecoderLayer's).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/dense/hyperclovax_fields.h"
#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/family_fields.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// HyperCLOVAXDecoderLayer.forward (the skeleton holds its input until it returns).
TensorId hyperclovax_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const bool post_norm = family_fields<HyperclovaxFields>(s).use_post_norm;
  const std::string p = "layers." + std::to_string(i) + ".";
  const bool train = !layer_frozen(b.config(), i);
  const LlamaDecoderParams d = llama_decoder_params(b, s, p, train);
  TensorId pn1 = kNoTensor, pn2 = kNoTensor;
  if (post_norm) {
    pn1 = b.param(p + "post_norm1.weight", {s.hidden_size}, train);
    pn2 = b.param(p + "post_norm2.weight", {s.hidden_size}, train);
  }
  const LlamaLayerParams& w = d.attn;
  TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = llama_attention(b, s, w, n1, c.cos, c.sin, c.mask, 0, attn_weights);
  b.drop(n1);
  if (post_norm) a = rms_norm(b, a, pn1, /*held_input=*/true);
  TensorId h1 = granite_scaled_residual(b, h, a);
  TensorId n2 = rms_norm(b, h1, w.post_norm);
  b.hold(n2);  // bound to hidden_states until the MLP returns
  const FfnParams& f = d.ffn;
  TensorId m = swiglu_mlp(b, n2, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b);
  b.drop(n2);
  if (post_norm) m = rms_norm(b, m, pn2, /*held_input=*/true);
  TensorId out = granite_scaled_residual(b, h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

// `self.lm_head(...) * self.config.logits_scaling` (a Python float: a fresh tensor).
TensorId hyperclovax_logits_scaling(GraphBuilder& b, TensorId x) { return b.scalar_op("mul_scalar", x, false); }

}  // namespace

void build_hyperclovax(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "hyperclovax has no sliding-window attention or experts");
  (void)family_fields<HyperclovaxFields>(s);  // refused before any graph is built when the importer set none
  SkeletonSpec k{"embed_tokens.weight", "norm", false, false, hyperclovax_layer};
  k.embed_op = granite_embedding_multiplier;
  k.logits_op = hyperclovax_logits_scaling;
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
