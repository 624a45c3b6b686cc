// Dots1ForCausalLM (transformers 5.17 models/dots1/modeling_dots1.py; rednote-hilab dots.llm1), training forward +
// causal-LM loss or one inference pass. Dots1Model.forward is Qwen3Model's: embed_tokens, the full-attention mask
// and (when layer_types has sliding layers) the sliding one, the rotary embedding (Llama's), the layers, the final
// RMSNorm, lm_head. What a layer runs:
//   Dots1Attention: Qwen3Attention's statements (engine/arch/decoders/dense/qwen3.cpp): q_norm / k_norm, an
//     RMSNorm over head_dim, on q_proj(x).view(B, S, H, D) / k_proj's before the transpose and the rotary
//     embedding; the sliding layers pass their window (sliding_window when layer_types marks them).
//   Dots1MLP (layers < first_k_dense_replace): LlamaMLP of intermediate_size.
//   Dots1MoE (the other layers) is DeepseekV3MoE statement for statement:
//     _, topk_weights, topk_indices = self.gate(x)   Dots1TopkRouter = DeepseekV3TopkRouter: fp32 logits over
//                                                    fp32 copies, sigmoid scores, + e_score_correction_bias (an
//                                                    fp32 buffer: _keep_in_fp32_modules_strict), top-2 sums per
//                                                    n_group groups, topk_group groups kept, top-k indices, the
//                                                    weights gathered from the sigmoid scores, renormalised when
//                                                    norm_topk_prob, * routed_scaling_factor
//                                                    (deepseek_parts.h deepseek_route, method noaux_tc), all
//                                                    three bound until the block returns
//     routed = experts(x.view(-1, H), idx, w)        @use_experts_implementation: grouped_mm (batched_mm in
//                                                    generate()'s decode steps) over moe_intermediate_size
//     return routed.view(B, S, H) + shared_experts(x)   Dots1MLP of moe_intermediate_size * n_shared_experts,
//                                                    run after the experts
// Registration order per layer: self_attn.{q,k,v,o}_proj (bias with attention_bias), self_attn.q_norm, k_norm,
// then the MLP (dense: gate_proj, up_proj, down_proj; MoE: experts.gate_up_proj [E, 2I, H], experts.down_proj
// [E, H, I], gate.weight [E, H] and its e_score_correction_bias buffer, shared_experts gate / up / down),
// input_layernorm, post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Dots1Layer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, in_norm, post_norm;
  bool moe = false;
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor;  // Dots1MLP, or the MoE's shared experts
  TensorId router = kNoTensor;
  ExpertsParams experts;
};

Dots1Layer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, hd = s.head_dim;
  Dots1Layer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  w.moe = i >= s.first_dense_layers;
  auto mlp = [&](const std::string& mp, int64_t I) {
    w.gate = b.param(mp + "gate_proj.weight", {I, H}, train);
    w.up = b.param(mp + "up_proj.weight", {I, H}, train);
    w.down = b.param(mp + "down_proj.weight", {H, I}, train);
  };
  if (w.moe) {
    ExpertsParams& e = w.experts;
    e.experts = s.num_experts;
    e.top_k = s.num_experts_per_tok;
    e.inter = s.moe_intermediate_size;
    e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {e.experts, 2 * e.inter, H}, train);
    e.down = b.param(p + "mlp.experts.down_proj", {e.experts, H, e.inter}, train);
    w.router = b.param(p + "mlp.gate.weight", {e.experts, H}, train);
    b.buffer(p + "mlp.gate.e_score_correction_bias", {e.experts}, DType::f32);  // _keep_in_fp32_modules_strict
    mlp(p + "mlp.shared_experts.", checked_mul(s.moe_intermediate_size, s.num_shared_experts));
  } else {
    mlp(p + "mlp.", s.intermediate_size);
  }
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// Dots1MoE.forward (the header's statements).
TensorId moe_block(GraphBuilder& b, const TransformerSpec& s, const Dots1Layer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], S = xs[1], H = s.hidden_size, T = checked_mul(B, S);
  const TensorId flat = b.view(x, {T, H});
  const DeepseekRoute r = deepseek_route_bound(b, s, flat, w.router);
  const TensorId routed = b.view(experts_grouped_mm(b, w.experts, flat, r.weights, r.indices), {B, S, H});
  const TensorId out = b.add(routed, swiglu_mlp(b, x, w.gate, w.up, w.down));
  for (TensorId t : {r.weights, r.indices, r.logits}) b.drop(t);
  return out;
}

}  // namespace

void build_dots1(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "dots1 is modelled with silu");
  if (s.first_dense_layers < s.num_layers &&
      (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "dots1's MoE layers need n_routed_experts >= num_experts_per_tok >= 1");
  if (!s.sliding_layers.empty() && static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  bool any_sliding = false;
  for (int64_t i = 0; i < s.num_layers; ++i) any_sliding = any_sliding || layer_is_sliding(s, i);
  auto [embed, ids, h, P] = llama_inputs(b, s);
  const TensorId inputs_embeds = h;
  const auto [mask, sliding_mask] = full_and_sliding_masks(b, s, true, any_sliding, b.dtype(h));
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Dots1Layer w = layer_params(b, s, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = rms_norm(b, h, w.in_norm, false);
    b.hold(n1);
    const bool sliding = layer_is_sliding(s, i);
    TensorId attn_weights = kNoTensor;
    TensorId a = qwen3_attention(b, s, w, n1, cos, sin, sliding ? sliding_mask : mask,
                                 sliding ? s.sliding_window : 0, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = rms_norm(b, h1, w.post_norm, false);
    b.hold(n2);
    TensorId m = w.moe ? moe_block(b, s, w, n2) : swiglu_mlp(b, n2, w.gate, w.up, w.down);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = rms_norm(b, h, b.param("model.norm.weight", {H}, emb_train), false);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, sliding_mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
