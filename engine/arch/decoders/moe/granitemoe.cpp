// GraniteMoeForCausalLM and GraniteMoeSharedForCausalLM (transformers 5.17 models/granitemoe/modeling_granitemoe.py,
// models/granitemoeshared/modeling_granitemoeshared.py), training forward + causal-LM loss or one inference pass,
// on the shared CausalLM skeleton (phi_parts.h). The two files are one model; granitemoeshared adds a shared MLP.
//
// Stages of GraniteMoeModel.forward and what each costs:
//   embed_tokens; position_ids; create_causal_mask; then `inputs_embeds = inputs_embeds * embedding_multiplier`
//     (after the mask, unlike granite's dense model: SkeletonSpec::embed_op_after_mask): the embedding's output
//     dies at the rebinding, the product is what the model keeps bound until it returns.
//   GraniteMoeRotaryEmbedding is Llama's (cos / sin cast to the hidden dtype).
//   GraniteMoeDecoderLayer (granite's two scaled residuals around Mixtral's layer):
//     residual = h; h = input_layernorm(h); h, _ = self_attn(h)     GraniteMoeAttention is LlamaAttention with
//                                                                    scaling = attention_multiplier (a float)
//     h = residual + h * residual_multiplier                         the product a temporary of the statement
//     residual = h; h = post_attention_layernorm(h)
//     moe = block_sparse_moe(h)                                      (granitemoeshared: bound while the MLP runs)
//     granitemoeshared with shared_intermediate_size > 0: h = moe + shared_mlp(h)
//     h = residual + h * residual_multiplier
//   GraniteMoeMoE.forward: flat = x.reshape(-1, H); top_k_index, top_k_weights, _ = router(flat) (all three bound
//     until the block returns); experts(flat, index, weights) through @use_experts_implementation (grouped_mm;
//     batched_mm in generate()'s decode steps: qwen_parts.h qwen_moe_experts, the same integrations/moe.py code
//     Qwen3Moe / OLMoE run), then .view(B, S, H).
//   GraniteMoeTopKRouter.forward differs from Qwen3's router (which softmaxes all E logits before topk):
//     router_logits = F.linear(flat, weight).float()       [T, E] in the compute dtype, then an fp32 copy (the
//                                                           linear's output is a temporary; in fp32 no copy)
//     top_k_logits, top_k_index = router_logits.topk(K)    TopkBackward keeps the indices
//     top_k_weights = softmax(top_k_logits).type_as(flat)  SoftmaxBackward keeps its fp32 output; the cast is a
//                                                           copy unless flat is fp32 (AMP: the residual stream)
//   GraniteMoeSharedMLP.forward: input_linear [2 * Is] (bound, then its two chunk views, bound as a tuple until
//     the MLP returns), silu(chunk0) * chunk1, output_linear.
//   GraniteMoeForCausalLM: lm_head, then `logits = logits / logits_scaling` (the head's output dies at the
//     rebinding), the loss on the quotient. output_router_logits (the auxiliary loss) is refused by the importer.
// Registration order per layer: self_attn q, k, v, o (each bias after its weight with attention_bias),
// input_layernorm, post_attention_layernorm, block_sparse_moe.router.weight [E, H],
// block_sparse_moe.experts.gate_up_proj [E, 2I, H], .down_proj [E, H, I], then (shared) shared_mlp.input_linear
// [2 Is, H] and shared_mlp.output_linear [H, Is]. Model: embed_tokens, layers, norm; lm_head (tie default False).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct GraniteMoeLayer {
  LlamaLayerParams attn;
  TensorId router = kNoTensor, gate_up = kNoTensor, down = kNoTensor;
  TensorId shared_in = kNoTensor, shared_out = kNoTensor;  // granitemoeshared's shared_mlp
};

GraniteMoeLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, E = s.num_experts, I = s.moe_intermediate_size,
                Is = s.granite_shared_intermediate_size;
  GraniteMoeLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w.attn);
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.attn.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.router = b.param(p + "block_sparse_moe.router.weight", {E, H}, train);
  w.gate_up = b.param(p + "block_sparse_moe.experts.gate_up_proj", {E, 2 * I, H}, train);
  w.down = b.param(p + "block_sparse_moe.experts.down_proj", {E, H, I}, train);
  if (Is > 0) {
    w.shared_in = b.param(p + "shared_mlp.input_linear.weight", {2 * Is, H}, train);
    w.shared_out = b.param(p + "shared_mlp.output_linear.weight", {H, Is}, train);
  }
  return w;
}

// GraniteMoeDecoderLayer / GraniteMoeSharedDecoderLayer.forward (the skeleton holds the input until it returns).
TensorId granitemoe_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const GraniteMoeLayer w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  TensorId n1 = rms_norm(b, h, w.attn.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = llama_attention(b, s, w.attn, n1, c.cos, c.sin, c.mask, 0, attn_weights);
  b.drop(n1);
  TensorId h1 = granite_scaled_residual(b, h, a);
  TensorId n2 = rms_norm(b, h1, w.attn.post_norm);
  b.hold(n2);  // bound to hidden_states until the MoE block returns (shared: until the sum rebinds it)
  TensorId m = granite_moe_block(b, s, w.router, w.gate_up, w.down, n2);
  TensorId moe_out = kNoTensor;
  if (w.shared_in != kNoTensor) {
    moe_out = m;
    b.hold(moe_out);  // moe_hidden_states, a local bound until the layer returns
    m = b.add(moe_out, granite_shared_mlp(b, s, w.shared_in, w.shared_out, n2));
  }
  b.drop(n2);
  TensorId out = granite_scaled_residual(b, h1, m);
  if (moe_out != kNoTensor) b.drop(moe_out);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

TensorId granite_moe_block(GraphBuilder& b, const TransformerSpec& s, TensorId router, TensorId gate_up, TensorId down,
                           TensorId x) {
  const int64_t H = s.hidden_size;
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens;
  TensorId flat = b.view(x, {checked_mul(B, Sq), H});
  const QwenMoeRoute route = granite_topk_router(b, s, router, flat);
  TensorId out = b.view(qwen_moe_experts(b, s, gate_up, down, flat, route), {B, Sq, H});
  release_route(b, route);
  return out;
}

TensorId granite_shared_mlp(GraphBuilder& b, const TransformerSpec& s, TensorId input_linear, TensorId output_linear,
                            TensorId x) {
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens,
                Is = s.granite_shared_intermediate_size;
  TensorId proj = b.linear(x, input_linear);
  const auto halves = b.split(proj, 2, {B, Sq, Is});
  for (TensorId t : halves) b.hold(t);  // chunked_hidden_states, bound until the MLP returns
  TensorId prod = b.mul(b.unary("silu", halves[0], true, false), halves[1]);
  TensorId out = b.linear(prod, output_linear);
  for (TensorId t : halves) b.drop(t);
  return out;
}

QwenMoeRoute granite_topk_router(GraphBuilder& b, const TransformerSpec& s, TensorId weight, TensorId flat) {
  const int64_t T = b.shape(flat)[0], K = s.num_experts_per_tok;
  TensorId logits = b.to(b.linear(flat, weight), DType::f32);
  b.hold(logits);  // router_logits, returned (bound to `_`)
  auto top = b.generic({"topk", {logits}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  b.hold(top[0]);  // top_k_logits: a local until the router returns
  TensorId weights = b.to(b.softmax_last(top[0]), b.dtype(flat));
  b.drop(top[0]);
  b.hold(weights);
  b.hold(top[1]);
  return {logits, weights, top[1]};
}

void build_granitemoe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0)
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     s.model_type + "'s experts need num_local_experts, num_experts_per_tok and intermediate_size");
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError("model.num_experts_per_tok", std::to_string(s.num_experts_per_tok),
                     "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     s.model_type + " has no sliding-window attention");
  if (s.granite_shared_intermediate_size < 0 ||
      (s.granite_shared_intermediate_size > 0 && s.model_type != "granitemoeshared"))
    throw InputError("model.shared_intermediate_size", std::to_string(s.granite_shared_intermediate_size),
                     "a shared MLP exists only in granitemoeshared (and must not be negative)");
  SkeletonSpec k{"embed_tokens.weight", "norm", false, false, granitemoe_layer};
  k.embed_op = granite_embedding_multiplier;
  k.embed_op_after_mask = true;
  k.logits_op = granite_logits_scaling;
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
