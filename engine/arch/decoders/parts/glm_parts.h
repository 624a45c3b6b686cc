// GLM's attention (glm / glm4, transformers 5.17 models/glm and models/glm4: the same Python in both):
// llama's q / k / v projections, then apply_rotary_pos_emb with GLM's interleaved rotation over the first rotary_dim
// channels (cos / sin halves repeat_interleave'd to the rotary width, locals until it returns), the rotated parts
// concatenated back with the pass-through channels, SDPA / eager, o_proj (engine/arch/decoders/parts/phi_parts.h's
// cat_rotary_o_proj). Shared by engine/arch/decoders/dense/glm.cpp and glm4.cpp.
#pragma once
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/rotary_slices.h"

namespace memplan {

// GLM's rotate_half: the even and odd strided slices (each a view whose backward zero-fills a gradient of x's
// size), -x2, then torch.stack((-x2, x1), -1) (a fresh tensor of x's size; flatten(-2) is a view of it).
inline TensorId interleaved_rotate_half(GraphBuilder& b, TensorId x) {
  Shape half = b.shape(x);
  half.back() /= 2;
  const TensorId x1 = b.split(x, 1, half)[0];  // x[..., 0::2]
  const TensorId x2 = b.split(x, 1, half)[0];  // x[..., 1::2]
  const TensorId neg = b.unary("neg", x2, false, false);
  return b.cat_last("stack", {neg, x1});
}

// (x * cos) + (rotate_half(x) * sin), left to right.
inline TensorId interleaved_rope(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  const TensorId a = b.mul(x, cos);
  const TensorId c = b.mul(interleaved_rotate_half(b, x), sin);
  return b.add(a, c);
}

// cos[..., :rot / 2].repeat_interleave(2, dim=-1): a fresh contiguous [P, 1, S, rot] tensor of cos's dtype
// (cos needs no gradient, so no backward).
inline TensorId repeat_interleave_half(GraphBuilder& b, TensorId cs) {
  Shape shape = b.shape(cs);
  return b.generic_one("repeat_interleave", {cs}, shape, b.dtype(cs));
}

inline TensorId glm_interleaved_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                                          const SkeletonContext& c, TensorId& weights) {
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : s.head_dim;
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);       // query_states / key_states: rebound once apply_rotary_pos_emb has returned both
  b.hold(k);
  // apply_rotary_pos_emb: the interleaved cos / sin are locals until it returns.
  const TensorId cos = repeat_interleave_half(b, c.cos);
  b.hold(cos);
  const TensorId sin = repeat_interleave_half(b, c.sin);
  b.hold(sin);
  const auto slices = rotary_slices(b, q, k, rot);
  const TensorId qr = interleaved_rope(b, slices.q_rot, cos, sin);
  const TensorId kr = interleaved_rope(b, slices.k_rot, cos, sin);
  // `q_embed = torch.cat([q_embed, q_pass], dim=-1)`: a rebinding, the rotated half goes once the cat exists.
  TensorId qe = b.cat("cat", {qr, slices.q_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(qe);
  TensorId ke = b.cat("cat", {kr, slices.k_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(ke);
  b.drop(cos);
  b.drop(sin);
  b.drop(q);
  b.drop(k);
  TensorId out = cat_rotary_o_proj(b, s, qe, ke, v, v_proj, c, w.o, w.ob, weights);
  return out;
}

}  // namespace memplan
