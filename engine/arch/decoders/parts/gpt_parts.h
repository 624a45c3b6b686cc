// Pieces of the GPT-2-style CausalLMs whose transformers 5.17 modeling files share the model's outer code
// (gpt_neo, gptj, gpt_bigcode, codegen): the parameters around the blocks (transformer.wte, transformer.wpe,
// transformer.h, transformer.ln_f, in registration order) and the final norm with the release of the model's locals;
// the cache update that rebinds a bound key and value, which falcon's attention writes the same way; and GPT-J's
// apply_rotary_pos_emb, which CodeGen's file copies ("Copied from transformers.models.gptj").
#pragma once
#include <initializer_list>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan {

template <class Layer>
struct GptModelParams {
  TensorId wte = kNoTensor, wpe = kNoTensor, lnf_w = kNoTensor, lnf_b = kNoTensor;
  std::vector<Layer> layers;
};

// The transformers default-dtype construction scalar, then "transformer.wte.weight" [V, H], with `wpe`
// "transformer.wpe.weight" [max_position_embeddings, H] (both trainable unless cfg.freeze_embeddings), block i's
// parameters from `layer_params(b, s, i, train)` (train unless layer i is frozen), "transformer.ln_f" (weight,
// bias). The caller registers what follows ln_f (buffers, lm_head).
template <class Layer, class LayerParamsFn>
GptModelParams<Layer> gpt_model_params(GraphBuilder& b, const TransformerSpec& s, bool wpe,
                                       LayerParamsFn layer_params) {
  const auto& cfg = b.config();
  const int64_t H = s.hidden_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  GptModelParams<Layer> p;
  p.wte = b.param("transformer.wte.weight", {s.vocab_size, H}, emb_train);
  if (wpe) p.wpe = b.param("transformer.wpe.weight", {s.max_position_embeddings, H}, emb_train);
  p.layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i) p.layers.push_back(layer_params(b, s, i, !layer_frozen(cfg, i)));
  p.lnf_w = b.param("transformer.ln_f.weight", {H}, emb_train);
  p.lnf_b = b.param("transformer.ln_f.bias", {H}, emb_train);
  return p;
}

// `hidden_states = self.ln_f(hidden_states)`: the last block's output `h` stays bound until the norm has
// returned; then the model's forward returns and frees its held locals `bound`, in that order (kNoTensor entries
// skipped). Returns ln_f's output.
inline TensorId gpt_final_norm(GraphBuilder& b, TensorId h, TensorId lnf_w, TensorId lnf_b,
                               std::initializer_list<TensorId> bound) {
  b.hold(h);
  const TensorId out = b.layer_norm(h, lnf_w, lnf_b);
  b.drop(h);
  for (TensorId t : bound)
    if (t != kNoTensor) b.drop(t);
  return out;
}

// `key, value = layer_past.update(key, value, ...)` where both names were bound (held) until the attention
// returns (gpt_neo, gpt_bigcode, falcon): kv_update with no window, the projections' tensors freed with the
// statement, the cache's (key, value) held in their place and written back to `k` / `v`. Returns the key length.
inline int64_t rebind_kv_to_cache(GraphBuilder& b, TensorId& k, TensorId& v) {
  const auto [kc, vc] = kv_update(b, k, v, 0);
  b.drop(k);
  b.drop(v);
  k = kc;
  v = vc;
  b.hold(k);
  b.hold(v);
  return b.shape(kc)[2];
}

// apply_rotary_pos_emb(x, sin, cos) of modeling_gptj.py (and modeling_codegen.py's copy) for x = k[..., :rot] or
// q[..., :rot] ([B, S, nh, rot], a slice of the head view, whose SliceBackward zero-fills a gradient of the whole
// head), sin / cos [P, S, rot / 2]. Returns the rotated part. GPT-J casts sin / cos to the keys' dtype first;
// CodeGen passes its fp32 table rows as they are, so a 16-bit x times fp32 cos / sin promotes: the products, the
// sum and the returned part are fp32 (the stacked rotate_every_two stays in x's dtype), and each product's
// gradient is cast back to x's dtype by validate_outputs.
inline TensorId gptj_apply_rotary(GraphBuilder& b, TensorId x_rot, TensorId sin, TensorId cos) {
  const Shape xs = b.shape(x_rot);  // [B, S, nh, rot]
  const int64_t rot = xs[3];
  const Shape sc = b.shape(sin);    // [P, S, rot / 2]
  // sin / cos = torch.repeat_interleave(t[:, :, None, :], 2, 3): fresh [P, S, 1, rot], locals of the function.
  const TensorId sin_r = b.generic_one("repeat_interleave", {sin}, {sc[0], sc[1], 1, rot}, b.dtype(sin));
  const TensorId cos_r = b.generic_one("repeat_interleave", {cos}, {sc[0], sc[1], 1, rot}, b.dtype(cos));
  b.hold(sin_r);
  b.hold(cos_r);
  const TensorId a = b.mul(x_rot, cos_r);
  // rotate_every_two: x[..., ::2] and x[..., 1::2] (strided slices: each gradient zero-filled at x's size),
  // -x2, stack((-x2, x1), dim=-1) [B, S, nh, rot / 2, 2] (its backward unbinds: views), flatten(-2).
  Shape half = xs;
  half[3] = rot / 2;
  const TensorId x1 = b.split(x_rot, 1, half)[0];
  const TensorId x2 = b.split(x_rot, 1, half)[0];
  Shape one = half;
  one.push_back(1);
  const TensorId neg = b.unary("neg", x2, false, false);
  const TensorId stacked = b.cat("stack", {b.view(neg, one), b.view(x1, one)}, -1);
  const TensorId rotated = b.view(stacked, xs);
  const TensorId c = b.mul(rotated, sin_r);  // (x * cos) + (rotate_every_two(x) * sin), left to right
  const TensorId y = b.add(a, c);
  b.drop(sin_r);
  b.drop(cos_r);
  return y;
}

}  // namespace memplan
