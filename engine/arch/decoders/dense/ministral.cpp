// MinistralForCausalLM (transformers 5.17 models/ministral/modeling_ministral.py; Ministral-8B-Instruct-2410), training
// forward + causal-LM loss or one inference pass. modular_ministral.py builds it from Qwen2's classes: Qwen2's
// decoder layer, RMSNorm, rotary embedding and SwiGLU MLP (llama_parts.h, the same statements as Llama's), with
// MinistralAttention = Qwen2Attention without the q / k / v biases and a per-layer window
// (config.layer_types[i] == "sliding_attention" => config.sliding_window, else None). What differs in memory from
// the mistral / qwen2 builds (build_llama) is MinistralModel.forward's causal_mask_mapping: it calls
// create_causal_mask AND create_sliding_window_causal_mask on every forward, whatever layer_types holds (Qwen2Model
// makes the sliding one only with sliding layers, MistralModel makes one of the two), before the rotary embedding,
// both held until the model's forward returns. These are Cohere2Model's statements (cohere_parts.h cohere2_masks:
// full_and_sliding_masks, but inside generate() the sliding SDPA mask is sdpa_mask's and_masks(mask_function,
// padding_mask_function) around sliding_window_causal_mask_function's own and_masks: one more [1, 1, q, kv] bool). Each layer then reads its type's
// mask and, in inference, keeps a DynamicSlidingWindowLayer (sliding) or a DynamicLayer (full) in the cache.
// The ministral3 type (Ministral 3, ministral3.cpp) is a different class: Llama's layers with a position-scaled
// query and one mask kind; this one has no query scaling.
// Stages: embed_tokens -> position_ids -> both masks -> rotary cos / sin (in the hidden dtype) -> N x decoder layer
// -> norm -> lm_head -> loss (training) or the last logits (inference).
#include "engine/arch/builders.h"

#include <string>

#include "engine/arch/decoders/parts/cohere_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_ministral(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.num_experts > 0) throw InputError("model.num_experts", std::to_string(s.num_experts), "ministral has no experts");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  if (static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (hd % 2 != 0) throw InputError("model.head_dim", std::to_string(hd), "must be even (rotate_half halves it)");
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
