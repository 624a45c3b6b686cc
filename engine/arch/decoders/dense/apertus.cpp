// ApertusForCausalLM (transformers 5.17 models/apertus/modeling_apertus.py), training forward + causal-LM loss
// or one inference pass. LlamaForCausalLM's skeleton (phi_parts.h build_causal_lm_skeleton: embedding, causal
// mask, rotary cos / sin, layer loop, final RMSNorm, lm_head, loss); what differs:
//   ApertusAttention.forward: q / k / v projections and their [B, H, S, D] head views (llama_qkv_views), then
//     query_states = self.q_norm(query_states)   RMSNorm over head_dim of the transposed head view (the view
//     key_states = self.k_norm(key_states)       stays bound until the norm returns), *before* the rotary
//   embedding (rope_qk on the normed q / k), then the attention from the cache update on (attention_o_proj).
//   The norm's output keeps the view's [B, S, H, D] memory order (.to() and elementwise ops preserve strides),
//   so eager attention copies q for its matmul as Llama's does; the rotary backward's contiguous gradient
//   reaches the transposed view through the norm's elementwise backward, so the head view copies it back
//   (view_copying_grad, as Llama's).
//   ApertusMLP: down_proj(act_fn(up_proj(x))), no gate. act_fn = XIELUActivation (activations.py) for
//   hidden_act "xielu" (the default), else ACT2FN[hidden_act] (single-kernel activations).
//   ApertusDecoderLayer: LlamaDecoderLayer's statements with attention_layernorm / feedforward_layernorm.
//   Parameters per layer, registration order: self_attn.{q,k,v,o}_proj (bias with attention_bias),
//   self_attn.q_norm, self_attn.k_norm, mlp.up_proj, mlp.down_proj, mlp.act_fn.alpha_p and alpha_n ([1] each;
//   buffers beta and eps, 0-dim), attention_layernorm, feedforward_layernorm.
//
// XIELUActivation: the GPU image has no `xielu` package, so forward runs _xielu_python:
//   alpha_p = softplus(self.alpha_p)                 [1]; softplus runs under autocast's fp32 policy
//   alpha_n = self.beta + softplus(self.alpha_n)     [1]
//   torch.where(x > 0,                               a bool [N] mask, saved by where's backward
//               alpha_p * x * x + self.beta * x,     alpha_p is a 1-element *dimensioned* tensor, so under amp
//                                                    (fp32 parameters, bf16 x) both products are fp32; the
//                                                    first product is saved by the second, x by both
//               (torch.expm1(torch.min(x, self.eps)) - x) * alpha_n + self.beta * x)
//                                                    beta / eps are 0-dim: they do not promote x's dtype;
//                                                    minimum saves x, expm1 its result (its input cast to fp32
//                                                    first under autocast's fp32 policy), the difference is
//                                                    saved by the product with alpha_n
// The parameters are created in the default dtype (config.dtype is None for a model built from a config), the
// model's parameter dtype. The result (fp32 under amp) stays bound as down_proj's argument until it returns.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct ApertusLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, up, down, alpha_p = kNoTensor, alpha_n = kNoTensor,
      beta = kNoTensor, eps = kNoTensor, in_norm, post_norm;
};

ApertusLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, hd = s.head_dim;
  ApertusLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  if (s.hidden_act == "xielu") {
    w.alpha_p = b.param(p + "mlp.act_fn.alpha_p", {1}, train);
    w.alpha_n = b.param(p + "mlp.act_fn.alpha_n", {1}, train);
    w.beta = b.buffer(p + "mlp.act_fn.beta", {}, b.param_dtype());
    w.eps = b.buffer(p + "mlp.act_fn.eps", {}, b.param_dtype());
  }
  w.in_norm = b.param(p + "attention_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "feedforward_layernorm.weight", {H}, train);
  return w;
}

// XIELUActivation._xielu_python(x) (header): returns torch.where's output. One builder call per Python operator,
// in evaluation order (left to right; the ops' creation order is also their backward order).
TensorId xielu(GraphBuilder& b, const ApertusLayer& w, TensorId x) {
  const Shape shp = b.shape(x);
  const DType dt = b.dtype(x);
  const int64_t n = b.numel(x), x_bytes = checked_mul(n, dtype_bytes(dt));
  const TensorId ap = b.unary("softplus", w.alpha_p, true, false, true);
  const TensorId an = b.add(w.beta, b.unary("softplus", w.alpha_n, true, false, true));
  // `x > 0` (evaluated first, a bool argument of where): no gradient, so no read of x is recorded for autograd.
  const TensorId pos_mask = b.generic_one("gt_scalar", {}, shp, DType::boolean);
  const TensorId apx = b.mul(ap, x);
  const TensorId sq = b.mul(apx, x);
  const TensorId bx_pos = b.scalar_op("mul_beta", x, false);  // beta * x: MulBackward keeps beta only
  const TensorId pos = b.add(sq, bx_pos);
  // torch.min(x, eps) = minimum, saving x (and the 0-dim eps). Its backward,
  // where(self == other, grad / 2, grad).masked_fill_(self > other, 0), is one C++ full-expression: grad / 2 and
  // the == mask (arguments evaluated right to left) exist before the gradient, the > mask after it, and all
  // three are destroyed together at its end (whole-run stream: a84 a42 a84 a42 f42 f42 f84, bf16 b1 s2048).
  const TensorId lo =
      b.generic({"minimum", {x}, {{shp, dt}}, {0}, {}, {}, {}, {x_bytes, n, n}})[0];
  // torch.expm1: autocast's fp32 policy casts its argument first; ExpBackward-like formula grad * (result + 1)
  // makes `result + 1` before the gradient (whole-run stream).
  b.hold(lo);  // expm1's argument until it returns (under amp its fp32 cast is made and freed inside the call)
  const TensorId lo_c = b.autocast_fp32(lo);
  const int64_t em_bytes = checked_mul(n, dtype_bytes(b.dtype(lo_c)));
  const TensorId em = b.generic({"expm1", {lo_c}, {{shp, b.dtype(lo_c)}}, {}, {0}, {}, {}, {em_bytes}})[0];
  b.drop(lo);
  const TensorId diff = b.sub(em, x);
  const TensorId scaled = b.mul(diff, an);
  const TensorId bx_neg = b.scalar_op("mul_beta", x, false);
  const TensorId neg = b.add(scaled, bx_neg);
  // where(cond, a, b): WhereBackward keeps the condition and writes a fresh gradient for each branch.
  const DType out_dt = b.dtype(pos) == b.dtype(neg) ? b.dtype(pos) : DType::f32;
  return b.generic({"where", {pos_mask, pos, neg}, {{shp, out_dt}}, {0}, {}, {}, {}})[0];
}

// ApertusAttention.forward on the normed input x. `weights`: eager attention's probabilities, held.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const ApertusLayer& w, TensorId x,
                   const SkeletonContext& c, TensorId& weights) {
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(k);                  // key_states, bound until its norm rebinds it
  const TensorId qn = rms_norm(b, q, w.q_norm, /*held_input=*/true);
  b.hold(qn);
  const TensorId kn = rms_norm(b, k, w.k_norm, /*held_input=*/false);
  b.hold(kn);
  b.drop(k);
  auto [qe, ke] = rope_qk(b, qn, kn, c.cos, c.sin);  // releases qn / kn once both are rotated
  return attention_o_proj(b, s, qe, ke, v, v_proj, c.mask, c.window, w.o, w.ob, weights);
}

TensorId apertus_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const ApertusLayer w = layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm,
      [&](TensorId x, TensorId& weights) { return attention(b, s, w, x, c, weights); },
      [&](TensorId n2) {
        TensorId u = b.linear(n2, w.up);
        b.hold(u);  // act_fn's argument until it returns (without autograd nothing else keeps it through torch.where)
        TensorId act = s.hidden_act == "xielu" ? xielu(b, w, u) : activation(b, s.hidden_act, u);
        b.drop(u);
        b.hold(act);  // down_proj's argument until it returns (under amp the fp32 result outlives the bf16 cast)
        TensorId m = b.linear(act, w.down);
        b.drop(act);
        return m;
      });
}

}  // namespace

void build_apertus(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "apertus has no sliding-window attention or experts");
  if (s.hidden_act != "xielu" && !is_single_kernel_activation(s.hidden_act))
    throw InputError("model.hidden_act", s.hidden_act, "apertus is modelled with xielu, silu, gelu or relu");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"embed_tokens.weight", "norm", false, false, apertus_layer});
}

}  // namespace memplan
