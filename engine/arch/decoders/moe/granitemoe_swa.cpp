// GraniteMoeSWAForCausalLM (transformers 5.17 models/granitemoe_swa/modeling_granitemoe_swa.py, generated from
// modular_granitemoe_swa.py: granite_swa's model and sink attention around granitemoe's MoE block and
// granitemoeshared's shared MLP), training forward + causal-LM loss or one inference pass.
//   The model's forward around the layers and the sink attention: granite_swa_parts.h (shared with granite_swa).
//   GraniteMoeSWADecoderLayer (granitemoe.cpp's layer with the sink attention):
//     residual = h; h = input_layernorm(h); h, _ = self_attn(h)     the probabilities bound to `_` until return
//     h = residual + h * residual_multiplier
//     residual = h; h = post_attention_layernorm(h)
//     moe = block_sparse_moe(h)                                      granite_moe_block (granite_parts.h): the same
//                                                                    router (fp32 logits, topk, softmax of the top
//                                                                    k) and @use_experts_implementation experts
//     shared_intermediate_size > 0: h = moe + shared_mlp(h)          granite_shared_mlp (moe bound meanwhile)
//     h = residual + h * residual_multiplier
// Registration order per layer: self_attn q, k, v, o (biases with attention_bias), sinks [heads],
// input_layernorm, post_attention_layernorm, block_sparse_moe.router.weight [E, H], experts.gate_up_proj
// [E, 2I, H], experts.down_proj [E, H, I], then shared_mlp.input_linear [2 Is, H], output_linear [H, Is].
// Model: embed_tokens, layers, norm; lm_head (tie_word_embeddings defaults to False).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/granite_swa_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

TensorId granitemoe_swa_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h,
                              const SkeletonContext& c) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const bool train = !layer_frozen(b.config(), i);
  const int64_t H = s.hidden_size, E = s.num_experts, I = s.moe_intermediate_size,
                Is = s.granite_shared_intermediate_size;
  const GraniteSwaAttnParams w = granite_swa_attention_params(b, s, p, train);
  const TensorId in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  const TensorId post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  const TensorId router = b.param(p + "block_sparse_moe.router.weight", {E, H}, train);
  const TensorId gate_up = b.param(p + "block_sparse_moe.experts.gate_up_proj", {E, 2 * I, H}, train);
  const TensorId down = b.param(p + "block_sparse_moe.experts.down_proj", {E, H, I}, train);
  TensorId shared_in = kNoTensor, shared_out = kNoTensor;
  if (Is > 0) {
    shared_in = b.param(p + "shared_mlp.input_linear.weight", {2 * Is, H}, train);
    shared_out = b.param(p + "shared_mlp.output_linear.weight", {H, Is}, train);
  }

  TensorId n1 = rms_norm(b, h, in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = granite_swa_attention(b, s, w, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = granite_scaled_residual(b, h, a);
  TensorId n2 = rms_norm(b, h1, post_norm);
  b.hold(n2);  // bound to hidden_states until the MoE block returns (shared: until the sum rebinds it)
  TensorId m = granite_moe_block(b, s, router, gate_up, down, n2);
  TensorId moe_out = kNoTensor;
  if (shared_in != kNoTensor) {
    moe_out = m;
    b.hold(moe_out);  // moe_hidden_states, a local bound until the layer returns
    m = b.add(moe_out, granite_shared_mlp(b, s, shared_in, shared_out, n2));
  }
  b.drop(n2);
  TensorId out = granite_scaled_residual(b, h1, m);
  if (moe_out != kNoTensor) b.drop(moe_out);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_granitemoe_swa(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0)
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "granitemoe_swa's experts need num_local_experts, num_experts_per_tok and intermediate_size");
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError("model.num_experts_per_tok", std::to_string(s.num_experts_per_tok),
                     "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  if (s.granite_shared_intermediate_size < 0)
    throw InputError("model.shared_intermediate_size", std::to_string(s.granite_shared_intermediate_size),
                     "must not be negative");
  build_granite_swa_model(b, s, granitemoe_swa_layer);
}

}  // namespace memplan
