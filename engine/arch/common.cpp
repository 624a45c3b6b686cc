#include <algorithm>

#include "engine/arch/builders.h"
#include "engine/arch/native.h"
#include "engine/errors.h"

namespace memplan {

bool layer_checkpointed(const RunConfig& cfg, int64_t i) {
  if (!cfg.grad_checkpointing) return false;
  if (cfg.checkpoint_layers.empty()) return true;
  return std::find(cfg.checkpoint_layers.begin(), cfg.checkpoint_layers.end(), i) != cfg.checkpoint_layers.end();
}

bool layer_frozen(const RunConfig& cfg, int64_t i) {
  return std::find(cfg.frozen_layers.begin(), cfg.frozen_layers.end(), i) != cfg.frozen_layers.end();
}

TensorId causal_lm_loss(GraphBuilder& b, TensorId logits, TensorId labels) {
  const Shape ls = b.shape(logits);  // [B, S, V]; a copy: b.to() below reallocates the tensor table
  const int64_t n = ls[0] * ls[1];
  b.hold(logits);  // the model output holds the logits until forward returns (after the loss)
  TensorId f = b.to(logits, DType::f32);
  b.hold(f);  // the local `logits` keeps the fp32 copy until the loss function returns
  // nn.functional.pad(labels, (0, 1), value=-100) then labels[..., 1:].contiguous()
  TensorId padded = b.generic({"pad", {labels}, {{{ls[0], ls[1] + 1}, DType::i64}}, {}, {}, {}, {}})[0];
  TensorId shifted = b.generic({"contiguous", {padded}, {{{ls[0], ls[1]}, DType::i64}}, {}, {}, {}, {}})[0];
  TensorId flat = b.view(f, {n, ls[2]});
  TensorId loss = b.cross_entropy(flat, b.view(shifted, {n}));
  b.drop(f);
  b.drop(logits);
  return loss;
}

Graph build_graph(const ModelSpec& spec, const RunConfig& cfg) {
  GraphBuilder b(cfg);
  switch (spec.kind) {
    case ModelSpec::Kind::transformer:
      switch (spec.transformer.family) {
        case TransformerSpec::Family::gpt2: build_gpt2(b, spec.transformer); break;
        case TransformerSpec::Family::llama: build_llama(b, spec.transformer); break;
        case TransformerSpec::Family::bert: build_bert(b, spec.transformer); break;
      }
      break;
    case ModelSpec::Kind::vision:
      if (spec.vision.family == VisionSpec::Family::resnet) build_resnet(b, spec.vision);
      else build_vit(b, spec.vision);
      break;
    case ModelSpec::Kind::graph:
      if (!spec.graph) throw InputError("model", spec.name, "a native-graph model without its graph");
      build_native(b, *spec.graph);
      break;
  }
  return b.finish();
}

}  // namespace memplan
