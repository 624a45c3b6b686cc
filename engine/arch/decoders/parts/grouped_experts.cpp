#include "engine/arch/decoders/parts/grouped_experts.h"

#include <cassert>

#include "engine/checked.h"

namespace memplan {

TensorId grouped_experts(GraphBuilder& b, const ExpertsParams& e, TensorId flat, TensorId top_w, TensorId top_idx) {
  assert(e.gate_up_bias == kNoTensor && e.down_bias == kNoTensor && !e.gpt_oss_gate);
  if (!b.training() && b.pass().from_generate && b.pass().past_len > 0)
    return experts_grouped_mm(b, e, flat, top_w, top_idx);  // batched_mm in the decode steps
  const Shape fs = b.shape(flat);
  const int64_t T = fs[0], H = fs[1], E = e.experts, K = e.top_k, I = e.inter;
  const int64_t R = checked_mul(T, K);
  const DType in_dt = b.dtype(flat), w_dt = b.dtype(e.gate_up);
  // expert_ids_g, perm = torch.sort(expert_ids)
  auto sorted = b.generic({"sort", {top_idx}, {{{R}, DType::i64}, {{R}, DType::i64}}, {}, {}, {}, {}});
  const TensorId ids_g = sorted[0], perm = sorted[1];
  b.hold(ids_g);
  b.hold(perm);
  // selected_hidden_states_g = hidden_states[perm // num_top_k]; sample_weights_g = sample_weights[perm]
  const TensorId rows = b.generic_one("floor_divide", {perm}, {R}, DType::i64);
  const TensorId selected_g = b.generic_one("index", {flat, rows}, {R, H}, in_dt, {1});
  b.hold(selected_g);
  const TensorId sample_w = b.generic_one("index", {b.view(top_w, {R}), perm}, {R}, b.dtype(top_w), {1});
  b.hold(sample_w);
  // histc over expert_ids_g.int(), cumsum to int32 offsets; the sentinel mask (expert_ids_g >= E).unsqueeze(-1)
  const TensorId offsets = b.generic_one("cumsum", {b.generic_one("histc", {ids_g}, {E}, DType::i32)}, {E}, DType::i32);
  b.hold(offsets);
  const TensorId sentinel = b.generic_one("sentinel_mask", {ids_g}, {R, 1}, DType::boolean);
  b.hold(sentinel);
  const TensorId selected = b.inplace_fresh_grad("masked_fill_", selected_g, {sentinel});
  std::vector<int64_t> gmm_temps;
  if (w_dt != DType::f32) gmm_temps = {checked_mul(E, int64_t{60}), int64_t{67584}};
  auto grouped_mm = [&](TensorId w, TensorId x, int64_t out_cols) {
    return b.generic({"grouped_mm", {w, x, offsets}, {{{R, out_cols}, w_dt}}, {0, 1}, {}, gmm_temps, {}})[0];
  };
  TensorId proj = grouped_mm(e.gate_up, b.to(selected, w_dt), checked_mul(int64_t{2}, I));
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, checked_mul(int64_t{2}, I)}, w_dt);
  // _default_apply_gate: gate, up = chunk(2); act_fn(gate) * up
  const auto halves = b.split(proj, 2, {R, I});
  proj = b.mul(b.unary("silu", halves[0], true, false), halves[1]);
  proj = grouped_mm(e.down, proj, H);
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, H}, w_dt);
  b.hold(proj);  // bound until the function returns
  TensorId weighted = b.mul(proj, b.view(sample_w, {R, 1}));
  // inv_perm = empty_like(perm); inv_perm[perm] = arange(R): the arange is a temporary.
  const TensorId inv_perm =
      b.generic({"inv_perm", {perm}, {{{R}, DType::i64}}, {}, {}, {checked_mul(R, int64_t{8})}, {}})[0];
  weighted = b.generic_one("index", {weighted, inv_perm}, {R, H}, b.dtype(weighted), {1});
  b.hold(weighted);
  const TensorId summed = b.generic_one("sum_topk", {weighted}, {T, H}, b.dtype(weighted));  // view(T, K, H).sum(1)
  const TensorId out = b.to(summed, in_dt);
  for (TensorId t : {weighted, proj, selected_g, sample_w, offsets, sentinel, perm, ids_g}) b.drop(t);
  return out;
}

}  // namespace memplan
