// Ministral3ForCausalLM (transformers 5.17 models/ministral3/modeling_ministral3.py; the text model of Ministral 3,
// Devstral 2 and Mistral Medium 3.5): Llama's decoder (llama_parts.h: the projections and head views, apply_rotary_
// pos_emb, the attention from the cache update on, the residual blocks, the SwiGLU MLP, the causal-LM tail) with one
// statement more in Ministral3Attention.forward, between the rotary embedding and the cache update:
//   query_states = query_states * get_llama_4_attn_scale(positions, llama_4_scaling_beta,
//                                                        original_max_position_embeddings).to(query_states.dtype)
// a product that rebinds query_states (the rotated q dies there; its backward keeps only the small factor), the
// factor built from the integer positions as fp32 temporaries (1 + beta * log(1 + floor(pos / max))). The factor's
// value grows past original_max_position_embeddings, its memory does not: the statement runs at every length.
// Stages: embed_tokens -> position_ids (arange + past) -> causal mask(s) -> rotary cos / sin -> N x decoder layer
// -> norm -> lm_head -> loss (training) or the last logits (inference). Sliding-window layers (config.sliding_window
// set) follow Mistral's masks, as build_llama writes them.
#include <tuple>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"

namespace memplan {

namespace {

TensorId no_grad(GraphBuilder& b, std::string_view name, Shape shape, DType t, std::vector<TensorId> reads = {}) {
  return b.generic({name, std::move(reads), {{std::move(shape), t}}, {}, {}, {}, {}})[0];
}

// get_llama_4_attn_scale(positions, beta, max)[..., None]-shaped factor cast to the query's dtype: 1 + beta *
// log(1 + floor(positions / max)), each operator an fp32 [P, S] temporary (integer positions: no autograd), viewed
// [P, 1, S, 1], then .to(dt) (a copy unless fp32).
TensorId llama4_attn_scale(GraphBuilder& b, TensorId positions, int64_t P, int64_t S, DType dt) {
  TensorId x = positions;
  for (const char* op : {"div", "floor", "add_scalar", "log", "mul_scalar", "add_scalar"})
    x = no_grad(b, op, {P, S}, DType::f32, {x});
  return b.to(b.view(x, {P, 1, S, 1}), dt);
}

// Ministral3Attention.forward on the normed input x.
TensorId ministral3_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                              TensorId cos, TensorId sin, TensorId positions, int64_t P, TensorId mask,
                              int64_t window, TensorId& weights) {
  const int64_t S = b.training() ? b.config().seq_len : b.pass().new_tokens;
  auto [q, k, v] = llama_qkv_views(b, s, w, x, mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);
  const TensorId qs = b.mul(qe, llama4_attn_scale(b, positions, P, S, b.dtype(qe)));
  b.hold(qs);
  b.drop(qe);
  if (b.config().attn == AttnImpl::eager)
    return eager_attention_o_proj(b, s, qs, ke, v, v_proj, mask, window, w.o, w.ob, weights);
  return attention_o_proj(b, s, qs, ke, v, v_proj, mask, window, w.o, w.ob, weights);
}

}  // namespace

void build_ministral3(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {s.vocab_size, H}, emb_train);
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  TensorId positions = P > 1 ? b.input({B, S}, DType::i64) : kNoTensor;  // generate() passes position_ids
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  if (P == 1)  // position_ids = torch.arange(S) + past_seen_tokens (the arange dies once the sum exists)
    positions = no_grad(b, "add", {1, S}, DType::i64, {no_grad(b, "arange", {S}, DType::i64)});
  b.hold(positions);
  // The masks (create_causal_mask, or create_sliding_window_causal_mask when config.sliding_window is set), as
  // build_llama makes them.
  TensorId mask = kNoTensor;
  const bool sliding = s.sliding_window > 0;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, 1, S, S, b.dtype(h));
    } else if (sliding && S >= s.sliding_window) {
      mask = b.generic({"sdpa_mask", {}, {{{1, 1, S, S}, DType::boolean}}, {}, {}, {S * S}, {}})[0];
    }
  } else {
    mask = sliding ? inference_mask(b, s.sliding_window, b.dtype(h)) : inference_mask(b, 0, b.dtype(h));
  }
  if (mask != kNoTensor) b.hold(mask);
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const LlamaDecoderParams d = llama_decoder_params(b, s, p, !layer_frozen(cfg, i));
    h = llama_decoder_layer(b, s, i, d, h, inputs_embeds, [&](TensorId x, TensorId& weights) {
      return ministral3_attention(b, s, d.attn, x, cos, sin, positions, P, mask, sliding ? s.sliding_window : 0,
                                  weights);
    });
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, positions})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
