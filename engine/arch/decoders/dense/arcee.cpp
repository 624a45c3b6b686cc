// ArceeForCausalLM (transformers 5.17 models/arcee/modeling_arcee.py), training forward + causal-LM loss or one
// inference pass. LlamaForCausalLM's statements (RMSNorm, rotary embedding, attention: llama_parts.h) except the
// MLP, which is not gated:
//   ArceeMLP: down_proj(act_fn(up_proj(x))), act_fn = ACT2FN["relu2"] (ReLUSquaredActivation):
//     relu_applied = F.relu(x)      a new tensor; ReluBackward0 saves its result
//     squared = torch.square(relu)  CompositeImplicit: pow(x, 2), which autocast runs under its fp32 policy, so
//                                   under amp the relu output is first cast to fp32 and that copy is what
//                                   PowBackward0 saves (and the fp32 square is down_proj's argument until it
//                                   returns, past autocast's cast: phi_parts.h relu_squared_mlp; the up_proj
//                                   output, the activation's argument, lives until the square returns)
//   Parameters: up_proj then down_proj (no gate_proj), registered after self_attn and before the two norms.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct ArceeLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, up, up_b, down, down_b, in_norm, post_norm;
};

// Registration order: self_attn.{q,k,v,o}_proj (bias with attention_bias), mlp.up_proj, mlp.down_proj (bias with
// mlp_bias), input_layernorm, post_attention_layernorm.
ArceeLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  ArceeLayer w;
  attention_projection_params(b, s, p, train, s.qkv_bias, s.o_bias, w);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.up_b = s.mlp_bias ? b.param(p + "mlp.up_proj.bias", {I}, train) : kNoTensor;
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.down_b = s.mlp_bias ? b.param(p + "mlp.down_proj.bias", {H}, train) : kNoTensor;
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// ArceeDecoderLayer.forward (LlamaDecoderLayer's statements; the skeleton holds its input until it returns).
TensorId arcee_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const ArceeLayer w = layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  LlamaLayerParams a_w{};
  a_w.q = w.q;
  a_w.k = w.k;
  a_w.v = w.v;
  a_w.o = w.o;
  a_w.qb = w.qb;
  a_w.kb = w.kb;
  a_w.vb = w.vb;
  a_w.ob = w.ob;
  TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = llama_attention(b, s, a_w, n1, c.cos, c.sin, c.mask, 0, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = rms_norm(b, h1, w.post_norm);
  b.hold(n2);
  TensorId m = relu_squared_mlp(b, n2, w.up, w.up_b, w.down, w.down_b);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_arcee(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "arcee has no sliding-window attention or experts");
  if (s.hidden_act != "relu2")
    throw InputError("model.hidden_act", s.hidden_act, "arcee is modelled with relu2 (ReLUSquaredActivation)");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"embed_tokens.weight", "norm", false, false, arcee_layer});
}

}  // namespace memplan
