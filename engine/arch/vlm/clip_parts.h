// The pieces CLIPModel (clip.cpp) and SiglipModel / Siglip2Model (siglip.cpp) share: transformers 5.17's
// CLIPEncoderLayer, SiglipEncoderLayer and Siglip2EncoderLayer run the same statements (pre-LN attention with
// q / k / v / out projections, residual, pre-LN MLP fc1 -> act -> fc2, residual); only their parameter registration
// order differs. Defined in clip_parts.cpp.
#pragma once
#include <string>

#include "engine/arch/spec.h"
#include "engine/graph_builder.h"

namespace memplan::clip {

// One tower's widths (text: the TransformerSpec's main fields; vision: its vision_* fields).
struct Tower {
  int64_t hidden = 0, heads = 0, head_dim = 0, inter = 0, layers = 0;
  std::string act;  // quick_gelu | gelu | gelu_pytorch_tanh
  bool float_mask = false;  // the encoder's mask is additive float (mllama's aspect-ratio mask), not bool
};
Tower text_tower(const TransformerSpec& s);
Tower vision_tower(const TransformerSpec& s);

struct Lin {
  TensorId w = kNoTensor, b = kNoTensor;
};
// nn.Linear(in, out, bias): weight [out, in], then bias [out]. `train`: as GraphBuilder::param's trainable.
Lin linear_params(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool bias, bool train = true);
TensorId apply(GraphBuilder& b, const Lin& l, TensorId x);

struct LayerParams {
  Lin q, k, v, o, fc1, fc2;
  TensorId ln1_w = kNoTensor, ln1_b = kNoTensor, ln2_w = kNoTensor, ln2_b = kNoTensor;
  // MllamaVisionEncoderLayer(is_gated=True): `gate.tanh() * h` on the attention's and the MLP's output before each
  // residual add (a [1] tanh saving its result, then a product promoting to the gate's dtype, saving both operands).
  TensorId gate_attn = kNoTensor, gate_ffn = kNoTensor;
};
// One encoder layer's parameters under prefix `p` (ending in '.'): CLIP order (self_attn (k, v, q, out_proj),
// layer_norm1, mlp, layer_norm2) or, with `siglip_order`, SigLIP's (layer_norm1, self_attn, layer_norm2, mlp).
// `train`: false for a tower no gradient reaches (llava's dead layers, a text-only step).
LayerParams layer_params(GraphBuilder& b, const Tower& t, const std::string& p, bool siglip_order, bool train = true);

// ACT2FN[act] on x: quick_gelu is QuickGELUActivation's `input * torch.sigmoid(1.702 * input)` (three kernels:
// the scaled copy, dead after the sigmoid, which saves its output; the product saves both operands); gelu and
// gelu_pytorch_tanh one kernel saving its input.
TensorId activation(GraphBuilder& b, const std::string& act, TensorId x);

// The encoder layer's forward on h [B, S, H] as layer region `name`. `causal`: SDPA runs is_causal (CLIP's text
// tower: create_causal_mask returns None and the encoder passes is_causal=True); `mask`: the attention mask the
// encoder passes (eager: an additive float mask added to the scores; SDPA: a bool mask, kNoTensor when skipped).
// The encoder's loop variable holds the layer's input until the layer returns (held here).
TensorId encoder_layer(GraphBuilder& b, const Tower& t, const LayerParams& w, const std::string& name,
                       bool checkpointed, TensorId h, TensorId mask, bool causal, bool strided = false);
// `strided`: the residual stream keeps the transposed layout of the conv's flatten(2).transpose(1, 2) (siglip: the
// embeddings add and every `residual + h` after it preserve their first operand's strides), so each LayerNorm
// makes a contiguous copy of its input (native_layer_norm's expect_contiguous; the whole-run inference stream shows
// a [B, N, H] block allocated and freed at each of the two norms of every layer).

// _get_vector_norm (clip: pow(2), sum(-1, keepdim), pow(0.5)) or .norm(p=2, dim=-1, keepdim=True) (siglip), then
// x / norm. Returns the normalised embeddings.
TensorId normalise(GraphBuilder& b, TensorId x, bool clip_style);

// Refuses (InputError naming the field) what the contrastive builders do not replay: LoRA / quantization, frozen
// layers or embeddings, a subset of checkpointed layers, a task other than the contrastive loss, captions longer
// than the position table. `type` names the model_type.
void check_run(const GraphBuilder& b, const TransformerSpec& s, const std::string& type);

}  // namespace memplan::clip
