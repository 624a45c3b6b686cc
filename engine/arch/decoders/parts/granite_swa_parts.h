// The statements GraniteSWAForCausalLM (engine/arch/decoders/dense/granite_swa.cpp) and GraniteMoeSWAForCausalLM
// (engine/arch/decoders/moe/granitemoe_swa.cpp) share (transformers 5.17 models/granite_swa, models/granitemoe_swa:
// the second file is generated from the first for everything but the feed-forward block): the model's forward
// around the decoder layers, and the attention with its learnable per-head sink.
//
// *SWAModel.forward:
//   inputs_embeds = embed_tokens(ids) * embedding_multiplier     the embedding's output dies at the rebinding
//   position_ids = arange(S) + past_seen_tokens, unsqueeze(0)    (no position_ids passed: training, the harness's
//                                                                 prefill) the arange freed once the sum exists
//   causal_mask_mapping = {full: create_causal_mask, sliding: create_sliding_window_causal_mask}  both always made
//                                                                 (eager: two float masks), bound until the return
//   position_embeddings_by_theta: one rotary embedding per distinct non-zero layer_rope_theta (Llama's, cos / sin
//                                 cast to the hidden dtype), all run before the layers, bound until the return
//   layers (layer_types picks the mask, layer_rope_theta the table or NoPE), norm, then the CausalLM head:
//   lm_head, `logits / logits_scaling`, the loss.
// *SWAPreTrainedModel has _supports_sdpa = False: from_config(attn_implementation="sdpa") raises, so only eager
// attention is modelled (flash / flex kernels are not).
#pragma once
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

// GraniteSWAAttention's parameters under "<p>self_attn.": q / k / v / o (each with its bias when
// config.attention_bias), then `sinks` [num_heads] (nn.Parameter, registered after o_proj).
struct GraniteSwaAttnParams {
  TensorId q = kNoTensor, qb = kNoTensor, k = kNoTensor, kb = kNoTensor, v = kNoTensor, vb = kNoTensor,
           o = kNoTensor, ob = kNoTensor, sinks = kNoTensor;
};
GraniteSwaAttnParams granite_swa_attention_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p,
                                                  bool train);

// GraniteSWAAttention.forward on the normed input x with the layer's mask, window and cos / sin (kNoTensor: a NoPE
// layer, q / k stay the projections' head views). eager_attention_forward with the sink:
//   key_states / value_states = repeat_kv(...)               copies when num_kv_heads < num_heads, bound until return
//   attn_weights = matmul(q, k^T) * scaling + mask           the masked scores stay bound (and LogsumexpBackward keeps
//                                                             them) until backward
//   lse = logsumexp(attn_weights, -1)                         [B, H, S]; ATen: amax, (x - max).exp_() a full-size
//                                                             temporary, sum; backward: grad * (x - lse).exp(), two
//                                                             full-size temporaries of the expression
//   sink_scale = (lse - sinks.view(1, -1, 1)).to(f32).sigmoid()   SigmoidBackward keeps its fp32 output
//   attn_weights = softmax(attn_weights, dtype=f32).to(q.dtype); dropout    returned (bound to `_` by the layer)
//   attn_output = matmul(attn_weights, v) * sink_scale.unsqueeze(-1).to(attn_output.dtype)   MulBackward keeps both
//   attn_output.transpose(1, 2).contiguous(), reshape, o_proj.
// `weights`: the probabilities, held (the decoder layer drops them as it returns).
TensorId granite_swa_attention(GraphBuilder& b, const TransformerSpec& s, const GraniteSwaAttnParams& w, TensorId x,
                               const SkeletonContext& c, TensorId& weights);

// The model's forward and the CausalLM head (above) around `layer`, which runs decoder layer i from h with its
// mask / window / rotary tables in the context (the caller's layer registers its parameters in module order).
void build_granite_swa_model(GraphBuilder& b, const TransformerSpec& s, LayerFn layer);

// The refusals both builders share: eager attention only, a sliding window, and per-layer lists sized to the layers.
void check_granite_swa_spec(const GraphBuilder& b, const TransformerSpec& s);

}  // namespace memplan
