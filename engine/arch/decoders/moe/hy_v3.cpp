// HYV3ForCausalLM (transformers 5.17 models/hy_v3/modeling_hy_v3.py; Tencent Hy3), training forward + causal-LM
// loss or one inference pass with the DynamicCache.
//
// Stages: the skeleton of build_causal_lm_skeleton (phi_parts.h; HYV3Model: embed_tokens, create_causal_mask (no
// sliding window), position ids, cos / sin [P, S, head_dim] in the hidden dtype (HYV3RotaryEmbedding is Llama's),
// the final RMSNorm, lm_head, loss) -> per layer LlamaDecoderLayer's statements (pre-norm: llama_residual_blocks)
// around:
//   HYV3Attention (parts/exaone_parts.h qk_normed_head_attention, rotary on every layer): q / k / v projections
//     (biases with attention_bias, o_proj's too) and their transposed head views, q_norm / k_norm over head_dim,
//     apply_rotary_pos_emb, eager / SDPA, o_proj;
//   the feed-forward: HYV3MLP (down(act(gate(x)) * up(x)), biases with mlp_bias) of intermediate_size where
//     config.mlp_layer_types[i] is "dense", else HYV3MoE:
//       hidden_states = x.view(-1, H) (bound until the MoE returns);
//       HYV3TopKRouter: router_logits = F.linear(h.float(), weight.float()) (fp32; bound to `_` by the MoE),
//         routing_weights = sigmoid(logits) (saved output), scores_for_choice = routing_weights +
//         e_score_correction_bias (the MoE's fp32 buffer), `_, top_k_index = topk(scores_for_choice, k)` (the
//         values bound to `_` until the router returns), top_k_weights = routing_weights.gather(1, index),
//         top_k_weights / (sum + 1e-20) (an out-of-place div: both operands saved), * router_scaling_factor;
//         no group selection (unlike DeepseekV3TopkRouter);
//       routed_output = experts(...) through transformers' default experts implementation grouped_mm
//         (deepseek_parts.h experts_grouped_mm; generate()'s decode steps batched_mm), bound until return;
//       enable_moe_fp32_combine (HyV3Fields): (routed_output.float() + shared_experts(h).float()).to(dtype), else
//         routed_output + shared_experts(h); .reshape(B, S, H) (a view).
//     The shared experts are an HYV3MLP of moe_intermediate_size * num_shared_experts (`intermediate_size or
//     config.intermediate_size`: 0 shared experts give one of intermediate_size).
// Parameters per layer, registration order: self_attn q / k / v / o (weight, bias), q_norm, k_norm; mlp: dense
// gate / up / down (+ biases), or gate.weight [E, H], experts.gate_up_proj [E, 2I, H], experts.down_proj [E, H, I],
// the fp32 e_score_correction_bias buffer [E], shared_experts gate / up / down (+ biases); input_layernorm,
// post_attention_layernorm.
#include "engine/arch/builders.h"

#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/decoders/moe/hy_v3_fields.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/exaone_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/family_fields.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct HyV3Layer {
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, qb = kNoTensor, kb = kNoTensor,
           vb = kNoTensor, ob = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor;
  bool moe = false;
  // The dense MLP, or the MoE's shared experts.
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor, gate_b = kNoTensor, up_b = kNoTensor,
           down_b = kNoTensor;
  ExpertsParams experts;
  TensorId router = kNoTensor;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

HyV3Layer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, hd = s.head_dim;
  HyV3Layer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  auto mlp = [&](const std::string& m, int64_t I) {
    auto bias = [&](const char* name, int64_t n) {
      return s.mlp_bias ? b.param(m + name + ".bias", {n}, train) : kNoTensor;
    };
    w.gate = b.param(m + "gate_proj.weight", {I, H}, train);
    w.gate_b = bias("gate_proj", I);
    w.up = b.param(m + "up_proj.weight", {I, H}, train);
    w.up_b = bias("up_proj", I);
    w.down = b.param(m + "down_proj.weight", {H, I}, train);
    w.down_b = bias("down_proj", H);
  };
  w.moe = s.moe_layers[static_cast<size_t>(i)] != 0;
  if (w.moe) {
    w.router = b.param(p + "mlp.gate.weight", {s.num_experts, H}, train);
    ExpertsParams& e = w.experts;
    e.experts = s.num_experts;
    e.top_k = s.num_experts_per_tok;
    e.inter = s.moe_intermediate_size;
    e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {s.num_experts, checked_mul(2, e.inter), H}, train);
    e.down = b.param(p + "mlp.experts.down_proj", {s.num_experts, H, e.inter}, train);
    // torch.zeros(E): fp32, kept so by _keep_in_fp32_modules_strict
    b.buffer(p + "mlp.e_score_correction_bias", {s.num_experts}, DType::f32);
    const int64_t shared = checked_mul(s.moe_intermediate_size, s.num_shared_experts);
    mlp(p + "mlp.shared_experts.", shared > 0 ? shared : s.intermediate_size);
  } else {
    mlp(p + "mlp.", s.intermediate_size);
  }
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// A tensor computed without autograd history (routing bookkeeping that only picks indices).
TensorId no_grad(GraphBuilder& b, std::string_view name, Shape shape, DType t) {
  return b.generic({name, {}, {{std::move(shape), t}}, {}, {}, {}, {}})[0];
}

// HYV3TopKRouter.forward over flat [T, H]: returns the routing weights [T, K] (the logits' dtype), indices [T, K] and the
// logits [T, E], all three held (the MoE binds them until it returns). The router's locals (routing_weights,
// scores_for_choice, topk's values `_`) die as it returns; the rebound top_k_weights as they are rebound (the
// gathered ones and the denominator stay saved by the division's backward in training).
DeepseekRoute hy_v3_route(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w) {
  const int64_t T = b.shape(flat)[0], E = s.num_experts, K = s.num_experts_per_tok;
  // F.linear(hidden_states.float(), self.weight.float()): fp32, except under amp, where linear autocasts back to the
  // low dtype; torch.sigmoid is on no autocast list, so routing_weights, the gathered top_k_weights and their
  // renormalisation keep the logits' dtype (scores_for_choice promotes to fp32 with the fp32 bias).
  DeepseekRoute r;
  r.logits = b.linear(b.to(flat, DType::f32), b.to(router_w, DType::f32));
  b.hold(r.logits);
  const DType rd = b.dtype(r.logits);
  const TensorId scores = b.unary("sigmoid", r.logits, false, true);  // routing_weights
  b.hold(scores);
  const TensorId choice = no_grad(b, "add", {T, E}, DType::f32);  // scores_for_choice
  b.hold(choice);
  auto top = b.generic({"topk", {}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {}, {}, {}});
  b.hold(top[0]);  // `_`
  r.indices = top[1];
  b.hold(r.indices);
  TensorId w = b.generic_one("gather", {scores, r.indices}, {T, K}, rd, {1});
  const TensorId den = b.add_scalar(b.reduce_last("sum", w, false));
  w = b.binary("div", w, den, true, true);
  r.weights = b.scalar_op("mul_scalar", w, false);  // * router_scaling_factor
  b.hold(r.weights);
  for (TensorId x : {scores, choice, top[0]}) b.drop(x);
  return r;
}

// HYV3MLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)).
TensorId hy_v3_mlp(GraphBuilder& b, const HyV3Layer& w, TensorId x) {
  return swiglu_mlp(b, x, w.gate, w.up, w.down, w.gate_b, w.up_b, w.down_b);
}

// HYV3MoE.forward on x [B, S, H] (bound by the decoder layer until it returns).
TensorId hy_v3_moe(GraphBuilder& b, const TransformerSpec& s, const HyV3Layer& w, TensorId x, bool fp32_combine) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size;
  const TensorId flat = b.view(x, {T, H});  // hidden_states, rebound: bound until the MoE returns
  b.hold(flat);
  const DeepseekRoute r = hy_v3_route(b, s, b.view(flat, {T, H}), w.router);
  const TensorId routed = experts_grouped_mm(b, w.experts, flat, r.weights, r.indices);
  b.hold(routed);  // routed_output
  TensorId out;
  if (fp32_combine) {
    const TensorId r32 = b.to(routed, DType::f32);
    b.hold(r32);  // the sum's left operand, alive while the shared experts run
    const TensorId sum = b.add(r32, b.to(hy_v3_mlp(b, w, flat), DType::f32));
    b.drop(r32);
    out = b.to(sum, b.dtype(x));
  } else {
    out = b.add(routed, hy_v3_mlp(b, w, flat));
  }
  for (TensorId t : {routed, r.weights, r.indices, r.logits, flat}) b.drop(t);
  return b.view(out, xs);
}

TensorId hy_v3_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const HyV3Layer w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  const bool fp32_combine = family_fields<HyV3Fields>(s).moe_fp32_combine;
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm,
      [&](TensorId x, TensorId& weights) {
        return qk_normed_head_attention(b, s, w, x, c.cos, c.sin, c.mask, 0, /*rotary=*/true, weights);
      },
      [&](TensorId n2) { return w.moe ? hy_v3_moe(b, s, w, n2, fp32_combine) : hy_v3_mlp(b, w, n2); });
}

}  // namespace

void build_hy_v3(GraphBuilder& b, const TransformerSpec& s) {
  (void)family_fields<HyV3Fields>(s);  // refused before any tensor is made when the importer set none
  if (static_cast<int64_t>(s.moe_layers.size()) != s.num_layers)
    throw InputError("model.moe_layers", std::to_string(s.moe_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  bool any_moe = false;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;
  if (any_moe && (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0 ||
                  s.num_experts_per_tok > s.num_experts))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "hy_v3's sparse layers need experts, num_experts_per_tok (at most num_experts) and "
                     "moe_intermediate_size");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "hy_v3 is modelled with silu");
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window), "hy_v3 has no sliding window");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"model.embed_tokens.weight", "model.norm", false, false, hy_v3_layer});
}

}  // namespace memplan
