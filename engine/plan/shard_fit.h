// Closed forms of one GPU's local shard, fitted from a few replays.
//
// Mechanism: for a fixed sequence length / image size, precision and checkpoint mode, every quantity the
// planner needs from the replay is affine in the micro-batch b (tensors scale with b) and affine in the
// number of stacked layers L (identical layers add identical saved tensors and parameters), so it is
// bilinear: v(b, L) = c0 + cb*b + cl*L + cbl*b*L. fit_shard() replays the shard at b in {1, 2} and
// L in {l1, 2 l1}, l1 = min(4, layers / 2) (4 replays, plain SGD so the forward/backward peak is the step's
// peak and no optimizer state hides in it) and solves the four coefficients exactly. The peak is a max of
// affine pieces whose winner can change with L (e.g. with checkpointing, the loss-backward peak at 1-2
// layers, the last recompute with all gradients accumulated from about 4): fitting at 4 and 8 layers
// lands on the piece that wins at training depths. Callers combine regimes (search.cpp) by taking the max. Models whose layers cannot be sliced (ResNet) are
// fitted in b only, at their full depth (L = 1 stands for the whole model).
//
// Tensor parallel shard (Megatron): heads, kv heads (replicated when fewer than T), MLP intermediate, MoE
// expert intermediate and the vocabulary (vocab-parallel embedding, head and loss) divided by T.
#pragma once
#include <array>
#include <cstdint>

#include "engine/arch/spec.h"
#include "engine/run_config.h"

namespace memplan::plan {

struct Bilinear {
  double c0 = 0, cb = 0, cl = 0, cbl = 0;
  double at(double b, double l) const { return c0 + cb * b + cl * l + cbl * b * l; }
  double per_layer(double b) const { return cl + cbl * b; }
};
// Exact through vbl: v11 = v(1, l1), v21 = v(2, l1), v12 = v(1, l2), v22 = v(2, l2).
Bilinear fit_bilinear(double v11, double v21, double v12, double v22, double l1 = 1, double l2 = 2);

struct Affine {
  double c0 = 0, cl = 0;
  double at(double l) const { return c0 + cl * l; }
};

struct ShardFit {
  Bilinear act_peak;       // forward/backward peak minus weights and gradients
  Bilinear grads_at_peak;  // gradients live at that peak
  Bilinear fwd_act;        // forward peak minus weights (no gradients exist yet): the regime that wins when
                           // gradients are sharded and the step's own peak sits late in backward
  Bilinear saved;          // the activations row at that peak (what one more in-flight micro-batch holds)
  Bilinear fwd_flops, fwd_bytes;  // forward of one micro-batch (time model)
  Affine params;           // trainable parameters
  Affine ops;              // forward kernels
  std::array<Affine, 6> optimizer_state;     // OptimizerModel::state_bytes by OptimizerKind (impl foreach)
  std::array<Affine, 6> optimizer_transient;  // one step()'s temporaries by OptimizerKind (run's impl)
  int64_t layer_params = 0;     // one layer's parameters
  int64_t boundary_bytes_per_sample = 0;  // [1, s, h] in the activation dtype
  int64_t param_bytes_per = 4, grad_bytes_per = 4;
  bool sliceable = true;        // fitted in L (else L is fixed at 1 = the whole model)
  int64_t fit_layers[2] = {1, 2};  // the depths replayed
  int replays = 0;
};

// Layers of the model's repeated stack, 0 when it cannot be sliced.
int64_t stack_layers(const ModelSpec& m);
// Whether tensor parallel degree `tp` can shard the model (heads, kv heads, intermediate divisible).
bool tp_supported(const ModelSpec& m, int64_t tp);
// The model one GPU runs under tensor parallel `tp` with `layers` stacked layers (0: unchanged).
ModelSpec local_shard(const ModelSpec& m, int64_t tp, int64_t layers);

// `base` supplies seq_len / image_size / attn / dropout / optimizer impl; precision and checkpointing are
// set here. Throws InputError when the shard cannot be built.
ShardFit fit_shard(const ModelSpec& m, const RunConfig& base, Precision precision, int64_t tp, bool checkpoint_all);

}  // namespace memplan::plan
