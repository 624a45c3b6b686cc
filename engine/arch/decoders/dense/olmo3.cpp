// Olmo3ForCausalLM (transformers 5.17 models/olmo3/modeling_olmo3.py; OLMo-3 7B / 32B), training forward + causal-LM
// loss or one inference pass (generate() with the DynamicCache).
//   Olmo3Model.forward: embed_tokens -> DynamicCache(config) -> causal_mask_mapping: create_causal_mask and
//   create_sliding_window_causal_mask, both on every forward whatever the layer types (builders.h
//   full_and_sliding_masks; in generate() the sliding SDPA mask is nested once more: olmo2_parts.h
//   causal_mask_mapping) -> one rotary embedding call per layer type in set(config.layer_types), each returning
//   its own fp32 cos / sin (olmo2's rotary code, inv_freq per type; the types' rope parameters change values, not
//   sizes) -> N x Olmo3DecoderLayer -> norm -> lm_head.
//   Olmo3DecoderLayer, Olmo3Attention, Olmo3RMSNorm and Olmo3MLP are olmo2's statement for statement
//   (olmo2_parts.h): post-norm blocks, q / k RMSNorm over the whole projection, fp32 rotary cast back. A layer
//   reads its type's mask and cos / sin; sliding layers keep a DynamicSlidingWindowLayer in the cache (kv_update
//   with the window), full layers a DynamicLayer. sdpa_attention_forward ignores the sliding_window kwarg: the
//   window reaches SDPA through the mask alone (with a mask, repeat_kv materialises grouped K / V).
// Layer types: config.layer_types, else sliding unless (i + 1) % 4 == 0 (importer).
#include "engine/arch/builders.h"

#include <algorithm>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/olmo2_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_olmo3(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  if (static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (hd % 2 != 0)
    throw InputError("model.head_dim", std::to_string(hd), "must be even (rotate_half pairs dimensions)");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  const auto [mask, sliding_mask] = causal_mask_mapping(b, s, b.dtype(h));
  // position_embeddings[layer_type] for each type present, fp32 (no cast to the hidden dtype), held until the
  // model's forward returns. The set's iteration order depends on the process's string hashing; the two calls
  // allocate the same sizes.
  const bool any_full = std::find(s.sliding_layers.begin(), s.sliding_layers.end(), 0) != s.sliding_layers.end();
  const bool any_sliding = std::find(s.sliding_layers.begin(), s.sliding_layers.end(), 1) != s.sliding_layers.end();
  std::pair<TensorId, TensorId> full_cs{kNoTensor, kNoTensor}, sliding_cs{kNoTensor, kNoTensor};
  if (any_full) full_cs = rotary_cos_sin(b, P, S, hd, DType::f32);
  if (any_sliding) sliding_cs = rotary_cos_sin(b, P, S, hd, DType::f32);
  b.hold(inputs_embeds);
  const std::vector<TensorId> rotary = {full_cs.first, full_cs.second, sliding_cs.first, sliding_cs.second};
  for (TensorId t : rotary)
    if (t != kNoTensor) b.hold(t);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const Olmo2Layer w = olmo2_layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const bool sliding = layer_is_sliding(s, i);
    const auto& cs = sliding ? sliding_cs : full_cs;
    h = olmo2_decoder_layer(b, s, w, h, inputs_embeds, cs.first, cs.second, sliding ? sliding_mask : mask,
                            sliding ? s.sliding_window : 0, /*unbatched_eager_views=*/true);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = olmo2_rms_norm(b, h, b.param("norm.weight", {H}, emb_train), false);
  for (TensorId t : {h, inputs_embeds, mask, sliding_mask})
    if (t != kNoTensor) b.drop(t);
  for (TensorId t : rotary)
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
