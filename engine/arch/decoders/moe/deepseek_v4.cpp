// DeepseekV4ForCausalLM (transformers 5.17 models/deepseek_v4/modeling_deepseek_v4.py), training forward + causal-LM
// loss or one inference pass, for the sliding-window attention layers only (config.layer_types all
// "sliding_attention": the importer refuses the compressed_sparse / heavily_compressed layers, whose compressor,
// Lightning Indexer and block-bias cat are not modelled).
//   embed_tokens -> position_ids (plain forward) -> create_sliding_window_causal_mask (eager: materialised) ->
//   hidden_states = inputs_embeds.unsqueeze(2).expand(B, S, hc, H).contiguous() -> the "main" then the "compress"
//   rotary tables (both made every forward) -> N x decoder layer -> hc_head -> norm -> lm_head -> loss.
//   Decoder layer (mHC residual of hc streams [B, S, hc, H]): post, comb, collapsed = attn_hc(h);
//   a = self_attn(input_layernorm(collapsed)); h1 = post.to(dt)[..., None] * a[..., None, :] +
//   comb.to(dt)^T @ h; then the same around the MoE with ffn_hc and post_attention_layernorm.
//   DeepseekV4HyperConnection: flat = rms(h.flatten(2).float()) (the unweighted norm, fp32), mixes =
//   F.linear(flat, fn.float()), split into pre / post / comb logits; pre = sigmoid(.. * scale + base) + eps,
//   post = 2 sigmoid(..), comb = softmax(..) + eps, then 1 + 2 (iters - 1) Sinkhorn normalisations (sum, + eps,
//   divide, each divide saving both operands); collapsed = (pre[..., None] * h).sum(2).to(dt).
//   Attention: q_residual = q_a_norm(q_a_proj(x)) (bound to the end); q = q_b_proj(.) viewed [B, nh, S, hd], the
//   unweighted q_b_norm (x.float().square() saves the fp32 copy), V4's apply_rotary_pos_emb on the trailing rope
//   slice (cos / sin repeat_interleave'd, rope.float() * cos + rotate_half(rope).float() * sin, .to(dt), cat with
//   the nope slice); one shared K = V head kv = rope(kv_norm(kv_proj(x))) (the cache, at generate(), cats it as keys
//   and again as values); eager_attention_forward with sinks (repeat_kv twice over the one head, scores, mask, the
//   sink column, max shift, softmax, slice, matmul); the conjugate rotary (-sin) on the output's rope slice; the
//   grouped output projection (reshape copy to [B, S, g, nh*hd/g], bmm with the o_a weight's view (autocast casts a
//   view afresh), transpose + reshape copy, o_b_proj).
//   MoE (every layer): router logits F.linear(flat, weight) in the hidden dtype, scores = sqrt(softplus) (softplus
//   is fp32 under autocast) / sigmoid / softmax; DeepseekV4TopKRouter: topk(scores + e_score_correction_bias);
//   DeepseekV4HashRouter ("hash_moe" layers): tid2eid[input_ids]; weights gathered, divided by their sum + 1e-20,
//   times routed_scaling_factor; the routed experts through grouped_mm with DeepseekV4Experts' clamped gate
//   (deepseek_parts.h experts_grouped_mm, clamped_gate); the shared expert DeepseekV4MLP (gate / up clamped).
//   DeepseekV4HyperHead: the same flat norm and linear into hc weights, sigmoid, the weighted stream sum.
// DeepseekV4PreTrainedModel has _supports_sdpa = False (from_config(attn_implementation="sdpa") raises): eager only.
// Every parameter in the model dtype: from_config does not apply _keep_in_fp32_modules_strict (only the
// e_score_correction_bias buffer is carried fp32, as deepseek_v3's).

#include "engine/arch/builders.h"
#include "engine/arch/decoders/moe/deepseek_v4_fields.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/family_fields.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct HcParams {
  TensorId fn = kNoTensor, base = kNoTensor, scale = kNoTensor;
};

struct V4Layer {
  TensorId q_a, q_a_norm, q_b, kv, kv_norm, o_a, o_b, sinks;
  TensorId router = kNoTensor;
  bool hash = false;
  ExpertsParams experts;
  TensorId sh_gate, sh_up, sh_down;
  TensorId in_norm, post_norm;
  HcParams attn_hc, ffn_hc;
};

HcParams hc_params(GraphBuilder& b, const std::string& p, int64_t hc, int64_t H, bool train) {
  HcParams h;
  const int64_t mix = (2 + hc) * hc;
  h.fn = b.param(p + "fn", {mix, checked_mul(hc, H)}, train);
  h.base = b.param(p + "base", {mix}, train);
  h.scale = b.param(p + "scale", {3}, train);
  return h;
}

// nn.Module._apply order (the model is built on the CPU and moved): a module's children first, then its own
// parameters, then its buffers. DeepseekV4DecoderLayer: self_attn (q_a_proj, q_a_norm, q_b_proj, kv_proj, kv_norm,
// o_a_proj, o_b_proj, then its own sinks), mlp (gate: weight then its buffer; experts; shared_experts), the two
// norms, attn_hc, ffn_hc.
V4Layer layer_params(GraphBuilder& b, const TransformerSpec& s, const DeepseekV4Fields& f, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, nh = s.num_heads, hd = s.head_dim, E = s.num_experts, I = s.moe_intermediate_size;
  V4Layer l{};
  const std::string a = p + "self_attn.";
  l.q_a = b.param(a + "q_a_proj.weight", {s.q_lora_rank, H}, train);
  l.q_a_norm = b.param(a + "q_a_norm.weight", {s.q_lora_rank}, train);
  l.q_b = b.param(a + "q_b_proj.weight", {checked_mul(nh, hd), s.q_lora_rank}, train);
  l.kv = b.param(a + "kv_proj.weight", {hd, H}, train);
  l.kv_norm = b.param(a + "kv_norm.weight", {hd}, train);
  // DeepseekV4GroupedLinear(nh * hd / g, g * o_lora_rank, g): an nn.Linear of weight [g * o_lora_rank, nh * hd / g]
  l.o_a = b.param(a + "o_a_proj.weight", {checked_mul(f.o_groups, f.o_lora_rank), checked_mul(nh, hd) / f.o_groups},
                  train);
  l.o_b = b.param(a + "o_b_proj.weight", {H, checked_mul(f.o_groups, f.o_lora_rank)}, train);
  l.sinks = b.param(a + "sinks", {nh}, train);
  l.hash = !f.hash_layers.empty() && f.hash_layers[static_cast<size_t>(i)] != 0;
  l.router = b.param(p + "mlp.gate.weight", {E, H}, train);
  if (l.hash)
    b.buffer(p + "mlp.gate.tid2eid", {s.vocab_size, s.num_experts_per_tok}, DType::i64);
  else
    b.buffer(p + "mlp.gate.e_score_correction_bias", {E}, DType::f32);
  ExpertsParams& e = l.experts;
  e.experts = E;
  e.top_k = s.num_experts_per_tok;
  e.inter = I;
  e.clamped_gate = true;
  e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
  e.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
  // DeepseekV4MLP(config): config.intermediate_size is moe_intermediate_size (attribute_map), whatever
  // n_shared_experts says.
  l.sh_gate = b.param(p + "mlp.shared_experts.gate_proj.weight", {I, H}, train);
  l.sh_up = b.param(p + "mlp.shared_experts.up_proj.weight", {I, H}, train);
  l.sh_down = b.param(p + "mlp.shared_experts.down_proj.weight", {H, I}, train);
  l.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  l.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  l.attn_hc = hc_params(b, p + "attn_hc.", f.hc_mult, H, train);
  l.ffn_hc = hc_params(b, p + "ffn_hc.", f.hc_mult, H, train);
  return l;
}

// DeepseekV4UnweightedRMSNorm: x * rsqrt(x.float().square().mean(-1, keepdim) + eps).to(x.dtype). square is
// pow(x, 2) and saves the fp32 copy; the product saves x and the cast factor.
TensorId unweighted_rms(GraphBuilder& b, TensorId x) {
  const TensorId x32 = b.to(x, DType::f32);
  const TensorId var = b.reduce_last("mean", b.pow_scalar(x32), false);
  const TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  return b.mul(x, b.to(r, b.dtype(x)));
}

// V4's apply_rotary_pos_emb on x [B, h, S, hd] with half-width cos / sin [P, 1, S, rope/2]:
// cos.repeat_interleave(2, -1).unsqueeze(1) (a fresh [P, 1, S, rope]) and the same for sin, bound until it
// returns; nope / rope slices of x (strided views: their backward zero-fills a full x-sized gradient each);
// (rope.float() * cos) + (rotate_half(rope).float() * sin) in fp32, where rotate_half takes the even / odd slices
// (zero-filled rope-sized gradients), negates the odd one and stacks them (a fresh rope-sized tensor); .to(dt);
// cat([nope, rotated], -1): a fresh contiguous x-sized output.
TensorId v4_rope(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  const Shape xs = b.shape(x);
  const Shape cs = b.shape(cos);
  const int64_t rope = 2 * cs.back(), hd = xs.back();
  const DType dt = b.dtype(x);
  Shape full_cs = cs;
  full_cs.back() = rope;
  const TensorId c = b.generic_one("repeat_interleave", {cos}, full_cs, b.dtype(cos));
  const TensorId sn = b.generic_one("repeat_interleave", {sin}, full_cs, b.dtype(sin));
  b.hold(c);
  b.hold(sn);
  Shape nope_s = xs, rope_s = xs, half_s = xs;
  nope_s.back() = hd - rope;
  rope_s.back() = rope;
  half_s.back() = rope / 2;
  const TensorId nope = b.select_param(x, nope_s);
  const TensorId r = b.select_param(x, rope_s);
  const TensorId first = b.mul(b.to(r, DType::f32), c);
  const TensorId x1 = b.select_param(r, half_s), x2 = b.select_param(r, half_s);
  const TensorId stacked = b.cat_last("stack", {b.unary("neg", x2, false, false), x1});
  const TensorId second = b.mul(b.to(stacked, DType::f32), sn);
  const TensorId rotated = b.to(b.add(first, second), dt);
  const TensorId out = b.cat_last("cat", {nope, rotated});
  b.drop(c);
  b.drop(sn);
  return out;
}

struct HcOut {
  TensorId post = kNoTensor, comb = kNoTensor, collapsed = kNoTensor;
};

// The shared head of DeepseekV4HyperConnection.forward and DeepseekV4HyperHead.forward:
// flat = input_norm(h.flatten(2).float()) and F.linear(flat, fn.float()); `flat` stays bound until the caller
// returns (it holds it).
TensorId hc_mixes(GraphBuilder& b, TensorId h, TensorId fn, TensorId& flat) {
  const Shape hs = b.shape(h);
  const TensorId h32 = b.to(b.view(h, {hs[0], hs[1], checked_mul(hs[2], hs[3])}), DType::f32);
  flat = unweighted_rms(b, h32);
  b.hold(flat);
  return b.linear(flat, b.to(fn, DType::f32));
}

// DeepseekV4HyperConnection.forward on h [B, S, hc, H]: returns post [B, S, hc], comb [B, S, hc, hc] (fp32 unless
// autocast made the mixes 16-bit) and collapsed [B, S, H] in h's dtype. The locals (flat, the mixes' split views,
// comb_logits) stay bound until it returns.
HcOut hyper_connection(GraphBuilder& b, const DeepseekV4Fields& f, const HcParams& w, TensorId h) {
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], S = hs[1], hc = hs[2], H = hs[3];
  TensorId flat = kNoTensor;
  const TensorId mixes = hc_mixes(b, h, w.fn, flat);
  b.hold(mixes);
  const auto m = b.split(mixes, std::vector<Shape>{{B, S, hc}, {B, S, hc}, {B, S, checked_mul(hc, hc)}});
  const auto base = b.split(w.base, std::vector<Shape>{{hc}, {hc}, {checked_mul(hc, hc)}});
  const auto scale = b.split(w.scale, 3, {1});  // unbind(0): 0-d views
  HcOut o;
  const TensorId pre = b.add_scalar(b.unary("sigmoid", b.add(b.mul(m[0], scale[0]), base[0]), false, true));
  b.hold(pre);
  o.post = b.scalar_op("mul_scalar", b.unary("sigmoid", b.add(b.mul(m[1], scale[1]), base[1]), false, true), false);
  b.hold(o.post);
  const TensorId comb_logits = b.add(b.mul(b.view(m[2], {B, S, hc, hc}), scale[2]), b.view(base[2], {hc, hc}));
  b.hold(comb_logits);
  TensorId comb = b.add_scalar(b.softmax_last(comb_logits));
  auto normalise = [&](bool rows) {  // comb / (comb.sum(dim, keepdim=True) + eps); the old comb is rebound
    const Shape ds = rows ? Shape{B, S, hc, 1} : Shape{B, S, 1, hc};
    const TensorId den = b.add_scalar(b.sum_expand_grad("sum", comb, ds));
    comb = b.binary("div", comb, den, true, true);
  };
  normalise(false);
  for (int64_t it = 1; it < f.hc_sinkhorn_iters; ++it) {
    normalise(true);
    normalise(false);
  }
  o.comb = comb;
  b.hold(o.comb);
  const TensorId prod = b.mul(b.view(pre, {B, S, hc, 1}), h);
  o.collapsed = b.to(b.sum_expand_grad("sum", prod, {B, S, H}), b.dtype(h));
  for (TensorId t : {flat, mixes, pre, comb_logits}) b.drop(t);
  return o;
}

// post.to(dt).unsqueeze(-1) * y.unsqueeze(-2) + torch.matmul(comb.to(dt).transpose(-1, -2), h)
TensorId hc_merge(GraphBuilder& b, const HcOut& o, TensorId y, TensorId h) {
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], S = hs[1], hc = hs[2], H = hs[3];
  const DType dt = b.dtype(h);
  const TensorId placed = b.mul(b.view(b.to(o.post, dt), {B, S, hc, 1}), b.view(y, {B, S, 1, H}));
  const TensorId mixed = b.matmul(b.view(b.to(o.comb, dt), {B, S, hc, hc}), h, {B, S, hc, H});
  return b.add(placed, mixed);
}

// DeepseekV4Attention.forward (sliding layers: no compressor) on x [B, S, H]; `weights` gets the attention
// probabilities the layer binds to `_` until it returns.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const DeepseekV4Fields& f, const V4Layer& w,
                   TensorId x, TensorId cos, TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                hd = s.head_dim, T = checked_mul(B, S);
  const TensorId q_residual = ds_rms_norm(b, b.linear(x, w.q_a), w.q_a_norm);
  b.hold(q_residual);  // bound until forward returns (the compressor's argument in CSA / HCA layers)
  // q_b_proj(.).view(B, S, nh, hd).transpose(1, 2): the gradient comes back contiguous in [B, nh, S, hd] and
  // the view's backward reshapes it (a copy).
  TensorId q = b.view_copying_grad(b.linear(q_residual, w.q_b), {B, nh, S, hd});
  q = unweighted_rms(b, q);
  q = v4_rope(b, q, cos, sin);
  b.hold(q);
  // kv_norm(kv_proj(x)).view(B, S, 1, hd).transpose(1, 2): one head, so the transposed view is contiguous.
  TensorId kv = b.view(ds_rms_norm(b, b.linear(x, w.kv), w.kv_norm), {B, 1, S, hd});
  kv = v4_rope(b, kv, cos, sin);
  b.hold(kv);
  const TensorId kv_proj = kv;
  if (inf) {
    // past_key_values.update(kv, kv)[0]: DynamicSlidingWindowLayer cats the keys and, separately, the values
    // (the full values are discarded at once; the cache keeps its window slice, a view of the whole cat).
    auto kvs = kv_update(b, kv, kv, s.sliding_window);
    kv = kvs.first;
    b.hold(kv);
    b.drop(kv_proj);
  }
  const int64_t L = b.shape(kv)[2];
  // eager_attention_forward: repeat_kv(key) and repeat_kv(value) over the one K = V head: two expand + reshape
  // copies [B, nh, L, hd] (none when nh == 1).
  TensorId kr = kv, vr = kv;
  if (nh != 1) {
    kr = b.contiguous_copy(kv, {B, nh, L, hd});
    vr = b.contiguous_copy(kv, {B, nh, L, hd});
  }
  b.hold(kr);
  b.hold(vr);
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, kr, {B, nh, S, L}), false);
  if (mask != kNoTensor) scores = b.add(scores, mask);
  b.hold(scores);
  const TensorId sinks = b.view(w.sinks, {B, nh, S, 1});  // reshape(1, -1, 1, 1).expand(B, -1, S, -1)
  const TensorId combined = b.cat_last("cat", {scores, sinks});
  b.hold(combined);
  const Shape cs = b.shape(combined);
  auto mx = b.generic({"max_dim", {combined}, {{{B, nh, S, 1}, b.dtype(combined)}, {{B, nh, S, 1}, DType::i64}}, {}, {1}, {}, {}});
  const TensorId shifted = b.add(combined, mx[0]);  // combined - max
  b.drop(combined);
  b.hold(shifted);
  const TensorId probs = b.softmax_last(shifted);
  b.hold(probs);
  const TensorId kept = b.select_param(probs, {cs[0], cs[1], cs[2], cs[3] - 1});  // probs[..., :-1]
  const TensorId attn_w = b.to(b.dropout(kept, s.attn_dropout), b.dtype(vr));
  weights = attn_w;
  b.hold(weights);
  b.drop(scores);
  b.drop(probs);
  // attn_output.transpose(1, 2).contiguous(): [B, S, nh, hd]; the gradient comes back through the rotary's
  // slices as a contiguous [B, nh, S, hd] buffer, which the bmm takes as it is.
  const TensorId ctx = b.contiguous_copy(b.matmul(attn_w, vr, {B, nh, S, hd}), {B, S, nh, hd});
  b.drop(kr);
  b.drop(vr);
  b.drop(shifted);
  // apply_rotary_pos_emb(attn_output.transpose(1, 2), cos, -sin).transpose(1, 2)
  const TensorId neg_sin = b.generic_one("neg", {sin}, b.shape(sin), b.dtype(sin));
  const TensorId derot = v4_rope(b, b.view(ctx, {B, nh, S, hd}), cos, neg_sin);
  // attn_output.reshape(B, S, g, -1): the transposed view copies.
  const int64_t g = f.o_groups, dg = checked_mul(nh, hd) / g, r = f.o_lora_rank;
  const TensorId grouped = b.contiguous_copy(derot, {B, S, g, dg});
  // DeepseekV4GroupedLinear: bmm(x.reshape(-1, g, dg).transpose(0, 1), weight.view(g, -1, dg).transpose(1, 2)),
  // the weight's view cast afresh under autocast; the gradient of the transposed weight view copies back.
  const TensorId wv = b.view_copying_grad(w.o_a, {g, dg, r});
  const TensorId y = b.matmul(b.view(grouped, {g, T, dg}), wv, {g, T, r});
  const TensorId yt = b.contiguous_copy(y, {B, S, g, r});  // .transpose(0, 1).reshape(B, S, g, -1): a copy
  const TensorId out = b.linear(b.view(yt, {B, S, checked_mul(g, r)}), w.o_b);
  b.drop(q);
  b.drop(kv);
  b.drop(q_residual);
  return out;
}

// The router over flat [T, H]: DeepseekV4TopKRouter or DeepseekV4HashRouter. Returns logits (bound to `_` by the
// MoE until it returns), weights and indices (bound there too).
DeepseekRoute route(GraphBuilder& b, const TransformerSpec& s, const DeepseekV4Fields& f, const V4Layer& w,
                    TensorId flat) {
  const int64_t T = b.shape(flat)[0], E = s.num_experts, K = s.num_experts_per_tok;
  DeepseekRoute r;
  r.logits = b.linear(flat, w.router);  // F.linear in the hidden dtype (autocast: 16-bit)
  b.hold(r.logits);
  TensorId scores;
  if (f.score_func == 0) {  // sqrtsoftplus: softplus (fp32 under autocast, saves its input), sqrt (saves its result)
    scores = b.unary("sqrt", b.unary("softplus", r.logits, true, false, true), false, true);
  } else if (f.score_func == 1) {
    scores = b.unary("sigmoid", r.logits, false, true);
  } else {
    scores = b.softmax_last(r.logits);
  }
  b.hold(scores);
  const DType sdt = b.dtype(scores);
  if (w.hash) {
    // tid2eid[input_ids.reshape(-1)].long(): a gather of the frozen table, no history
    r.indices = b.generic_one("index", {}, {T, K}, DType::i64);
  } else {
    // torch.topk(scores + e_score_correction_bias, k, sorted=False).indices: the sum (fp32: the buffer is) and
    // the values die with the statement; only the indices are kept.
    const TensorId biased = b.generic_one("add", {}, {T, E}, DType::f32);
    b.hold(biased);
    auto top = b.generic({"topk", {}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {}, {}, {}});
    b.drop(biased);
    r.indices = top[1];
  }
  b.hold(r.indices);
  TensorId wts = b.generic_one("gather", {scores, r.indices}, {T, K}, sdt, {1});
  b.hold(wts);
  const TensorId den = b.add_scalar(b.reduce_last("sum", wts, false));
  const TensorId normed = b.binary("div", wts, den, true, true);
  b.drop(wts);
  b.hold(normed);
  r.weights = b.scalar_op("mul_scalar", normed, false);  // * routed_scaling_factor
  b.hold(r.weights);
  b.drop(normed);
  b.drop(scores);
  return r;
}

// DeepseekV4MLP (the shared expert): down(act(gate(x).clamp(max)) * up(x).clamp(-limit, limit)).
TensorId shared_mlp(GraphBuilder& b, const V4Layer& w, TensorId x) {
  const TensorId gate = b.unary("clamp", b.linear(x, w.sh_gate), true, false);
  const TensorId up = b.unary("clamp", b.linear(x, w.sh_up), true, false);
  return b.linear(b.mul(b.unary("silu", gate, true, false), up), w.sh_down);
}

// DeepseekV4SparseMoeBlock.forward on n2 [B, S, H].
TensorId moe(GraphBuilder& b, const TransformerSpec& s, const DeepseekV4Fields& f, const V4Layer& w, TensorId n2) {
  const Shape sh = b.shape(n2);
  const int64_t B = sh[0], S = sh[1], H = sh[2];
  const TensorId flat = b.view(n2, {checked_mul(B, S), H});
  const DeepseekRoute r = route(b, s, f, w, flat);
  const TensorId routed = b.view(experts_grouped_mm(b, w.experts, flat, r.weights, r.indices), {B, S, H});
  const TensorId out = b.add(routed, shared_mlp(b, w, n2));
  for (TensorId t : {r.weights, r.indices, r.logits}) b.drop(t);
  return out;
}

}  // namespace

void build_deepseek_v4(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     "deepseek_v4 has no SDPA attention in transformers 5.17 (DeepseekV4PreTrainedModel._supports_sdpa "
                     "is False: from_config raises); use eager");
  const DeepseekV4Fields& f = family_fields<DeepseekV4Fields>(s);
  if (f.hc_mult < 1 || f.o_groups < 1 || f.o_lora_rank < 1 || f.hc_sinkhorn_iters < 1)
    throw InputError("model.deepseek_v4", "hc_mult / o_groups / o_lora_rank / hc_sinkhorn_iters",
                     "must be positive");
  if (!f.hash_layers.empty() && static_cast<int64_t>(f.hash_layers.size()) != s.num_layers)
    throw InputError("config.mlp_layer_types", std::to_string(f.hash_layers.size()) + " entries",
                     "must have num_hidden_layers entries");
  if (checked_mul(s.num_heads, s.head_dim) % f.o_groups != 0)
    throw InputError("config.o_groups", std::to_string(f.o_groups),
                     "must divide num_attention_heads * head_dim (the grouped output projection's input)");
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, hc = f.hc_mult;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  std::vector<V4Layer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(layer_params(b, s, f, i, !layer_frozen(cfg, i)));
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  // DeepseekV4HyperHead: hc_fn [hc, hc * H], hc_base [hc], hc_scale [1]
  const TensorId head_fn = b.param("hc_head.hc_fn", {hc, checked_mul(hc, H)}, emb_train);
  const TensorId head_base = b.param("hc_head.hc_base", {hc}, emb_train);
  const TensorId head_scale = b.param("hc_head.hc_scale", {1}, emb_train);
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train)
                                              : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = b.embedding(ids, embed);
  b.hold(inputs_embeds);
  const DType dt = b.dtype(inputs_embeds);
  TensorId position_ids = kNoTensor;
  if (P == 1) {  // torch.arange(S) + past_seen, unsqueezed: bound until the model's forward returns
    const TensorId ar = b.generic({"arange", {}, {{{S}, DType::i64}}, {}, {}, {}, {}})[0];
    position_ids = b.generic({"add", {ar}, {{{1, S}, DType::i64}}, {}, {}, {}, {}})[0];
    b.hold(position_ids);
  }
  const TensorId mask = inf ? inference_mask(b, s.sliding_window, dt) : eager_mask(b, 1, S, S, dt);
  if (mask != kNoTensor) b.hold(mask);
  // inputs_embeds.unsqueeze(2).expand(-1, -1, hc, -1).contiguous()
  TensorId h = b.contiguous_copy(b.expand(b.view(inputs_embeds, {B, S, 1, H}), {B, S, hc, H}), {B, S, hc, H});
  const auto main_cs = half_rotary_cos_sin(b, P, S, s.qk_rope_head_dim, dt);
  const auto compress_cs = half_rotary_cos_sin(b, P, S, s.qk_rope_head_dim, dt);  // made every forward; read by CSA / HCA only
  for (TensorId t : {main_cs.first, main_cs.second, compress_cs.first, compress_cs.second}) b.hold(t);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const V4Layer& w = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    const HcOut a_hc = hyper_connection(b, f, w.attn_hc, h);
    b.hold(a_hc.collapsed);
    TensorId attn_weights = kNoTensor;
    const TensorId n1 = ds_rms_norm(b, a_hc.collapsed, w.in_norm);
    b.hold(n1);  // the call's argument: bound until self_attn returns
    const TensorId a = attention(b, s, f, w, n1, main_cs.first, main_cs.second, mask, attn_weights);
    b.drop(n1);
    b.hold(a);
    const TensorId h1 = hc_merge(b, a_hc, a, h);
    b.hold(h1);
    const HcOut m_hc = hyper_connection(b, f, w.ffn_hc, h1);
    for (TensorId t : {a_hc.post, a_hc.comb, a_hc.collapsed}) b.drop(t);  // rebound by the second call
    b.hold(m_hc.collapsed);
    const TensorId n2 = ds_rms_norm(b, m_hc.collapsed, w.post_norm);
    b.hold(n2);
    const TensorId mo = moe(b, s, f, w, n2);
    b.drop(n2);
    h = hc_merge(b, m_hc, mo, h1);
    for (TensorId t : {m_hc.post, m_hc.comb, m_hc.collapsed, h1, a}) b.drop(t);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  // self.norm(self.hc_head(hidden_states))
  TensorId flat = kNoTensor;
  const TensorId mixes = hc_mixes(b, h, head_fn, flat);
  const TensorId pre = b.add_scalar(
      b.unary("sigmoid", b.add(b.mul(mixes, b.to(head_scale, DType::f32)), b.to(head_base, DType::f32)), false, true));
  const TensorId prod = b.mul(b.view(pre, {B, S, hc, 1}), h);
  const TensorId collapsed = b.to(b.sum_expand_grad("sum", prod, {B, S, H}), dt);
  b.drop(flat);
  const TensorId hn = ds_rms_norm(b, collapsed, norm_w);
  for (TensorId t : {h, inputs_embeds, main_cs.first, main_cs.second, compress_cs.first, compress_cs.second, mask,
                     position_ids})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
