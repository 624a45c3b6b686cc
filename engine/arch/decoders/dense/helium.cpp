// HeliumForCausalLM (transformers 5.17 models/helium/modeling_helium.py), training forward + causal-LM loss or one
// inference pass. LlamaForCausalLM's statements (the skeleton of phi_parts.h: embedding, causal mask, rotary
// embedding, layer loop, final norm, lm_head, loss; LlamaAttention, LlamaMLP and LlamaDecoderLayer's statements:
// llama_parts.h) except the norm:
//   HeliumRMSNorm.forward:
//     input_dtype = x.dtype; h = x.to(float32)            an fp32 copy of x in a 16-bit model (bound to
//                                                          hidden_states until rebound), x itself otherwise
//     variance = h.pow(2).mean(-1, keepdim=True)
//     h = h * torch.rsqrt(variance + eps)                  the fp32 normalised h
//     return (self.weight.to(float32) * h).to(input_dtype) the weight product runs in fp32 (LlamaRMSNorm casts h
//                                                          back first): a 16-bit model makes an fp32 weight copy
//                                                          (saved by the product), keeps the fp32 h (saved) and a
//                                                          transient fp32 product before the 16-bit result.
//   Under fp32 and amp (fp32 residual stream, fp32 weights) every cast returns its input: LlamaRMSNorm's memory.
//   The same norm is the final model.norm.
// HeliumAttention's o_proj is nn.Linear(hidden_size, hidden_size) over heads * head_dim inputs: the importer refuses
// heads * head_dim != hidden_size (the module's matmul would fail). Parameters per layer, registration order:
// self_attn.{q,k,v,o}_proj (bias with attention_bias, o_proj never), mlp.{gate,up,down}_proj (bias with mlp_bias),
// input_layernorm, post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct HeliumLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, gate, up, down, gate_b, up_b, down_b, in_norm, post_norm;
};

HeliumLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  HeliumLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, /*o_bias=*/false, w);
  auto bias = [&](const char* name, int64_t n) {
    return s.mlp_bias ? b.param(p + "mlp." + name + ".bias", {n}, train) : kNoTensor;
  };
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.gate_b = bias("gate_proj", I);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.up_b = bias("up_proj", I);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.down_b = bias("down_proj", H);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// HeliumRMSNorm.forward (the header's statements).
TensorId helium_rms_norm(GraphBuilder& b, TensorId x, TensorId w) {
  const DType in_dt = b.dtype(x);
  const TensorId x32 = b.to(x, DType::f32);
  const TensorId var = b.reduce_last("mean", b.pow_scalar(x32), false);
  const TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  const TensorId n = b.mul(x32, r);
  const TensorId y32 = b.mul(b.to(w, DType::f32), n);
  return b.to(y32, in_dt);
}

// HeliumAttention.forward: Llama's q / k / v views and rotary; eager attention as eager_attention_forward runs it
// with torch.matmul's reshapes seen per batch size (llama_parts.h eager_attention_o_proj: at B = 1 the rotated q
// and k merge their batch and head dims as views, no copies; whole-run fp32 b1 eager stream), SDPA as Llama's.
TensorId helium_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                          const SkeletonContext& c, TensorId& weights) {
  if (b.config().attn != AttnImpl::eager) return llama_attention(b, s, w, x, c.cos, c.sin, c.mask, 0, weights);
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;
  b.hold(q);
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, c.cos, c.sin);
  return eager_attention_o_proj(b, s, qe, ke, v, v_proj, c.mask, 0, w.o, w.ob, weights);
}

// HeliumDecoderLayer.forward (LlamaDecoderLayer's statements with HeliumRMSNorm; the skeleton holds its input until
// it returns).
TensorId helium_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const HeliumLayer w = layer_params(b, s, "model.layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  LlamaLayerParams a{};
  a.q = w.q;
  a.k = w.k;
  a.v = w.v;
  a.o = w.o;
  a.qb = w.qb;
  a.kb = w.kb;
  a.vb = w.vb;
  a.ob = w.ob;
  TensorId n1 = helium_rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId att = helium_attention(b, s, a, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, att);
  TensorId n2 = helium_rms_norm(b, h1, w.post_norm);
  b.hold(n2);  // the MLP's argument until it returns
  TensorId m = swiglu_mlp(b, n2, w.gate, w.up, w.down, w.gate_b, w.up_b, w.down_b);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);  // `hidden_states, _ = self.self_attn(...)`
  return out;
}

}  // namespace

void build_helium(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "helium has no sliding-window attention or experts");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "helium is modelled with silu (LlamaMLP's swiglu)");
  build_causal_lm_skeleton(b, s,
                           SkeletonSpec{"model.embed_tokens.weight", "model.norm", false, false, helium_layer,
                                        nullptr, false, helium_rms_norm});
}

}  // namespace memplan
