// Stages of optimal_checkpoints(): (1) sizes in quanta, rounded up; (2) forward DP over layers with state =
// quanta kept by the prefix, value = least recompute time, choices recorded per (layer, state); (3) the best
// final state within the budget, traced back.
#include "engine/plan/checkpoint_dp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/checked.h"

namespace memplan::plan {

ChainPlan evaluate_chain(const std::vector<ChainLayer>& layers, const std::vector<Ckpt>& choice) {
  ChainPlan p;
  p.choice = choice;
  int64_t prefix = 0, peak = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const ChainLayer& l = layers[i];
    switch (choice[i]) {
      case Ckpt::none: prefix = checked_add(prefix, l.saved_bytes); break;
      case Ckpt::full:
        peak = std::max(peak, checked_add(prefix, l.saved_bytes));
        prefix = checked_add(prefix, l.input_bytes);
        p.recompute_s += l.recompute_s;
        break;
      case Ckpt::selective:
        prefix = checked_add(prefix, l.saved_bytes - l.selective_saved_bytes);
        p.recompute_s += l.selective_s;
        break;
    }
  }
  p.peak_bytes = std::max(peak, prefix);
  p.feasible = true;
  return p;
}

ChainPlan optimal_checkpoints(const std::vector<ChainLayer>& layers, int64_t budget_bytes, int64_t quantum_bytes) {
  const size_t n = layers.size();
  const int64_t q = std::max<int64_t>(1, quantum_bytes);
  const int64_t cap = budget_bytes < 0 ? -1 : budget_bytes / q;
  ChainPlan none;
  if (cap < 0) return none;
  const size_t width = static_cast<size_t>(cap) + 1;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  auto units = [q](int64_t b) { return (std::max<int64_t>(0, b) + q - 1) / q; };
  std::vector<double> cur(width, kInf), next(width);
  std::vector<uint8_t> pick(n * width, 0xff);  // choice taken to reach (i + 1, state)
  std::vector<int32_t> from(n * width, -1);
  cur[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    const ChainLayer& l = layers[i];
    std::fill(next.begin(), next.end(), kInf);
    const int64_t u_none = units(l.saved_bytes), u_in = units(l.input_bytes), u_saved = u_none;
    const int64_t u_sel = units(l.saved_bytes - l.selective_saved_bytes);
    for (size_t s = 0; s < width; ++s) {
      if (cur[s] == kInf) continue;
      const int64_t si = static_cast<int64_t>(s);
      auto relax = [&](int64_t to, double t, Ckpt c) {
        if (to > cap) return;
        const size_t k = i * width + static_cast<size_t>(to);
        if (t < next[static_cast<size_t>(to)]) {
          next[static_cast<size_t>(to)] = t;
          pick[k] = static_cast<uint8_t>(c);
          from[k] = static_cast<int32_t>(s);
        }
      };
      relax(si + u_none, cur[s], Ckpt::none);
      if (si + u_saved <= cap) relax(si + u_in, cur[s] + l.recompute_s, Ckpt::full);
      if (l.selective_saved_bytes > 0) relax(si + u_sel, cur[s] + l.selective_s, Ckpt::selective);
    }
    std::swap(cur, next);
  }
  size_t best = width;
  for (size_t s = 0; s < width; ++s)
    if (cur[s] < kInf && (best == width || cur[s] < cur[best])) best = s;
  if (best == width) return none;
  std::vector<Ckpt> choice(n);
  size_t s = best;
  for (size_t i = n; i-- > 0;) {
    const size_t k = i * width + s;
    choice[i] = static_cast<Ckpt>(pick[k]);
    s = static_cast<size_t>(from[k]);
  }
  return evaluate_chain(layers, choice);
}

ChainPlan every_k(const std::vector<ChainLayer>& layers, int64_t k) {
  std::vector<Ckpt> c(layers.size(), Ckpt::none);
  for (size_t i = 0; i < c.size(); ++i)
    if (k > 0 && static_cast<int64_t>(i) % k == 0) c[i] = Ckpt::full;
  return evaluate_chain(layers, c);
}

ChainPlan sqrt_n(const std::vector<ChainLayer>& layers) {
  const auto k = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(layers.size()))));
  return every_k(layers, std::max<int64_t>(1, k));
}

std::vector<int64_t> full_layers(const ChainPlan& p) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < p.choice.size(); ++i)
    if (p.choice[i] == Ckpt::full) out.push_back(static_cast<int64_t>(i));
  return out;
}

}  // namespace memplan::plan
