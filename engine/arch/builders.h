// Architecture builders: ModelSpec + RunConfig -> Graph of one forward pass plus loss, mirroring the model code
// that runs (transformers 5.17 modeling files, torchvision 0.26), op by op, with its Python variable lifetimes.
//
// Arithmetic: builders multiply single dimensions (batch x seq, 3 x hidden, heads x head_dim) unchecked; that
// is safe because estimate() runs check_limits (engine/limits.h) first, which bounds every such product far
// below 2^63. Element counts and bytes of whole tensors go through checked_mul in GraphBuilder.
#pragma once
#include "engine/arch/spec.h"
#include "engine/graph.h"
#include "engine/graph_builder.h"
#include "engine/run_config.h"

namespace memplan {

Graph build_graph(const ModelSpec& spec, const RunConfig& cfg);

// Per-family builders; each appends to `b` and sets the loss.
void build_gpt2(GraphBuilder& b, const TransformerSpec& s);
void build_llama(GraphBuilder& b, const TransformerSpec& s);
void build_bert(GraphBuilder& b, const TransformerSpec& s);
void build_resnet(GraphBuilder& b, const VisionSpec& s);
void build_vit(GraphBuilder& b, const VisionSpec& s);

// Shared pieces of HF causal LMs.
// ForCausalLMLoss: logits.float(), labels padded by one and shifted (.contiguous()), cross entropy (mean).
TensorId causal_lm_loss(GraphBuilder& b, TensorId logits, TensorId labels);
// LlamaRMSNorm as written in Python: x.to(f32), pow(2).mean(-1), x * rsqrt(var + eps), weight * x.to(input dtype),
// one kernel per step. Shared by llama.cpp and native graphs' rms_norm.
TensorId rms_norm(GraphBuilder& b, TensorId x, TensorId w);
// Whether layer `i` is activation-checkpointed / frozen under `cfg`.
bool layer_checkpointed(const RunConfig& cfg, int64_t i);
bool layer_frozen(const RunConfig& cfg, int64_t i);

}  // namespace memplan
