// The model forward and sink attention of granite_swa / granitemoe_swa (granite_swa_parts.h says which statements).
#include "engine/arch/decoders/parts/granite_swa_parts.h"

#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// torch.logsumexp(x, dim=-1) over [.., L] (ATen logsumexp_out_impl): maxes = amax(x, keepdim) [.., 1], then
// sum((x - maxes).exp_()) into the result, whose storage the sum allocates: a full-size temporary of x's dtype
// alive with maxes. LogsumexpBackward0 keeps x and the result; logsumexp_backward evaluates
// `grad * (self - result).exp()`, both full-size temporaries alive until the expression ends.
TensorId logsumexp_last(GraphBuilder& b, TensorId x) {
  const Shape full = b.shape(x);
  Shape out = full;
  out.pop_back();
  const DType dt = b.dtype(x);
  const int64_t full_bytes = b.info(x).bytes;
  const int64_t rows_bytes = checked_mul(b.numel(x) / full.back(), dtype_bytes(dt));
  return b.generic({"logsumexp", {x}, {{out, dt}}, {0}, {0}, {rows_bytes, full_bytes}, {}, {full_bytes, full_bytes}})[0];
}

}  // namespace

GraniteSwaAttnParams granite_swa_attention_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p,
                                                  bool train) {
  GraniteSwaAttnParams w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.sinks = b.param(p + "self_attn.sinks", {s.num_heads}, train);
  return w;
}

TensorId granite_swa_attention(GraphBuilder& b, const TransformerSpec& s, const GraniteSwaAttnParams& w, TensorId x,
                               const SkeletonContext& c, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  const QkvViews views = llama_qkv_views(b, s, w, x, c.mask);
  TensorId v = views.v;
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(views.q);
  b.hold(views.k);
  TensorId qe = views.q, ke = views.k;
  if (c.cos != kNoTensor) {  // apply_rotary_pos_emb: query_states / key_states rebound to the rotated tensors
    const std::pair<TensorId, TensorId> r = rope_qk(b, views.q, views.k, c.cos, c.sin);
    qe = r.first;
    ke = r.second;
  }
  weights = kNoTensor;
  int64_t Lk = S;
  const bool cached = b.kv_cached();
  if (cached) {  // key_states / value_states rebind to what the cache returns (DynamicSlidingWindowLayer on sliding layers)
    const std::pair<TensorId, TensorId> kv = kv_update(b, ke, v, c.window);
    b.drop(ke);
    b.drop(v_proj);
    ke = kv.first;
    v = kv.second;
    Lk = b.shape(ke)[2];
  }
  TensorId kr = ke, vr = v;
  if (nkv != nh) {  // repeat_kv: expand + reshape materialises the repeated heads
    kr = b.contiguous_copy(ke, {B, nh, Lk, hd});
    vr = b.contiguous_copy(v, {B, nh, Lk, hd});
  }
  b.hold(kr);  // bound until eager_attention_forward returns
  b.hold(vr);
  // torch.matmul's reshapes as eager_attention_o_proj (llama_parts.h) sees them per batch size: q keeps the
  // projection's [B, S, H, D] memory order (rotated or not), copied for B > 1.
  const bool batch_dims_copy = B > 1;
  TensorId scores = b.scalar_op(
      "mul_scalar", b.matmul(qe, kr, {B, nh, S, Lk}, batch_dims_copy, batch_dims_copy && kr == ke && !cached), false);
  TensorId masked = b.add(scores, c.mask);
  b.hold(masked);  // attn_weights, until the softmax statement rebinds it (LogsumexpBackward keeps it longer)
  const TensorId lse = logsumexp_last(b, masked);
  b.hold(lse);
  const TensorId diff = b.sub(lse, b.view(w.sinks, {1, nh, 1}));
  const TensorId sink_scale = b.unary("sigmoid", b.to(diff, DType::f32), false, true);
  b.hold(sink_scale);
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(qe));
  b.drop(masked);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.matmul(probs, vr, {B, nh, S, hd}, false, batch_dims_copy && vr == v && !cached);
  // matmul's 3-d bmm output viewed back to 4-d: the product's gradient arrives in the transposed context's
  // [B, S, H, D] order, which the view's backward reshape copies for B > 1 (attention_core's grad_copied, moved
  // behind the sink product here).
  if (batch_dims_copy) ctx = b.view_copying_grad(ctx, {B, nh, S, hd});
  const TensorId scale = b.to(b.view(sink_scale, {B, nh, S, 1}), b.dtype(ctx));
  const TensorId scaled = b.mul(ctx, scale);
  const TensorId out_ctx = b.contiguous_copy(scaled, {B, S, nh, hd});
  b.drop(kr);
  b.drop(vr);
  b.drop(lse);
  b.drop(sink_scale);
  TensorId out = b.linear(b.view(out_ctx, {B, S, nh * hd}), w.o, w.ob);
  b.drop(qe);
  b.drop(ke);  // key_states: the rotated (or NoPE) k in training, the cache's tensor in inference
  if (!cached) b.drop(v_proj);
  return out;
}

void check_granite_swa_spec(const GraphBuilder& b, const TransformerSpec& s) {
  if (b.config().attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     s.model_type + " has no SDPA attention in transformers 5.17 (_supports_sdpa is False: from_config "
                                    "raises); use eager");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     s.model_type + " makes a sliding-window mask in every forward: the window must be positive");
  const auto n = static_cast<size_t>(s.num_layers);
  if (s.sliding_layers.size() != n || s.granite_swa_nope_layers.size() != n)
    throw InputError("model.layer_types", std::to_string(s.sliding_layers.size()),
                     "must list one attention type (and one rope theta) per layer");
  if (s.granite_swa_rope_tables < 0)
    throw InputError("model.layer_rope_theta", std::to_string(s.granite_swa_rope_tables), "negative table count");
}

void build_granite_swa_model(GraphBuilder& b, const TransformerSpec& s, LayerFn layer) {
  check_granite_swa_spec(b, s);
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  (void)B;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = granite_embedding_multiplier(b, b.embedding(ids, embed));
  // position_ids = torch.arange(S) + past_seen_tokens, unsqueezed, when the caller passes none (as gpt_oss.cpp).
  TensorId position_ids = kNoTensor;
  if (P == 1) {
    const TensorId ar = b.generic({"arange", {}, {{{S}, DType::i64}}, {}, {}, {}, {}})[0];
    position_ids = b.generic({"add", {ar}, {{{1, S}, DType::i64}}, {}, {}, {}, {}})[0];
    b.hold(position_ids);
  }
  const CausalMasks masks = full_and_sliding_masks(b, s, true, true, b.dtype(inputs_embeds));
  // position_embeddings_by_theta: one (cos, sin) per distinct non-zero theta, in sorted order.
  std::vector<TensorId> tables;
  TensorId cos = kNoTensor, sin = kNoTensor;
  for (int64_t t = 0; t < s.granite_swa_rope_tables; ++t) {
    const std::pair<TensorId, TensorId> cs = rotary_cos_sin(b, P, S, s.head_dim, b.dtype(inputs_embeds));
    b.hold(cs.first);
    b.hold(cs.second);
    tables.push_back(cs.first);
    tables.push_back(cs.second);
    cos = cs.first;  // every table has the same sizes: the layers read the last one (theta picks values only)
    sin = cs.second;
  }
  b.hold(inputs_embeds);  // bound until the model's forward returns
  TensorId h = inputs_embeds;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    SkeletonContext ctx;
    const bool sliding = s.sliding_layers[static_cast<size_t>(i)] != 0;
    ctx.mask = sliding ? masks.sliding : masks.full;
    ctx.window = sliding ? s.sliding_window : 0;
    if (s.granite_swa_nope_layers[static_cast<size_t>(i)] == 0) {
      ctx.cos = cos;
      ctx.sin = sin;
    }
    h = layer(b, s, i, h, ctx);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, masks.full, masks.sliding, position_ids})
    if (t != kNoTensor) b.drop(t);
  for (TensorId t : tables) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, false, granite_logits_scaling);
}

}  // namespace memplan
