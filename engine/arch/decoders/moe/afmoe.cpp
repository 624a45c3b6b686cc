// AfmoeForCausalLM (transformers 5.17 models/afmoe/modeling_afmoe.py; Arcee's Trinity Nano / Mini), training forward +
// causal-LM loss or one inference pass with the DynamicCache.
//
// Stages: embed_tokens -> position ids -> causal_mask_mapping (create_causal_mask and
// create_sliding_window_causal_mask, both on every forward: olmo2_parts.h causal_mask_mapping, Olmo3Model's
// statements) -> `hidden_states = inputs_embeds * hidden_size ** 0.5` when mup_enabled (a fresh product; inputs_embeds
// stays bound) -> one rotary call, cos / sin [P, S, head_dim] in the hidden dtype (LlamaRotaryEmbedding's) -> N x
// AfmoeDecoderLayer -> norm -> lm_head -> loss, or the last logits.
//   AfmoeRMSNorm: x.to(f32), pow(2).mean(-1), x * rsqrt(var + eps), (weight * x).to(input dtype): Olmo2RMSNorm's
//   statements (olmo2_parts.h olmo2_rms_norm). _keep_in_fp32_modules names the norms and expert_bias, but only
//   from_pretrained in fp16 reads it: from_config builds them in the model's dtype.
//   AfmoeDecoderLayer.forward: input_layernorm (bound until self_attn returns), self_attn,
//   post_attention_layernorm on its output (the call's argument bound until the norm returns), + residual;
//   pre_mlp_layernorm (bound until the MLP returns), mlp, post_mlp_layernorm on its output, + residual.
//   AfmoeAttention.forward: q_proj / k_proj / v_proj viewed [B, S, heads, D], then gate_proj [B, S, nh * D] - all
//   four projections first, each bound -, then q_norm(query_states) and k_norm(key_states) (RMSNorm over head_dim,
//   rebinding each local once it returns) transposed to [B, heads, S, D], value_states transposed; Llama's
//   apply_rotary_pos_emb on sliding layers only (full layers attend without positions); the cache update
//   (DynamicSlidingWindowLayer on sliding layers); SDPA / eager with the layer type's mask (llama_parts.h
//   attention_core); output.view(B, S, -1) (a view of the contiguous [B, S, H, D] context), then
//   `output = output * torch.sigmoid(gate_states)` (sigmoid saves its output, the product both operands) and
//   o_proj. query_states, key_states, value_states and gate_states stay bound until forward returns.
//   AfmoeMLP: down(act(gate(x)) * up(x)) on the first num_dense_layers layers (intermediate_size), and as the MoE's
//   shared experts (moe_intermediate_size * num_shared_experts).
//   AfmoeSparseMoeBlock.forward(x [B, S, H]): flat = x.view(-1, H); AfmoeTokenChoiceRouter(x, expert_bias):
//       router_logits = self.gate(flat).to(float32)                            [T, E] fp32 (gate in the model's /
//                                                                               autocast's dtype, then a copy)
//       scores = sigmoid(router_logits)                                        [T, E] fp32 (saved output)
//       _, selected_experts = topk(scores + expert_bias, k)                    the sum a temporary; `_` bound
//       top_scores = scores.gather(1, selected_experts)                        [T, K] fp32
//       denominator = top_scores.sum(-1, keepdim=True) + 1e-20                 [T, 1]
//       top_scores = top_scores / denominator                                  out of place (div saves both)
//       top_scores = top_scores * route_scale
//     returning (router_logits, top_scores, selected_experts), all bound until the block returns; then
//     shared_output = shared_experts(flat).view(B, S, H) (bound), routed_output = experts(flat, selected_experts,
//     top_scores) through the default experts implementation (deepseek_parts.h experts_grouped_mm: grouped_mm, the
//     fp32 weights making the weighted rows fp32, cast back; generate()'s decode steps batched_mm), and
//     shared_output + routed_output.
// Parameters, registration order: embed_tokens; per layer self_attn q / k / v / o (biases with attention_bias),
// q_norm [D], k_norm [D], gate_proj [nh * D, H] (no bias); input_layernorm, post_attention_layernorm,
// pre_mlp_layernorm, post_mlp_layernorm; mlp: dense gate / up / down, or router.gate.weight [E, H],
// shared_experts gate / up / down, experts.gate_up_proj [E, 2I, H], experts.down_proj [E, H, I], expert_bias [E]
// (an nn.Parameter with requires_grad False: counted, never trained); norm; lm_head (untied by default).
#include "engine/arch/decoders/moe/afmoe.h"

#include <string>
#include <vector>

#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/olmo2_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct AfmoeLayer {
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, qb = kNoTensor, kb = kNoTensor,
           vb = kNoTensor, ob = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor, gate = kNoTensor;
  TensorId in_norm = kNoTensor, post_attn_norm = kNoTensor, pre_mlp_norm = kNoTensor, post_mlp_norm = kNoTensor;
  bool moe = false;
  TensorId mlp_gate = kNoTensor, mlp_up = kNoTensor, mlp_down = kNoTensor;  // dense MLP or the shared experts
  TensorId router = kNoTensor, expert_bias = kNoTensor;
  ExpertsParams experts;
};

AfmoeLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, hd = s.head_dim, nh = s.num_heads;
  AfmoeLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  w.gate = b.param(p + "self_attn.gate_proj.weight", {checked_mul(nh, hd), H}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_attn_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.pre_mlp_norm = b.param(p + "pre_mlp_layernorm.weight", {H}, train);
  w.post_mlp_norm = b.param(p + "post_mlp_layernorm.weight", {H}, train);
  w.moe = i >= s.first_dense_layers;
  auto mlp = [&](const std::string& m, int64_t I) {
    w.mlp_gate = b.param(m + "gate_proj.weight", {I, H}, train);
    w.mlp_up = b.param(m + "up_proj.weight", {I, H}, train);
    w.mlp_down = b.param(m + "down_proj.weight", {H, I}, train);
  };
  if (!w.moe) {
    mlp(p + "mlp.", s.intermediate_size);
    return w;
  }
  const int64_t E = s.num_experts, I = s.moe_intermediate_size;
  w.router = b.param(p + "mlp.router.gate.weight", {E, H}, train);
  mlp(p + "mlp.shared_experts.", checked_mul(I, s.num_shared_experts));
  ExpertsParams& e = w.experts;
  e.experts = E;
  e.top_k = s.num_experts_per_tok;
  e.inter = I;
  e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, checked_mul(2, I), H}, train);
  e.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
  w.expert_bias = b.param(p + "mlp.expert_bias", {E}, /*trainable=*/false);  // requires_grad=False
  return w;
}

// AfmoeAttention.forward on the normed input x (the file header's statements).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const AfmoeLayer& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask, bool sliding, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // The [B, S, heads, D] views of q / k receive the rotary backward's contiguous [B, H, S, D] gradients through
  // the norm and copy them back (qwen3_attention's normed heads; taken for the full layers too).
  const TensorId qv = b.view_copying_grad(b.linear(x, w.q, w.qb), {B, S, nh, hd});
  b.hold(qv);
  const TensorId kv = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, S, nkv, hd});
  b.hold(kv);
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;  // as in llama.cpp attention
  const TensorId vp = b.linear(x, w.v, w.vb);
  const TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);  // value_states until forward returns (or the cache update rebinds it)
  const TensorId gate = b.linear(x, w.gate);
  b.hold(gate);  // gate_states until forward returns
  TensorId q = b.view(olmo2_rms_norm(b, qv, w.q_norm, false), {B, nh, S, hd});
  b.hold(q);
  b.drop(qv);  // query_states rebinds
  TensorId k = b.view(olmo2_rms_norm(b, kv, w.k_norm, false), {B, nkv, S, hd});
  b.hold(k);
  b.drop(kv);
  if (sliding) {
    const auto qk = rope_qk(b, q, k, cos, sin);  // rebinds query_states / key_states
    q = qk.first;
    k = qk.second;
  }
  TensorId ke = k, vv = v;
  TensorId ctx = attention_core(b, s, q, ke, vv, v_proj, mask, sliding ? s.sliding_window : 0, weights);
  const TensorId out = b.view(ctx, {B, S, checked_mul(nh, hd)});  // output.view(*input_shape, -1).contiguous()
  const TensorId gated = b.mul(out, b.unary("sigmoid", gate, false, true));
  const TensorId o = b.linear(gated, w.o, w.ob);
  b.drop(q);
  b.drop(ke);
  if (!b.kv_cached()) b.drop(v_proj);  // the cache's update rebound (and so dropped) it
  b.drop(gate);
  return o;
}

// AfmoeSparseMoeBlock.forward on x [B, S, H] (bound by the decoder layer until it returns).
TensorId moe(GraphBuilder& b, const TransformerSpec& s, const AfmoeLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size, K = s.num_experts_per_tok;
  const TensorId flat = b.view(x, {T, H});
  // AfmoeTokenChoiceRouter.forward
  const TensorId logits = b.to(b.linear(flat, w.router), DType::f32);
  b.hold(logits);  // router_logits: returned, bound to `_` until the block returns
  const TensorId scores = b.unary("sigmoid", logits, false, true);
  b.hold(scores);
  const TensorId choice = b.add(scores, w.expert_bias);  // a temporary of the topk statement
  auto top = b.generic({"topk", {choice}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  b.hold(top[0]);  // `_`
  const TensorId selected = top[1];
  b.hold(selected);
  const TensorId gathered = b.generic_one("gather", {scores, selected}, {T, K}, DType::f32, {1});
  const TensorId den = b.add_scalar(b.reduce_last("sum", gathered, false));
  b.hold(den);  // denominator
  const TensorId normed = b.binary("div", gathered, den, true, true);
  const TensorId weights = b.scalar_op("mul_scalar", normed, false);  // * route_scale
  b.hold(weights);
  for (TensorId t : {den, top[0], scores}) b.drop(t);
  // shared_output, then routed_output, added
  const TensorId shared = b.view(swiglu_mlp(b, flat, w.mlp_gate, w.mlp_up, w.mlp_down), xs);
  b.hold(shared);
  const TensorId routed = b.view(experts_grouped_mm(b, w.experts, flat, weights, selected), xs);
  const TensorId out = b.add(shared, routed);
  for (TensorId t : {shared, weights, selected, logits}) b.drop(t);
  return out;
}

}  // namespace

void build_afmoe(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "afmoe is modelled with silu");
  if (static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  if (hd % 2 != 0) throw InputError("model.head_dim", std::to_string(hd), "must be even (rotate_half pairs dimensions)");
  if (s.first_dense_layers < s.num_layers &&
      (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts ||
       s.moe_intermediate_size <= 0))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "afmoe MoE layers need experts, num_experts_per_tok <= num_experts and moe_intermediate_size");
  const bool emb_train = !cfg.freeze_embeddings;
  const LlamaInputs in = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = in.inputs_embeds;
  const CausalMasks masks = causal_mask_mapping(b, s, b.dtype(inputs_embeds));
  b.hold(inputs_embeds);  // bound until the model's forward returns
  TensorId h = inputs_embeds;
  if (s.scale_embedding) h = b.scalar_op("mul_scalar", h, false);  // mup_enabled: inputs_embeds * H ** 0.5
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, in.position_rows, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const AfmoeLayer w = layer_params(b, s, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable (and the residual) until the layer returns
    const bool sliding = layer_is_sliding(s, i);
    const TensorId n1 = olmo2_rms_norm(b, h, w.in_norm, false);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId a = attention(b, s, w, n1, cos, sin, sliding ? masks.sliding : masks.full, sliding, attn_weights);
    b.drop(n1);
    a = olmo2_rms_norm(b, a, w.post_attn_norm, true);
    const TensorId h1 = b.add(h, a);
    b.hold(h1);  // residual of the MLP half
    const TensorId n2 = olmo2_rms_norm(b, h1, w.pre_mlp_norm, false);
    b.hold(n2);
    TensorId m = w.moe ? moe(b, s, w, n2) : swiglu_mlp(b, n2, w.mlp_gate, w.mlp_up, w.mlp_down);
    b.drop(n2);
    m = olmo2_rms_norm(b, m, w.post_mlp_norm, true);
    h = b.add(h1, m);
    b.drop(h1);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = olmo2_rms_norm(b, h, b.param("norm.weight", {H}, emb_train), false);
  for (TensorId t : {h, inputs_embeds, cos, sin, masks.full, masks.sliding})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, in.embed, in.ids);
}

}  // namespace memplan
