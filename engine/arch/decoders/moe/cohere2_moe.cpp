// Cohere2MoeForCausalLM (transformers 5.17 models/cohere2_moe/modeling_cohere2_moe.py; Command A+), training forward
// + causal-LM loss or one inference pass (generate() with the DynamicCache). modular_cohere2_moe.py builds it from
// Cohere2's classes (the parallel decoder layer, Cohere2's attention, rotary embedding, masks and logit scale:
// cohere_parts.h) and Mixtral's experts, with these differences:
//   - Cohere2MoeDecoderLayer: input_layernorm is Cohere2MoeRMSNorm (llama's statements: rms_norm) when
//     config.rms_norm_eps is set, else Cohere2's LayerNorm without bias; the model's final norm likewise. The
//     layer's MLP is Cohere2MoeMLP(prefix_dense_intermediate_size) on the "dense" layers of mlp_layer_types,
//     else Cohere2MoeSparseMoeBlock.
//   - Cohere2MoeAttention rotates q / k on its sliding layers and, when prefix_dense_sliding_window_pattern == 1,
//     on the dense layers too (force_rope); the full layers otherwise take no rotation (s.rope_layers).
//   - Cohere2MoeSparseMoeBlock.forward: hidden_states.view(-1, H) -> Cohere2MoeTopKRouter: router_logits =
//     F.linear(x, weight) [T, E]; topk over the LOGITS; softmax over the k selected (fp32) or sigmoid (optionally
//     divided by its sum); cast to the hidden dtype. The block binds the logits to `_` until it returns. Then
//     Cohere2MoeExperts (MixtralExperts under @use_experts_implementation: grouped_mm in training and the prefill,
//     batched_mm for generate()'s decode steps: deepseek_parts.h experts_grouped_mm) with those weights, plus the
//     shared experts' SwiGLU (intermediate_size * num_shared_experts) combined by "sum" or "average" ((a + b) / 2).
//     No auxiliary loss: the causal-LM output carries router_logits only when asked.
// The importer's fields (models/hf/import_cohere2_moe.cpp): moe_intermediate_size the experts' width, intermediate_size
// the dense prefix's, shared_expert_intermediate_size the shared experts' (0: none), moe_layers / rope_layers per layer; its
// family_fields (cohere2_moe_fields.h) the router, combination and norm choices.
// Stages: embed_tokens -> both masks (cohere2_masks) -> rotary cos / sin (fp32, repeat_interleave, cast to the hidden
// dtype) -> N x decoder layer -> norm -> lm_head (tied by default) * logit_scale -> loss or the last logits.
#include "engine/arch/builders.h"

#include <string>

#include "engine/arch/decoders/moe/cohere2_moe_fields.h"
#include "engine/arch/family_fields.h"

#include "engine/arch/decoders/parts/cohere_parts.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Cohere2MoeLayer {
  CohereLayer attn;  // q / k / v / o (+ biases) and in_norm; its MLP fields unused
  bool moe = false;
  TensorId router = kNoTensor;
  ExpertsParams experts;
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor;  // the dense MLP, or the shared experts
};

// Registration order (Cohere2MoeDecoderLayer.__init__): self_attn (q, k, v, o), mlp (dense: gate_proj, up_proj,
// down_proj; sparse: gate.weight, experts.gate_up_proj, experts.down_proj, shared_experts.*), input_layernorm.
Cohere2MoeLayer cohere2_moe_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size;
  Cohere2MoeLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w.attn);
  w.attn.q_norm = w.attn.k_norm = w.attn.gate = w.attn.up = w.attn.down = kNoTensor;
  w.moe = s.moe_layers[static_cast<size_t>(i)] != 0;
  int64_t I = s.intermediate_size;
  std::string mlp = p + "mlp.";
  if (w.moe) {
    const int64_t E = s.num_experts, Ie = s.moe_intermediate_size;
    w.router = b.param(p + "mlp.gate.weight", {E, H}, train);
    w.experts.experts = E;
    w.experts.top_k = s.num_experts_per_tok;
    w.experts.inter = Ie;
    w.experts.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * Ie, H}, train);
    w.experts.down = b.param(p + "mlp.experts.down_proj", {E, H, Ie}, train);
    I = s.shared_expert_intermediate_size;
    mlp = p + "mlp.shared_experts.";
  }
  if (I > 0) {
    w.gate = b.param(mlp + "gate_proj.weight", {I, H}, train);
    w.up = b.param(mlp + "up_proj.weight", {I, H}, train);
    w.down = b.param(mlp + "down_proj.weight", {H, I}, train);
  }
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  return w;
}

// Cohere2MoeSparseMoeBlock.forward on the normed input x [B, S, H].
TensorId cohere2_moe_block(GraphBuilder& b, const TransformerSpec& s, const Cohere2MoeLayer& w, TensorId x) {
  const Shape sh = b.shape(x);
  const int64_t B = sh[0], S = sh[1], H = sh[2], T = checked_mul(B, S), K = s.num_experts_per_tok;
  const DType dt = b.dtype(x);
  const TensorId flat = b.view(x, {T, H});
  // Cohere2MoeTopKRouter.forward.
  const TensorId logits = b.linear(flat, w.router);  // [T, E]; under amp autocast's 16-bit output
  b.hold(logits);  // router_logits: returned, bound to `_` until the block returns
  const DType ldt = b.dtype(logits);
  auto top = b.generic({"topk", {logits}, {{{T, K}, ldt}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  TensorId scores;
  if (!family_fields<Cohere2MoeFields>(s).sigmoid_router) {
    scores = b.softmax_last(b.to(top[0], DType::f32));  // F.softmax(router_scores, dim=1, dtype=torch.float)
  } else {
    scores = b.unary("sigmoid", top[0], false, true);
    if (s.norm_topk_prob) scores = b.binary("div", scores, b.reduce_last("sum", scores, false), true, true);
  }
  const TensorId weights = b.to(scores, dt);  // router_scores.to(hidden_states.dtype)
  const TensorId indices = top[1];
  b.hold(weights);  // router_scores / selected_experts: bound until the block returns
  b.hold(indices);
  TensorId out = experts_grouped_mm(b, w.experts, flat, weights, indices);
  if (w.gate != kNoTensor) {
    const TensorId shared = swiglu_mlp(b, flat, w.gate, w.up, w.down);
    b.hold(shared);  // shared_expert_output: bound until the block returns
    out = b.add(out, shared);
    if (!family_fields<Cohere2MoeFields>(s).shared_sum) out = b.scalar_op("div_scalar", out, false);  // (final + shared) / 2
    b.drop(shared);
  }
  for (TensorId t : {logits, weights, indices}) b.drop(t);
  return b.view(out, {B, S, H});
}

TensorId cohere2_moe_norm(GraphBuilder& b, const TransformerSpec& s, TensorId x, TensorId w) {
  return family_fields<Cohere2MoeFields>(s).rms_norm ? rms_norm(b, x, w) : cohere_layer_norm(b, x, w);
}

}  // namespace

void build_cohere2_moe(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.qk_layernorm) throw InputError("model.qk_layernorm", "true", "cohere2_moe has no q / k norms");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  for (const auto* v : {&s.sliding_layers, &s.moe_layers, &s.rope_layers})
    if (static_cast<int64_t>(v->size()) != s.num_layers)
      throw InputError("model.layer_types", std::to_string(v->size()) + " entries",
                       "sliding_layers, moe_layers and rope_layers need one entry per layer (" +
                           std::to_string(s.num_layers) + ")");
  bool any_moe = false;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;
  if (any_moe && (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts))
    throw InputError("model.num_experts_per_tok", std::to_string(s.num_experts_per_tok),
                     "must be in [1, num_experts] (" + std::to_string(s.num_experts) + ")");
  if (hd % 2 != 0) throw InputError("model.head_dim", std::to_string(hd), "must be even (rotate_half pairs dimensions)");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  const CausalMasks masks = cohere2_masks(b, s, b.dtype(h));  // before the rotary embedding
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);  // bound until the model's forward returns, as are cos / sin
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Cohere2MoeLayer w = cohere2_moe_layer_params(b, s, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
    const bool sliding = layer_is_sliding(s, i), rotary = s.rope_layers[static_cast<size_t>(i)] != 0;
    // Cohere2MoeDecoderLayer.forward: n = input_layernorm(h); out = residual + self_attn(n) + mlp(n).
    const TensorId n = cohere2_moe_norm(b, s, h, w.attn.in_norm);
    b.hold(n);  // hidden_states: both branches' input, bound until the layer returns
    TensorId attn_weights = kNoTensor;
    const TensorId a = cohere_attention(b, s, w.attn, n, cos, sin, sliding ? masks.sliding : masks.full,
                                        sliding ? s.sliding_window : 0, rotary, attn_weights);
    b.hold(a);
    const TensorId m = w.moe ? cohere2_moe_block(b, s, w, n) : swiglu_mlp(b, n, w.gate, w.up, w.down);
    b.hold(m);
    h = b.add(b.add(h, a), m);
    for (TensorId t : {a, m, n, attn_weights})
      if (t != kNoTensor) b.drop(t);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = cohere2_moe_norm(b, s, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, masks.full, masks.sliding})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, false, cohere_logit_scale);
}

}  // namespace memplan
