// Cohere2ForCausalLM (transformers 5.17 models/cohere2/modeling_cohere2.py; Command R7B, Command A), training
// forward + causal-LM loss or one inference pass (generate() with the DynamicCache).
//   Cohere2Model.forward: embed_tokens -> DynamicCache(config) -> causal_mask_mapping: create_causal_mask and
//   create_sliding_window_causal_mask, both always (builders.h full_and_sliding_masks) -> Cohere2RotaryEmbedding
//   (cohere's: fp32, repeat_interleave, cast to the hidden dtype) -> N x Cohere2DecoderLayer -> norm.
//   Cohere2DecoderLayer is CohereDecoderLayer (parallel attention + MLP after one LayerNorm without bias,
//   cohere_parts.h cohere_parallel_layer). Cohere2Attention is CohereAttention without q / k norms, except that
//   apply_rotary_pos_emb runs only where self.sliding_window is set, i.e. on the "sliding_attention" layers: the
//   full-attention layers take no positional rotation, their transposed q / k views go to the attention as they
//   are. Sliding layers read the sliding mask and keep a DynamicSlidingWindowLayer in the cache (its kept
//   states are a slice of the full cat output: kv_update), full layers the full mask and a DynamicLayer.
//   Cohere2ForCausalLM: logits = lm_head(h) * logit_scale (tied head by default).
// Layer types: config.layer_types, else sliding unless (i + 1) % sliding_window_pattern == 0 (importer).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/cohere_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_cohere2(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.qk_layernorm) throw InputError("model.qk_layernorm", "true", "cohere2 has no q / k norms");
  if (s.num_experts > 0) throw InputError("model.num_experts", std::to_string(s.num_experts), "cohere2 has no experts");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  if (static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (hd % 2 != 0) throw InputError("model.head_dim", std::to_string(hd), "must be even (rotate_half pairs dimensions)");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // causal_mask_mapping: both masks are made whatever the layer types, before the rotary embedding.
  const auto [mask, sliding_mask] = cohere2_masks(b, s, b.dtype(h));
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  b.hold(inputs_embeds);  // bound until the model's forward returns, as are cos / sin
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const CohereLayer w = cohere_layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
    const bool sliding = layer_is_sliding(s, i);
    h = cohere_parallel_layer(b, s, w, h, cos, sin, sliding ? sliding_mask : mask, sliding ? s.sliding_window : 0,
                              sliding);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = cohere_layer_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, sliding_mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, false, cohere_logit_scale);
}

}  // namespace memplan
