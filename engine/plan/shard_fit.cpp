// Stages of fit_shard(): (1) build the TP shard at L in {1, 2}; (2) replay b in {1, 2} with plain SGD and
// no allocator simulation; (3) split each replay's peak ledger and solve the bilinear coefficients;
// (4) parameters and optimizer state from the graphs' trainable tensors, affine in L.
#include "engine/plan/shard_fit.h"

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "engine/optimizer_model.h"
#include "engine/plan/time_model.h"

namespace memplan::plan {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<TrainableParam> trainable(const Graph& g) {
  std::vector<TrainableParam> out;
  for (const auto& t : g.tensors) {
    if (t.kind != TensorKind::param || !t.trainable) continue;
    TrainableParam p;
    p.shape = t.shape;
    p.dtype = t.dtype;
    p.bytes = t.bytes;
    p.numel = t.bytes / dtype_bytes(t.dtype);
    out.push_back(std::move(p));
  }
  return out;
}

// Temporaries of one step() for `kind` under `impl`, as OptimizerModel::step allocates them (peak of them).
int64_t transient_bytes(OptimizerKind kind, OptimizerImpl impl, const std::vector<TrainableParam>& ps) {
  int64_t total = 0, largest = 0;
  for (const auto& p : ps) {
    total = checked_add(total, p.bytes);
    largest = std::max(largest, p.numel);
  }
  const bool adam = kind == OptimizerKind::adam || kind == OptimizerKind::adamw;
  if (adam && impl == OptimizerImpl::foreach) return total;
  if (adam && impl == OptimizerImpl::forloop) return 2 * largest * 4;
  if (kind == OptimizerKind::adafactor) return 3 * largest * 4;
  return 0;
}
}  // namespace

Bilinear fit_bilinear(double v11, double v21, double v12, double v22, double l1, double l2) {
  // v = c0 + cb b + cl l + cbl b l, at b in {1, 2}, l in {l1, l2}
  Bilinear f;
  const double dl = l2 - l1;
  f.cbl = ((v22 - v21) - (v12 - v11)) / dl;
  f.cl = (v12 - v11) / dl - f.cbl;
  f.cb = (v21 - v11) - f.cbl * l1;
  f.c0 = v11 - f.cb - f.cl * l1 - f.cbl * l1;
  return f;
}

int64_t stack_layers(const ModelSpec& m) {
  if (m.kind == ModelSpec::Kind::transformer) return m.transformer.num_layers;
  if (m.kind == ModelSpec::Kind::vision && m.vision.family == VisionSpec::Family::vit) return m.vision.num_layers;
  return 0;
}

bool tp_supported(const ModelSpec& m, int64_t tp) {
  if (tp == 1) return true;
  if (m.kind != ModelSpec::Kind::transformer) return false;
  const TransformerSpec& s = m.transformer;
  const bool kv_ok = s.num_kv_heads % tp == 0 || tp % s.num_kv_heads == 0;
  return s.num_heads % tp == 0 && kv_ok && s.intermediate_size % tp == 0;
}

ModelSpec local_shard(const ModelSpec& m, int64_t tp, int64_t layers) {
  if (!tp_supported(m, tp)) throw InputError("tp", std::to_string(tp), "does not divide the model's heads / MLP");
  ModelSpec s = m;
  if (m.kind == ModelSpec::Kind::transformer) {
    TransformerSpec& t = s.transformer;
    if (layers > 0) t.num_layers = layers;
    if (tp > 1) {
      t.head_dim = m.transformer.head_dim > 0 ? m.transformer.head_dim : m.transformer.hidden_size / m.transformer.num_heads;
      t.num_heads /= tp;
      t.num_kv_heads = std::max<int64_t>(1, t.num_kv_heads / tp);
      t.intermediate_size /= tp;
      t.vocab_size = ceil_div(t.vocab_size, tp);
    }
  } else if (m.kind == ModelSpec::Kind::vision && m.vision.family == VisionSpec::Family::vit && layers > 0) {
    s.vision.num_layers = layers;
  }
  return s;
}

ShardFit fit_shard(const ModelSpec& m, const RunConfig& base, Precision precision, int64_t tp, bool checkpoint_all) {
  ShardFit f;
  f.sliceable = stack_layers(m) > 0;
  const bool half = precision == Precision::bf16 || precision == Precision::fp16;
  f.param_bytes_per = half ? 2 : 4;
  f.grad_bytes_per = f.param_bytes_per;
  double act[2][2], fact[2][2], grads[2][2], saved[2][2], flops[2][2], bytes[2][2];
  double params[2] = {0, 0}, ops[2] = {0, 0};
  std::array<double, 6> state[2], trans[2];
  const int64_t l1 = std::max<int64_t>(1, std::min<int64_t>(4, stack_layers(m) / 2));
  f.fit_layers[0] = l1;
  f.fit_layers[1] = 2 * l1;
  for (int li = 0; li < 2; ++li) {
    const int64_t layers = f.sliceable ? f.fit_layers[li] : 0;
    const ModelSpec shard = local_shard(m, tp, layers);
    for (int bi = 0; bi < 2; ++bi) {
      RunConfig c = base;
      c.precision = precision;
      c.optimizer = OptimizerKind::sgd;
      c.batch_size = bi + 1;
      c.grad_accum_steps = 1;
      c.grad_checkpointing = checkpoint_all;
      c.checkpoint_layers.clear();
      c.frozen_layers.clear();
      validate_run_config(c, shard);
      const Graph g = build_graph(shard, c);
      EstimateOptions opt;
      opt.replay.steps = 1;
      opt.simulate_allocator = false;
      const Estimate e = estimate_graph(g, c, opt);
      ++f.replays;
      const Ledger& led = e.replay.peak.ledger;
      act[bi][li] = static_cast<double>(e.replay.peak.bytes - led[Row::weights] - led[Row::gradients] -
                                        led[Row::optimizer_state]);
      grads[bi][li] = static_cast<double>(led[Row::gradients]);
      fact[bi][li] = static_cast<double>(e.replay.steps.back().fwd_peak - e.replay.weights_bytes);
      saved[bi][li] = static_cast<double>(led[Row::activations]);
      const GraphCost gc = graph_cost(g);
      flops[bi][li] = gc.fwd_flops;
      bytes[bi][li] = gc.fwd_bytes;
      if (bi == 0) {
        const auto tp_params = trainable(g);
        params[li] = static_cast<double>(e.trainable_params);
        ops[li] = gc.ops;
        for (size_t k = 0; k < 6; ++k) {
          const auto kind = static_cast<OptimizerKind>(k);
          state[li][k] = static_cast<double>(OptimizerModel::state_bytes(kind, OptimizerImpl::foreach, tp_params));
          trans[li][k] = static_cast<double>(transient_bytes(kind, base.optimizer_impl, tp_params));
        }
      }
    }
    if (!f.sliceable) {  // one depth only: L = 1 stands for the model, the L = 2 column repeats it
      for (int bi = 0; bi < 2; ++bi) {
        act[bi][1] = act[bi][0]; fact[bi][1] = fact[bi][0]; grads[bi][1] = grads[bi][0]; saved[bi][1] = saved[bi][0];
        flops[bi][1] = flops[bi][0]; bytes[bi][1] = bytes[bi][0];
      }
      params[1] = params[0];
      ops[1] = ops[0];
      state[1] = state[0];
      trans[1] = trans[0];
      break;
    }
  }
  const double fl1 = static_cast<double>(f.fit_layers[0]), fl2 = static_cast<double>(f.fit_layers[1]);
  auto fit = [&](double v[2][2]) { return fit_bilinear(v[0][0], v[1][0], v[0][1], v[1][1], fl1, fl2); };
  f.act_peak = fit(act);
  f.grads_at_peak = fit(grads);
  f.fwd_act = fit(fact);
  f.saved = fit(saved);
  f.fwd_flops = fit(flops);
  f.fwd_bytes = fit(bytes);
  auto affine = [&](double v1, double v2) {
    const double slope = (v2 - v1) / (fl2 - fl1);
    return Affine{v1 - slope * fl1, slope};
  };
  f.params = affine(params[0], params[1]);
  f.ops = affine(ops[0], ops[1]);
  for (size_t k = 0; k < 6; ++k) {
    f.optimizer_state[k] = affine(state[0][k], state[1][k]);
    f.optimizer_transient[k] = affine(trans[0][k], trans[1][k]);
  }
  f.layer_params = static_cast<int64_t>(f.params.cl);
  if (m.kind == ModelSpec::Kind::transformer) {
    const int64_t elt = precision == Precision::fp32 ? 4 : 2;
    f.boundary_bytes_per_sample = checked_mul(checked_mul(base.seq_len, m.transformer.hidden_size), elt);
  }
  return f;
}

}  // namespace memplan::plan
