// Olmo3ForCausalLM (transformers 5.17 models/olmo3/modeling_olmo3.py; OLMo-3 7B / 32B), training forward + causal-LM
// loss or one inference pass (generate() with the DynamicCache).
//   Olmo3Model.forward: embed_tokens -> DynamicCache(config) -> causal_mask_mapping: create_causal_mask and
//   create_sliding_window_causal_mask, both on every forward whatever the layer types (builders.h
//   full_and_sliding_masks; in generate() the sliding SDPA mask is nested once more, olmo3_masks) -> one rotary
//   embedding call per layer type in set(config.layer_types), each returning its own fp32 cos / sin (olmo2's
//   rotary code, inv_freq per type; the types' rope parameters change values, not sizes) -> N x Olmo3DecoderLayer
//   -> norm -> lm_head.
//   Olmo3DecoderLayer, Olmo3Attention, Olmo3RMSNorm and Olmo3MLP are olmo2's statement for statement
//   (olmo2_parts.h): post-norm blocks, q / k RMSNorm over the whole projection, fp32 rotary cast back. A layer
//   reads its type's mask and cos / sin; sliding layers keep a DynamicSlidingWindowLayer in the cache (kv_update
//   with the window), full layers a DynamicLayer. sdpa_attention_forward ignores the sliding_window kwarg: the
//   window reaches SDPA through the mask alone (with a mask, repeat_kv materialises grouped K / V).
// Layer types: config.layer_types, else sliding unless (i + 1) % 4 == 0 (importer).
#include "engine/arch/builders.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/olmo2_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// create_sliding_window_causal_mask's SDPA bool mask where generate() passes its attention mask (rows = B):
// sdpa_mask wraps and_masks(sliding_window_overlay, causal_mask_function) in and_masks(mask_function,
// padding_mask_function), so the outer `ones(()) & inner` is one more fresh [1, 1, q, kv] bool before the
// [rows, 1, q, kv] & with the padding gather (model-independent masking_utils code; the same statements as
// cohere2.cpp's and phi_parts.cpp's nested masks). Without rows > 1 builders.h sliding_sdpa_mask applies.
TensorId nested_sliding_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv) {
  if (rows <= 1) return sliding_sdpa_mask(b, rows, q, kv);
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::boolean}}, {}, {}, {}, {}})[0];
  };
  TensorId r = op("and", {op("gt", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  r = op("and", {r, op("le", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  r = op("and", {r}, {1, 1, q, kv});
  return op("and", {r, op("index", {}, {rows, 1, 1, kv})}, {rows, 1, q, kv});
}

// eager_mask for the sliding mask: eager_mask's sdpa_mask(allow_is_causal_skip=False) evaluates the same
// and_masks as SDPA's, so the [rows, 1, q, kv] bool is built by nested_sliding_mask's ops, then the float
// [B, 1, q, kv] additive mask is made from it and the bool freed (whole-run f17-olmo3sw-fp32-b1s1024-eager stream:
// 1 MiB a f a a f f, then the 4 MiB float mask and the bool's free).
TensorId eager_sliding_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv, DType dtype) {
  const TensorId allowed = nested_sliding_mask(b, rows, q, kv);
  return b.generic({"causal_mask", {allowed}, {{{b.config().batch_size, 1, q, kv}, dtype}}, {}, {}, {}, {}})[0];
}

// causal_mask_mapping, both masks always (builders.h full_and_sliding_masks's cases), with the sliding mask built
// by the ops above: eager's float mask from eager_sliding_mask, and an inference pass's SDPA mask by
// nested_sliding_mask (skipped as inference_sliding_mask decides).
CausalMasks olmo3_masks(GraphBuilder& b, const TransformerSpec& s, DType model_dtype) {
  const bool eager = b.config().attn == AttnImpl::eager;
  if (b.training() && !eager) return full_and_sliding_masks(b, s, true, true, model_dtype);
  CausalMasks m;
  const int64_t w = s.sliding_window;
  if (b.training()) {
    const int64_t S = b.config().seq_len;
    m.full = eager_mask(b, 1, S, S, model_dtype);
    m.sliding = eager_sliding_mask(b, 1, S, S, model_dtype);
  } else {
    m.full = inference_mask(b, 0, model_dtype);
    const auto& p = b.pass();
    const int64_t kv = std::min(p.past_len, w - 1) + p.new_tokens, rows = p.from_generate ? b.config().batch_size : 1;
    const bool skip = (p.new_tokens == 1 || kv == p.new_tokens) && kv < w;  // as inference_sliding_mask decides
    if (eager)
      m.sliding = eager_sliding_mask(b, rows, p.new_tokens, kv, model_dtype);
    else if (!skip)
      m.sliding = nested_sliding_mask(b, rows, p.new_tokens, kv);
  }
  for (TensorId t : {m.full, m.sliding})
    if (t != kNoTensor) b.hold(t);
  return m;
}

}  // namespace

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
  const auto [mask, sliding_mask] = olmo3_masks(b, s, b.dtype(h));
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
