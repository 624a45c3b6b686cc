// Pieces of the GPT-2-style CausalLMs whose transformers 5.17 modeling files share the model's outer code
// (gpt_neo, gptj, gpt_bigcode, codegen): the parameters around the blocks (transformer.wte, transformer.wpe,
// transformer.h, transformer.ln_f, in registration order) and the final norm with the release of the model's locals;
// the cache update that rebinds a bound key and value, which falcon's attention writes the same way; and GPT-J's
// parallel-block model with its head, and its apply_rotary_pos_emb, both of which CodeGen's file copies ("Copied
// from transformers.models.gptj").
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/phi_parts.h"  // fc_act_proj_mlp

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

// GPTJForCausalLM / CodeGenForCausalLM after the blocks' parameters (CodeGen's file copies GPT-J's model and block):
// lm_head (tied when the config ties it) and its bias; the token embedding (bound until the model returns), the
// position ids ([B, S] from generate()), the eager float mask; then each block: ln_1's output feeds both the
// attention and the MLP, `attn_outputs + feed_forward_hidden_states + residual`, with the block input, the norm and
// both branches bound until the block returns, and the block's attn_weights held by the model's `outputs` until the
// next block has returned; ln_f, the head and the loss. `attention(w, n, position_ids, mask, weights)` is the
// family's attention on the normed input n, writing its attention weights to `weights`.
template <class Layer, class AttentionFn>
void parallel_block_causal_lm(GraphBuilder& b, const TransformerSpec& s, const GptModelParams<Layer>& mp,
                              AttentionFn attention) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows
  const bool emb_train = !cfg.freeze_embeddings;
  const TensorId wte = mp.wte;
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", wte, emb_train)
                                              : b.param("lm_head.weight", {V, H}, emb_train);
  const TensorId head_b = b.param("lm_head.bias", {V}, emb_train);

  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = b.embedding(ids, wte);
  b.hold(inputs_embeds);  // bound until the model's forward returns
  const TensorId position_ids = b.input({P, S}, DType::i64);
  const TensorId mask = inf ? inference_mask(b, 0, b.dtype(inputs_embeds))
                            : eager_mask(b, 1, S, S, b.dtype(inputs_embeds));
  b.hold(mask);
  TensorId h = b.dropout(inputs_embeds, s.embd_dropout);

  TensorId prev_weights = kNoTensor;  // the previous block's attn_weights, held by `outputs`
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Layer& w = mp.layers[static_cast<size_t>(i)];
    b.begin_layer("transformer.h." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId block_in = h;
    b.hold(block_in);  // `residual` holds the block input until the block returns
    const TensorId n = b.layer_norm(h, w.ln_w, w.ln_b);
    b.hold(n);
    TensorId weights = kNoTensor;
    const TensorId a = attention(w, n, position_ids, mask, weights);
    b.hold(a);
    const TensorId m = fc_act_proj_mlp(b, s, n, w.fc_in, w.fc_in_b, w.fc_out, w.fc_out_b);
    b.hold(m);
    h = b.add(b.add(a, m), h);  // attn_outputs + feed_forward_hidden_states + residual
    b.drop(n);
    b.drop(a);
    b.drop(m);
    if (block_in != inputs_embeds) b.drop(block_in);
    b.end_layer();
    if (prev_weights != kNoTensor) b.drop(prev_weights);  // `outputs = block(...)` rebinds once the block returns
    prev_weights = weights;
  }
  const TensorId hf = gpt_final_norm(b, h, mp.lnf_w, mp.lnf_b, {inputs_embeds, mask, prev_weights});
  causal_lm_head_forward(b, s, hf, wte, head, ids, head_b);
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
