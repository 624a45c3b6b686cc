// Pieces the Hugging Face vision backbones of family set 23 (hf_convnext.cpp, hf_swin.cpp) share (and hf_dinov2.cpp,
// hf_beit.cpp, hf_segformer.cpp, whose DropPath and tail are the same statements): their modeling
// files copy one DropPath (transformers 5.17 models/swin/modeling_swin.py SwinDropPath, "Copied from" in
// models/convnext and models/convnextv2), one stochastic-depth schedule and one classification tail
// (ForSequenceClassificationLoss, the loss ForImageClassification maps to).
#pragma once
#include <cmath>

#include "engine/arch/builders.h"

namespace memplan::hfbackbone {

// The DropPath rate of block `i` of `n` (ConvNextEncoder's torch.linspace(0, rate, n), SwinEncoder's
// rate * i / max(n - 1, 1): the same values).
inline double block_drop_path(double rate, int64_t i, int64_t n) {
  return n > 1 ? rate * static_cast<double>(i) / static_cast<double>(n - 1) : 0.0;
}

// <Type>DropPath.forward at `rate` (the module is nn.Identity at rate 0, and returns its input outside training):
// random_tensor = torch.rand([B, 1, ..., 1], dtype=x.dtype); floor(random_tensor + keep_prob);
// x.div(keep_prob) * random_tensor. The quotient is a full-size temporary the product reads; the product saves
// only the mask (the quotient's side needs it; the mask needs no gradient), its backward writes a fresh
// gradient, and div's backward another (grad / keep_prob).
inline TensorId drop_path(GraphBuilder& b, TensorId x, double rate) {
  if (!b.training() || rate <= 0.0 || !b.config().dropout) return x;
  Shape mask_shape(b.shape(x).size(), 1);
  mask_shape[0] = b.shape(x)[0];
  const DType dt = b.dtype(x);
  TensorId r = b.generic_one("rand", {}, mask_shape, dt);
  r = b.generic_one("floor", {b.generic_one("add_scalar", {r}, mask_shape, dt)}, mask_shape, dt);
  return b.mul(b.scalar_op("div_scalar", x, false), r);
}

// The classifier's end once `pooled` (the model's pooler_output, [B, C]) exists: classifier Linear, then, in
// training, ForSequenceClassificationLoss (cross entropy of logits.view(-1, num_labels), mean); the forward keeps
// the model output (`held`: last_hidden_state and pooled, kNoTensor skipped) and the logits bound until it returns,
// after the loss. Inference: the logits are the output (held; the harness drops them after the peak).
inline void classifier_tail(GraphBuilder& b, std::initializer_list<TensorId> held, TensorId pooled, TensorId cls_w,
                            TensorId cls_b, TensorId labels) {
  for (TensorId t : held)
    if (t != kNoTensor) b.hold(t);
  const TensorId logits = b.linear(pooled, cls_w, cls_b);
  b.hold(logits);
  b.mark_model_end();
  if (!b.training()) return;
  const TensorId loss = b.cross_entropy(logits, labels);
  b.drop(logits);
  for (TensorId t : held)
    if (t != kNoTensor) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan::hfbackbone
