// DeepSeek Sparse Attention, shared by the deepseek_v32 and glm_moe_dsa builders (see dsa_parts.h).
#include "engine/arch/decoders/parts/dsa_parts.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/topk.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

DsaIndexerParams dsa_indexer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".self_attn.indexer.";
  const int64_t h = s.index_n_heads, d = s.index_head_dim, H = s.hidden_size;
  DsaIndexerParams w;
  w.wq_b = b.param(p + "wq_b.weight", {h * d, s.q_lora_rank}, train);
  w.wk = b.param(p + "wk.weight", {d, H}, train);
  w.k_norm_w = b.param(p + "k_norm.weight", {d}, train);
  w.k_norm_b = b.param(p + "k_norm.bias", {d}, train);
  w.weights_proj = b.param(p + "weights_proj.weight", {h, H}, train);
  if (train)
    for (TensorId t : {w.wq_b, w.wk, w.k_norm_w, w.k_norm_b, w.weights_proj}) b.unreached_param(t);
  return w;
}

namespace {

// Indexer.forward (see the header): returns topk_indices [B, S, k] int32. `mask` is the layer's attention mask
// ([P, 1, S, T] bool for SDPA, [B, 1, S, T] float for eager); cos / sin [P, 1, S, r].
TensorId indexer_forward(GraphBuilder& b, const TransformerSpec& s, const DsaIndexerParams& w, TensorId x,
                         TensorId q_resid, TensorId cos, TensorId sin, TensorId mask, int64_t P, DsaRopeFn rope_fn) {
  const bool grad_was = b.grad_enabled();
  b.set_grad_enabled(false);
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], S = xs[1], h = s.index_n_heads, d = s.index_head_dim, r = s.qk_rope_head_dim;
  const TensorId q0 = b.view(b.linear(q_resid, w.wq_b), {B, S, h, d});
  const TensorId q_rot = b.view(q0, {B, S, h, r});
  const TensorId q_pass = b.view(q0, {B, S, h, d - r});
  b.hold(q_pass);
  const TensorId kn = b.layer_norm(b.linear(x, w.wk), w.k_norm_w, w.k_norm_b);
  const TensorId k0 = b.view(kn, {B, S, 1, d});
  const TensorId k_rot = b.view(k0, {B, S, 1, r});
  const TensorId k_pass = b.view(k0, {B, S, 1, d - r});
  b.hold(k_pass);
  const TensorId c = b.view(cos, {P, S, 1, r}), sn = b.view(sin, {P, S, 1, r});
  const TensorId q_emb = rope_fn(b, q_rot, c, sn);
  b.hold(q_emb);
  const TensorId k_emb = rope_fn(b, k_rot, c, sn);
  b.hold(k_emb);
  const TensorId q = b.cat_last("cat", {q_emb, q_pass});
  b.hold(q);
  TensorId k = b.view(b.cat_last("cat", {k_emb, k_pass}), {B, S, d});
  if (b.kv_cached()) {  // past_key_values.update_indexer(k): cat([indexer_keys, k], dim=1)
    const int64_t past = b.pass().past_len;
    const DType dt = b.dtype(k);
    const TensorId full = past == 0 ? b.cat("kv_cat", {k}, 1, dt) : b.cat("kv_cat", {b.kv_cache_in({B, past, d}, dt), k}, 1);
    b.kv_cache_out(full);
    k = full;
  }
  b.hold(k);
  const int64_t T = b.shape(k)[1];
  // scores = matmul(q.float(), k.transpose(-1, -2).float().unsqueeze(1)) * softmax_scale
  // The .float() copies (16-bit models) are the call's arguments and autocast's casts its wrapper's locals: all
  // alive until matmul returns.
  std::vector<TensorId> call_temps;
  auto temp = [&](TensorId t, TensorId of) {
    if (t != of) {
      b.hold(t);
      call_temps.push_back(t);
    }
    return t;
  };
  const TensorId qf = temp(b.to(q, DType::f32), q);
  const TensorId kf = temp(b.to(k, DType::f32), k);
  const TensorId kc = temp(b.autocast_low(kf), kf);  // autocast casts the arguments last to first
  const TensorId qc = temp(b.autocast_low(qf), qf);
  const DType mdt = b.dtype(qc);
  TensorId k_bmm = kc;
  if (B > 1 && S > 1) {  // expand(B, S, d, T).reshape(B * S, d, T) of a stride-0 batch dim: a copy
    k_bmm = temp(b.generic_one("expand_reshape", {kc}, {checked_mul(B, S), d, T}, mdt), kc);
  }
  const TensorId prod = b.generic_one("bmm", {qc, k_bmm}, {B, S, h, T}, mdt);
  for (auto it = call_temps.rbegin(); it != call_temps.rend(); ++it) b.drop(*it);
  const TensorId scaled = b.scalar_op("mul_scalar", prod, false);
  const TensorId scores = b.unary("relu", scaled, false, false);
  b.hold(scores);
  // weights = weights_proj(hidden_states.to(weights_proj.weight.dtype)).float() * n_heads ** -0.5
  const TensorId wl = b.linear(b.to(x, b.dtype(w.weights_proj)), w.weights_proj);
  const TensorId weights = b.scalar_op("mul_scalar", b.to(wl, DType::f32), false);
  b.hold(weights);
  // index_scores = matmul(weights.unsqueeze(-2), scores).squeeze(-2)
  const TensorId sc = b.autocast_low(scores);
  const TensorId wc = b.autocast_low(b.view(weights, {B, S, 1, h}));
  const DType idt = b.autocast() ? b.low_dtype() : DType::f32;
  TensorId idx = b.view(b.generic_one("bmm", {wc, sc}, {B, S, 1, T}, idt), {B, S, T});
  const Shape ms = b.shape(mask);
  const TensorId m3 = b.view(mask, {ms[0], S, T});  // attention_mask[:, 0, :, :]
  if (b.dtype(mask) == DType::boolean) {
    // masked_fill(~attention_mask, -inf): ~ of the batch-expanded mask is a full [B, S, T] bool
    const TensorId inv = b.generic_one("logical_not", {m3}, {B, S, T}, DType::boolean);
    idx = b.generic_one("masked_fill", {idx, inv}, {B, S, T}, b.dtype(idx));
  } else {
    idx = b.add(idx, m3);
  }
  b.hold(idx);  // index_scores: a local, bound until forward returns
  const int64_t K = std::min(s.index_topk, T);
  // index_scores.topk(k).indices.to(int32): the (values, indices) result is a temporary, so the values die once
  // .indices is taken, before the cast (the V3.2 fp32 row's whole-run stream); with the multi-block select's scratch
  // (engine/arch/topk.h).
  const TensorId indices = topk_last(b, idx, K).second;
  b.hold(indices);
  const TensorId out = b.generic_one("to_int32", {indices}, {B, S, K}, DType::i32);
  for (TensorId t : {indices, q_pass, k_pass, q_emb, k_emb, q, k, scores, weights, idx}) b.drop(t);
  b.set_grad_enabled(grad_was);
  return out;
}

}  // namespace

TensorId dsa_attention(GraphBuilder& b, const TransformerSpec& s, const DsaLayer& L, TensorId x, TensorId mask,
                       TensorId cos, TensorId sin, int64_t P, DsaRopeFn indexer_rope, TensorId prev_topk,
                       TensorId* topk_out, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const DeepseekMla& w = L.d.attn;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nope = s.qk_nope_head_dim, rd = s.qk_rope_head_dim, qk = nope + rd, kvr = s.kv_lora_rank,
                vd = s.v_head_dim;
  weights = kNoTensor;
  // q_resid = q_a_layernorm(q_a_proj(x)): q_a_proj's output is the norm's argument until the norm returns
  const TensorId qa = b.linear(x, w.q_a, w.q_a_b);
  b.hold(qa);
  const TensorId q_resid = ds_rms_norm(b, qa, w.q_a_norm);
  b.drop(qa);
  b.hold(q_resid);
  const TensorId q = b.view_copying_grad(b.linear(q_resid, w.q_b), {B, nh, S, qk});
  b.hold(q);  // q_states
  const auto qparts = b.split(q, 2, {B, nh, S, nope});
  const TensorId q_pass = qparts[0];
  const TensorId q_rot_in = b.view(qparts[1], {B, nh, S, rd});
  const TensorId ckv = b.linear(x, w.kv_a, w.kv_a_b);
  b.hold(ckv);  // compressed_kv
  const auto kparts = b.split(ckv, 2, {B, S, kvr});
  const TensorId k_pass = b.view(ds_rms_norm(b, kparts[0], w.kv_a_norm), {B, 1, S, kvr});
  b.hold(k_pass);
  const TensorId k_rot_in = b.view(kparts[1], {B, 1, S, rd});
  b.hold(q_rot_in);
  b.hold(k_rot_in);
  const TensorId q_rot = rope_interleave(b, q_rot_in, cos, sin);
  b.hold(q_rot);
  const TensorId k_rot = rope_interleave(b, k_rot_in, cos, sin);
  b.hold(k_rot);
  b.drop(q_rot_in);
  b.drop(k_rot_in);
  const TensorId query = b.cat_last("cat", {q_pass, q_rot});
  b.hold(query);
  // expand_kv (V3's statements)
  const TensorId kvb = b.view_copying_grad(b.linear(k_pass, w.kv_b), {B, nh, S, nope + vd});
  const auto kvparts = b.split(kvb, 2, {B, nh, S, nope});
  const TensorId k_nope = kvparts[0];
  TensorId value = b.view(kvparts[1], {B, nh, S, vd});
  b.hold(value);
  const TensorId k_rot_h = b.view(k_rot, {B, nh, S, rd});  // expand: no storage of its own
  const int64_t key_bytes = checked_mul(checked_mul(checked_mul(B, nh), checked_mul(S, qk)), dtype_bytes(b.dtype(k_nope)));
  TensorId key = b.generic({"new_empty_copy_", {k_nope, k_rot_h}, {{{B, nh, S, qk}, b.dtype(k_nope)}}, {}, {}, {}, {key_bytes}})[0];
  b.hold(key);
  if (b.kv_cached()) {  // past_key_values.update(key_states, value_states): the expanded states, cat per layer
    auto kv = kv_update(b, key, value, 0);
    b.drop(key);
    b.drop(value);
    key = kv.first;
    value = kv.second;
    b.hold(key);
    b.hold(value);
  }
  const bool own = !L.shared;
  if (!own && prev_topk == kNoTensor)
    throw InputError("config.indexer_types", "shared", "a shared DSA layer needs a previous full indexer layer's top-k");
  const TensorId topk = own ? indexer_forward(b, s, L.idx, x, q_resid, cos, sin, mask, P, indexer_rope) : prev_topk;
  if (own) b.hold(topk);
  const int64_t T = b.shape(key)[2], K = b.shape(topk)[2];
  // index_mask = new_ones([B, S, T], bool).scatter(-1, topk_indices.long(), False).unsqueeze(1)
  const TensorId ones = b.generic_one("new_ones", {}, {B, S, T}, DType::boolean);
  const TensorId longs = b.generic_one("to_long", {topk}, {B, S, K}, DType::i64);
  const TensorId index_mask = b.view(b.generic_one("scatter", {ones, longs}, {B, S, T}, DType::boolean), {B, 1, S, T});
  b.hold(index_mask);
  TensorId amask;
  if (b.dtype(mask) == DType::boolean) {  // attention_mask & ~index_mask
    const TensorId inv = b.generic_one("logical_not", {index_mask}, {B, 1, S, T}, DType::boolean);
    amask = b.generic_one("and", {mask, inv}, {B, 1, S, T}, DType::boolean);
  } else {  // attention_mask.masked_fill(index_mask, finfo.min)
    amask = b.generic_one("masked_fill", {mask, index_mask}, {B, 1, S, T}, b.dtype(mask));
  }
  b.hold(amask);
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    const TensorId out = inf ? b.sdpa_masked_inference(query, key, value, amask)
                             : b.sdpa(query, key, value, s.attn_dropout, false, amask);
    ctx = b.contiguous_copy(out, {B, S, nh, vd});  // transpose(1, 2).contiguous()
  } else {
    // eager_attention_forward: matmul(q, k^T) * scaling + mask, softmax in fp32, back to q's dtype, dropout,
    // matmul with value_states (a strided view of kv_b_proj's output in training: matmul copies it)
    const TensorId scores = b.scalar_op("mul_scalar", b.matmul(query, key, {B, nh, S, T}), false);
    const TensorId masked = b.add(scores, amask);
    b.hold(masked);
    TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(query));
    b.drop(masked);
    probs = b.dropout(probs, s.attn_dropout);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, value, {B, nh, S, vd}, false, !b.kv_cached()), {B, S, nh, vd},
                            /*grad_copied=*/true);
  }
  const TensorId o = b.linear(b.view(ctx, {B, S, nh * vd}), w.o, w.o_b);
  // The frame's locals die as forward returns; topk_indices too unless it is returned (or another layer's).
  const TensorId dying_topk = own && topk_out == nullptr ? topk : kNoTensor;
  for (TensorId t : {q_resid, q, ckv, k_pass, q_rot, k_rot, query, value, key, dying_topk, index_mask, amask})
    if (t != kNoTensor) b.drop(t);
  if (topk_out != nullptr) *topk_out = topk;
  return o;
}

TensorId dsa_mask(GraphBuilder& b, int64_t P, int64_t q, int64_t kv, DType dtype) {
  if (b.config().attn == AttnImpl::eager) return eager_mask(b, P, q, kv, dtype);
  if (P == 1) return b.generic_one("sdpa_mask", {}, {1, 1, q, kv}, DType::boolean);
  TensorId r = b.generic_one("and", {b.generic_one("le", {}, {1, 1, q, kv}, DType::boolean)}, {1, 1, q, kv},
                             DType::boolean);
  return b.generic_one("and", {r, b.generic_one("index", {}, {P, 1, 1, kv}, DType::boolean)}, {P, 1, q, kv},
                       DType::boolean);
}

void build_dsa_model(GraphBuilder& b, const TransformerSpec& s, DsaRopeFn indexer_rope, bool layers_return_topk) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  std::vector<DsaLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    DsaLayer L;
    const bool train = !layer_frozen(cfg, i);
    L.shared = !s.index_shared_layers.empty() && s.index_shared_layers[static_cast<size_t>(i)] != 0;
    // self.indexer = None if self.skip_topk else GlmMoeDsaIndexer(...): created last in the attention's __init__
    L.d = deepseek_layer_params(b, s, i, train, [&]() {
      if (!L.shared) L.idx = dsa_indexer_params(b, s, i, train);
    });
    layers.push_back(L);
  }
  TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train)
                                        : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);  // generate() passes position_ids [B, S]
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  TensorId position_ids = kNoTensor;
  if (P == 1) {  // arange(S) + past_seen_tokens, unsqueezed (bound until the model's forward returns)
    const TensorId ar = b.generic_one("arange", {}, {S}, DType::i64);
    position_ids = b.generic_one("add", {ar}, {1, S}, DType::i64);
    b.hold(position_ids);
  }
  const int64_t kv = (inf ? b.pass().past_len : 0) + S;
  const TensorId mask = dsa_mask(b, inf ? P : 1, S, kv, b.dtype(h));
  b.hold(mask);
  auto cs = rotary_cos_sin(b, P, S, s.qk_rope_head_dim, b.dtype(h));
  const TensorId cos = cs.first, sin = cs.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  // topk_indices: the model loop's variable, None before layer 0, rebound by each layer's return
  TensorId topk = kNoTensor;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const DsaLayer& L = layers[static_cast<size_t>(i)];
    const DeepseekLayer& d = L.d;
    const bool ckpt = layer_checkpointed(cfg, i) && !inf;
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    // prev_topk_indices is a keyword argument of every layer call: under checkpointing the frame's partial keeps
    // it until the layer's backward, read or not (a full layer's own indexer ignores it).
    if (layers_return_topk && ckpt && !L.shared && topk != kNoTensor) b.view(topk, b.shape(topk));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = ds_rms_norm(b, h, d.in_norm);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId layer_topk = kNoTensor;
    TensorId a = dsa_attention(b, s, L, n1, mask, cos, sin, P, indexer_rope, topk,
                               layers_return_topk ? &layer_topk : nullptr, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = ds_rms_norm(b, h1, d.post_norm);
    b.hold(n2);
    const TensorId m = deepseek_mlp_half(b, s, d, n2, deepseek_route_bound);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    // `hidden_states, topk_indices = decoder_layer(...)`: a full layer's new top-k replaces the previous one
    if (layers_return_topk && layer_topk != topk) {
      if (topk != kNoTensor) b.drop(topk);
      topk = layer_topk;
    }
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = ds_rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, position_ids, topk})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
