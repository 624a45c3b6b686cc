// GraniteSWAForCausalLM (transformers 5.17 models/granite_swa/modeling_granite_swa.py, generated from
// modular_granite_swa.py: Granite's multipliers on Llama's layer, sliding-window layers and a learnable per-head
// attention sink), training forward + causal-LM loss or one inference pass.
//   The model's forward around the layers and the sink attention: granite_swa_parts.h (shared with granitemoe_swa).
//   GraniteSWADecoderLayer (granite.cpp's layer with the sink attention):
//     residual = h; h = input_layernorm(h); h, _ = self_attn(h)     the probabilities bound to `_` until return
//     h = residual + h * residual_multiplier                         granite_scaled_residual (granite_parts.h)
//     residual = h; h = post_attention_layernorm(h); h = mlp(h)      GraniteSWAMLP is LlamaMLP (swiglu_mlp)
//     h = residual + h * residual_multiplier
// Registration order per layer: self_attn q, k, v, o (biases with attention_bias), sinks [heads], mlp gate, up,
// down (biases with mlp_bias), input_layernorm, post_attention_layernorm. Model: embed_tokens, layers, norm;
// lm_head (tie_word_embeddings defaults to True).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/granite_swa_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

TensorId granite_swa_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const bool train = !layer_frozen(b.config(), i);
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  const GraniteSwaAttnParams w = granite_swa_attention_params(b, s, p, train);
  auto bias = [&](const char* name, int64_t n) {
    return s.mlp_bias ? b.param(p + "mlp." + name + ".bias", {n}, train) : kNoTensor;
  };
  const TensorId gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  const TensorId gate_b = bias("gate_proj", I);
  const TensorId up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  const TensorId up_b = bias("up_proj", I);
  const TensorId down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  const TensorId down_b = bias("down_proj", H);
  const TensorId in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  const TensorId post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);

  TensorId n1 = rms_norm(b, h, in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = granite_swa_attention(b, s, w, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = granite_scaled_residual(b, h, a);
  TensorId n2 = rms_norm(b, h1, post_norm);
  b.hold(n2);  // bound to hidden_states until the MLP returns
  TensorId m = swiglu_mlp(b, n2, gate, up, down, gate_b, up_b, down_b);
  b.drop(n2);
  TensorId out = granite_scaled_residual(b, h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_granite_swa(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts > 0)
    throw InputError("model.num_experts", std::to_string(s.num_experts), "granite_swa has no experts");
  build_granite_swa_model(b, s, granite_swa_layer);
}

}  // namespace memplan
