// Pieces of the GPT-2-style CausalLMs whose transformers 5.17 modeling files share the model's outer code
// (gpt_neo, gptj, gpt_bigcode): the parameters around the blocks (transformer.wte, transformer.wpe, transformer.h,
// transformer.ln_f, in registration order) and the final norm with the release of the model's locals; and the
// cache update that rebinds a bound key and value, which falcon's attention writes the same way.
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

}  // namespace memplan
