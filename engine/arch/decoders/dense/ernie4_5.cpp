// Ernie4_5ForCausalLM (transformers 5.17 models/ernie4_5/modeling_ernie4_5.py), training forward + causal-LM loss
// or one inference pass.
//   embed_tokens -> causal mask -> rotary cos / sin *kept in fp32* [P, S, D] (Ernie4_5RotaryEmbedding.forward
//   returns them without the cast to x.dtype) -> N x DecoderLayer (Llama's: input_layernorm, attention, residual,
//   post_attention_layernorm, SwiGLU MLP, residual) -> norm -> lm_head (tied by default) -> loss.
//   config.use_bias puts a bias on q / k / v / o and on the three MLP projections (nn.Linear order).
//   apply_rotary_pos_emb differs from Llama's (interleaved pairs, computed in fp32):
//     cos = cos.unsqueeze(1)[..., :D/2].repeat_interleave(2, -1)   a fresh fp32 [P, 1, S, D], per layer call
//     sin likewise
//     q_embed = (q.float() * cos) + (rotate_half(q).float() * sin)  rotate_half: stack(-x[..., 1::2],
//                                   x[..., 0::2], -1).flatten(-2), the same bytes as Llama's cat of halves
//     k_embed likewise
//     return q_embed.to(dtype), k_embed.to(dtype)                 both fp32 results live until both casts exist
//   The products save only cos / sin (q does not need them), so the fp32 copies are transients of the statement;
//   under fp32 models .float() and .to() return the tensor itself.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/ernie_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// (x.float() * cos) + (rotate_half(x).float() * sin), fp32: each temporary dies with its statement.
TensorId ernie_rope(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  TensorId a = b.mul(b.to(x, DType::f32), cos);
  TensorId c = b.mul(b.to(rotate_half(b, x), DType::f32), sin);
  return b.add(a, c);
}

}  // namespace

// Ernie4_5Attention.forward on the normed input x. `weights`: eager attention's probabilities, held (ernie_parts.h).
TensorId ernie_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                         TensorId cos, TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, hd = s.head_dim;
  const int64_t P = b.shape(cos)[0];
  auto [q, k, v] = llama_qkv_views(b, s, w, x, mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);
  b.hold(k);
  const DType q_dt = b.dtype(q), k_dt = b.dtype(k);
  // apply_rotary_pos_emb's locals: the interleaved cos / sin, then q_embed / k_embed in fp32 until it returns.
  TensorId cos_i = b.generic_one("repeat_interleave", {cos}, {P, 1, S, hd}, DType::f32);
  b.hold(cos_i);
  TensorId sin_i = b.generic_one("repeat_interleave", {sin}, {P, 1, S, hd}, DType::f32);
  b.hold(sin_i);
  TensorId qe32 = ernie_rope(b, q, cos_i, sin_i);
  b.hold(qe32);
  TensorId ke32 = ernie_rope(b, k, cos_i, sin_i);
  b.hold(ke32);
  TensorId qe = b.to(qe32, q_dt);
  b.hold(qe);  // query_states / key_states until the attention module returns
  TensorId ke = b.to(ke32, k_dt);
  b.hold(ke);
  if (qe32 != qe) b.drop(qe32);  // fp32 models: .to() returns the tensor itself, bound as query_states
  if (ke32 != ke) b.drop(ke32);
  b.drop(cos_i);
  b.drop(sin_i);
  b.drop(q);
  b.drop(k);
  TensorId out = attention_o_proj(b, s, qe, ke, v, v_proj, mask, 0, w.o, w.ob, weights);
  return out;
}

void build_ernie4_5(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "ernie4_5 has no sliding-window attention or experts");
  if (hd % 2 != 0)
    throw InputError("model.head_dim", std::to_string(hd), "must be even (the rotary embedding pairs dimensions)");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // create_causal_mask (held), before the rotary embedding: the full mask of full_and_sliding_masks.
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, DType::f32);
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const LlamaDecoderParams d = llama_decoder_params(b, s, p, !layer_frozen(cfg, i));
    h = llama_decoder_layer(b, s, i, d, h, inputs_embeds, [&](TensorId x, TensorId& weights) {
      return ernie_attention(b, s, d.attn, x, cos, sin, mask, weights);
    });
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
