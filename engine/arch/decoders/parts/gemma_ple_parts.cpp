// The pieces Gemma 3n and Gemma 4 text decoders share (gemma_ple_parts.h), moved from gemma4.cpp unchanged.
#include "engine/arch/decoders/parts/gemma_ple_parts.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/checked.h"

namespace memplan::gemma_ple {

namespace {

// F.scaled_dot_product_attention through the memory-efficient kernel, which takes head dims above 256 (flash and
// cuDNN do not; the recordings' observed backend: "efficient bfloat16 hd512"): out and the fp32 logsumexp [B, H, L]
// (training only), all saved. The cutlass kernels for head dims above 128 keep no output in registers: the forward
// accumulates into an fp32 [B, H, Lq, Dv] buffer freed at once, and the backward takes delta rows [B, H, Lq] fp32
// and a workspace of B * H * align4(gk + gv + gq) floats (mem_eff_attention/kernel_backward.h workspace_size, the
// 64 x 128 kernel): gk = gv = num_splits_key * 128 * align(D, 64) with attention_backward.cu's split heuristic
// (ceil(Lk / 128) splits; 1 when B * H >= 256 and Lk <= 256; at most 200 / (B * H) as gK / gV are staged),
// gq = ceil(Lq / 64) * ceil(D / 128) GradQTempStorage tiles of 4100 floats (whole-run f19-g4-e2b-bf16-b2s1024:
// 32 MiB forward, 83,902,464 B backward for B 2, H 8, L 1024, D 512: 8 splits).
int64_t efficient_bwd_workspace(int64_t bh, int64_t lq, int64_t lk, int64_t d) {
  auto align = [](int64_t x, int64_t a) { return (x + a - 1) / a * a; };
  int64_t splits = (lk + 127) / 128;
  if (bh >= 256 && lk <= 256) splits = 1;
  splits = std::min(splits, 200 / bh);
  if (splits < 1) splits = 1;
  const int64_t gk = checked_mul(checked_mul(splits, 128), align(d, 64));
  const int64_t gq = checked_mul(checked_mul((lq + 63) / 64, (d + 127) / 128), 4100);
  return checked_mul(checked_mul(bh, align(checked_add(checked_mul(gk, 2), gq), 4)), 4);
}

TensorId sdpa_efficient(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId bool_mask) {
  v = b.autocast_low(v);
  k = b.autocast_low(k);
  q = b.autocast_low(q);
  const Shape qs = b.shape(q);
  const DType dt = b.dtype(q);
  std::vector<TensorId> reads{q, k, v};
  if (bool_mask != kNoTensor)
    reads.push_back(b.generic_one("attn_mask_to_float", {bool_mask}, {qs[0], 1, qs[2], b.shape(k)[2]}, dt));
  const bool grad = b.training() && (b.info(q).requires_grad || b.info(k).requires_grad || b.info(v).requires_grad);
  const int64_t bh = checked_mul(qs[0], qs[1]), bhl = checked_mul(bh, qs[2]), dv = b.shape(v)[3];
  GraphBuilder::GenericOp op{"sdpa_efficient", reads, {{{qs[0], qs[1], qs[2], dv}, dt}}, {0, 1, 2}, {0}, {}, {}};
  if (reads.size() > 3) op.saved_reads.push_back(3);
  if (grad) {
    op.outs.push_back({{qs[0], qs[1], qs[2]}, DType::f32});
    op.saved_outs.push_back(1);
    op.bwd_temp_bytes = {checked_mul(bhl, 4), efficient_bwd_workspace(bh, qs[2], b.shape(k)[2], qs[3])};
  }
  if (dt != DType::f32 && qs[3] > 128) op.fwd_temp_bytes = {checked_mul(checked_mul(bhl, dv), 4)};
  return b.generic(op)[0];
}

}  // namespace

// Gemma4RMSNorm.forward: normed = _norm(x.float()) (mean_squared = x.pow(2).mean(-1, keepdim) + eps; x *
// torch.pow(mean_squared, -0.5), whose PowBackward saves its input), then `normed * weight.float()` when
// with_scale (w != kNoTensor), returned .type_as(x). A 16-bit x gives an fp32 copy (saved by pow and the product)
// and an fp32 normalised x (saved by the weight product); fp32 and amp inputs make no copy.
TensorId norm(GraphBuilder& b, TensorId x, TensorId w) {
  const DType in_dt = b.dtype(x);
  const TensorId x32 = b.to(x, DType::f32);
  const TensorId ms = b.add_scalar(b.reduce_last("mean", b.pow_scalar(x32), false));
  TensorId n = b.mul(x32, b.pow_scalar(ms));
  if (w != kNoTensor) n = b.mul(n, b.to(w, DType::f32));
  return b.to(n, in_dt);
}

// `x = norm(x)`: the variable keeps the input bound until the norm returns (gemma_parts' norm_rebinding).
TensorId norm_rebinding(GraphBuilder& b, TensorId x, TensorId w) {
  b.hold(x);
  const TensorId y = norm(b, x, w);
  b.drop(x);
  return y;
}

// Gemma4ForCausalLM: logits / cap, tanh (saves its output), * cap, each statement rebinding `logits`.
TensorId softcap(GraphBuilder& b, TensorId logits) {
  logits = b.scalar_op("div_scalar", logits, false);
  logits = b.unary("tanh", logits, false, true);
  return b.scalar_op("mul_scalar", logits, false);
}

// ACT2FN[hidden_activation]: one kernel; relu saves its output, the gelu / silu family their input.
TensorId activation(GraphBuilder& b, const std::string& act, TensorId x) {
  if (act == "relu") return b.unary("relu", x, false, true);
  return b.unary(act, x, true, false);
}

// The attention function from the cache update on (sdpa_attention_forward or eager_attention_forward), with the
// layer's own head_dim and KV heads. repeat_kv where SDPA cannot take grouped heads (a mask, or head_dim > 256:
// use_gqa_in_sdpa) and in eager attention: a view for one KV head (expand then a reshape that merges the size-1
// head dim with the stride-0 one), a copy otherwise. Returns the context [B, S, nh, hd]; `weights`: eager's
// probabilities, held (the decoder layer binds them to `_`).
TensorId attention_core(GraphBuilder& b, const TransformerSpec& s, int64_t hd, int64_t nkv, TensorId q, TensorId k,
                        TensorId v, TensorId mask, TensorId& weights) {
  weights = kNoTensor;
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                Lk = b.shape(k)[2];
  // ExpandBackward sums the repeated heads' gradient into a fresh tensor of x's size (x may be a view, whose own
  // bytes are 0).
  auto repeat = [&](TensorId x) {
    if (nkv == nh) return x;
    const int64_t bytes = checked_mul(b.numel(x), dtype_bytes(b.dtype(x)));
    return nkv == 1 ? b.view_copying_grad(x, {B, nh, Lk, hd}, bytes) : b.contiguous_copy(x, {B, nh, Lk, hd});
  };
  if (cfg.attn == AttnImpl::sdpa) {
    const bool gqa_ok = mask == kNoTensor && hd <= 256;
    const TensorId kr = gqa_ok ? k : repeat(k), vr = gqa_ok ? v : repeat(v);
    if (kr != k) b.hold(kr);
    if (vr != v) b.hold(vr);
    const bool low = b.autocast() || b.dtype(q) != DType::f32;
    TensorId ctx;
    if (hd > 256 && low)
      ctx = sdpa_efficient(b, q, kr, vr, mask);
    else if (inf && mask != kNoTensor)
      ctx = b.sdpa_masked_inference(q, kr, vr, mask);
    else
      ctx = b.sdpa(q, kr, vr, s.attn_dropout, mask == kNoTensor && S > 1, mask);
    if (kr != k) b.drop(kr);
    if (vr != v) b.drop(vr);
    return ctx;  // attn_output.transpose(1, 2).contiguous(): the kernels write [B, S, nh, hd] already
  }
  // eager_attention_forward: key / value states repeated (bound until it returns), scores * scaling (1.0, still a
  // kernel), + mask, softmax in fp32, .to(q dtype), dropout, @ v, transpose(1, 2).contiguous().
  const TensorId kr = repeat(k), vr = repeat(v);
  b.hold(kr);
  b.hold(vr);
  // torch.matmul merges [B, nh] into one batch dim for bmm: a copy for B > 1 of q (rotated in the projection's
  // [B, S, nh, hd] order), of a projection-order k / v (training, no repeat) and of an expanded single KV head;
  // at B = 1 every one of them reshapes as a view.
  auto copies = [&](TensorId x, TensorId base) {
    if (B == 1) return false;
    if (x == base) return !inf;  // k / v as the projection left them; the cache's tensors are contiguous
    if (nkv != 1) return false;  // repeat_kv's contiguous copy
    return !(b.autocast() && b.dtype(x) != b.low_dtype());
  };
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, kr, {B, nh, S, Lk}, B > 1, copies(kr, k)), false);
  if (mask != kNoTensor) scores = b.add(scores, mask);
  b.hold(scores);
  TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(q));
  b.drop(scores);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  const TensorId ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}, false, copies(vr, v)),
                                         {B, S, nh, hd}, /*grad_copied=*/B > 1);
  b.drop(kr);
  b.drop(vr);
  return ctx;
}

}  // namespace memplan::gemma_ple
