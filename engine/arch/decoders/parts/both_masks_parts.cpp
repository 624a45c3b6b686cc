// build_both_masks_causal_lm (both_masks_parts.h): the statements MinistralModel.forward and CwmModel.forward share,
// moved here from ministral.cpp unchanged.
#include "engine/arch/decoders/parts/both_masks_parts.h"

#include <string>

#include "engine/arch/decoders/parts/cohere_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

void build_both_masks_causal_lm(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // causal_mask_mapping: both masks, whatever the layer types, before the rotary embedding.
  const CausalMasks masks = cohere2_masks(b, s, b.dtype(h));
  const TensorId full_m = masks.full, sliding_m = masks.sliding;
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);  // bound until the model's forward returns, as are cos / sin
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const LlamaDecoderParams d = llama_decoder_params(b, s, p, !layer_frozen(cfg, i));
    const bool sliding = layer_is_sliding(s, i);
    const TensorId m = sliding ? sliding_m : full_m;
    const int64_t window = sliding ? s.sliding_window : 0;
    h = llama_decoder_layer(b, s, i, d, h, inputs_embeds, [&](TensorId x, TensorId& weights) {
      return llama_attention(b, s, d.attn, x, cos, sin, m, window, weights);
    });
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, full_m, sliding_m})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
