// LongcatFlashForCausalLM (transformers 5.17 models/longcat_flash/modeling_longcat_flash.py; Meituan LongCat-Flash):
// config.num_layers decoder layers, each two MLA sublayers and two dense SwiGLU MLPs, with one MoE whose output
// short-cuts to the layer's end.
//   LongcatFlashDecoderLayer.forward(h):
//     h = h + self_attn[0](input_layernorm[0](h))
//     n = post_attention_layernorm[0](h)                  bound until mlps[0] returns (rebinding)
//     shortcut = mlp(n)                                   the MoE, bound until the layer's last add
//     h = h + mlps[0](n)
//     h = h + self_attn[1](input_layernorm[1](h))
//     h = (h + mlps[1](post_attention_layernorm[1](h))) + shortcut       two adds
//   LongcatFlashMLA: DeepSeek-V3's attention (deepseek_parts.h mla_attention, interleaved rotary) with the LoRA
//     scalings (MlaVariant::lora_scales): q_pass, q_rot times mla_scale_q_lora, the normed latent times
//     mla_scale_kv_lora, fresh tensors before the rotary. q_a_proj always (q_lora_rank None is refused).
//   LongcatFlashTopkRouter.forward(x): router_logits = F.linear(x.float(), classifier.weight.float()) (the bias
//     never read; under autocast the linear runs in 16 bits), scores = softmax(-1) (fp32 under autocast); under
//     no_grad scores + e_score_correction_bias [T, E'] then topk(k, sorted=False)[1] (the values a temporary);
//     topk_weights = scores.gather(1, idx) * routed_scaling_factor (rebinding), returned .to(router_logits.dtype)
//     (a copy under autocast). E' = n_routed_experts + zero_expert_num.
//   LongcatFlashExperts.forward (no @use_experts_implementation: the Python loop runs in every mode):
//     final = zeros_like(x [T, H]); expert_mask = one_hot(idx, E').permute(2, 1, 0) (int64 [T, K, E'], bound
//     until return); expert_hit = (expert_mask.sum((-1, -2)) > 0).nonzero(); per hit expert e, in index order:
//       selection_idx, token_idx = torch.where(expert_mask[e].squeeze(0))    one [n_e, 2] int64 (nonzero)
//       current_state = x[token_idx]                                          [n_e, H]
//       routed (e < n_routed): gate, up = F.linear(current_state, gate_up_proj[e]).chunk(2)  (SelectBackward: a
//         zero-filled gradient of the whole [E', 2 I, H] parameter per expert), current = act(gate) * up, current =
//         F.linear(current, down_proj[e]) (the same for [E, H, I]);
//       identity (e >= n_routed): current = current_state (the same tensor);
//       current = current * top_k_weights[token_idx, selection_idx, None]; final.index_add_(0, token_idx,
//       current.to(x.dtype)) (a copy under autocast, where the products are 16-bit and x fp32).
//     Every loop variable stays bound until the next iteration rebinds it (gate / up, views of the gate_up product,
//     only by the next routed expert) or the function returns. Routing is data dependent: the T K routed rows are
//     spread evenly over the E' experts (T K / E' each, the remainder on the first), as a freshly initialised
//     router with a zero correction bias does to within a few rows (engine/arch/decoders/moe/dbrx.cpp assumes the
//     same of DBRX's loop).
// Parameters, registration order (LongcatFlashDecoderLayer.__init__): mlp.experts.gate_up_proj [E', 2 I, H],
// mlp.experts.down_proj [E, H, I], mlp.router.e_score_correction_bias (buffer [E'], default dtype),
// mlp.router.classifier.weight [E', H] (+ bias), self_attn.{0,1} (q_a_proj, q_a_layernorm, q_b_proj,
// kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj), mlps.{0,1} (gate, up, down), input_layernorm.{0,1},
// post_attention_layernorm.{0,1}; then norm and lm_head.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/moe/longcat_flash_fields.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/family_fields.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct LcLayer {
  TensorId gate_up = kNoTensor, down = kNoTensor, classifier = kNoTensor, classifier_b = kNoTensor;
  DeepseekMla attn[2];
  DeepseekMlp mlp[2];
  TensorId in_norm[2] = {kNoTensor, kNoTensor}, post_norm[2] = {kNoTensor, kNoTensor};
};

DeepseekMla mla_params(GraphBuilder& b, const TransformerSpec& s, const std::string& sa, bool train) {
  const int64_t H = s.hidden_size, nh = s.num_heads, qk = s.qk_nope_head_dim + s.qk_rope_head_dim;
  DeepseekMla a;
  a.q_a = b.param(sa + "q_a_proj.weight", {s.q_lora_rank, H}, train);
  if (s.attention_bias) a.q_a_b = b.param(sa + "q_a_proj.bias", {s.q_lora_rank}, train);
  a.q_a_norm = b.param(sa + "q_a_layernorm.weight", {s.q_lora_rank}, train);
  a.q_b = b.param(sa + "q_b_proj.weight", {nh * qk, s.q_lora_rank}, train);
  a.kv_a = b.param(sa + "kv_a_proj_with_mqa.weight", {s.kv_lora_rank + s.qk_rope_head_dim, H}, train);
  if (s.attention_bias) a.kv_a_b = b.param(sa + "kv_a_proj_with_mqa.bias", {s.kv_lora_rank + s.qk_rope_head_dim}, train);
  a.kv_a_norm = b.param(sa + "kv_a_layernorm.weight", {s.kv_lora_rank}, train);
  a.kv_b = b.param(sa + "kv_b_proj.weight", {nh * (s.qk_nope_head_dim + s.v_head_dim), s.kv_lora_rank}, train);
  a.o = b.param(sa + "o_proj.weight", {H, nh * s.v_head_dim}, train);
  if (s.attention_bias) a.o_b = b.param(sa + "o_proj.bias", {H}, train);
  return a;
}

LcLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const LongcatFlashFields& f, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, E = s.num_experts, Et = E + f.zero_experts, I = s.moe_intermediate_size,
                F = s.intermediate_size;
  LcLayer d;
  d.gate_up = b.param(p + "mlp.experts.gate_up_proj", {Et, 2 * I, H}, train);
  d.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
  b.buffer(p + "mlp.router.e_score_correction_bias", {Et}, b.param_dtype());
  d.classifier = b.param(p + "mlp.router.classifier.weight", {Et, H}, train);
  if (f.router_bias) {
    // The forward reads classifier.weight alone (F.linear(x.float(), classifier.weight.float())): no gradient
    // reaches the bias, which AdamW then skips.
    d.classifier_b = b.param(p + "mlp.router.classifier.bias", {Et}, train);
    b.unreached_param(d.classifier_b);
  }
  for (int j = 0; j < 2; ++j) d.attn[j] = mla_params(b, s, p + "self_attn." + std::to_string(j) + ".", train);
  for (int j = 0; j < 2; ++j) {
    const std::string m = p + "mlps." + std::to_string(j) + ".";
    d.mlp[j].gate = b.param(m + "gate_proj.weight", {F, H}, train);
    d.mlp[j].up = b.param(m + "up_proj.weight", {F, H}, train);
    d.mlp[j].down = b.param(m + "down_proj.weight", {H, F}, train);
  }
  for (int j = 0; j < 2; ++j) d.in_norm[j] = b.param(p + "input_layernorm." + std::to_string(j) + ".weight", {H}, train);
  for (int j = 0; j < 2; ++j)
    d.post_norm[j] = b.param(p + "post_attention_layernorm." + std::to_string(j) + ".weight", {H}, train);
  return d;
}

// A tensor computed without autograd history (routing bookkeeping).
TensorId no_grad(GraphBuilder& b, std::string_view name, Shape shape, DType t) {
  return b.generic({name, {}, {{std::move(shape), t}}, {}, {}, {}, {}})[0];
}

// LongcatFlashMoE.forward on the post-attention norm's output n [B, S, H] (the header's statements).
TensorId moe(GraphBuilder& b, const TransformerSpec& s, const LongcatFlashFields& f, const LcLayer& d, TensorId n) {
  const Shape ns = b.shape(n);
  const int64_t B = ns[0], S = ns[1], H = ns[2], E = s.num_experts, Et = E + f.zero_experts,
                K = s.num_experts_per_tok, I = s.moe_intermediate_size;
  const int64_t T = checked_mul(B, S), R = checked_mul(T, K);
  const DType dt = b.dtype(n);
  const TensorId flat = b.view(n, {T, H});
  // LongcatFlashTopkRouter.forward
  const TensorId logits = b.linear(b.to(flat, DType::f32), b.to(d.classifier, DType::f32));
  b.hold(logits);
  const TensorId scores = b.softmax_last(logits);
  b.hold(scores);
  // get_topk_indices (no_grad): scores_for_choice, then topk's indices (its values a temporary)
  const TensorId choice = no_grad(b, "add", {T, Et}, b.dtype(scores));
  b.hold(choice);
  const auto top = b.generic({"topk", {}, {{{T, K}, b.dtype(scores)}, {{T, K}, DType::i64}}, {}, {}, {}, {}});
  const TensorId idx = top[1];
  b.hold(idx);
  b.drop(choice);
  const TensorId gathered = b.generic_one("gather", {scores, idx}, {T, K}, b.dtype(scores), {1});
  b.hold(gathered);
  const TensorId scaled = b.scalar_op("mul_scalar", gathered, false);  // rebinds topk_weights
  b.hold(scaled);
  b.drop(gathered);
  const TensorId weights = b.to(scaled, b.dtype(logits));
  b.hold(weights);  // the MoE's topk_weights until it returns
  for (TensorId t : {logits, scores, scaled})
    if (t != weights) b.drop(t);

  // LongcatFlashExperts.forward
  TensorId acc = b.generic_one("zeros_like", {}, {T, H}, dt);
  const TensorId final_hs = acc;
  b.hold(final_hs);
  const TensorId mask = no_grad(b, "one_hot", {T, K, Et}, DType::i64);
  b.hold(mask);  // expert_mask, bound until the experts return
  const TensorId hit = no_grad(b, "nonzero", {Et, 1}, DType::i64);
  b.hold(hit);
  TensorId var_where = kNoTensor, var_state = kNoTensor, var_gu = kNoTensor, var_cur = kNoTensor;
  auto rebind = [&](TensorId& var, TensorId now) {
    b.hold(now);
    if (var != kNoTensor && var != now) b.drop(var);
    var = now;
  };
  for (int64_t e = 0; e < Et; ++e) {
    const int64_t ne = R / Et + (e < R % Et ? 1 : 0);
    if (ne == 0) continue;
    rebind(var_where, no_grad(b, "where", {ne, 2}, DType::i64));
    rebind(var_state, b.generic_one("index", {flat, var_where}, {ne, H}, dt, {1}));
    TensorId cur;
    if (e < E) {
      const TensorId gu = b.linear(var_state, b.select_param(d.gate_up, {2 * I, H}));
      rebind(var_gu, gu);  // gate, up: views of it
      const auto halves = b.split(gu, 2, {ne, I});
      const TensorId prod = b.mul(b.unary("silu", halves[0], true, false), halves[1]);
      rebind(var_cur, prod);
      cur = b.linear(prod, b.select_param(d.down, {H, I}));
      rebind(var_cur, cur);
    } else {
      // current_hidden_states = identity(current_state): the old binding dies, the state is the value
      if (var_cur != kNoTensor) b.drop(var_cur);
      var_cur = kNoTensor;
      cur = var_state;
    }
    const TensorId tw = b.generic_one("index", {weights, var_where}, {ne, 1}, b.dtype(weights), {1});
    const TensorId weighted = b.mul(cur, tw);
    rebind(var_cur, weighted);
    acc = b.inplace("index_add_", acc, false, {b.to(weighted, dt), var_where});
  }
  for (TensorId t : {var_where, var_state, var_gu, var_cur})
    if (t != kNoTensor) b.drop(t);
  const TensorId out = b.view(acc, {B, S, H});
  for (TensorId t : {final_hs, mask, hit, weights, idx}) b.drop(t);
  return out;
}

TensorId mlp_forward(GraphBuilder& b, const DeepseekMlp& m, TensorId x) {
  return swiglu_mlp(b, x, m.gate, m.up, m.down, m.gate_b, m.up_b, m.down_b);
}

}  // namespace

void build_longcat_flash(GraphBuilder& b, const TransformerSpec& s) {
  const LongcatFlashFields& f = family_fields<LongcatFlashFields>(s);
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0 || s.q_lora_rank <= 0)
    throw InputError("model.kv_lora_rank", std::to_string(s.kv_lora_rank),
                     "LongcatFlashMLA needs kv_lora_rank, q_lora_rank and qk_rope_head_dim > 0");
  if (s.num_kv_heads != s.num_heads)
    throw InputError("config.num_key_value_heads", std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) +
                         ") for multi-head latent attention");
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts + f.zero_experts)
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "longcat_flash needs n_routed_experts > 0 and moe_topk in [1, n_routed + zero experts]");
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  std::vector<LcLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(layer_params(b, s, f, i, !layer_frozen(cfg, i)));
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train)
                                              : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);  // generate() passes position_ids [B, S]
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  TensorId position_ids = kNoTensor;
  if (P == 1) {  // arange(S) + past_seen_tokens, unsqueezed: bound until forward returns
    const TensorId ar = b.generic({"arange", {}, {{{S}, DType::i64}}, {}, {}, {}, {}})[0];
    position_ids = b.generic({"add", {ar}, {{{1, S}, DType::i64}}, {}, {}, {}, {}})[0];
    b.hold(position_ids);
  }
  TensorId mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, S, S, b.dtype(h));
  } else {
    mask = inference_mask(b, 0, b.dtype(h));
  }
  if (mask != kNoTensor) b.hold(mask);
  MlaRotary rot = mla_rotary(b, s, P, S, b.dtype(h));
  rot.rows = P;
  b.hold(inputs_embeds);
  for (TensorId t : {rot.freqs_cis, rot.cos, rot.sin})
    if (t != kNoTensor) b.hold(t);
  MlaVariant v{};
  v.lora_scales = true;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const LcLayer& d = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    // first sublayer: attention, then the MoE shortcut and the first MLP over the same norm
    TensorId n = ds_rms_norm(b, h, d.in_norm[0]);
    b.hold(n);
    TensorId w0 = kNoTensor;
    const TensorId a0 = mla_attention(b, s, v, d.attn[0], rot, n, mask, w0);
    b.drop(n);
    TensorId h1 = b.add(h, a0);
    b.hold(h1);
    n = ds_rms_norm(b, h1, d.post_norm[0]);
    b.hold(n);
    const TensorId shortcut = moe(b, s, f, d, n);
    b.hold(shortcut);
    const TensorId m0 = mlp_forward(b, d.mlp[0], n);
    b.drop(n);
    TensorId h2 = b.add(h1, m0);
    b.hold(h2);
    b.drop(h1);
    // second sublayer
    n = ds_rms_norm(b, h2, d.in_norm[1]);
    b.hold(n);
    TensorId w1 = kNoTensor;
    const TensorId a1 = mla_attention(b, s, v, d.attn[1], rot, n, mask, w1);
    b.drop(n);
    if (w0 != kNoTensor) b.drop(w0);  // `hidden_states, _ = ...`: `_` rebinds at the second attention's return
    TensorId h3 = b.add(h2, a1);
    b.hold(h3);
    b.drop(h2);
    n = ds_rms_norm(b, h3, d.post_norm[1]);
    b.hold(n);
    const TensorId m1 = mlp_forward(b, d.mlp[1], n);
    b.drop(n);
    h = b.add(b.add(h3, m1), shortcut);
    b.drop(h3);
    b.drop(shortcut);
    if (w1 != kNoTensor) b.drop(w1);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  const TensorId hn = ds_rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, rot.freqs_cis, rot.cos, rot.sin, mask, position_ids})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
