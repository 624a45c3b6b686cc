// Jais2ForCausalLM (transformers 5.17 models/jais2/modeling_jais2.py, modular_jais2.py; inceptionai's Jais 2),
// training forward + causal-LM loss or one inference pass. modular_jais2.py builds it from Llama's classes with three
// changes, and no scaling anywhere (no embedding multiplier, attention scaling head_dim ** -0.5, logits as lm_head
// returns them):
//   Jais2DecoderLayer: LlamaDecoderLayer's statements with input_layernorm and post_attention_layernorm
//     nn.LayerNorm(hidden, eps=layer_norm_eps) (weight and bias; under autocast layer_norm runs in fp32 and returns
//     fp32, so each projection casts its input), and Jais2Model's final norm likewise.
//   Jais2MLP = NemotronMLP: down_proj(act_fn(up_proj(x))), no gate, biases with mlp_bias (True by default),
//     act_fn = ACT2FN["relu2"] (ReLUSquaredActivation: phi_parts.h relu_squared_mlp, Arcee's and Nemotron's MLP).
//   Jais2Attention: LlamaAttention with bias=config.attention_bias on q / k / v AND o_proj (True by default).
// The rotary embedding, the single causal mask (create_causal_mask before the rotary embedding) and the CausalLM head
// are Llama's: build_causal_lm_skeleton (phi_parts.h), as Arcee's builder uses it.
// Parameters per layer, in registration order: self_attn.{q,k,v,o}_proj (weight, bias), mlp.up_proj, mlp.down_proj
// (weight, bias), input_layernorm, post_attention_layernorm (weight, bias).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Jais2Layer {
  TensorId q, k, v, o, qb, kb, vb, ob, up, up_b, down, down_b, ln1_w, ln1_b, ln2_w, ln2_b;
};

Jais2Layer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  Jais2Layer w;
  attention_projection_params(b, s, p, train, s.qkv_bias, s.o_bias, w);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.up_b = s.mlp_bias ? b.param(p + "mlp.up_proj.bias", {I}, train) : kNoTensor;
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.down_b = s.mlp_bias ? b.param(p + "mlp.down_proj.bias", {H}, train) : kNoTensor;
  w.ln1_w = b.param(p + "input_layernorm.weight", {H}, train);
  w.ln1_b = b.param(p + "input_layernorm.bias", {H}, train);
  w.ln2_w = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.ln2_b = b.param(p + "post_attention_layernorm.bias", {H}, train);
  return w;
}

// Jais2DecoderLayer.forward (the skeleton holds its input until it returns).
TensorId jais2_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const Jais2Layer w = layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  LlamaLayerParams a_w{};
  a_w.q = w.q;
  a_w.k = w.k;
  a_w.v = w.v;
  a_w.o = w.o;
  a_w.qb = w.qb;
  a_w.kb = w.kb;
  a_w.vb = w.vb;
  a_w.ob = w.ob;
  TensorId n1 = b.layer_norm(h, w.ln1_w, w.ln1_b);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = llama_attention(b, s, a_w, n1, c.cos, c.sin, c.mask, 0, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b);
  b.hold(n2);  // bound to hidden_states until the MLP returns
  TensorId m = relu_squared_mlp(b, n2, w.up, w.up_b, w.down, w.down_b);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_jais2(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "jais2 has no sliding-window attention or experts");
  if (s.hidden_act != "relu2")
    throw InputError("model.hidden_act", s.hidden_act, "jais2 is modelled with relu2 (ReLUSquaredActivation)");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"embed_tokens.weight", "norm", true, false, jais2_layer});
}

}  // namespace memplan
