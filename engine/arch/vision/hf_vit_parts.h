// The pieces of transformers' ViTForImageClassification (engine/arch/vision/hf_vit.cpp) that DeiT's classifier
// (engine/arch/vision/hf_deit.cpp) runs unchanged: models/deit/modeling_deit.py's DeiTLayer, DeiTAttention,
// DeiTMLP, DeiTModel's final layernorm and DeiTForImageClassification's head are ViT's statements with the names
// changed (DeiT differs in its embeddings only). Defined in hf_vit.cpp.
#pragma once
#include <string>

#include "engine/arch/spec.h"
#include "engine/graph_builder.h"

namespace memplan::hfvit {

struct VitLinear {
  TensorId w = kNoTensor, b = kNoTensor;  // b: kNoTensor without bias
};
// nn.Linear(in, out, bias): weight [out, in] then bias [out], trainable when `train`.
VitLinear vit_linear(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool bias, bool train);

struct VitLayerParams {
  VitLinear q, k, v, o, fc1, fc2;
  TensorId ln1_w, ln1_b, ln2_w, ln2_b;
};
// One layer's parameters in ViTLayer.__init__ order: attention (q, k, v, o projections), layernorm_before,
// layernorm_after, mlp (fc1, fc2); names under prefix `p` (ending in '.'). The q / k / v biases are qkv_bias's,
// but the key's is `key_bias` (BEiT's k_proj has none while q_proj / v_proj do).
VitLayerParams vit_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train,
                                bool key_bias);

// The attention module over the normed input x [B, S, H] as transformers 5.17 writes ViT's and BEiT's (q, k, v
// projections viewed [B, heads, S, hd], the attention interface: SDPA or eager_attention_forward, reshape, o
// projection): returns the o projection's output. `mask` ([1 or B, heads, S, S], kNoTensor: none) is the additive
// attention_mask (BEiT's relative position bias). `weights` receives eager attention's probabilities, which the
// caller binds as its layer's `_` until the layer returns; kNoTensor for SDPA. Defined in hf_vit.cpp.
TensorId vit_attention(GraphBuilder& b, const TransformerSpec& s, const VitLinear& wq, const VitLinear& wk,
                       const VitLinear& wv, const VitLinear& wo, TensorId x, TensorId mask, TensorId& weights);

// ViTLayer.forward on h [B, S, H] (S = RunConfig::seq_len) as one layer region `name`: pre-LN attention (sdpa or
// eager per RunConfig::attn), dropout, residual; pre-LN gelu MLP, dropout, residual. Returns the layer's output.
// The caller's loop variable holds h until the layer returns (held here).
TensorId vit_layer(GraphBuilder& b, const TransformerSpec& s, const VitLayerParams& w, const std::string& name,
                   bool checkpointed, TensorId h);

// After the last layer's output h: the model's final layernorm (h and `embedding_output` released after it, when
// the model's forward returns), the classifier on the first token, cross entropy against `labels`; marks the
// model's end, exits autocast and sets the loss.
// The whole ViTForImageClassification training graph, or DeiTForImageClassification's with `distillation`
// (engine/arch/vision/hf_vit.cpp); `type` ("vit", "deit") prefixes the parameters and names the model in messages.
void build_vit_classifier(GraphBuilder& b, const TransformerSpec& s, const std::string& type,
                          const std::string& cls_name, bool distillation);
void vit_tail(GraphBuilder& b, TensorId h, TensorId embedding_output, TensorId lnf_w, TensorId lnf_b, TensorId cls_w,
              TensorId cls_b, TensorId labels);

}  // namespace memplan::hfvit
