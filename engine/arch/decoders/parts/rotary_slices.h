// The partial rotary embedding's slices as glm4's and nemotron's apply_rotary_pos_emb take them (transformers
// 5.17): `q_rot, q_pass = q[..., :rot], q[..., rot:]`, then the same for k, all four before either rotation.
// Each slice is a view whose backward (SliceBackward) writes its gradient into a zero-filled tensor of the
// sliced tensor's size; the order matters in backward, where autograd runs the later-created node first (k's
// slices after q's rotation).
#pragma once
#include "engine/graph_builder.h"

namespace memplan {

struct RotarySlices {
  TensorId q_rot, q_pass, k_rot, k_pass;
};

inline RotarySlices rotary_slices(GraphBuilder& b, TensorId q, TensorId k, int64_t rot) {
  auto slice = [&](TensorId x, int64_t from, int64_t to) {
    Shape s = b.shape(x);
    s.back() = to - from;
    return b.split(x, 1, s)[0];  // one part: a view with a fresh gradient of x's size
  };
  const int64_t hq = b.shape(q).back(), hk = b.shape(k).back();
  RotarySlices r;
  r.q_rot = slice(q, 0, rot);
  r.q_pass = slice(q, rot, hq);
  r.k_rot = slice(k, 0, rot);
  r.k_pass = slice(k, rot, hk);
  return r;
}

}  // namespace memplan
