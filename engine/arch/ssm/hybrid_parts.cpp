#include "engine/arch/ssm/hybrid_parts.h"

#include <string>

#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// create_recurrent_attention_mask inside generate()'s prefill (a 2-d all-ones mask, more than one new token):
// torch.all(attention_mask == 1), a bool [B, S] and a bool scalar freed at once, then None (lfm2.cpp's, the same
// masking_utils code).
void recurrent_mask_check(GraphBuilder& b) {
  if (b.training() || !b.pass().from_generate || b.pass().new_tokens == 1) return;
  const int64_t B = b.config().batch_size, S = b.pass().past_len + b.pass().new_tokens;
  const TensorId eq = b.generic_one("eq", {}, {B, S}, DType::boolean);
  b.generic_one("all", {eq}, {}, DType::boolean);
}

}  // namespace

void hybrid_causal_lm(GraphBuilder& b, const TransformerSpec& s, const HybridModelSpec& m) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size;
  if (static_cast<int64_t>(s.hybrid_attention_layers.size()) != s.num_layers)
    throw InputError("model.hybrid_attention_layers", std::to_string(s.hybrid_attention_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  if (m.embedding_multiplier) h = granite_embedding_multiplier(b, h);  // the embedding's output dies here
  const TensorId inputs_embeds = h;
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;  // held until the end
  recurrent_mask_check(b);
  HybridContext ctx;
  ctx.mask = mask;
  if (s.hybrid_rope) {
    const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : s.head_dim;
    const std::pair<TensorId, TensorId> cs = rotary_cos_sin(b, P, S, rot, b.dtype(h));
    ctx.cos = cs.first;
    ctx.sin = cs.second;
  }
  b.hold(inputs_embeds);
  for (TensorId t : {ctx.cos, ctx.sin})
    if (t != kNoTensor) b.hold(t);
  TensorId carried = kNoTensor;  // the loop's attn_weights (bamba), rebound by the next layer
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const HybridLayerFn layer = m.layer(i, p, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    TensorId weights = kNoTensor;
    h = layer(h, ctx, weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    if (carried != kNoTensor) b.drop(carried);
    carried = weights;
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = rms_norm(b, h, b.param(std::string(m.final_norm) + ".weight", {H}, !cfg.freeze_embeddings));
  for (TensorId t : {h, inputs_embeds, ctx.cos, ctx.sin, mask, carried})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, false, m.logits_op);
}

TensorId hybrid_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                          const HybridContext& c, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  if (!s.hybrid_rope) {
    // No rotary embedding: every head view goes to the attention as it is, so its gradient arrives in the view's
    // own layout only from a fused SDPA kernel (llama_qkv_views' rule for v, here for q and k as well).
    const TensorId qp = b.linear(x, w.q, w.qb);
    const bool math_sdpa = b.dtype(qp) == DType::f32 && nkv != nh;
    const bool in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor && !math_sdpa;
    auto heads = [&](TensorId t, int64_t n) {
      const Shape hs{B, n, S, hd};
      return in_layout ? b.view(t, hs) : b.view_copying_grad(t, hs);
    };
    const TensorId q = heads(qp, nh);
    b.hold(q);  // query_states / key_states until the module returns
    const TensorId k = heads(b.linear(x, w.k, w.kb), nkv);
    b.hold(k);
    const TensorId v = heads(b.linear(x, w.v, w.vb), nkv);
    b.hold(v);  // value_states
    return attention_o_proj(b, s, q, k, v, v, c.mask, 0, w.o, w.ob, weights);
  }
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : hd;
  if (rot == hd) return llama_attention(b, s, w, x, c.cos, c.sin, c.mask, 0, weights);
  // Bamba's apply_rotary_pos_emb: q_rot / q_pass and k_rot / k_pass slices, q_embed = rope(q_rot), k_embed =
  // rope(k_rot), then q_embed = cat([q_embed, q_pass]) and k_embed likewise (each rotated half dies as the cat
  // rebinds its name); query_states / key_states rebind to the cat outputs as the function returns.
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);
  b.hold(k);
  TensorId q_pass = kNoTensor, k_pass = kNoTensor;
  const TensorId qr = partial_rope(b, q, c.cos, c.sin, rot, false, &q_pass);
  b.hold(qr);
  const TensorId kr = partial_rope(b, k, c.cos, c.sin, rot, false, &k_pass);
  b.hold(kr);
  const TensorId qe = cat_rotary(b, qr, q_pass);
  b.drop(qr);
  b.hold(qe);
  const TensorId ke = cat_rotary(b, kr, k_pass);
  b.drop(kr);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  SkeletonContext sc;
  sc.mask = c.mask;
  sc.cos = c.cos;
  sc.sin = c.sin;
  return cat_rotary_o_proj(b, s, qe, ke, v, v_proj, sc, w.o, w.ob, weights);
}

}  // namespace memplan
