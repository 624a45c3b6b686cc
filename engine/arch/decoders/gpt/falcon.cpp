// FalconForCausalLM (transformers 5.17 models/falcon/modeling_falcon.py), rotary variant (alibi false: the
// importer refuses alibi), training forward + loss or one inference pass with the DynamicCache.
//
// FalconModel.forward: inputs_embeds = word_embeddings(ids); position_ids; create_causal_mask with
//   allow_is_causal_skip=False, so the mask is always materialised (SDPA: a bool [P, 1, q, kv]; eager: the float
//   [B, 1, q, kv] made from it); the rotary cos / sin; the layers (the loop's `outputs` tuple keeps each layer's
//   attention probabilities until the next layer returns); ln_f; lm_head (tied).
// FalconDecoderLayer: residual = h; attention_layernorm_out = ln_attn(h) (and mlp_layernorm_out = ln_mlp(h),
//   both before the attention) with new_decoder_architecture and two norms, else input_layernorm(h);
//   parallel: mlp_output = mlp(mlp_ln or attention_layernorm_out); mlp_output += attention_output;
//   sequential: residual = dropout_add(attention_output, residual, attention_dropout), mlp_layernorm_out =
//   post_attention_layernorm(residual); output = dropout_add(mlp_output, residual, hidden_dropout).
// FalconAttention: fused_qkv = query_key_value(x) (bound until the attention returns), _split_heads:
//   multi_query: view [B, S, nh + 2, hd]; q = fused[..., :-2, :] (a slice), k = fused[..., [-2], :] and
//     v = fused[..., [-1], :] (advanced indexing: [B, S, 1, hd] copies whose backward writes a zero-filled
//     fused-sized gradient);
//   new_decoder_architecture: view [B, S, nkv, nh / nkv + 2, hd]; q = qkv[:, :, :, :-2], k / v the index copies
//     [B, S, nkv, 1, hd] broadcast to q's shape, then flatten(2, 3) of each: three [B, S, nh, hd] copies (the
//     slice and the broadcasts cannot be viewed flat), so the cache holds nh heads;
//   otherwise: view [B, S, nh, 3, hd] and three selects (views).
//   Then transpose(1, 2).reshape(...) (views), apply_rotary_pos_emb on q and k, the cache update, and
//   SDPA with the mask (is_causal False): grouped heads without enable_gqa run the math backend (multi_query:
//   one KV head broadcast against nh; the H200 run showed math for it, cuDNN for the new architecture), or the
//   eager path: q @ k^T, /= sqrt(hd), softmax(scores + mask, dtype=hidden_states.dtype), @ v; merge heads;
//   dense. FalconLinear is `input @ weight.T (+ bias)`: weight.T is no leaf, so autocast does not cache its
//   cast (each use casts afresh, saved by the GEMM), unlike nn.Linear.
// Registration order: word_embeddings, per layer query_key_value, dense, dense_h_to_4h, dense_4h_to_h (each
// weight then its bias), the layer's norms (post_attention_layernorm, input_layernorm | ln_attn, ln_mlp |
// input_layernorm), then ln_f; lm_head tied to the embedding.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/gpt_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct FalconLayerParams {
  TensorId qkv, qkv_b, dense, dense_b, fc1, fc1_b, fc2, fc2_b;
  TensorId ln1_w, ln1_b, ln2_w, ln2_b;  // ln_attn / input_layernorm, ln_mlp / post_attention_layernorm
};

bool two_norms(const TransformerSpec& s) { return s.falcon_new_decoder_architecture && s.falcon_num_ln_in_parallel_attn == 2; }

FalconLayerParams falcon_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, F = s.intermediate_size, nh = s.num_heads, hd = s.head_dim;
  const int64_t qkv_out = s.falcon_new_decoder_architecture ? (2 * s.num_kv_heads + nh) * hd
                          : s.num_kv_heads == 1            ? H + 2 * hd
                                                           : 3 * H;
  FalconLayerParams w{};
  auto linear = [&](const std::string& name, int64_t out, int64_t in, bool bias, TensorId& wt, TensorId& wb) {
    wt = b.param(p + name + ".weight", {out, in}, train);
    wb = bias ? b.param(p + name + ".bias", {out}, train) : kNoTensor;
  };
  linear("self_attention.query_key_value", qkv_out, H, s.qkv_bias, w.qkv, w.qkv_b);
  linear("self_attention.dense", H, H, s.o_bias, w.dense, w.dense_b);
  linear("mlp.dense_h_to_4h", F, H, s.mlp_bias, w.fc1, w.fc1_b);
  linear("mlp.dense_4h_to_h", H, F, s.mlp_bias, w.fc2, w.fc2_b);
  auto norm = [&](const std::string& name, TensorId& nw, TensorId& nb) {
    nw = b.param(p + name + ".weight", {H}, train);
    nb = b.param(p + name + ".bias", {H}, train);
  };
  if (!s.falcon_parallel_attn) {
    norm("post_attention_layernorm", w.ln2_w, w.ln2_b);
    norm("input_layernorm", w.ln1_w, w.ln1_b);
  } else if (two_norms(s)) {
    norm("ln_attn", w.ln1_w, w.ln1_b);
    norm("ln_mlp", w.ln2_w, w.ln2_b);
  } else {
    norm("input_layernorm", w.ln1_w, w.ln1_b);
  }
  return w;
}

// FalconLinear: `input @ self.weight.T`, then `+ self.bias` as a separate op. Under autocast the transposed
// weight is cast afresh at every call (no autocast cache for a non-leaf), and the GEMM saves that cast. A frozen
// weight (frozen layers, peft LoRA / QLoRA bases) is never cached anyway: GraphBuilder::linear casts it afresh and
// applies the adapter or the quantised base by the weight's name.
TensorId falcon_linear(GraphBuilder& b, TensorId x, TensorId w, TensorId bias) {
  const auto& cfg = b.config();
  const bool fresh_cast = b.autocast() && b.info(w).requires_grad && !cfg.lora.enabled() && !cfg.quant.enabled();
  const TensorId wc = fresh_cast ? b.to(w, b.low_dtype()) : w;
  TensorId y = b.linear(x, wc);
  if (bias != kNoTensor) y = b.add(y, bias);
  return y;
}

// A GEMM of SDPA's math backend: below the autocast dispatch, so its operands are taken as they are.
TensorId math_bmm(GraphBuilder& b, TensorId x, TensorId y, Shape out) {
  return b.generic({"matmul", {x, y}, {{std::move(out), b.dtype(x)}}, {0, 1}, {}, {}, {}})[0];
}

// F.scaled_dot_product_attention(q, k, v, attn_mask=bool mask) on SDPA's math backend (torch 2.11
// _scaled_dot_product_attention_math), for one KV head broadcast against nh query heads without enable_gqa
// (multi_query). The bool mask becomes an additive mask of q's dtype at [B, 1, q, kv] first. 16-bit inputs are
// upcast to fp32 (q, k, v in that order), q scaled by sqrt(scale), k^T scaled; the matmul's reshape copies q
// (its memory keeps the projection's [B, S, nh, hd] order) and the broadcast k^T [B * nh, hd, kv]; fp32 scores
// [B, nh, q, kv], the mask added in place; _safe_softmax (its output, a -inf test and a row test as
// temporaries; the scores die); the probabilities returned as the second output cast to the input dtype
// (evaluated first: C++ argument order), the broadcast v copied for the second matmul, whose fp32 output is cast
// back to the input dtype (whole-run stream f7-falcon-bf16-adamw-b2s1024: 4, 35.5 x 2, 0.5 x 2, 35.5 x 2,
// 568, 568 + 142 transient, 284, 35.5 x 2, 17.75 MiB per layer).
TensorId falcon_sdpa_math(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId mask) {
  v = b.autocast_low(v);  // SDPA is an autocast op: arguments cast last to first
  k = b.autocast_low(k);
  q = b.autocast_low(q);
  const Shape qs = b.shape(q);
  const int64_t B = qs[0], H = qs[1], L = qs[2], D = qs[3], Lk = b.shape(k)[2];
  const DType origin = b.dtype(q);
  TensorId bias = b.generic_one("attn_mask_to_float", {mask}, {B, 1, L, Lk}, origin);
  b.hold(bias);
  const TensorId q32 = b.to(q, DType::f32), k32 = b.to(k, DType::f32), v32 = b.to(v, DType::f32);
  for (TensorId t : {q32, k32, v32}) b.hold(t);
  TensorId qsc = b.scalar_op("mul_scalar", q32, false);
  b.hold(qsc);
  TensorId ksc = b.scalar_op("mul_scalar", b.view(k32, {B, b.shape(k)[1], D, Lk}), false);
  b.hold(ksc);  // a temporary of the matmul's argument list: alive until the matmul returns
  // torch.matmul merges the batch and head dims: q's [B, S, nh, hd] memory merges only with one sequence row or
  // one batch row, the broadcast (stride-0) heads of k and v only with one batch row (f9-falcon-fp32 eager, b1:
  // no copies; f7-falcon bf16, b2: all three).
  TensorId qc = B > 1 && L > 1 ? b.contiguous_copy(qsc, {B, H, L, D}) : qsc;
  TensorId kc = B > 1 ? b.contiguous_copy(ksc, {B, H, D, Lk}) : ksc;
  TensorId scores = math_bmm(b, qc, kc, {B, H, L, Lk});
  b.drop(ksc);
  scores = b.inplace("add_", scores, false, {bias});
  const int64_t n = B * H * L * Lk;
  TensorId probs =
      b.generic({"safe_softmax", {scores}, {{{B, H, L, Lk}, DType::f32}}, {}, {0}, {n, B * H * L}, {n * 4}})[0];
  b.hold(probs);  // `attn`: a local of the math function until it returns
  TensorId returned = b.to(probs, origin);  // the second output, discarded by F.scaled_dot_product_attention
  if (returned != probs) b.hold(returned);
  TensorId vc = B > 1 ? b.contiguous_copy(v32, {B, H, Lk, D}) : v32;
  TensorId out = b.to(math_bmm(b, probs, vc, {B, H, L, D}), origin);
  for (TensorId t : {returned, q32, qsc, k32, v32, bias, probs}) b.drop(t);
  return out;
}

TensorId falcon_attention(GraphBuilder& b, const TransformerSpec& s, const FalconLayerParams& w, TensorId x,
                          TensorId cos, TensorId sin, TensorId mask, TensorId& weights) {
  weights = kNoTensor;
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const TensorId fused = falcon_linear(b, x, w.qkv, w.qkv_b);
  b.hold(fused);  // `fused_qkv`: bound until the attention returns
  TensorId q, k, v;
  int64_t kv_heads = nh;         // the heads of key_layer / value_layer
  if (s.falcon_new_decoder_architecture) {
    const int64_t g = nh / nkv;
    const TensorId qs = b.split(fused, 1, {B, S, nkv, g, hd})[0];
    const TensorId ki = b.generic_one("index", {fused}, {B, S, nkv, 1, hd}, b.dtype(fused));
    const TensorId vi = b.generic_one("index", {fused}, {B, S, nkv, 1, hd}, b.dtype(fused));
    b.hold(ki);  // key / value: rebound by the list comprehension once all three are flattened
    b.hold(vi);
    q = b.contiguous_copy(qs, {B, S, nh, hd});
    k = b.contiguous_copy(ki, {B, S, nh, hd});
    v = b.contiguous_copy(vi, {B, S, nh, hd});
    b.drop(ki);
    b.drop(vi);
    q = b.view(q, {B, nh, S, hd});
    k = b.view(k, {B, nh, S, hd});
    v = b.view(v, {B, nh, S, hd});
  } else if (nkv == 1) {
    q = b.split(fused, 1, {B, nh, S, hd})[0];
    k = b.view(b.generic_one("index", {fused}, {B, S, 1, hd}, b.dtype(fused)), {B, 1, S, hd});
    v = b.view(b.generic_one("index", {fused}, {B, S, 1, hd}, b.dtype(fused)), {B, 1, S, hd});
    kv_heads = 1;
  } else {
    // fused_qkv[..., i, :]: three selects, each SelectBackward a zero-filled fused-sized gradient.
    q = b.split(fused, 1, {B, nh, S, hd})[0];
    k = b.split(fused, 1, {B, nh, S, hd})[0];
    v = b.split(fused, 1, {B, nh, S, hd})[0];
  }
  b.hold(q);  // query_layer / key_layer / value_layer until rebound
  b.hold(k);
  b.hold(v);
  const TensorId qe = rope(b, q, cos, sin);
  const TensorId ke = rope(b, k, cos, sin);
  b.drop(q);
  b.drop(k);
  b.hold(qe);
  b.hold(ke);
  TensorId kc = ke, vc = v;
  int64_t Lk = S;
  if (inf) {  // key_layer, value_layer = layer_past.update(...): rebound to the cache's tensors
    Lk = rebind_kv_to_cache(b, kc, vc);
  }
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    // attn_output.transpose(1, 2).reshape(B, S, H): the math backend's output is a bmm's [B, nh, S, hd], so the
    // reshape copies; cuDNN (and the memory-efficient kernel) lay theirs out like q, whose memory keeps the
    // projection's [B, S, nh, hd] order through the rotary: a view (whole-run stream f9-falcon40-infer: the dense
    // output follows SDPA's directly).
    if (kv_heads != nh) {
      ctx = b.contiguous_copy(falcon_sdpa_math(b, qe, kc, vc, mask), {B, S, nh, hd});
    } else {
      ctx = b.sdpa(qe, kc, vc, 0.0, false, mask);
    }
  } else {
    // query_layer @ key_layer.transpose(-1, -2): torch.matmul copies q (the projection's memory order) and the
    // transposed k (broadcast over the heads for one KV head, else in its projection order).
    TensorId kt = b.autocast_low(kc);
    TensorId qt = b.autocast_low(qe);
    if (kt != kc) b.hold(kt);
    if (qt != qe) b.hold(qt);
    // torch.matmul merges batch and heads: a copy where they cannot merge (as in falcon_sdpa_math); cache
    // tensors are cat outputs, contiguous.
    const bool copy_kv = B > 1 && (kv_heads != nh || (!inf && S > 1));
    TensorId kcopy = copy_kv ? b.contiguous_copy(kt, {B, nh, hd, Lk}) : kt;
    TensorId scores = b.matmul(qt, kcopy, {B, nh, S, Lk}, B > 1 && S > 1, false);
    if (kt != kc) b.drop(kt);
    if (qt != qe) b.drop(qt);
    scores = b.inplace_fresh_grad("div_", scores, {});  // DivBackward: grad / scalar, a fresh buffer
    b.hold(scores);  // rebound to the softmax's result only once the statement returns
    TensorId summed = b.add(scores, mask);
    b.hold(summed);
    // F.softmax(..., dtype=hidden_states.dtype): the attention input's dtype (fp32 under autocast).
    TensorId probs = b.softmax_last(b.to(summed, b.dtype(x)));
    if (b.dtype(probs) != b.dtype(x)) probs = b.to(probs, b.dtype(x));
    b.drop(summed);
    b.drop(scores);
    weights = probs;
    b.hold(weights);
    TensorId vt = b.autocast_low(vc);
    TensorId vcopy = copy_kv ? b.contiguous_copy(vt, {B, nh, Lk, hd}) : vt;
    ctx = b.contiguous_copy(b.matmul(probs, vcopy, {B, nh, S, hd}), {B, S, nh, hd}, /*grad_copied=*/true);
  }
  TensorId out = falcon_linear(b, b.view(ctx, {B, S, H}), w.dense, w.dense_b);
  // drop() releases at the current op: a tensor already dropped (the cache update's rebinding) stays dropped.
  for (TensorId t : {fused, qe, kc, vc}) b.drop(t);
  return out;
}

TensorId falcon_mlp(GraphBuilder& b, const TransformerSpec& s, const FalconLayerParams& w, TensorId x) {
  TensorId fc = falcon_linear(b, x, w.fc1, w.fc1_b);
  TensorId act = activation(b, s.hidden_act, fc);
  return falcon_linear(b, act, w.fc2, w.fc2_b);
}

}  // namespace

void build_falcon(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("transformer.word_embeddings.weight", {V, H}, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = b.embedding(ids, embed);
  TensorId h = inputs_embeds;

  // create_causal_mask(allow_is_causal_skip=False): always materialised. sdpa_mask evaluates the mask function
  // on broadcast index tensors: kv <= q is one [1, 1, S, kv] bool; inside generate() its attention_mask adds
  // and_masks(causal, padding): ones(()) & causal (a second [1, 1, S, kv]), then & the padding gather [B, 1, 1, kv]
  // (whole-run stream f7-falcon-infer: 1, 1 MiB, then 2 MiB for b2 s1024). Eager converts it to the float
  // [B, 1, S, kv] mask (where), the bool freed.
  const int64_t past = inf ? b.pass().past_len : 0, kv = past + S;
  TensorId mask = b.generic_one("le", {}, {1, 1, S, kv}, DType::boolean);
  if (P > 1) {
    mask = b.generic_one("and", {mask}, {1, 1, S, kv}, DType::boolean);
    mask = b.generic_one("and", {mask, b.generic_one("index", {}, {P, 1, 1, kv}, DType::boolean)}, {P, 1, S, kv},
                         DType::boolean);
  }
  if (cfg.attn == AttnImpl::eager) mask = b.generic_one("where", {mask}, {B, 1, S, kv}, b.dtype(h));
  b.hold(mask);
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, s.head_dim, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  b.hold(inputs_embeds);  // bound until the model's forward returns, as are the mask and cos / sin
  b.hold(cos);
  b.hold(sin);
  TensorId prev_weights = kNoTensor;  // the loop's `outputs` tuple holds the last layer's attention probabilities
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    const FalconLayerParams w = falcon_layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("transformer.h." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the loop variable and `residual` hold the layer input until the layer returns
    TensorId n1 = b.layer_norm(h, w.ln1_w, w.ln1_b);
    b.hold(n1);  // attention_layernorm_out: bound until the layer returns
    TensorId n2 = kNoTensor;
    if (two_norms(s)) {
      n2 = b.layer_norm(h, w.ln2_w, w.ln2_b);
      b.hold(n2);
    }
    TensorId weights = kNoTensor;
    const TensorId a = falcon_attention(b, s, w, n1, cos, sin, mask, weights);
    TensorId out;
    if (s.falcon_parallel_attn) {
      b.hold(a);  // attention_output: bound until the layer returns
      const TensorId m = falcon_mlp(b, s, w, n2 != kNoTensor ? n2 : n1);
      b.hold(m);  // mlp_output: bound until the layer returns
      const TensorId summed = b.inplace("add_", m, false, {a});  // mlp_output += attention_output
      out = b.add(layer_in, b.dropout(summed, s.resid_dropout));
      b.drop(m);
      b.drop(a);
    } else {
      b.hold(a);
      TensorId r = b.add(layer_in, b.dropout(a, s.attn_dropout));
      b.hold(r);  // `residual`, rebound
      TensorId n3 = b.layer_norm(r, w.ln2_w, w.ln2_b);
      b.hold(n3);
      TensorId m = falcon_mlp(b, s, w, n3);
      out = b.add(r, b.dropout(m, s.resid_dropout));
      b.drop(n3);
      b.drop(r);
      b.drop(a);
    }
    b.drop(n1);
    if (n2 != kNoTensor) b.drop(n2);
    if (prev_weights != kNoTensor) b.drop(prev_weights);
    prev_weights = weights;
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
    h = out;
  }
  b.hold(h);  // `hidden_states = self.ln_f(hidden_states)` rebinds once the norm returns
  const TensorId fw = b.param("transformer.ln_f.weight", {H}, emb_train);
  const TensorId fb = b.param("transformer.ln_f.bias", {H}, emb_train);
  TensorId hn = b.layer_norm(h, fw, fb);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, prev_weights})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
