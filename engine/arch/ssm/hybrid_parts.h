// What the Mamba2 / attention hybrids GraniteMoeHybridForCausalLM (granitemoehybrid.cpp) and BambaForCausalLM
// (bamba.cpp) share (transformers 5.17 models/granitemoehybrid, models/bamba): the model's forward around its
// decoder layers, and the attention layers' three rotary variants. Their Mamba2 mixer is Mamba2Mixer.forward
// statement for statement (GraniteMoeHybridMambaLayer, BambaMixer), so the layers call mamba_parts.h's
// mamba2_mixer; no mamba_ssm / causal_conv1d kernels on the measuring machine: the PyTorch paths run.
#pragma once
#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

// What every decoder layer of the model's loop sees: the causal mask of the attention layers (kNoTensor where
// SDPA's is_causal replaces it) and the rotary cos / sin (kNoTensor without a rotary embedding).
struct HybridContext {
  TensorId mask = kNoTensor, cos = kNoTensor, sin = kNoTensor;
};

// One decoder layer: `params(i, prefix, train)` registers layer i's parameters under "layers.<i>." in the module's
// order and returns its forward, which maps the layer input h to the layer output. `weights` receives what the
// layer returns beside its hidden states and the model's loop keeps bound until the next layer rebinds it (Bamba's
// `hidden_states, attn_weights = decoder_layer(...)`: eager attention's probabilities; kNoTensor otherwise).
using HybridLayerFn = std::function<TensorId(TensorId h, const HybridContext& c, TensorId& weights)>;
using HybridLayerFactory = std::function<HybridLayerFn(int64_t i, const std::string& prefix, bool train)>;

struct HybridModelSpec {
  const char* final_norm = "norm";  // "norm" (granitemoehybrid) or "final_layernorm" (bamba)
  bool embedding_multiplier = false;  // granitemoehybrid: inputs_embeds * embedding_multiplier, before the masks
  TensorId (*logits_op)(GraphBuilder&, TensorId) = nullptr;  // granitemoehybrid: / logits_scaling
  HybridLayerFactory layer;
};

// The model's forward as both files write it: embed_tokens (the construction scalar first, the head tied when
// s.tie_word_embeddings), the embedding multiplier (granite), DynamicCache(config) in inference (no allocation
// until a layer writes), position ids (generate(): the [B, S] tensor it passes), create_causal_mask for the
// attention layers (SDPA: skipped without padding; eager: the float mask) and create_recurrent_attention_mask for
// the mamba layers (None; inside generate()'s prefill its all-ones check), the rotary cos / sin when s.hybrid_rope
// (over rotary_dim, or head_dim), the layers (each holding its input until it returns; checkpointed / frozen per
// the run), the final RMSNorm, then causal_lm_tail (lm_head, logits_op, ForCausalLMLoss or the last logits).
void hybrid_causal_lm(GraphBuilder& b, const TransformerSpec& s, const HybridModelSpec& m);

// The attention layers' forward on the normed input x with the projections `w` (attention_projection_params'
// "self_attn.{q,k,v,o}_proj"): q / k / v head views, then
//   no rotary (granitemoehybrid "nope"): q and k reach the attention as the projections' transposed views;
//   full rotary (granitemoehybrid "rope"): Llama's apply_rotary_pos_emb (rope_qk);
//   partial rotary (bamba, s.rotary_dim < head_dim): q[..., :rot] / k[..., :rot] rotated, then
//     torch.cat([q_embed, q_pass]) and the same for k, all inside apply_rotary_pos_emb;
// the cache update in inference, SDPA / eager, attn_output.reshape(B, S, nh * hd), o_proj. `weights`: eager
// attention's probabilities, held (the caller binds them); kNoTensor for SDPA.
TensorId hybrid_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                          const HybridContext& c, TensorId& weights);

}  // namespace memplan
