// Llama4ForCausalLM (transformers 5.17 models/llama4/modeling_llama4.py, the text model of Llama 4 Scout /
// Maverick), training forward + loss or one inference pass.
//
// Stages of Llama4TextModel.forward, each mirrored below with its Python lifetimes:
//   embed_tokens -> causal_mask_mapping {full: create_causal_mask, chunked: create_chunked_causal_mask} (both
//   always made) -> freq_cis = rotary_emb (complex64 [P, S, D/2], fp32 with autocast off) -> N x decoder layer ->
//   norm -> lm_head -> ForCausalLMLoss.
//   Llama4TextRMSNorm: output = _norm(x.float()).type_as(x); output * weight. The fp32 copy is _norm's argument
//   (bound until _norm returns), the normalised fp32 tensor a temporary of the type_as (not LlamaRMSNorm's held
//   locals). Llama4TextL2Norm is the same without the weight.
//   Llama4TextAttention: q / k projections viewed [B, S, heads, D] (not transposed yet), v viewed and transposed;
//   RoPE layers (no_rope_layers[i] = 1): apply_rotary_emb = x.float() viewed complex, times freq_cis (a fresh
//   complex64 tensor, fp32 bytes), view_as_real, type_as(x) (fresh copies in the model dtype); the fp32 copies
//   and products are locals freed when it returns (the complex product saves only freq_cis: no grad there).
//   Then L2 qk_norm on q and k (use_qk_norm, RoPE layers). NoPE layers with attn_temperature_tuning: q times an
//   fp32 [S] scale (the product promotes to fp32), .to(q dtype). Then transpose(1, 2) and the attention of
//   LlamaAttention from the cache update on (llama_parts.h attention_o_proj). The decoder layer binds the
//   attention's output to `attention_states` until it returns, and its normed input until the residual add.
//   Llama4TextMoe (moe_layers): router linear [T, E], topk, full_like(-inf).scatter_, sigmoid in fp32, cast back;
//   routed_in = x.repeat(E, 1) * scores^T.reshape(-1, 1) [E*T, H] (every token through every expert, the repeat
//   saved by the product); Llama4TextExperts: bmm with gate_up_proj [E, H, 2I], chunk, up * silu(gate), bmm with
//   down_proj [E, I, H]; the shared expert (a SwiGLU MLP of intermediate_size) on x; out.add_(routed_out
//   .reshape(E, T, H).sum(0)) (sum is an fp32 autocast op: under amp its input is cast to fp32 first).
//   Dense layers: Llama4TextMLP of intermediate_size_mlp.
// Inference: the DynamicCache keeps chunked layers as DynamicSlidingWindowLayer(attention_chunk_size) (kv_update
// with the chunk as window); the chunked mask is materialised once the kv length reaches the chunk size.
#include "engine/arch/builders.h"

#include <algorithm>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Llama4Layer {
  LlamaLayerParams attn;
  bool moe = false;
  // MoE: experts.gate_up_proj [E, H, 2I], experts.down_proj [E, I, H], router [E, H], shared expert SwiGLU.
  TensorId gate_up = kNoTensor, down = kNoTensor, router = kNoTensor;
  FfnParams mlp;  // the shared expert (MoE layers) or the dense Llama4TextMLP
};

bool rope_layer(const TransformerSpec& s, int64_t i) {
  return s.rope_layers.empty() || s.rope_layers[static_cast<size_t>(i)] != 0;
}
bool moe_layer(const TransformerSpec& s, int64_t i) {
  return !s.moe_layers.empty() && s.moe_layers[static_cast<size_t>(i)] != 0;
}

// Registration order (Llama4TextDecoderLayer.__init__): self_attn q, k, v, o; feed_forward (Llama4TextMoe:
// experts.gate_up_proj, experts.down_proj, router, shared_expert gate / up / down; or the MLP's gate / up / down);
// input_layernorm, post_attention_layernorm.
Llama4Layer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  Llama4Layer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w.attn);
  w.moe = moe_layer(s, i);
  const std::string f = p + "feed_forward.";
  if (w.moe) {
    const int64_t E = s.num_experts;
    w.gate_up = b.param(f + "experts.gate_up_proj", {E, H, 2 * I}, train);
    w.down = b.param(f + "experts.down_proj", {E, I, H}, train);
    w.router = b.param(f + "router.weight", {E, H}, train);
    w.mlp.gate = b.param(f + "shared_expert.gate_proj.weight", {I, H}, train);
    w.mlp.up = b.param(f + "shared_expert.up_proj.weight", {I, H}, train);
    w.mlp.down = b.param(f + "shared_expert.down_proj.weight", {H, I}, train);
  } else {
    const int64_t Im = s.intermediate_size_mlp;
    w.mlp.gate = b.param(f + "gate_proj.weight", {Im, H}, train);
    w.mlp.up = b.param(f + "up_proj.weight", {Im, H}, train);
    w.mlp.down = b.param(f + "down_proj.weight", {H, Im}, train);
  }
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.attn.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// Llama4TextRMSNorm (weight) / Llama4TextL2Norm (weight kNoTensor): _norm(x.float()).type_as(x) [* weight].
// x.float() is _norm's argument, bound until _norm returns; pow, mean, + eps and rsqrt are temporaries of one
// expression; the normalised fp32 tensor dies with the type_as (fp32 models and amp's fp32 stream: no copies).
TensorId l4_norm(GraphBuilder& b, TensorId x, TensorId weight) {
  const DType in_dt = b.dtype(x);
  const TensorId x32 = b.to(x, DType::f32);
  if (x32 != x) b.hold(x32);
  const TensorId var = b.reduce_last("mean", b.pow_scalar(x32), false);
  const TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  const TensorId n = b.mul(x32, r);
  if (x32 != x) b.drop(x32);
  const TensorId out = b.to(n, in_dt);
  return weight == kNoTensor ? out : b.mul(out, weight);
}

// apply_rotary_emb(q, k, freqs_cis) on q [B, S, nh, D], k [B, S, nkv, D] (held by the caller). Returns the
// rotated q and k (held; the caller rebinds query_states / key_states to them). `q_grad_strided` /
// `k_grad_strided`: the gradient reaches the rotary output in the attention's [B, H, S, D] memory order (repeat_kv's
// sum for a masked SDPA or eager k, eager matmul's copy of q or k), so view_as_real's backward,
// view_as_complex(grad.contiguous()), copies it (fp32, x's size) before the complex product's backward (whole-run
// amp stream, chunked layers: an 8 MiB copy of k's gradient, none for q, whose SDPA gradient keeps its layout).
std::pair<TensorId, TensorId> apply_rotary_emb(GraphBuilder& b, TensorId q, TensorId k, TensorId freqs,
                                               bool q_grad_strided, bool k_grad_strided) {
  const TensorId xq = b.to(q, DType::f32);  // xq_ = view_as_complex(xq.float().reshape(..., -1, 2))
  if (xq != q) b.hold(xq);
  const TensorId xk = b.to(k, DType::f32);
  if (xk != k) b.hold(xk);
  // xq_ * freqs_cis[:, :, None, :]: a complex64 product (8 bytes per pair = fp32 bytes of x); MulBackward saves
  // freqs_cis only (it needs no gradient, so xq_ is not kept); view_as_real / flatten are views. Its backward,
  // grad * freqs_cis.conj(), materialises the conjugate (freq_cis' bytes) while it writes the gradient (whole-run
  // stream, Scout-width bf16 b1 s2048: 1 MiB allocated before each q / k gradient, freed after it; written here as
  // a backward workspace of the same size).
  const int64_t conj_bytes = b.info(freqs).bytes;
  auto cmul = [&](TensorId x) {
    return b.generic({"mul_complex", {x, freqs}, {{Shape(b.shape(x)), DType::f32}}, {1}, {}, {}, {conj_bytes}})[0];
  };
  auto as_real = [&](TensorId x, bool strided) {  // view_as_real(...).flatten(3): views
    return strided ? b.view_copying_grad(x, Shape(b.shape(x))) : x;
  };
  const TensorId qo = as_real(cmul(xq), q_grad_strided);
  b.hold(qo);
  const TensorId ko = as_real(cmul(xk), k_grad_strided);
  b.hold(ko);
  const TensorId qr = b.to(qo, b.dtype(q));  // xq_out.type_as(xq)
  b.hold(qr);
  const TensorId kr = b.to(ko, b.dtype(k));
  b.hold(kr);
  for (TensorId t : {xq, xk, qo, ko})  // the frame's locals go as it returns
    if (t != q && t != k && t != qr && t != kr) b.drop(t);
  return {qr, kr};
}

// The chunked bool mask as sdpa_mask evaluates chunked_causal_mask_function = and_masks(chunked_overlay,
// causal_mask_function) on broadcast index tensors: the overlay indexes left_padding[batch_idx], so its
// comparison is [B, 1, q, kv] even without padding; ones(()) & overlay, then & (kv <= q). Inside generate() the
// padding mask nests it once more: and_masks(chunked_causal, padding): ones(()) & inner, then & a [B, 1, 1, kv]
// gather (as phi_parts' nested sliding mask).
TensorId chunked_sdpa_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv, bool padded) {
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape, DType dt = DType::boolean) {
    return b.generic({name, std::move(reads), {{std::move(shape), dt}}, {}, {}, {}, {}})[0];
  };
  // q_arange / kv_arange (arange + offset), then the overlay's integer chunk ids of kv and of q.
  const TensorId qa = op("add", {op("arange", {}, {q}, DType::i64)}, {q}, DType::i64);
  b.hold(qa);
  const TensorId ka = op("add", {op("arange", {}, {kv}, DType::i64)}, {kv}, DType::i64);
  b.hold(ka);
  const TensorId kc = op("floor_divide", {op("sub", {ka}, {rows, 1, 1, kv}, DType::i64)}, {rows, 1, 1, kv}, DType::i64);
  const TensorId qc = op("floor_divide", {op("sub", {qa}, {rows, 1, q, 1}, DType::i64)}, {rows, 1, q, 1}, DType::i64);
  TensorId r = op("and", {op("eq", {kc, qc}, {rows, 1, q, kv})}, {rows, 1, q, kv});
  r = op("and", {r, op("le", {ka, qa}, {1, 1, q, kv})}, {rows, 1, q, kv});
  if (padded) {
    r = op("and", {r}, {rows, 1, q, kv});
    r = op("and", {r, op("index", {}, {rows, 1, 1, kv})}, {rows, 1, q, kv});
  }
  b.drop(qa);
  b.drop(ka);
  return r;
}

// create_chunked_causal_mask (always called; skipped to None under SDPA while kv < attention_chunk_size and the
// queries are the whole kv or one token). Returns kNoTensor when skipped.
TensorId chunked_mask(GraphBuilder& b, const TransformerSpec& s, DType model_dtype) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, chunk = s.sliding_window;
  int64_t q = cfg.seq_len, kv = cfg.seq_len;
  const bool gen = !b.training() && b.pass().from_generate;
  if (!b.training()) {
    q = b.pass().new_tokens;
    kv = std::min(b.pass().past_len, chunk - 1) + q;  // DynamicSlidingWindowLayer.get_mask_sizes
  }
  // left_padding_tokens: zeros(B) without an attention mask; inside generate() (cumsum(mask) == 0).sum(-1).
  const TensorId lp = b.generic_one("left_padding", {}, {B}, DType::i64);
  b.hold(lp);
  TensorId m = kNoTensor;
  if (cfg.attn == AttnImpl::eager) {
    m = eager_mask(b, B, q, kv, model_dtype);
  } else {
    const bool skip = (q == 1 || kv == q) && kv < chunk;
    if (!skip) m = chunked_sdpa_mask(b, B, q, kv, gen);
  }
  b.drop(lp);
  return m;
}

// Llama4TextMoe.forward on x [B, S, H] (held by the caller). `router_logits` receives the router's logits,
// which the decoder layer binds to `_` until it returns.
TensorId llama4_moe(GraphBuilder& b, const TransformerSpec& s, const Llama4Layer& w, TensorId x,
                    TensorId& router_logits) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, Sq = b.training() ? cfg.seq_len : b.pass().new_tokens;
  const int64_t H = s.hidden_size, I = s.intermediate_size, E = s.num_experts, K = s.num_experts_per_tok;
  const int64_t T = checked_mul(B, Sq), ET = checked_mul(E, T);
  const TensorId flat = b.view(x, {T, H});
  // Llama4Router: linear, topk, full_like(-inf).scatter_(1, idx, values), sigmoid(scores.float()).to(dtype).
  router_logits = b.linear(flat, w.router);
  b.hold(router_logits);
  const DType ldt = b.dtype(router_logits);
  auto top = b.generic({"topk", {router_logits}, {{{T, K}, ldt}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  const TensorId full = b.generic_one("full_like", {}, {T, E}, ldt);
  const TensorId scattered = b.inplace("scatter_", full, false, {top[1], top[0]});
  const TensorId scores = b.to(b.unary("sigmoid", b.to(scattered, DType::f32), false, true), ldt);
  b.hold(scores);  // router_scores: bound until the block returns
  // routed_in = hidden_states.repeat(E, 1) * router_scores.transpose(0, 1).reshape(-1, 1)
  const TensorId rep = b.generic_one("repeat", {flat}, {ET, H}, b.dtype(flat));
  const TensorId col = b.contiguous_copy(b.view(scores, {E, T}), {ET, 1});
  const TensorId routed_in = b.mul(rep, col);
  b.hold(routed_in);
  // Llama4TextExperts.forward: bmm is an autocast op (arguments cast last to first: the weight's cached cast).
  const TensorId gu_w = b.autocast_low(w.gate_up);
  const TensorId xin = b.autocast_low(b.view(routed_in, {E, T, H}));
  const DType edt = b.dtype(gu_w);
  // bmm's backward computes mat2's (the weight's) gradient before self's (whole-run stream): reads weight first.
  const TensorId gate_up = b.generic_one("bmm", {gu_w, xin}, {E, T, 2 * I}, edt, {0, 1});
  b.hold(gate_up);  // gate_up: a local until the experts return
  const auto halves = b.split(gate_up, 2, {E, T, I});
  const TensorId prod = b.mul(halves[1], b.unary("silu", halves[0], true, false));  // up * act_fn(gate)
  const TensorId dn_w = b.autocast_low(w.down);
  const TensorId next = b.generic_one("bmm", {dn_w, b.autocast_low(prod)}, {E, T, H}, edt, {0, 1});
  b.drop(gate_up);
  const TensorId routed_out = b.view(next, {ET, H});
  b.hold(routed_out);
  // The shared expert on the [T, H] view, then out.add_(routed_out.reshape(E, -1, H).sum(dim=0)). Under autocast
  // sum takes dtype=float32 (fp32_set_opt_dtype: an fp32 [T, H] result, no copy of its input; whole-run amp
  // stream). SumBackward expands the gradient (a view), which the cast back to bf16 (amp) or the reshape's
  // backward materialises as a fresh [E, T, H] buffer.
  TensorId out = swiglu_mlp(b, flat, w.mlp.gate, w.mlp.up, w.mlp.down);
  const TensorId r3 = b.view(routed_out, {E, T, H});
  const DType sum_dt = b.autocast() ? DType::f32 : b.dtype(r3);
  const TensorId summed = b.generic_one("sum_dim0", {r3}, {T, H}, sum_dt);
  out = b.inplace("add_", out, false, {summed});
  for (TensorId t : {scores, routed_in, routed_out}) b.drop(t);
  return b.view(out, {B, Sq, H});
}

// Llama4TextAttention's end from the cache update on: under SDPA llama_parts.h attention_o_proj; under eager,
// llama4's own eager_attention_forward, which (unlike Llama's) keeps the softmax in the query's dtype:
// scores = matmul(q, repeat_kv(k)^T) * scaling (+ mask), softmax, dropout, matmul with repeat_kv(v), transposed
// contiguous copy; then o_proj, and query_states / key_states (held by the caller; key_states as the cache update
// rebinds it) and, in training, value_states released as the module returns.
TensorId attention_end(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId ke, TensorId v,
                       TensorId mask, int64_t window, TensorId o, TensorId ob, TensorId& weights) {
  const auto& cfg = b.config();
  if (cfg.attn == AttnImpl::sdpa) return attention_o_proj(b, s, qe, ke, v, v, mask, window, o, ob, weights);
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  const TensorId v_proj = v;
  TensorId k = ke;
  int64_t Lk = S;
  if (inf) {  // key_states / value_states rebind to what the cache returns
    auto [kc, vc] = kv_update(b, ke, v, window);
    b.drop(ke);
    b.drop(v_proj);
    k = kc;
    v = vc;
    Lk = b.shape(kc)[2];
  }
  TensorId kr = k, vr = v;
  if (nkv != nh) {  // repeat_kv: expand + reshape materialises the repeated heads
    kr = b.contiguous_copy(k, {B, nh, Lk, hd});
    vr = b.contiguous_copy(v, {B, nh, Lk, hd});
  }
  b.hold(kr);  // key_states / value_states stay bound until eager_attention_forward returns
  b.hold(vr);
  // torch.matmul copies q (a transposed view of [B, S, H, D] memory) and an uncopied training k (as llama.cpp).
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, kr, {B, nh, S, Lk}, true, kr == k && !inf), false);
  if (mask != kNoTensor) scores = b.add(scores, mask);
  TensorId probs = b.dropout(b.softmax_last(scores), s.attn_dropout);
  weights = probs;
  b.hold(weights);
  const TensorId ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}, false, vr == v && !inf),
                                         {B, S, nh, hd}, /*grad_copied=*/true);
  b.drop(kr);
  b.drop(vr);
  const TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), o, ob);
  b.drop(qe);
  if (inf) b.drop(k);  // key_states: the cache's full tensor
  else b.drop(ke);
  if (!inf) b.drop(v_proj);
  return out;
}

// Llama4TextAttention.forward on the normed input x. `weights`: eager attention's probabilities (held).
TensorId llama4_attention(GraphBuilder& b, const TransformerSpec& s, const Llama4Layer& w, int64_t i, TensorId x,
                          TensorId freqs, TensorId mask, int64_t window, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  const LlamaLayerParams& a = w.attn;
  const bool rope = rope_layer(s, i);
  // query_states / key_states: [B, S, heads, D] views. Their gradients arrive in this layout (no copy back) on
  // RoPE layers (view_as_real's backward makes them contiguous) and from SDPA; on a NoPE layer under eager
  // attention they come from matmul's copies / repeat_kv's sum in [B, H, S, D] order through elementwise
  // backwards only, so ViewBackward's reshape copies them.
  const bool strided_grad = !rope && cfg.attn == AttnImpl::eager;
  auto head_view = [&](TensorId t, Shape shape) {
    return strided_grad ? b.view_copying_grad(t, std::move(shape)) : b.view(t, std::move(shape));
  };
  TensorId q = head_view(b.linear(x, a.q, a.qb), {B, S, nh, hd});
  b.hold(q);
  TensorId k = head_view(b.linear(x, a.k, a.kb), {B, S, nkv, hd});
  b.hold(k);
  const TensorId vp = b.linear(x, a.v, a.vb);
  const Shape vs{B, nkv, S, hd};
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;
  const TensorId v = v_grad_in_layout ? b.view(vp, vs) : b.view_copying_grad(vp, vs);
  b.hold(v);
  if (rope) {
    const bool eager = cfg.attn == AttnImpl::eager;
    const auto [qr, kr] = apply_rotary_emb(b, q, k, freqs, eager, eager || (mask != kNoTensor && nkv != nh));
    b.drop(q);
    b.drop(k);
    q = qr;
    k = kr;
    if (s.l2_qk_norm) {  // query_states = self.qk_norm(query_states): the argument bound until it returns
      const TensorId qn = l4_norm(b, q, kNoTensor);
      b.hold(qn);
      b.drop(q);
      q = qn;
      const TensorId kn = l4_norm(b, k, kNoTensor);
      b.hold(kn);
      b.drop(k);
      k = kn;
    }
  }
  TensorId scales = kNoTensor;
  if (!rope && s.attn_temperature_tuning) {
    // positions = arange(S) + past; attn_scales = log1p(floor((positions.float() + 1) / floor_scale)) *
    // attn_scale + 1 (fp32 [S] temporaries), bound until the attention returns.
    auto vec = [&](std::string_view name, TensorId in, DType dt) {
      return b.generic_one(name, in == kNoTensor ? std::vector<TensorId>{} : std::vector<TensorId>{in}, {S}, dt);
    };
    TensorId t = vec("add", vec("arange", kNoTensor, DType::i64), DType::i64);
    t = vec("to_copy", t, DType::f32);
    for (const char* n : {"add_scalar", "div_scalar", "floor", "log1p", "mul_scalar", "add_scalar"})
      t = vec(n, t, DType::f32);
    scales = t;
    b.hold(scales);
    // (query_states * attn_scales).to(query_states.dtype): the product promotes to fp32.
    const TensorId qs = b.to(b.mul(q, b.view(scales, {1, S, 1, 1})), b.dtype(q));
    b.hold(qs);
    b.drop(q);
    q = qs;
  }
  // query_states.transpose(1, 2), key_states.transpose(1, 2): views held by the module's locals.
  const TensorId qh = b.view(q, {B, nh, S, hd});
  b.hold(qh);
  b.drop(q);
  const TensorId kh = b.view(k, {B, nkv, S, hd});
  b.hold(kh);
  b.drop(k);
  const TensorId out = attention_end(b, s, qh, kh, v, mask, window, a.o, a.ob, weights);
  if (scales != kNoTensor) b.drop(scales);
  return out;
}

TensorId llama4_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, const Llama4Layer& w, TensorId h,
                      TensorId inputs_embeds, TensorId freqs, TensorId full_mask, TensorId chunk_mask) {
  b.begin_layer("layers." + std::to_string(i), layer_checkpointed(b.config(), i));
  const TensorId layer_in = h;
  b.hold(layer_in);  // the model's loop variable (and `residual`) hold the layer input until it returns
  const bool chunked = layer_is_sliding(s, i);
  const TensorId n1 = l4_norm(b, h, w.attn.in_norm);
  b.hold(n1);  // hidden_states: rebound only by the residual add
  TensorId weights = kNoTensor;
  const TensorId a = llama4_attention(b, s, w, i, n1, freqs, chunked ? chunk_mask : full_mask,
                                      chunked ? s.sliding_window : 0, weights);
  b.hold(a);  // attention_states: bound until the layer returns
  const TensorId h1 = b.add(h, a);
  b.drop(n1);
  const TensorId n2 = l4_norm(b, h1, w.attn.post_norm);
  b.hold(n2);  // bound until the feed-forward returns
  TensorId router_logits = kNoTensor;
  const TensorId m = w.moe ? llama4_moe(b, s, w, n2, router_logits)
                           : swiglu_mlp(b, n2, w.mlp.gate, w.mlp.up, w.mlp.down);
  b.drop(n2);
  // `hidden_states, _ = hidden_states` (MoE layers) rebinds `_` from the attention weights to the router logits.
  if (w.moe && weights != kNoTensor) b.drop(weights);
  const TensorId out = b.add(h1, b.view(m, Shape(b.shape(h1))));
  for (TensorId t : {router_logits, weights, a})
    if (t != kNoTensor) b.drop(t);
  if (layer_in != inputs_embeds) b.drop(layer_in);
  b.end_layer();
  return out;
}

}  // namespace

void build_llama4(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts)
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "llama4_text needs num_local_experts >= num_experts_per_tok >= 1");
  if (s.sliding_window <= 0 || !s.chunked_attention)
    throw InputError("model.attention_chunk_size", std::to_string(s.sliding_window),
                     "llama4_text needs a positive attention_chunk_size (create_chunked_causal_mask raises without)");
  if (hd % 2 != 0)
    throw InputError("model.head_dim", std::to_string(hd), "must be even (the rotary embedding pairs dimensions)");
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  const DType dt = b.dtype(h);
  // causal_mask_mapping: create_causal_mask, then create_chunked_causal_mask (both whatever the layers use).
  TensorId full_mask = kNoTensor;
  if (!inf)
    full_mask = cfg.attn == AttnImpl::eager ? eager_mask(b, 1, S, S, dt) : kNoTensor;
  else
    full_mask = inference_mask(b, 0, dt);
  if (full_mask != kNoTensor) b.hold(full_mask);
  const TensorId chunk_mask = chunked_mask(b, s, dt);
  if (chunk_mask != kNoTensor) b.hold(chunk_mask);

  // Llama4TextRotaryEmbedding.forward, fp32 with autocast off: position_ids[:, None, :].float() [P, 1, S],
  // freqs = (inv_freq @ positions).transpose(1, 2) (the first GEMM), torch.polar(ones_like(freqs), freqs)
  // complex64 [P, S, D/2] (the ones a temporary), times attention_scaling (a fresh tensor; the polar output
  // rebound). position_ids_expanded and freqs are locals until it returns.
  const TensorId pos = b.generic_one("to_copy", {}, {P, 1, S}, DType::f32);
  b.hold(pos);
  const TensorId fr = b.generic_one("matmul", {pos}, {P, hd / 2, S}, DType::f32);
  b.hold(fr);
  const TensorId ones = b.generic_one("ones_like", {}, {P, S, hd / 2}, DType::f32);
  const TensorId polar = b.generic_one("polar", {ones, fr}, {P, S, hd}, DType::f32);
  const TensorId freqs = b.generic_one("mul_scalar", {polar}, {P, S, hd}, DType::f32);
  b.drop(pos);
  b.drop(fr);
  // The model keeps inputs_embeds and freq_cis bound until it returns (after the norm).
  b.hold(inputs_embeds);
  b.hold(freqs);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Llama4Layer w = layer_params(b, s, i, !layer_frozen(cfg, i));
    h = llama4_layer(b, s, i, w, h, inputs_embeds, freqs, full_mask, chunk_mask);
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = l4_norm(b, h, b.param("norm.weight", {H}, !cfg.freeze_embeddings));
  for (TensorId t : {h, inputs_embeds, freqs, full_mask, chunk_mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
