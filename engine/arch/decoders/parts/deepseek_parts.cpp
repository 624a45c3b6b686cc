// The DeepSeek multi-head latent attention decoders (transformers 5.17 modeling_deepseek_v2.py and
// modeling_deepseek_v3.py, which write the same attention, decoder layer and model) and the routed experts shared
// with gpt_oss.
//
// Stages of build_deepseek: embed_tokens -> causal mask (eager: materialised; SDPA training: none) -> rotary
// (v2: complex freqs_cis; v3: cos / sin) -> N x decoder layer -> norm -> lm_head -> loss (training) or the last
// logits (inference).
//   Attention (DeepseekV2Attention.forward / DeepseekV3Attention.forward): q = q_proj(x) or
//   q_b_proj(q_a_layernorm(q_a_proj(x))), viewed [B, H, S, qk] and split into q_nope / q_pe;
//   compressed_kv = kv_a_proj_with_mqa(x) split into the latent (kv_a_layernorm, viewed [B, 1, S, kv_lora_rank])
//   and the shared rope key [B, 1, S, rope]; rope on q_pe / k_pe; the DynamicCache stores the two latents (the
//   normed latent as keys, the rotated rope key as values: [B, 1, L, kv_lora_rank] and [B, 1, L, rope] per
//   layer); query_states = cat(q_nope, q_pe); expand_kv: kv_b_proj(latent) viewed [B, H, L, nope + v], split
//   into k_nope / value_states, key_states = new_empty [B, H, L, qk] with both parts copied in (CopySlices);
//   attention; the output transposed back to [B, S, H, v] (a copy: SDPA's output follows the contiguous query's
//   [B, H, S, D] layout), o_proj. All of q, compressed_kv and the latents stay bound until forward returns.
//   MLP: DeepseekV2MLP / DeepseekV3MLP (SwiGLU) in the first first_k_dense_replace layers, then the MoE: router,
//   routed experts (experts_grouped_mm) and the shared experts' MLP over the same input, added.
#include "engine/arch/decoders/parts/deepseek_parts.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// A tensor computed without autograd history (routing bookkeeping under no_grad or used only for indices).
TensorId no_grad(GraphBuilder& b, std::string_view name, Shape shape, DType t) {
  return b.generic({name, {}, {{std::move(shape), t}}, {}, {}, {}, {}})[0];
}

}  // namespace

namespace {

// _apply_gate on proj [R, 2I]: chunk + act(gate) * up, or GptOssExperts' interleaved clamp / sigmoid glu.
TensorId apply_gate(GraphBuilder& b, const ExpertsParams& e, TensorId proj, int64_t R) {
  const int64_t I = e.inter;
  if (e.clamped_gate) {
    // DeepseekV4Experts._apply_gate: the chunks are views of proj; each clamp saves its input view (keeping proj)
    // and makes a fresh tensor; silu saves the clamped gate; the product saves both factors.
    const auto halves = b.split(proj, 2, {R, I});
    TensorId gate = b.unary("clamp", halves[0], true, false);
    TensorId up = b.unary("clamp", halves[1], true, false);
    return b.mul(b.unary("silu", gate, true, false), up);
  }
  if (!e.gpt_oss_gate) {
    const auto halves = b.split(proj, 2, {R, I});
    return b.mul(b.unary("silu", halves[0], true, false), halves[1]);
  }
  // gate_up[..., ::2] / [..., 1::2]: strided views whose backward (SliceBackward) zero-fills a full-size
  // gradient each; clamp saves its input; sigmoid its output. The argument gate_up stays referenced until
  // _apply_gate returns (whole-run gpt_oss inference stream).
  const TensorId gate_up = proj;
  b.hold(gate_up);
  TensorId gate = b.unary("clamp", b.select_param(proj, {R, I}), true, false);
  TensorId up = b.unary("clamp", b.select_param(proj, {R, I}), true, false);
  TensorId glu = b.mul(gate, b.unary("sigmoid", b.scalar_op("mul_scalar", gate, false), false, true));
  TensorId out = b.mul(b.add_scalar(up), glu);
  b.drop(gate_up);
  return out;
}

// batched_mm_experts_forward, which generate() installs for its decode steps (GenerationMixin.
// _optimize_model_for_decode swaps grouped_mm for batched_mm on CUDA after the prefill): every routed row gets
// its own copy of its expert's weights (gate_up_proj[expert_ids] [R, 2I, H], then down_proj[expert_ids]
// [R, H, I]; whole-run deepseek_v2 generate stream: 132 + 66 MiB per MoE layer for R = 12), bmm per row.
TensorId experts_batched_mm(GraphBuilder& b, const ExpertsParams& e, TensorId flat, TensorId top_w, TensorId top_idx) {
  const Shape fs = b.shape(flat);
  const int64_t T = fs[0], H = fs[1], K = e.top_k, I = e.inter, R = checked_mul(T, K);
  const DType in_dt = b.dtype(flat), w_dt = b.dtype(e.gate_up);
  const TensorId rows = b.generic_one("repeat_interleave", {flat}, {R, H}, in_dt);
  b.hold(rows);  // selected_hidden_states: bound until the function returns
  const TensorId ids = b.generic_one("clamp", {b.view(top_idx, {R})}, {R}, DType::i64);
  b.hold(ids);
  TensorId w_up = b.generic_one("index", {e.gate_up, ids}, {R, 2 * I, H}, w_dt, {1});
  b.hold(w_up);
  TensorId bias = e.gate_up_bias != kNoTensor ? b.generic_one("index", {e.gate_up_bias, ids}, {R, 2 * I}, w_dt, {1}) : kNoTensor;
  if (bias != kNoTensor) b.hold(bias);
  TensorId proj = b.generic_one("bmm", {w_up, rows}, {R, 2 * I}, w_dt, {0, 1});
  if (bias != kNoTensor) proj = b.inplace("add_", proj, false, {bias});
  proj = apply_gate(b, e, proj, R);
  TensorId w_dn = b.generic_one("index", {e.down, ids}, {R, H, I}, w_dt, {1});
  b.hold(w_dn);
  b.drop(w_up);  // `selected_weights` rebinds
  TensorId dbias = e.down_bias != kNoTensor ? b.generic_one("index", {e.down_bias, ids}, {R, H}, w_dt, {1}) : kNoTensor;
  if (dbias != kNoTensor) b.hold(dbias);
  if (bias != kNoTensor) b.drop(bias);
  proj = b.generic_one("bmm", {w_dn, proj}, {R, H}, w_dt, {0, 1});
  if (dbias != kNoTensor) proj = b.inplace("add_", proj, false, {dbias});
  TensorId weighted = b.mul(proj, b.view(top_w, {R, 1}));
  TensorId out = b.to(b.generic_one("sum_topk", {weighted}, {T, H}, b.dtype(weighted)), in_dt);
  for (TensorId t : {rows, ids, w_dn, dbias})
    if (t != kNoTensor) b.drop(t);
  return out;
}

}  // namespace

TensorId experts_grouped_mm(GraphBuilder& b, const ExpertsParams& e, TensorId flat, TensorId top_w, TensorId top_idx) {
  if (!b.training() && b.pass().from_generate && b.pass().past_len > 0)
    return experts_batched_mm(b, e, flat, top_w, top_idx);
  const Shape fs = b.shape(flat);
  const int64_t T = fs[0], H = fs[1], E = e.experts, K = e.top_k, I = e.inter;
  const int64_t R = checked_mul(T, K);
  const DType in_dt = b.dtype(flat);
  const DType w_dt = b.dtype(e.gate_up);
  auto sorted = b.generic({"sort", {top_idx}, {{{R}, DType::i64}, {{R}, DType::i64}}, {}, {}, {}, {}});
  const TensorId ids_g = sorted[0], perm = sorted[1];
  b.hold(ids_g);
  b.hold(perm);
  TensorId rows = b.generic_one("floor_divide", {perm}, {R}, DType::i64);
  const TensorId selected_g = b.generic_one("index", {flat, rows}, {R, H}, in_dt, {1});
  b.hold(selected_g);  // selected_hidden_states_g: a local until the function returns
  const TensorId sample_w = b.generic_one("index", {b.view(top_w, {R}), perm}, {R}, b.dtype(top_w), {1});
  b.hold(sample_w);
  const TensorId offsets = b.generic_one("cumsum", {b.generic_one("histc", {ids_g}, {E}, DType::i32)}, {E}, DType::i32);
  b.hold(offsets);
  const TensorId sentinel = b.generic_one("sentinel_mask", {ids_g}, {R, 1}, DType::boolean);
  b.hold(sentinel);
  TensorId gu_bias = kNoTensor;
  if (e.gate_up_bias != kNoTensor) {  // gate_up_proj_bias[expert_ids_g]: bound until the function returns
    gu_bias = b.generic_one("index", {e.gate_up_bias, ids_g}, {R, 2 * I}, b.dtype(e.gate_up_bias), {1});
    b.hold(gu_bias);
  }
  const TensorId selected = b.inplace_fresh_grad("masked_fill_", selected_g, {sentinel});
  // grouped_mm reads the weight first: its backward computes the weight gradient before the input's.
  // grouped_mm's kernel arguments: two small tables allocated after the output and freed before it returns,
  // E * 60 bytes and a fixed 67,584 (whole-run streams of 8 to 256 experts: 960 / 1920 / 3840 / 15360 with 67,584
  // each time; notes-f19/minimax.md), and none when the experts run in fp32 (fp32 and amp streams have no pair).
  std::vector<int64_t> gmm_temps;
  if (w_dt != DType::f32) gmm_temps = {checked_mul(E, int64_t{60}), int64_t{67584}};
  auto grouped_mm = [&](TensorId w, TensorId x, int64_t out_cols) {
    return b.generic({"grouped_mm", {w, x, offsets}, {{{R, out_cols}, w_dt}}, {0, 1}, {}, gmm_temps, {}})[0];
  };
  TensorId proj = grouped_mm(e.gate_up, b.to(selected, w_dt), 2 * I);
  if (gu_bias != kNoTensor) proj = b.inplace("add_", proj, false, {gu_bias});
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, 2 * I}, w_dt);
  proj = apply_gate(b, e, proj, R);
  TensorId dn_bias = kNoTensor;
  if (e.down_bias != kNoTensor) {
    dn_bias = b.generic_one("index", {e.down_bias, ids_g}, {R, H}, b.dtype(e.down_bias), {1});
    b.hold(dn_bias);
    if (gu_bias != kNoTensor) b.drop(gu_bias);  // `selected_biases` rebinds to the down projection's rows
  }
  proj = grouped_mm(e.down, proj, H);
  if (dn_bias != kNoTensor) proj = b.inplace("add_", proj, false, {dn_bias});
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, H}, w_dt);
  b.hold(proj);  // not rebound after the weighting: bound until the function returns
  TensorId weighted = b.mul(proj, b.view(sample_w, {R, 1}));
  // inv_perm = empty_like(perm); inv_perm[perm] = arange(R): the arange is a temporary.
  TensorId inv_perm = b.generic({"inv_perm", {perm}, {{{R}, DType::i64}}, {}, {}, {checked_mul(R, 8)}, {}})[0];
  weighted = b.generic_one("index", {weighted, inv_perm}, {R, H}, b.dtype(weighted), {1});
  b.hold(weighted);
  TensorId summed = b.generic_one("sum_topk", {weighted}, {T, H}, b.dtype(weighted));  // view(T, k, H).sum(1)
  TensorId out = b.to(summed, in_dt);
  for (TensorId t : {weighted, proj, selected_g, sample_w, offsets, sentinel, perm, ids_g, dn_bias})
    if (t != kNoTensor) b.drop(t);
  if (gu_bias != kNoTensor && dn_bias == kNoTensor) b.drop(gu_bias);
  return out;
}

// DeepseekV2RMSNorm / DeepseekV3RMSNorm: the statements of llama's rms_norm (builders.h), with `variance` bound
// until forward returns (whole-run deepseek_v3 inference stream: the [B, S, 1] fp32 block is freed after the
// weight product, not once rsqrt has read it). Kept here rather than in llama.cpp, whose recorded streams were
// matched at block sizes where this small-pool block does not show.
TensorId ds_rms_norm(GraphBuilder& b, TensorId x, TensorId w) {
  const DType in_dt = b.dtype(x);
  TensorId x32 = b.to(x, DType::f32);
  TensorId var = b.reduce_last("mean", b.pow_scalar(x32), false);
  b.hold(var);
  TensorId n = b.mul(x32, b.unary("rsqrt", b.add_scalar(var), false, true, true));
  b.hold(n);
  TensorId y = b.mul(w, b.to(n, in_dt));
  b.drop(n);
  b.drop(var);
  return y;
}

// Registration order (DeepseekV*DecoderLayer.__init__): self_attn (q_proj or q_a_proj, q_a_layernorm, q_b_proj;
// kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj), mlp (dense: gate, up, down; MoE: experts
// gate_up_proj / down_proj, gate.weight (+ v3's e_score_correction_bias buffer), shared_experts), norms.
DeepseekLayer deepseek_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train,
                                    const std::function<void()>& after_attention) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, nh = s.num_heads, qk = s.qk_nope_head_dim + s.qk_rope_head_dim;
  DeepseekLayer d;
  DeepseekMla& a = d.attn;
  const std::string sa = p + "self_attn.";
  if (s.q_lora_rank == 0) {
    a.q = b.param(sa + "q_proj.weight", {nh * qk, H}, train);
  } else {
    a.q_a = b.param(sa + "q_a_proj.weight", {s.q_lora_rank, H}, train);
    if (s.attention_bias) a.q_a_b = b.param(sa + "q_a_proj.bias", {s.q_lora_rank}, train);
    a.q_a_norm = b.param(sa + "q_a_layernorm.weight", {s.q_lora_rank}, train);
    a.q_b = b.param(sa + "q_b_proj.weight", {nh * qk, s.q_lora_rank}, train);
  }
  a.kv_a = b.param(sa + "kv_a_proj_with_mqa.weight", {s.kv_lora_rank + s.qk_rope_head_dim, H}, train);
  if (s.attention_bias) a.kv_a_b = b.param(sa + "kv_a_proj_with_mqa.bias", {s.kv_lora_rank + s.qk_rope_head_dim}, train);
  a.kv_a_norm = b.param(sa + "kv_a_layernorm.weight", {s.kv_lora_rank}, train);
  a.kv_b = b.param(sa + "kv_b_proj.weight", {nh * (s.qk_nope_head_dim + s.v_head_dim), s.kv_lora_rank}, train);
  a.o = b.param(sa + "o_proj.weight", {H, nh * s.v_head_dim}, train);
  if (s.attention_bias) a.o_b = b.param(sa + "o_proj.bias", {H}, train);
  if (after_attention) after_attention();
  // glm4_moe_lite: config.mlp_layer_types[i] == "sparse" (spec.moe_layers); DeepSeek-V2 / V3 / V3.2, Mistral4:
  // i >= first_k_dense_replace.
  d.moe = s.moe_layers.empty() ? i >= s.first_dense_layers : s.moe_layers[static_cast<size_t>(i)] != 0;
  auto mlp = [&](const std::string& m, int64_t I) {
    DeepseekMlp r;
    r.gate = b.param(m + "gate_proj.weight", {I, H}, train);
    if (s.mlp_bias) r.gate_b = b.param(m + "gate_proj.bias", {I}, train);
    r.up = b.param(m + "up_proj.weight", {I, H}, train);
    if (s.mlp_bias) r.up_b = b.param(m + "up_proj.bias", {I}, train);
    r.down = b.param(m + "down_proj.weight", {H, I}, train);
    if (s.mlp_bias) r.down_b = b.param(m + "down_proj.bias", {H}, train);
    return r;
  };
  if (d.moe) {
    ExpertsParams& e = d.experts;
    e.experts = s.num_experts;
    e.top_k = s.num_experts_per_tok;
    e.inter = s.moe_intermediate_size;
    e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {s.num_experts, 2 * e.inter, H}, train);
    e.down = b.param(p + "mlp.experts.down_proj", {s.num_experts, H, e.inter}, train);
    d.router = b.param(p + "mlp.gate.weight", {s.num_experts, H}, train);
    // DeepSeek-V3's default-dtype buffer is carried fp32 (_keep_in_fp32_modules_strict); Glm4MoeLiteTopkRouter and
    // DeepseekV32's router create it dtype=torch.float32.
    if (s.model_type == "deepseek_v3" || s.model_type == "glm4_moe_lite" || s.model_type == "deepseek_v32" ||
        s.model_type == "glm_moe_dsa")
      b.buffer(p + "mlp.gate.e_score_correction_bias", {s.num_experts}, DType::f32);
    d.mlp = mlp(p + "mlp.shared_experts.", checked_mul(s.moe_intermediate_size, s.num_shared_experts));
  } else {
    d.mlp = mlp(p + "mlp.", s.intermediate_size);
  }
  d.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  d.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return d;
}

namespace {

using Rotary = MlaRotary;

}  // namespace

MlaRotary mla_rotary(GraphBuilder& b, const TransformerSpec& s, int64_t P, int64_t S, DType hidden_dt) {
  Rotary r;
  const int64_t rd = s.qk_rope_head_dim;
  if (s.model_type != "deepseek_v2") {  // v3, mistral4: LlamaRotaryEmbedding's forward over rope dims
    auto cs = rotary_cos_sin(b, P, S, rd, hidden_dt);
    r.cos = cs.first;
    r.sin = cs.second;
    return r;
  }
  // DeepseekV2RotaryEmbedding.forward (fp32, autocast off): position_ids.float(), freqs = inv_freq @ positions,
  // torch.polar(ones_like(freqs), freqs), times attention_scaling; the locals die when it returns.
  auto f32 = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::f32}}, {}, {}, {}, {}})[0];
  };
  const TensorId positions = f32("to_copy", {}, {P, 1, S});
  const TensorId freqs = f32("matmul", {positions}, {P, rd / 2, S});
  const TensorId ones = f32("ones_like", {freqs}, {P, S, rd / 2});
  const TensorId polar = f32("polar", {ones, freqs}, {P, 1, S, rd});  // complex64 [P, S, rd / 2]
  for (TensorId t : {positions, freqs, ones, polar}) b.hold(t);
  r.freqs_cis = f32("mul_scalar", {polar}, {P, 1, S, rd});
  for (TensorId t : {positions, freqs, ones, polar}) b.drop(t);
  return r;
}

namespace {

// One of q_pe / k_pe through the rotary embedding.
// v2 apply_rotary_emb: x.float() (a copy unless fp32), viewed complex, times freqs_cis (a complex product: fp32
// bytes of x), view_as_real, type_as(x) (a copy back unless fp32).
// v3 apply_rotary_pos_emb_interleave: the even / odd slices x1, x2 (strided views), cat(x1 cos - x2 sin,
// x2 cos + x1 sin) over half-width cos / sin views; apply_rotary_pos_emb (rope_interleave False): llama's.
TensorId rope_one(GraphBuilder& b, const TransformerSpec& s, const Rotary& r, TensorId x) {
  if (r.freqs_cis != kNoTensor) {
    const DType dt = b.dtype(x);
    TensorId x32 = b.to(x, DType::f32);
    TensorId prod = b.mul(x32, r.freqs_cis);
    return b.to(prod, dt);
  }
  if (!s.rope_interleave) return rope(b, x, r.cos, r.sin);
  return rope_interleave(b, x, r.cos, r.sin);
}

}  // namespace

TensorId rope_interleave(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  Shape half = b.shape(x);
  half.back() /= 2;
  Shape cs = b.shape(cos);
  cs.back() /= 2;
  const TensorId c = b.view(cos, cs), sn = b.view(sin, cs);
  const TensorId x1 = b.select_param(x, half), x2 = b.select_param(x, half);
  TensorId first = b.add(b.mul(x1, c), b.mul(x2, sn));    // x1 * cos - x2 * sin
  TensorId second = b.add(b.mul(x2, c), b.mul(x1, sn));   // x2 * cos + x1 * sin
  return b.cat_last("cat", {first, second});
}

// DeepseekV2TopkRouter / DeepseekV3TopkRouter over flat [T, H]. The MoE forward binds the returned router_logits
// to `_` until it returns (DeepseekRoute::logits, held); every local lives until the router returns and rebinding
// frees the old value (whole-run deepseek_v3 inference stream, block for block). Routing bookkeeping that only
// picks indices has no gradient (GraphBuilder::generic without reads).
DeepseekRoute deepseek_route(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w) {
  const int64_t T = b.shape(flat)[0], E = s.num_experts, K = s.num_experts_per_tok, G = s.moe_n_group,
                TG = s.moe_topk_group;
  // F.linear(hidden.type(float32), weight.type(float32)) (linear autocasts back to the low dtype under amp).
  TensorId logits = b.linear(b.to(flat, DType::f32), b.to(router_w, DType::f32));
  b.hold(logits);
  DeepseekRoute r;
  r.logits = logits;
  std::vector<TensorId> locals;  // dropped when the router returns
  auto local = [&](TensorId x) {
    b.hold(x);
    locals.push_back(x);
    return x;
  };
  // x.topk(k): values then indices; `keep_values` / `keep_indices` say which the statement keeps.
  auto topk_ng = [&](Shape vshape, bool keep_values, bool keep_indices) {
    auto o = b.generic({"topk", {}, {{vshape, DType::f32}, {vshape, DType::i64}}, {}, {}, {}, {}});
    if (keep_values) b.hold(o[0]);
    if (keep_indices) b.hold(o[1]);
    return o;
  };
  // group mask: zeros_like(group_scores).scatter_(...), the expanded mask reshaped (a copy), ~mask.bool()
  // (the .bool() a temporary): returns the inverted mask, a temporary of the masked_fill statement.
  auto group_mask = [&]() {
    local(no_grad(b, "zeros_like_scatter", {T, G}, DType::f32));
    // The expanded [T, G, E / G] mask (strides G, 1, 0) reshapes to [T, E] as a view only when G == 1 (a size-1
    // dim merges; whole-run glm4_moe stream, n_group 1); otherwise a copy.
    if (G > 1) local(no_grad(b, "reshape", {T, E}, DType::f32));
    const TensorId bmask = no_grad(b, "bool", {T, E}, DType::boolean);
    b.hold(bmask);
    const TensorId inv = no_grad(b, "logical_not", {T, E}, DType::boolean);
    b.hold(inv);
    b.drop(bmask);
    return inv;
  };
  TensorId w;
  if (s.moe_topk_method != "noaux_tc") {
    TensorId scores = local(b.softmax_last(b.to(logits, DType::f32)));  // softmax(dim=-1, dtype=float32)
    if (s.moe_topk_method == "group_limited_greedy") {
      // view(-1, G, E / G).max(dim=-1).values: values and indices, the indices a temporary
      auto mx = b.generic({"max_dim", {}, {{{T, G}, DType::f32}, {{T, G}, DType::i64}}, {}, {}, {}, {}});
      local(mx[0]);
      auto gi = topk_ng({T, TG}, false, true);
      local(gi[1]);
      const TensorId inv = group_mask();
      scores = b.generic({"masked_fill", {scores, inv}, {{{T, E}, DType::f32}}, {1}, {}, {}, {}})[0];
      local(scores);
      b.drop(inv);
    }
    auto top = b.generic({"topk", {scores}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
    w = top[0];
    r.indices = top[1];
  } else {
    // noaux_tc: sigmoid scores (saved output); scores_for_choice = scores + e_score_correction_bias; the top-2
    // sum per group; top groups; the group mask; masked_fill(-inf); top-k indices; weights gathered from the
    // sigmoid scores.
    const TensorId scores = local(b.unary("sigmoid", b.to(logits, DType::f32), false, true));
    TensorId choice = no_grad(b, "add", {T, E}, DType::f32);
    b.hold(choice);
    auto g2 = b.generic({"topk", {}, {{{T, G, 2}, DType::f32}, {{T, G, 2}, DType::i64}}, {}, {}, {}, {}});
    b.hold(g2[0]);
    local(b.generic({"sum", {g2[0]}, {{{T, G}, DType::f32}}, {}, {}, {}, {}})[0]);  // group_scores
    b.drop(g2[0]);
    auto gi = topk_ng({T, TG}, false, true);
    local(gi[1]);
    const TensorId inv = group_mask();
    const TensorId masked = no_grad(b, "masked_fill", {T, E}, DType::f32);
    b.drop(inv);
    b.drop(choice);
    local(masked);
    auto top = topk_ng({T, K}, false, true);
    r.indices = top[1];
    w = b.generic_one("gather", {scores, r.indices}, {T, K}, DType::f32, {1});
    if (s.moe_norm_topk_prob) {
      const TensorId den = local(b.add_scalar(b.reduce_last("sum", w, false)));
      w = b.inplace("div_", w, true, {den});
    }
  }
  b.hold(w);
  r.weights = b.scalar_op("mul_scalar", w, false);  // * routed_scaling_factor (rebinds topk_weights)
  b.drop(w);
  for (TensorId x : locals) b.drop(x);
  return r;
}

namespace {

TensorId mlp_forward(GraphBuilder& b, const DeepseekMlp& m, TensorId x) {
  return swiglu_mlp(b, x, m.gate, m.up, m.down, m.gate_b, m.up_b, m.down_b);
}

}  // namespace

TensorId deepseek_mlp_half(GraphBuilder& b, const TransformerSpec& s, const DeepseekLayer& d, TensorId n2,
                           DeepseekRoute (*route)(GraphBuilder&, const TransformerSpec&, TensorId, TensorId)) {
  if (!d.moe) return mlp_forward(b, d.mlp, n2);
  const Shape sh = b.shape(n2);
  const int64_t B = sh[0], S = sh[1], H = sh[2];
  const TensorId flat = b.view(n2, {checked_mul(B, S), H});
  const DeepseekRoute r = route(b, s, flat, d.router);
  const TensorId routed = b.view(experts_grouped_mm(b, d.experts, flat, r.weights, r.indices), {B, S, H});
  const TensorId m = b.add(routed, mlp_forward(b, d.mlp, n2));
  for (TensorId x : {r.weights, r.indices, r.logits}) b.drop(x);
  return m;
}

namespace {

// The attention from query_states / key_states / value_states on (sdpa_attention_forward or
// eager_attention_forward), returning the output [B, S, H, v] (contiguous).
TensorId mla_attention_core(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k, TensorId v,
                            TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = b.shape(q)[2], nh = s.num_heads, vd = s.v_head_dim, L = b.shape(k)[2];
  weights = kNoTensor;
  if (cfg.attn == AttnImpl::sdpa) {
    TensorId out = inf && mask != kNoTensor ? b.sdpa_masked_inference(q, k, v, mask)
                                            : b.sdpa(q, k, v, s.attn_dropout, true);
    return b.contiguous_copy(out, {B, S, nh, vd});  // transpose(1, 2).contiguous() of a [B, H, S, v] output
  }
  // eager: scores = matmul(q, k^T) * scaling (+ mask), softmax in fp32, back to q's dtype, dropout,
  // matmul with value_states (a strided view of kv_b_proj's output: matmul copies it), transposed back.
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, S, L}), false);
  TensorId masked = mask != kNoTensor ? b.add(scores, mask) : scores;
  b.hold(masked);
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(q));
  b.drop(masked);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  return b.contiguous_copy(b.matmul(probs, v, {B, nh, S, vd}, false, true), {B, S, nh, vd}, /*grad_copied=*/true);
}

// get_llama_4_attn_scale(position_ids, beta, original_max_position_embeddings)[:, None, :, None].to(dt) (Mistral4):
// 1 + beta * log(1 + floor(position_ids / max)), each operator an fp32 [P, S] temporary (no autograd: integer
// positions), viewed [P, 1, S, 1], then cast to the query's dtype (a copy unless fp32).
TensorId llama4_attn_scale(GraphBuilder& b, TensorId position_ids, int64_t P, int64_t S, DType dt) {
  TensorId x = position_ids;
  for (const char* op : {"div", "floor", "add_scalar", "log", "mul_scalar", "add_scalar"})
    x = b.generic({op, {x}, {{{P, S}, DType::f32}}, {}, {}, {}, {}})[0];
  return b.to(b.view(x, {P, 1, S, 1}), dt);
}

}  // namespace

TensorId mla_attention(GraphBuilder& b, const TransformerSpec& s, const MlaVariant& v, const DeepseekMla& w,
                       const MlaRotary& rot, TensorId x, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim, qk = nope + rd, kvr = s.kv_lora_rank,
                vd = s.v_head_dim;
  TensorId qlin;
  if (s.q_lora_rank == 0) {
    qlin = b.linear(x, w.q);
  } else {
    // q_b_proj(q_a_layernorm(q_a_proj(x))): the caller's frame holds q_a_proj's output, the norm's argument,
    // until the norm returns (whole-run deepseek_v3 stream: the 1.5 MiB block freed after the norm's product).
    const TensorId qa = b.linear(x, w.q_a, w.q_a_b);
    b.hold(qa);
    const TensorId qn = ds_rms_norm(b, qa, w.q_a_norm);
    b.drop(qa);
    qlin = b.linear(qn, w.q_b);
  }
  // q.view(...).transpose(1, 2): its gradient comes back from the split as a contiguous [B, H, S, qk] buffer,
  // which the transposed view's reshape copies.
  const TensorId q = b.view_copying_grad(qlin, {B, nh, S, qk});
  b.hold(q);  // `q` is bound until forward returns
  const auto qparts = b.split(q, 2, {B, nh, S, nope});
  TensorId q_nope = qparts[0];
  TensorId q_pe = b.view(qparts[1], {B, nh, S, rd});
  const TensorId ckv = b.linear(x, w.kv_a, w.kv_a_b);
  b.hold(ckv);  // compressed_kv
  const auto kparts = b.split(ckv, 2, {B, S, kvr});
  TensorId latent_n = ds_rms_norm(b, kparts[0], w.kv_a_norm);
  if (v.lora_scales) {
    // q_pass = q_pass * s_q (bound until forward returns), q_rot = q_rot * s_q (rebound by the rotary's output),
    // k_pass = k_pass * s_kv (the norm's output dies): fresh contiguous tensors, nothing saved (Python floats).
    q_nope = b.scalar_op("mul_scalar", q_nope, false);
    b.hold(q_nope);
    q_pe = b.scalar_op("mul_scalar", q_pe, false);
    latent_n = b.scalar_op("mul_scalar", latent_n, false);
  }
  TensorId latent = b.view(latent_n, {B, 1, S, kvr});
  TensorId k_pe = b.view(kparts[1], {B, 1, S, rd});
  b.hold(latent);
  b.hold(q_pe);
  b.hold(k_pe);
  const TensorId q_rot = rope_one(b, s, rot, q_pe);
  b.hold(q_rot);
  TensorId k_rot = rope_one(b, s, rot, k_pe);
  b.hold(k_rot);
  b.drop(q_pe);
  b.drop(k_pe);
  if (inf) {  // past_key_values.update(latent, k_rot): the cache cats both (kv_update), the locals rebind
    auto [lc, kc] = kv_update(b, latent, k_rot, 0);
    b.drop(latent);
    b.drop(k_rot);
    latent = lc;
    k_rot = kc;
    b.hold(latent);
    b.hold(k_rot);
  }
  TensorId query = v.cast_q_cat_grads ? b.cat("cat", {q_nope, q_rot}, -1, std::nullopt, /*cast_part_grads=*/true)
                                      : b.cat_last("cat", {q_nope, q_rot});
  b.hold(query);
  if (v.llama4_query_scale) {  // query_states = query_states * scale: rebinds, the cat dies
    const TensorId scaled = b.mul(query, llama4_attn_scale(b, rot.position_ids, rot.rows, S, b.dtype(query)));
    b.hold(scaled);
    b.drop(query);
    query = scaled;
  }
  const int64_t L = b.shape(latent)[2];
  // expand_kv
  const TensorId kvb = b.view_copying_grad(b.linear(latent, w.kv_b), {B, nh, L, nope + vd});
  const auto kvparts = b.split(kvb, 2, {B, nh, L, nope});
  const TensorId k_nope = kvparts[0];
  const TensorId value = b.view(kvparts[1], {B, nh, L, vd});
  b.hold(value);
  const TensorId k_rot_h = b.view(k_rot, {B, nh, L, rd});  // expand: no storage of its own
  // key_states = new_empty(...); two copy_ into its slices (CopySlices: backward clones the incoming gradient).
  const int64_t key_bytes = checked_mul(checked_mul(checked_mul(B, nh), checked_mul(L, qk)), dtype_bytes(b.dtype(k_nope)));
  auto ks = b.generic({"new_empty_copy_", {k_nope, k_rot_h}, {{{B, nh, L, qk}, b.dtype(k_nope)}}, {}, {}, {}, {key_bytes}});
  const TensorId key = ks[0];
  b.hold(key);
  TensorId ctx = mla_attention_core(b, s, query, key, value, mask, weights);
  TensorId out = b.linear(b.view(ctx, {B, S, nh * vd}), w.o, w.o_b);
  for (TensorId t : {q, ckv, latent, q_rot, k_rot, query, value, key}) b.drop(t);
  if (v.lora_scales) b.drop(q_nope);
  return out;
}

DeepseekRoute deepseek_route_bound(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w) {
  DeepseekRoute r = deepseek_route(b, s, flat, router_w);
  b.hold(r.weights);  // topk_weights / topk_indices / `_` (the router logits): bound until the MoE returns
  b.hold(r.indices);
  return r;
}

void build_deepseek(GraphBuilder& b, const TransformerSpec& s) { build_mla_decoder(b, s, MlaVariant{}); }

void build_mla_decoder(GraphBuilder& b, const TransformerSpec& s, const MlaVariant& v) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0)
    throw InputError("model.kv_lora_rank", std::to_string(s.kv_lora_rank), "multi-head latent attention needs it > 0");
  if (s.num_kv_heads != s.num_heads)
    throw InputError("config.num_key_value_heads", std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) +
                         ") for multi-head latent attention: transformers repeats the expanded keys otherwise and "
                         "the attention fails");
  if (!s.moe_layers.empty() && static_cast<int64_t>(s.moe_layers.size()) != s.num_layers)
    throw InputError("model.moe_layers", std::to_string(s.moe_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  std::vector<DeepseekLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(deepseek_layer_params(b, s, i, !layer_frozen(cfg, i)));
  TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train) : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  TensorId position_ids = kNoTensor;
  if (P > 1) {  // generate() passes position_ids [B, S]
    const TensorId given = b.input({B, S}, DType::i64);
    if (v.llama4_query_scale) position_ids = given;  // read by the query scale: bound until forward returns
  }
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  TensorId mask = kNoTensor;
  // position_ids = torch.arange(S) + past_seen_tokens, unsqueezed, when the caller passes none (a plain forward:
  // training and the harness's prefill; generate() passes its own): the arange is freed once the sum exists, the
  // sum stays bound until the model's forward returns (whole-run deepseek_v3 stream: two 8 KiB blocks).
  if (P == 1) {
    const TensorId ar = b.generic({"arange", {}, {{{S}, DType::i64}}, {}, {}, {}, {}})[0];
    position_ids = b.generic({"add", {ar}, {{{1, S}, DType::i64}}, {}, {}, {}, {}})[0];
  }
  if (position_ids != kNoTensor) b.hold(position_ids);
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, S, S, b.dtype(h));
  } else {
    mask = inference_mask(b, 0, b.dtype(h));
  }
  if (mask != kNoTensor) b.hold(mask);
  Rotary rot = mla_rotary(b, s, P, S, b.dtype(h));
  rot.position_ids = position_ids;
  rot.rows = P;
  b.hold(inputs_embeds);
  for (TensorId t : {rot.freqs_cis, rot.cos, rot.sin})
    if (t != kNoTensor) b.hold(t);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const DeepseekLayer& d = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = ds_rms_norm(b, h, d.in_norm);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId a = mla_attention(b, s, v, d.attn, rot, n1, mask, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = ds_rms_norm(b, h1, d.post_norm);
    b.hold(n2);
    const TensorId m = deepseek_mlp_half(b, s, d, n2, v.route);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = ds_rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, rot.freqs_cis, rot.cos, rot.sin, mask, position_ids})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

std::pair<TensorId, TensorId> half_rotary_cos_sin(GraphBuilder& b, int64_t P, int64_t S, int64_t hd, DType dt) {
  auto f32 = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::f32}}, {}, {}, {}, {}})[0];
  };
  const TensorId positions = f32("to_copy", {}, {P, 1, S});
  const TensorId freqs = f32("matmul", {positions}, {P, hd / 2, S});
  const TensorId cos32 = f32("mul_scalar", {f32("cos", {freqs}, {P, 1, S, hd / 2})}, {P, 1, S, hd / 2});
  const TensorId sin32 = f32("mul_scalar", {f32("sin", {freqs}, {P, 1, S, hd / 2})}, {P, 1, S, hd / 2});
  for (TensorId t : {positions, freqs, cos32, sin32}) b.hold(t);
  TensorId cos = b.to(cos32, dt);
  TensorId sin = b.to(sin32, dt);
  for (TensorId t : {positions, freqs, cos32, sin32})
    if (t != cos && t != sin) b.drop(t);
  return {cos, sin};
}

}  // namespace memplan
