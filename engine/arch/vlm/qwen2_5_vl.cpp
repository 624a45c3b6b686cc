// Qwen2_5_VLForConditionalGeneration (transformers 5.17 models/qwen2_5_vl/modeling_qwen2_5_vl.py): Qwen2-VL's model
// (engine/arch/vlm/qwen2_vl.cpp, qwen_vl_parts.h) with another vision tower.
//   Vision blocks: Qwen2_5_VLRMSNorm (LlamaRMSNorm's statements) for norm1 / norm2, Qwen2_5_VLMLP (gate / up / down
//   with biases, silu(gate) * up); the attention as Qwen2-VL's, over windows of window_size / patch / merge merged
//   tokens a side except in the fullatt_block_indexes blocks (one call per image frame there).
//   The window order: get_vision_window_index (on the host) orders the merge blocks window by window; the patch
//   embeddings are gathered into that order (a copy whose backward scatters into a zero-filled tensor), cos / sin
//   too (copies, no gradient); after the merger (RMSNorm ln_q), merged[argsort(window_index)] gathers the tokens
//   back into image order.
#include "engine/arch/vlm/qwen_vl_parts.h"

namespace memplan {

void build_qwen2_5_vl(GraphBuilder& b, const TransformerSpec& s) { qwenvl::build_qwen_vl(b, s, {true}); }

}  // namespace memplan
