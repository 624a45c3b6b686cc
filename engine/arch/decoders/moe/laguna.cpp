// LagunaForCausalLM (transformers 5.17 models/laguna/modeling_laguna.py; poolside Laguna), training forward +
// causal-LM loss or one inference pass with the DynamicCache. SDPA and eager.
//
// Stages (LagunaModel.forward, the statements of MiMoV2FlashModel.forward):
//   inputs_embeds = embed_tokens(ids); position_ids = arange(S) + past_seen_tokens (the arange freed once the sum
//   exists; none inside generate()); causal_mask_mapping for each type in set(layer_types) (full_and_sliding_masks);
//   position_embeddings[type] = Llama's rotary per type present (its own partial_rotary_factor: cos / sin
//   [P, S, rot]); layers; norm (LlamaRMSNorm's statements); lm_head; ForCausalLMLoss (output_router_logits False).
// LagunaDecoderLayer: LlamaDecoderLayer's statements (llama_residual_blocks) around
//   LagunaAttention.forward (layer i has num_attention_heads_per_layer[i] query heads over num_key_value_heads):
//       q / k / v = proj(x).view(B, S, -1, D)                 all three first, each bound
//       query_states = q_norm(query_states).transpose(1, 2)   RMSNorm over head_dim (the view bound until it returns);
//       key_states likewise; value_states.transpose(1, 2)
//       apply_rotary_pos_emb: slices q[..., :rot] / q[..., rot:] / k's, Llama's rotation, torch.cat of each with its
//         pass-through part (glm4_moe's statements, the empty pass-through slice included when rot == head_dim)
//       the cache update; SDPA / eager (cat_rotary_attention, cudnn_output_copy: q / k are cat outputs)
//       attn_output.reshape(B, S, -1); gate = softplus(g_proj(x).float()).to(attn_output.dtype) ([B, S, heads] per
//       head, [B, S, heads * D] per element); attn_output.view(B, S, heads, D) * gate.unsqueeze(-1) (or * gate),
//       o_proj (bias with attention_bias).
//   the feed-forward: LagunaMLP on "dense" layers of mlp_layer_types, LagunaSparseMoeBlock on "sparse" ones:
//       flat = x.view(-1, H); shared_output = shared_experts(flat) (bound until the block returns)
//       LagunaTopKRouter(flat): logits = F.linear(flat, W).float() [T, E]; optional softcap (tanh(x / cap) * cap);
//         scores = sigmoid(logits); topk(scores + e_score_correction_bias.to(f32), k) (values bound to `_`); weights
//         = scores.gather(-1, idx); weights / weights.sum(-1, keepdim) (out of place); .to(flat's dtype); every
//         local bound until the router returns, (logits, weights, idx) until the block returns
//       experts(flat, idx, weights) (experts_grouped_mm), * moe_routed_scaling_factor, + shared_output, reshape.
// Parameters, registration order: model.embed_tokens; per layer self_attn q / k / v / o (biases with attention_bias),
// q_norm, k_norm [D], g_proj [heads or heads * D, H]; mlp (dense gate / up / down, or experts.gate_up_proj [E, 2I, H],
// experts.down_proj [E, H, I], gate.weight [E, H], gate.e_score_correction_bias [E] (an nn.Parameter with
// requires_grad False: counted, never trained), shared_experts gate / up / down); input_layernorm,
// post_attention_layernorm; model.norm; the rotary buffers; lm_head.
#include "engine/arch/builders.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/arch/decoders/moe/laguna_fields.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/per_type_rotary_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/rotary_slices.h"
#include "engine/arch/family_fields.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct LagunaLayer {
  bool sliding = false, moe = false;
  int64_t heads = 0;
  TensorId q = kNoTensor, qb = kNoTensor, k = kNoTensor, kb = kNoTensor, v = kNoTensor, vb = kNoTensor,
           o = kNoTensor, ob = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor, g = kNoTensor;
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor;  // the dense MLP
  TensorId sh_gate = kNoTensor, sh_up = kNoTensor, sh_down = kNoTensor;  // the shared experts
  ExpertsParams experts;
  TensorId router = kNoTensor, router_bias = kNoTensor;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

using LagunaContext = PerTypeRotaryContext;

LagunaLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const LagunaFields& f, int64_t i, bool train) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, hd = s.head_dim, nkv = s.num_kv_heads;
  LagunaLayer w;
  w.sliding = layer_is_sliding(s, i);
  w.moe = s.moe_layers[static_cast<size_t>(i)] != 0;
  w.heads = f.heads_per_layer[static_cast<size_t>(i)];
  const int64_t nh = w.heads;
  auto bias = [&](const char* name, int64_t n) {
    return s.attention_bias ? b.param(p + "self_attn." + name + ".bias", {n}, train) : kNoTensor;
  };
  w.q = b.param(p + "self_attn.q_proj.weight", {checked_mul(nh, hd), H}, train);
  w.qb = bias("q_proj", checked_mul(nh, hd));
  w.k = b.param(p + "self_attn.k_proj.weight", {checked_mul(nkv, hd), H}, train);
  w.kb = bias("k_proj", checked_mul(nkv, hd));
  w.v = b.param(p + "self_attn.v_proj.weight", {checked_mul(nkv, hd), H}, train);
  w.vb = bias("v_proj", checked_mul(nkv, hd));
  w.o = b.param(p + "self_attn.o_proj.weight", {H, checked_mul(nh, hd)}, train);
  w.ob = bias("o_proj", H);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  w.g = b.param(p + "self_attn.g_proj.weight", {f.gate_per_head ? nh : checked_mul(nh, hd), H}, train);
  auto mlp = [&](const std::string& m, int64_t I, TensorId& g, TensorId& u, TensorId& d) {
    g = b.param(m + "gate_proj.weight", {I, H}, train);
    u = b.param(m + "up_proj.weight", {I, H}, train);
    d = b.param(m + "down_proj.weight", {H, I}, train);
  };
  if (w.moe) {
    ExpertsParams& e = w.experts;
    e.experts = s.num_experts;
    e.top_k = s.num_experts_per_tok;
    e.inter = s.moe_intermediate_size;
    e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {s.num_experts, checked_mul(2, e.inter), H}, train);
    e.down = b.param(p + "mlp.experts.down_proj", {s.num_experts, H, e.inter}, train);
    w.router = b.param(p + "mlp.gate.weight", {s.num_experts, H}, train);
    w.router_bias = b.param(p + "mlp.gate.e_score_correction_bias", {s.num_experts}, /*trainable=*/false);
    mlp(p + "mlp.shared_experts.", f.shared_intermediate, w.sh_gate, w.sh_up, w.sh_down);
  } else {
    mlp(p + "mlp.", s.intermediate_size, w.gate, w.up, w.down);
  }
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// LagunaAttention.forward on the normed input x (held by the caller until it returns). `ls`: the spec with this
// layer's query heads (the shared attention parts read s.num_heads).
TensorId attention(GraphBuilder& b, const TransformerSpec& ls, const LagunaFields& f, const LagunaLayer& w, TensorId x,
                   const LagunaContext& lc, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = ls.head_dim,
                nh = w.heads, nkv = ls.num_kv_heads;
  SkeletonContext c;
  c.mask = w.sliding ? lc.sliding_mask : lc.full_mask;
  c.window = w.sliding ? ls.sliding_window : 0;
  c.cos = w.sliding ? lc.sliding_cos : lc.full_cos;
  c.sin = w.sliding ? lc.sliding_sin : lc.full_sin;
  const int64_t rot = w.sliding ? f.sliding_rotary_dim : f.full_rotary_dim;
  // The projections' [B, S, heads, D] views, all three first; q and k reach their norms, whose elementwise backward
  // keeps the contiguous [B, H, S, D] gradient the rotary slices hand back, so the views copy it (glm4_moe's qk-norm
  // projections). v's gradient keeps its layout only from the fused SDPA kernels.
  const TensorId qv = b.view_copying_grad(b.linear(x, w.q, w.qb), {B, S, nh, hd});
  const TensorId kv = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, S, nkv, hd});
  const TensorId vp = b.linear(x, w.v, w.vb);
  const bool math_sdpa = b.dtype(vp) == DType::f32 && nkv != nh;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor && !math_sdpa;
  const Shape vs{B, nkv, S, hd};
  const TensorId v = v_grad_in_layout ? b.view(vp, vs) : b.view_copying_grad(vp, vs);
  b.hold(v);  // value_states, until the module returns or the cache update rebinds it
  const TensorId q = b.view(rms_norm(b, qv, w.q_norm, /*held_input=*/true), {B, nh, S, hd});
  b.hold(q);
  const TensorId k = b.view(rms_norm(b, kv, w.k_norm, /*held_input=*/true), {B, nkv, S, hd});
  b.hold(k);
  const RotarySlices sl = rotary_slices(b, q, k, rot);
  const TensorId qr = rope(b, sl.q_rot, c.cos, c.sin);
  const TensorId kr = rope(b, sl.k_rot, c.cos, c.sin);
  const TensorId qe = b.cat("cat", {qr, sl.q_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(qe);
  const TensorId ke = b.cat("cat", {kr, sl.k_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  TensorId ke_used = ke, v_used = v;
  const TensorId ctx = cudnn_output_copy(
      b, cat_rotary_attention(b, ls, qe, ke_used, v_used, v, c.mask, c.window, weights), c.mask);
  const TensorId attn = b.view(ctx, {B, S, checked_mul(nh, hd)});  // reshape(B, S, -1).contiguous(): a view
  b.hold(attn);  // attn_output, until the gated product rebinds it
  // gate = F.softplus(self.g_proj(hidden_states).float()).to(attn_output.dtype)
  const TensorId g32 = b.to(b.linear(x, w.g), DType::f32);
  const TensorId sp = b.unary("softplus", g32, /*save_in=*/true, false, /*fp32_policy=*/true);
  const TensorId gate = b.to(sp, b.dtype(attn));
  b.hold(gate);  // bound until the module returns
  TensorId gated;
  if (f.gate_per_head) {
    gated = b.view(b.mul(b.view(attn, {B, S, nh, hd}), b.view(gate, {B, S, nh, 1})), {B, S, checked_mul(nh, hd)});
  } else {
    gated = b.mul(attn, gate);
  }
  b.drop(attn);
  const TensorId out = b.linear(gated, w.o, w.ob);
  b.drop(gate);
  b.drop(qe);
  b.drop(ke_used);
  if (!b.kv_cached()) b.drop(v);  // the cache update rebound (and so released) it
  return out;
}

// LagunaSparseMoeBlock.forward on x [B, S, H] (bound by the decoder layer until it returns).
TensorId moe_block(GraphBuilder& b, const TransformerSpec& s, const LagunaFields& f, const LagunaLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size, K = s.num_experts_per_tok, E = s.num_experts;
  const TensorId flat = b.view(x, {T, H});
  const TensorId shared = swiglu_mlp(b, flat, w.sh_gate, w.sh_up, w.sh_down);
  b.hold(shared);  // shared_output, until the sum
  // LagunaTopKRouter.forward
  std::vector<TensorId> locals;  // dropped when the router returns
  auto local = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  TensorId logits = b.to(b.linear(flat, w.router), DType::f32);  // F.linear(...).float()
  if (f.router_softcap > 0.0) {
    const TensorId th = b.unary("tanh", b.scalar_op("div_scalar", logits, false), false, /*save_out=*/true);
    logits = b.scalar_op("mul_scalar", th, false);
  }
  b.hold(logits);  // router_logits: returned, bound to `_` until the block returns
  const TensorId scores = local(b.unary("sigmoid", logits, false, /*save_out=*/true));
  const TensorId bias32 = b.to(w.router_bias, DType::f32);  // .to(routing_scores.dtype): a copy unless fp32
  const TensorId choice = local(b.add(scores, bias32));
  auto top = b.generic({"topk", {choice}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  local(top[0]);  // `_`
  const TensorId selected = top[1];
  b.hold(selected);
  const TensorId gathered = b.generic_one("gather", {scores, selected}, {T, K}, DType::f32, {1});
  b.hold(gathered);
  const TensorId den = b.reduce_last("sum", gathered, false);
  const TensorId normed = b.binary("div", gathered, den, true, true);
  b.drop(gathered);
  b.hold(normed);
  const TensorId rweights = b.to(normed, b.dtype(flat));  // .to(hidden_states.dtype)
  b.hold(rweights);
  if (rweights != normed) b.drop(normed);
  for (TensorId t : locals) b.drop(t);
  (void)E;
  TensorId routed = experts_grouped_mm(b, w.experts, flat, rweights, selected);
  routed = b.scalar_op("mul_scalar", routed, false);  // * routed_scaling_factor
  const TensorId sum = b.add(routed, shared);
  b.drop(shared);
  const TensorId out = b.view(sum, xs);
  for (TensorId t : {rweights, selected, logits}) b.drop(t);
  return out;
}

void check_spec(const GraphBuilder& b, const TransformerSpec& s, const LagunaFields& f) {
  const auto n = static_cast<size_t>(s.num_layers);
  if (s.sliding_layers.size() != n || s.moe_layers.size() != n || f.heads_per_layer.size() != n)
    throw InputError("model.layer_types", std::to_string(s.sliding_layers.size()),
                     "must list one attention type, MLP type and head count per layer");
  bool any_moe = false, any_sliding = false;
  for (size_t i = 0; i < n; ++i) {
    any_moe = any_moe || s.moe_layers[i] != 0;
    any_sliding = any_sliding || s.sliding_layers[i] != 0;
    if (f.heads_per_layer[i] <= 0 || f.heads_per_layer[i] % s.num_kv_heads != 0)
      throw InputError("model.num_attention_heads_per_layer", std::to_string(f.heads_per_layer[i]),
                       "must be a positive multiple of num_key_value_heads");
  }
  if (any_sliding && s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "sliding_attention layers need a positive window");
  if (any_moe && (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts ||
                  s.moe_intermediate_size <= 0 || f.shared_intermediate <= 0))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "laguna's sparse layers need experts, num_experts_per_tok <= num_experts and the expert widths");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "laguna is modelled with silu");
  // The rotary width of each layer type present (an absent type's stays the fields' default, unread).
  const bool any_full = std::count(s.sliding_layers.begin(), s.sliding_layers.end(), uint8_t{0}) > 0;
  for (const bool sliding : {false, true}) {
    const int64_t rot = sliding ? f.sliding_rotary_dim : f.full_rotary_dim;
    if ((sliding ? any_sliding : any_full) && (rot <= 0 || rot % 2 != 0 || rot > s.head_dim))
      throw InputError("model.rotary_dim", std::to_string(rot), "must be a positive even number up to head_dim");
  }
  (void)b;
}

}  // namespace

void build_laguna(GraphBuilder& b, const TransformerSpec& s) {
  const LagunaFields& f = family_fields<LagunaFields>(s);
  check_spec(b, s, f);
  const auto& cfg = b.config();
  const int64_t H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("model.embed_tokens.weight", {V, H}, emb_train);
  std::vector<LagunaLayer> layers;
  bool any_full = false, any_sliding = false;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    layers.push_back(layer_params(b, s, f, i, !layer_frozen(cfg, i)));
    (layers.back().sliding ? any_sliding : any_full) = true;
  }
  // {type}_inv_freq / {type}_original_inv_freq per type in sorted(set(layer_types)); the forward to the layer loop
  per_type_rotary_buffers(b, any_full, any_sliding, f.full_rotary_dim, f.sliding_rotary_dim);
  const PerTypeRotaryInputs in =
      per_type_rotary_inputs(b, s, embed, any_full, any_sliding, f.full_rotary_dim, f.sliding_rotary_dim);
  const TensorId inputs_embeds = in.inputs_embeds;
  const LagunaContext& c = in.ctx;
  TensorId h = inputs_embeds;
  TransformerSpec ls = s;  // this layer's query heads, for the shared attention parts
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const LagunaLayer& w = layers[static_cast<size_t>(i)];
    ls.num_heads = w.heads;
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    h = llama_residual_blocks(
        b, h, w.in_norm, w.post_norm,
        [&](TensorId x, TensorId& weights) { return attention(b, ls, f, w, x, c, weights); },
        [&](TensorId n2) {
          return w.moe ? moe_block(b, s, f, w, n2) : swiglu_mlp(b, n2, w.gate, w.up, w.down);
        });
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = rms_norm(b, h, b.param("model.norm.weight", {H}, emb_train));
  release_per_type_rotary_inputs(b, h, in);
  causal_lm_tail(b, s, hn, embed, in.ids);
}

}  // namespace memplan
