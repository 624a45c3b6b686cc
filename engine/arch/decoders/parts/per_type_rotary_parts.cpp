#include "engine/arch/decoders/parts/per_type_rotary_parts.h"

#include <string>
#include <utility>

#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

void per_type_rotary_buffers(GraphBuilder& b, bool any_full, bool any_sliding, int64_t full_rot, int64_t sliding_rot) {
  for (const bool sliding : {false, true}) {
    if (!(sliding ? any_sliding : any_full)) continue;
    const int64_t rot = sliding ? sliding_rot : full_rot;
    const std::string t = sliding ? "sliding_attention" : "full_attention";
    b.buffer("model.rotary_emb." + t + "_inv_freq", {rot / 2}, DType::f32);
    b.buffer("model.rotary_emb." + t + "_original_inv_freq", {rot / 2}, DType::f32);
  }
}

PerTypeRotaryInputs per_type_rotary_inputs(GraphBuilder& b, const TransformerSpec& s, TensorId embed, bool any_full,
                                           bool any_sliding, int64_t full_rot, int64_t sliding_rot) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len;
  PerTypeRotaryInputs in;
  in.ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);  // generate()'s attention mask
  in.inputs_embeds = b.embedding(in.ids, embed);
  if (P == 1) {  // position_ids = arange(S) + past_seen_tokens, unsqueezed; the arange dies once the sum exists
    const TensorId ar = b.generic({"arange", {}, {{{S}, DType::i64}}, {}, {}, {}, {}})[0];
    in.position_ids = b.generic({"add", {ar}, {{{1, S}, DType::i64}}, {}, {}, {}, {}})[0];
    b.hold(in.position_ids);
  }
  in.masks = full_and_sliding_masks(b, s, any_full, any_sliding, b.dtype(in.inputs_embeds));
  in.ctx.full_mask = in.masks.full;
  in.ctx.sliding_mask = in.masks.sliding;
  for (const bool sliding : {false, true}) {
    if (!(sliding ? any_sliding : any_full)) continue;
    const int64_t rot = sliding ? sliding_rot : full_rot;
    const std::pair<TensorId, TensorId> cs = rotary_cos_sin(b, P, S, rot, b.dtype(in.inputs_embeds));
    b.hold(cs.first);  // position_embeddings[type]: bound until the model returns
    b.hold(cs.second);
    in.tables.push_back(cs.first);
    in.tables.push_back(cs.second);
    (sliding ? in.ctx.sliding_cos : in.ctx.full_cos) = cs.first;
    (sliding ? in.ctx.sliding_sin : in.ctx.full_sin) = cs.second;
  }
  b.hold(in.inputs_embeds);  // bound until the model's forward returns
  return in;
}

void release_per_type_rotary_inputs(GraphBuilder& b, TensorId h, const PerTypeRotaryInputs& in) {
  for (TensorId t : {h, in.inputs_embeds, in.masks.full, in.masks.sliding, in.position_ids})
    if (t != kNoTensor) b.drop(t);
  for (TensorId t : in.tables) b.drop(t);
}

}  // namespace memplan
