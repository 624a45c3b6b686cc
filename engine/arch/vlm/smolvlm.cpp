// SmolVLMForConditionalGeneration (transformers 5.17 models/smolvlm/modeling_smolvlm.py, generated from
// modular_smolvlm.py): Idefics3's vision transformer, connector, Llama text model and head (idefics3.cpp), with
// SmolVLMModel.inputs_merger in place of the masked_scatter:
//   image_mask = input_ids == image_token_id; per-sample block counts (sum // tokens per sub-image), their padded
//   cumsum; row_cum = image_mask.cumsum(-1); chunk_idx / local_idx / block_idx ([B, S] int64);
//   image_embeds = zeros_like(inputs_embeds); image_embeds[image_mask] = features[block_idx[image_mask],
//   local_idx[image_mask], :] (a [K, H] gather, a boolean index_put_ in place);
//   merged = torch.where(image_mask.unsqueeze(-1), image_embeds, inputs_embeds).
// The index_put_ does not promote: under autocast the 16-bit projected features meet the fp32 embeddings and it
// raises (transformers PR #41485 was open against 5.x): refused with images under amp. get_image_features keeps one
// image when every image is padding (real_images_inds[0] |= ~any): small ops.
#include "engine/arch/vlm/idefics_parts.h"

namespace memplan {

void build_smolvlm(GraphBuilder& b, const TransformerSpec& s) { idefics::build(b, s, idefics::Merger::index_where); }

}  // namespace memplan
