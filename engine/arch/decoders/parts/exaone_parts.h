// The attention of Exaone4Attention (transformers 5.17 models/exaone4/modeling_exaone4.py), which
// ExaoneMoeAttention is (models/exaone_moe: `class ExaoneMoeAttention(Exaone4Attention): pass`) and HYV3Attention
// writes statement for statement with the rotary embedding on every layer (models/hy_v3/modeling_hy_v3.py):
//   query_states = q_proj(x).view(B, S, H, D).transpose(1, 2), key_states and value_states likewise (all three
//   projections first), then `query_states = self.q_norm(query_states)` and `key_states = self.k_norm(...)` (an
//   RMSNorm over head_dim on the transposed view), then apply_rotary_pos_emb when the layer rotates (Exaone: only
//   when config.sliding_window is None or the layer slides; HYV3: always), then Llama's attention from the cache
//   update on (llama_parts.h attention_o_proj: eager / SDPA, o_proj).
// Used by engine/arch/decoders/dense/exaone4.cpp, engine/arch/decoders/moe/exaone_moe.cpp and hy_v3.cpp.
#pragma once
#include <tuple>

#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

// L: a layer struct with q, k, v, o, qb, kb, vb, ob (biases kNoTensor when absent), q_norm, k_norm. `rotary`:
// whether this layer applies the rotary embedding. `mask` / `window`: the layer's mask and sliding window (0: full).
// `weights`: eager attention's probabilities, held (see attention_core). Returns o_proj's output.
template <class L>
TensorId qk_normed_head_attention(GraphBuilder& b, const TransformerSpec& s, const L& w, TensorId x, TensorId cos,
                                  TensorId sin, TensorId mask, int64_t window, bool rotary, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // The head view of a projection gets its gradient back through the norm's elementwise backward, in the layout
  // the attention hands to the norm output: contiguous [B, H, S, D] from the rotary backward or from a bmm /
  // masked kernel (copied back by the view, as Llama's), q's own layout from the fused unmasked SDPA kernel.
  const bool grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;
  // The three projections run first (query / key / value_states bound to their head views), then
  // `query_states = self.q_norm(query_states)` and the same for k (whole-run stream: k_proj and v_proj are
  // allocated before the q norm's fp32 temporaries).
  auto head_view = [&](TensorId wt, TensorId bias, int64_t heads, bool layout_kept) {
    TensorId proj = b.linear(x, wt, bias);
    return layout_kept ? b.view(proj, {B, heads, S, hd}) : b.view_copying_grad(proj, {B, heads, S, hd});
  };
  const bool qk_layout_kept = grad_in_layout && !rotary;
  TensorId qv = head_view(w.q, w.qb, nh, qk_layout_kept);
  b.hold(qv);
  TensorId kv = head_view(w.k, w.kb, nkv, qk_layout_kept);
  b.hold(kv);
  TensorId v = head_view(w.v, w.vb, nkv, grad_in_layout);
  const TensorId v_proj = v;
  b.hold(v_proj);  // value_states stays bound until the attention module returns (or the cache rebinds it)
  TensorId q = rms_norm(b, qv, w.q_norm, false);
  b.hold(q);  // query_states until rebound (by the rotary embedding) or the module returns
  b.drop(qv);
  TensorId k = rms_norm(b, kv, w.k_norm, false);
  b.hold(k);
  b.drop(kv);
  TensorId qe = q, ke = k;
  if (rotary) {
    std::tie(qe, ke) = rope_qk(b, q, k, cos, sin);
  }
  return attention_o_proj(b, s, qe, ke, v, v_proj, mask, window, w.o, w.ob, weights);
}

}  // namespace memplan
