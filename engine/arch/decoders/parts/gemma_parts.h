// The Gemma decoders (transformers 5.17 models/gemma/modeling_gemma.py, gemma2/modeling_gemma2.py,
// gemma3/modeling_gemma3.py): one builder for the three modelling files, which share their embedding, norm,
// MLP and layer loop and differ where each version's statements differ (named per piece below).
#pragma once
#include <string>

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

// A Gemma decoder layer's parameters: q / k / v / o (biases kNoTensor without attention_bias), gemma3's q_norm /
// k_norm, the MLP's gate / up / down, the layer's norms (kNoTensor where the version has none). gemma_text_model
// registers them per version; VaultGemma (vaultgemma.cpp) registers its own two norms.
struct GemmaLayerParams {
  TensorId q, k, v, o, qb = kNoTensor, kb = kNoTensor, vb = kNoTensor, ob = kNoTensor;
  TensorId q_norm = kNoTensor, k_norm = kNoTensor;
  TensorId gate, up, down;
  TensorId in_norm, post_attn_norm, pre_ffn_norm = kNoTensor, post_ffn_norm = kNoTensor;
};

// ACT2FN[hidden_activation] in the MLP: one kernel; relu saves its output, the gelu / silu family their input.
TensorId gemma_activation(GraphBuilder& b, const std::string& act, TensorId x);

// GemmaAttention / Gemma2Attention / Gemma3Attention.forward on the normed input x: projections and head views
// (gemma3: q_norm / k_norm over them), RoPE with cos / sin, the cache update in inference, SDPA or eager attention
// (gemma2: eager softcaps the scores with s.attn_logit_softcapping; a single KV head's repeat_kv is a view), o_proj.
// `window`: the layer's sliding window (0: full). `weights`: eager's probabilities (held; the decoder layer binds
// them until it returns), kNoTensor for SDPA.
TensorId gemma_attention(GraphBuilder& b, const TransformerSpec& s, GemmaVersion ver, const GemmaLayerParams& w,
                         TensorId x, TensorId cos, TensorId sin, TensorId mask, int64_t window, TensorId& weights);

// Gemma2 / Gemma3ForCausalLM's final_logit_softcapping (s.final_logit_softcapping > 0): logits / cap, tanh (saves
// its result), * cap, each statement rebinding `logits`; the logits unchanged without it.
TensorId gemma_final_softcap(GraphBuilder& b, const TransformerSpec& s, TensorId logits);

// GemmaModel / Gemma2Model / Gemma3TextModel.forward from inputs_embeds `h` (the scaled embedding's output) on:
// the masks (or `given`: masks the caller made and holds, kNoTensor where an attention type runs unmasked), the
// rotary embeddings (P position rows), the decoder layers (parameters "layers.<i>." created here, in order), the
// final norm ("norm.weight"). inputs_embeds, its own masks and cos / sin stay bound until the norm has returned.
// Returns the normed hidden states. PaliGemma's language_model (engine/arch/vlm/paligemma.cpp) passes its
// prefix-LM masks.
struct GemmaMasks {
  TensorId full = kNoTensor, sliding = kNoTensor;
};
TensorId gemma_text_model(GraphBuilder& b, const TransformerSpec& s, GemmaVersion v, TensorId h, int64_t P,
                          const GemmaMasks* given);

// GemmaForCausalLM / Gemma2ForCausalLM / Gemma3ForCausalLM (training forward + loss, or one inference pass).
void build_gemma_decoder(GraphBuilder& b, const TransformerSpec& s, GemmaVersion v);

}  // namespace memplan
