// MiMoV2FlashForCausalLM (transformers 5.17 models/mimo_v2_flash/modeling_mimo_v2_flash.py; Xiaomi MiMo-V2-Flash),
// training forward + causal-LM loss or one inference pass with the DynamicCache. Eager attention only:
// MiMoV2FlashPreTrainedModel has _supports_sdpa = False (from_config(attn_implementation="sdpa") raises) and flash /
// flex kernels are not modelled.
//
// Stages (MiMoV2FlashModel.forward):
//   inputs_embeds = embed_tokens(ids)                             bound until the model returns
//   position_ids = arange(S) + past_seen_tokens, unsqueeze(0)     (no position_ids passed: training, the harness's
//                                                                  prefill) the arange freed once the sum exists
//   causal_mask_mapping: create_causal_mask / create_sliding_window_causal_mask for each type in set(layer_types)
//                                                                  (eager: float masks), bound until the return
//   position_embeddings[type] = rotary_emb(h, position_ids, type)  Llama's rotary per type present (its own theta
//                                                                  and partial_rotary_factor: cos / sin [P, S, rot])
//   layers, norm (LlamaRMSNorm's statements), lm_head, ForCausalLMLoss.
// MiMoV2FlashDecoderLayer: LlamaDecoderLayer's statements (llama_residual_blocks) around
//   MiMoV2FlashAttention.forward, per layer type: a sliding layer has 2 x num_key_value_heads KV heads and a
//     per-head `sinks` parameter, a full layer num_key_value_heads and none:
//       query_states = q_proj(x).view(B, S, -1, head_dim).transpose(1, 2); key_states likewise
//       value_states = v_proj(x).view(B, S, -1, v_head_dim).transpose(1, 2) * v_scale   (a fresh tensor with the
//                      projection's [B, S, Hkv, Dv] memory order; the projection's output dies at the product)
//       apply_rotary_pos_emb: q[..., :rot], q[..., rot:], k[..., :rot], k[..., rot:] (rotary_slices.h), Llama's
//         rotation of q's then k's rotated part, then cat([rotated, pass]) for q then k (glm4_moe's order)
//       the DynamicCache update (inference; DynamicSlidingWindowLayer on sliding layers)
//       eager_attention_forward (sink variant): repeat_kv copies, attn_weights = matmul(q, k^T) * scaling, + mask,
//         (sliding) cat with the sinks expanded to [B, H, S, 1], minus the row max (max(dim=-1, keepdim).values),
//         probs = softmax(attn_weights, dtype=attn_weights.dtype), (sliding) probs[..., :-1], attn_weights =
//         dropout(probs).to(value dtype), matmul with the values, transpose(1, 2).contiguous(). Every step rebinds
//         `attn_weights`, so each intermediate dies at the next statement, the shifted logits at the dropout
//         statement; `probs` stays bound until the function returns.
//       o_proj (never a bias) over the [B, S, num_heads * v_head_dim] view.
//   the feed-forward: MiMoV2FlashMLP (silu gate * up, down) on "dense" layers of mlp_layer_types, MiMoV2FlashMoE on
//     "sparse" ones: DeepseekV3MoE without shared experts - the noaux_tc router (deepseek_route: fp32 logits, sigmoid
//     scores, e_score_correction_bias, group top-2 sums, group mask, top-k, gathered weights, norm_topk_prob,
//     routed_scaling_factor), the routed experts through transformers' default experts implementation
//     (experts_grouped_mm: grouped_mm; generate()'s decode steps batched_mm), `.view(*orig_shape)` returned.
// Parameters, registration order: model.embed_tokens; per layer self_attn q / k / v (biases with attention_bias),
// o_proj, sinks [num_heads] (sliding layers); mlp (dense gate / up / down, or experts.gate_up_proj [E, 2I, H],
// experts.down_proj [E, H, I], gate.weight [E, H] + the fp32 e_score_correction_bias buffer [E]);
// input_layernorm, post_attention_layernorm; model.norm; the rotary buffers; lm_head.
#include "engine/arch/builders.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/arch/decoders/moe/mimo_v2_flash_fields.h"
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

struct MimoLayer {
  bool sliding = false, moe = false;
  int64_t kv_heads = 0;
  TensorId q = kNoTensor, qb = kNoTensor, k = kNoTensor, kb = kNoTensor, v = kNoTensor, vb = kNoTensor,
           o = kNoTensor, sinks = kNoTensor;
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor;  // MiMoV2FlashMLP
  ExpertsParams experts;
  TensorId router = kNoTensor;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

// What every layer reads from the model's forward: its type's mask, cos / sin and rotary width.
using MimoContext = PerTypeRotaryContext;

MimoLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const MiMoV2FlashFields& f, int64_t i, bool train) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, nh = s.num_heads, hd = s.head_dim, vd = f.v_head_dim;
  MimoLayer w;
  w.sliding = layer_is_sliding(s, i);
  w.moe = s.moe_layers[static_cast<size_t>(i)] != 0;
  w.kv_heads = w.sliding ? checked_mul(s.num_kv_heads, 2) : s.num_kv_heads;
  const int64_t nkv = w.kv_heads;
  auto bias = [&](const char* name, int64_t n) {
    return s.attention_bias ? b.param(p + "self_attn." + name + ".bias", {n}, train) : kNoTensor;
  };
  w.q = b.param(p + "self_attn.q_proj.weight", {checked_mul(nh, hd), H}, train);
  w.qb = bias("q_proj", checked_mul(nh, hd));
  w.k = b.param(p + "self_attn.k_proj.weight", {checked_mul(nkv, hd), H}, train);
  w.kb = bias("k_proj", checked_mul(nkv, hd));
  w.v = b.param(p + "self_attn.v_proj.weight", {checked_mul(nkv, vd), H}, train);
  w.vb = bias("v_proj", checked_mul(nkv, vd));
  w.o = b.param(p + "self_attn.o_proj.weight", {H, checked_mul(nh, vd)}, train);
  if (w.sliding) w.sinks = b.param(p + "self_attn.sinks", {nh}, train);
  if (w.moe) {
    ExpertsParams& e = w.experts;
    e.experts = s.num_experts;
    e.top_k = s.num_experts_per_tok;
    e.inter = s.moe_intermediate_size;
    e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {s.num_experts, checked_mul(2, e.inter), H}, train);
    e.down = b.param(p + "mlp.experts.down_proj", {s.num_experts, H, e.inter}, train);
    w.router = b.param(p + "mlp.gate.weight", {s.num_experts, H}, train);
    // nn.Buffer(torch.zeros(E)) in the default dtype, kept fp32 by _keep_in_fp32_modules_strict (as DeepSeek-V3's).
    b.buffer(p + "mlp.gate.e_score_correction_bias", {s.num_experts}, DType::f32);
  } else {
    const int64_t I = s.intermediate_size;
    w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
    w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
    w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  }
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// MiMoV2FlashAttention.forward on the normed input x (held by the caller until it returns).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const MiMoV2FlashFields& f, const MimoLayer& w,
                   TensorId x, const MimoContext& c, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = w.kv_heads, hd = s.head_dim, vd = f.v_head_dim;
  const int64_t rot = w.sliding ? f.sliding_rotary_dim : f.full_rotary_dim;
  const TensorId mask = w.sliding ? c.sliding_mask : c.full_mask;
  const TensorId cos = w.sliding ? c.sliding_cos : c.full_cos, sin = w.sliding ? c.sliding_sin : c.full_sin;
  const int64_t window = w.sliding ? s.sliding_window : 0;
  // The q / k head views get contiguous [B, H, S, D] gradients back from the rotary slices' backward, which the
  // transposed views' reshape copies; v's from repeat_kv's sum (or a bmm) through the scalar product, contiguous too.
  const TensorId q = b.view_copying_grad(b.linear(x, w.q, w.qb), {B, nh, S, hd});
  b.hold(q);  // query_states / key_states: rebound once apply_rotary_pos_emb has returned both
  const TensorId k = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, nkv, S, hd});
  b.hold(k);
  // `* self.v_scale`: MulBackward0 with a Python scalar saves nothing, so the projection's output dies here.
  TensorId v = b.scalar_op("mul_scalar", b.view_copying_grad(b.linear(x, w.v, w.vb), {B, nkv, S, vd}), false);
  b.hold(v);  // value_states, until the module returns or the cache update rebinds it
  const RotarySlices sl = rotary_slices(b, q, k, rot);
  const TensorId qr = rope(b, sl.q_rot, cos, sin);
  const TensorId kr_rot = rope(b, sl.k_rot, cos, sin);
  TensorId qe = b.cat("cat", {qr, sl.q_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(qe);
  TensorId ke = b.cat("cat", {kr_rot, sl.k_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  const bool cached = b.kv_cached();
  if (cached) {  // key_states / value_states rebind to the cache's full tensors
    const std::pair<TensorId, TensorId> kv = kv_update(b, ke, v, window);
    b.drop(ke);
    b.drop(v);
    ke = kv.first;
    v = kv.second;
    b.hold(ke);
    b.hold(v);
  }
  const int64_t L = b.shape(ke)[2];
  // repeat_kv: expand + reshape materialises the repeated heads (bound until eager_attention_forward returns).
  TensorId kr = ke, vr = v;
  if (nkv != nh) {
    kr = b.contiguous_copy(ke, {B, nh, L, hd});
    vr = b.contiguous_copy(v, {B, nh, L, vd});
  }
  b.hold(kr);
  b.hold(vr);
  // q and k are cat outputs (contiguous [B, H, S, D]): torch.matmul copies neither. Training without repeat_kv
  // leaves v the scalar product of a transposed view ([B, S, H, D] memory order), copied for B > 1.
  const bool v_copy = vr == v && !cached && B > 1;
  TensorId aw = b.scalar_op("mul_scalar", b.matmul(qe, kr, {B, nh, S, L}, false, false), false);
  aw = b.add(aw, mask);
  if (w.sinks != kNoTensor) {
    // sinks.reshape(1, -1, 1, 1).expand(B, -1, S, -1): a view of the parameter, its gradient summed back.
    aw = b.cat_last("cat", {aw, b.view(w.sinks, {B, nh, S, 1})});
  }
  const Shape as = b.shape(aw);
  // attn_weights.max(dim=-1, keepdim=True).values: max_backward scatters into a zero-filled full-size gradient.
  const auto mx = b.generic({"max_dim", {aw}, {{{B, nh, S, 1}, b.dtype(aw)}, {{B, nh, S, 1}, DType::i64}}, {}, {1}, {}, {}});
  // attn_weights - max: SubBackward0 computes -grad (a full-size buffer) for the max, summed to [B, H, S, 1].
  const TensorId shifted = b.sub(aw, mx[0]);
  b.hold(shifted);  // attn_weights, until the dropout statement rebinds it
  TensorId probs = b.softmax_last(shifted);
  b.hold(probs);  // bound until the function returns
  TensorId kept = probs;
  if (w.sinks != kNoTensor) {
    kept = b.select_param(probs, {as[0], as[1], as[2], as[3] - 1});  // probs[..., :-1]: SliceBackward zero-fills
    b.hold(kept);
  }
  const TensorId attn_w = b.to(b.dropout(kept, s.attn_dropout), b.dtype(vr));
  weights = attn_w;
  b.hold(weights);  // returned, bound to `_` by the decoder layer until it returns
  b.drop(shifted);
  // matmul's backward reshapes the transposed [B, H, S, Dv] gradient to [B * H, S, Dv]: a copy, except for B == 1
  // (cat_rotary_attention's form, whole-run glm4_moe fp32 eager stream).
  const TensorId ctx = b.contiguous_copy(b.matmul(attn_w, vr, {B, nh, S, vd}, false, v_copy), {B, S, nh, vd},
                                         /*grad_copied=*/B > 1);
  b.drop(kr);
  b.drop(vr);
  if (kept != probs) b.drop(kept);
  b.drop(probs);
  const TensorId out = b.linear(b.view(ctx, {B, S, checked_mul(nh, vd)}), w.o);
  b.drop(qe);
  b.drop(ke);
  b.drop(v);
  return out;
}

// MiMoV2FlashMoE.forward on x [B, S, H] (bound by the decoder layer until it returns).
TensorId moe_block(GraphBuilder& b, const TransformerSpec& s, const MimoLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size;
  const DeepseekRoute r = deepseek_route(b, s, b.view(x, {T, H}), w.router);
  b.hold(r.weights);  // `_, topk_weights, topk_indices = self.gate(...)`: bound until the MoE returns
  b.hold(r.indices);
  const TensorId out = b.view(experts_grouped_mm(b, w.experts, b.view(x, {T, H}), r.weights, r.indices), xs);
  for (TensorId t : {r.weights, r.indices, r.logits}) b.drop(t);
  return out;
}

// MiMoV2FlashMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)).
TensorId dense_mlp(GraphBuilder& b, const TransformerSpec& s, const MimoLayer& w, TensorId x) {
  const TensorId act = activation(b, s.hidden_act, b.linear(x, w.gate));
  return b.linear(b.mul(act, b.linear(x, w.up)), w.down);
}

void check_spec(const GraphBuilder& b, const TransformerSpec& s, const MiMoV2FlashFields& f) {
  if (b.config().attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     "mimo_v2_flash has no SDPA attention in transformers 5.17 (MiMoV2FlashPreTrainedModel."
                     "_supports_sdpa is False: from_config raises); use eager");
  const auto n = static_cast<size_t>(s.num_layers);
  if (s.sliding_layers.size() != n || s.moe_layers.size() != n)
    throw InputError("model.layer_types", std::to_string(s.sliding_layers.size()),
                     "must list one attention type and one MLP type per layer");
  bool any_moe = false, any_sliding = false;
  for (size_t i = 0; i < n; ++i) {
    any_moe = any_moe || s.moe_layers[i] != 0;
    any_sliding = any_sliding || s.sliding_layers[i] != 0;
  }
  if (any_sliding && s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "sliding_attention layers need a positive window");
  if (any_moe && (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0 ||
                  s.moe_topk_method != "noaux_tc"))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "mimo_v2_flash's sparse layers need experts, num_experts_per_tok, moe_intermediate_size and the "
                     "noaux_tc router");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "mimo_v2_flash is modelled with silu");
  // The rotary width of each layer type present (an absent type's stays the fields' default, unread).
  const bool any_full = std::count(s.sliding_layers.begin(), s.sliding_layers.end(), uint8_t{0}) > 0;
  for (const bool sliding : {false, true}) {
    const int64_t rot = sliding ? f.sliding_rotary_dim : f.full_rotary_dim;
    if ((sliding ? any_sliding : any_full) && (rot <= 0 || rot % 2 != 0 || rot > s.head_dim))
      throw InputError("model.rotary_dim", std::to_string(rot), "must be a positive even number up to head_dim");
  }
  if (f.v_head_dim <= 0) throw InputError("model.v_head_dim", std::to_string(f.v_head_dim), "must be positive");
}

}  // namespace

void build_mimo_v2_flash(GraphBuilder& b, const TransformerSpec& s) {
  const MiMoV2FlashFields& f = family_fields<MiMoV2FlashFields>(s);
  check_spec(b, s, f);
  const auto& cfg = b.config();
  const int64_t H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("model.embed_tokens.weight", {V, H}, emb_train);
  std::vector<MimoLayer> layers;
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
  const MimoContext& c = in.ctx;
  TensorId h = inputs_embeds;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const MimoLayer& w = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    h = llama_residual_blocks(
        b, h, w.in_norm, w.post_norm,
        [&](TensorId x, TensorId& weights) { return attention(b, s, f, w, x, c, weights); },
        [&](TensorId n2) { return w.moe ? moe_block(b, s, w, n2) : dense_mlp(b, s, w, n2); });
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = rms_norm(b, h, b.param("model.norm.weight", {H}, emb_train));
  release_per_type_rotary_inputs(b, h, in);
  causal_lm_tail(b, s, hn, embed, in.ids);
}

}  // namespace memplan
