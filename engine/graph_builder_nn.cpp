// GraphBuilder nn ops: the memory behaviour of each kernel, forward and backward.
//
// Each op states (from torch 2.11's derivatives.yaml and the H200 allocator traces in data/validation/traces):
// the order its outputs are allocated, what it saves for backward, and what its backward allocates.
#include <algorithm>
#include <cassert>
#include <climits>

#include "engine/checked.h"
#include "engine/conv_workspace.h"
#include "engine/errors.h"
#include "engine/graph_builder.h"
#include "engine/reduce_workspace.h"

namespace memplan {

namespace {
Shape with_last(Shape s, int64_t last) {
  s.back() = last;
  return s;
}
Shape drop_last(Shape s) {
  s.pop_back();
  return s;
}

// The staging Reduce.cuh allocates to sum [numel(out) / cols, cols] across rows (the fastest dimension kept) on
// this run's GPU: a broadcast operand's gradient, a conv bias's.
ReduceWorkspace column_sum(const RunConfig& cfg, int64_t out_numel, int64_t cols) {
  return column_sum_workspace(out_numel / cols, cols, cfg.gpu_sm_count, cfg.gpu_max_threads_per_sm);
}
}  // namespace

void GraphBuilder::set_reduce_workspace(GradSpec& g, TensorId operand, TensorId out) {
  // sum_to(operand's shape) keeps the fastest dimension whenever the operand has it: Reduce.cuh then reduces
  // across rows, num_outputs = numel(operand) outputs of numel(out) / numel(operand) inputs each, whichever
  // dimensions were broadcast (a [.., H] row vector over [N, H]; ConvNextV2 GRN's norm [B, 1, 1, 4C] over
  // [B, H, W, 4C]: 136.12 MiB staged per stage-0 block in the amp fp16 stream, as its forward vector_norm).
  // An operand broadcast along the fastest dimension reduces along it: another configuration, not modelled.
  const Shape& os = shape(operand);
  const Shape& ys = shape(out);
  if (numel(operand) >= numel(out) || os.empty() || ys.empty() || os.back() != ys.back()) return;
  const ReduceWorkspace w = column_sum(cfg_, numel(out), numel(operand));
  g.reduce_workspace_bytes = w.buffer_bytes;
  g.reduce_semaphore_bytes = w.semaphore_bytes;
}

void GraphBuilder::broadcast_grad_staging(TensorId operand, bool staged) {
  if (g_.ops.empty() || g_.ops.back().outs.empty()) return;
  Op& op = g_.ops.back();
  const int64_t cols = numel(operand);
  const int64_t out_numel = numel(op.outs[0]);
  if (cols <= 0 || cols >= out_numel) return;
  const ReduceWorkspace w = staged ? column_sum(cfg_, out_numel, cols) : ReduceWorkspace{};
  for (GradSpec& g : op.grads)
    if (g.input == operand) {
      g.reduce_workspace_bytes = w.buffer_bytes;
      g.reduce_semaphore_bytes = w.semaphore_bytes;
    }
}

void GraphBuilder::save_for_product(Op& op, TensorId a, TensorId b) {
  // mm / conv: the gradient of one operand needs the other, and autograd saves an operand only when the
  // other operand requires grad (a frozen weight's layer keeps the weight, not its input).
  if (info(b).requires_grad) op.saved.push_back(a);
  if (info(a).requires_grad) op.saved.push_back(b);
}

TensorId GraphBuilder::embedding(TensorId ids, TensorId weight) {
  Shape s = shape(ids);
  s.push_back(shape(weight)[1]);
  TensorId y = new_tensor(s, dtype(weight), TensorKind::activation);
  if (cfg_.lora.enabled() || cfg_.quant.enabled()) lora_.embedding_weights.push_back(weight);  // a tied head is no LoRA target
  Op& op = emit("embedding", {ids, weight});
  op.outs = {y};
  finish_outs(op);
  const bool input_grad_hook = lora::input_requires_grad(lora_, cfg_, weight) && !info(y).requires_grad;
  op.saved = {ids};  // embedding_backward needs the indices only
  if (op.has_backward) {
    add_grads(op, {weight});  // embedding_dense_backward: a dense [V, H] gradient
    // Up to 3072 indices a direct kernel needs nothing else. Above, it sorts the indices (values and
    // positions, int64), keeps per-segment offsets and, sized for the worst case without a device sync,
    // n / 10 + min(n, V) partial segments: their offsets (int64) and an [partials, H] fp32 accumulator
    // (trace, GPT-2 medium b4 s1024: 36040 B and 18452480 B for 4505 partials of 1024 floats).
    // torch 2.11's embedding_backward_cuda_kernel instead runs one fused atomic-add kernel when the per-segment
    // sum would be short of blocks (few distinct rows: a token-type table): sum_and_scatter's grid,
    // ceil(min(n, V) * H_warp / min(H_warp, 1024)) with H_warp = H rounded up to 32, below 4 blocks per SM and
    // under a quarter of the partials (deterministic algorithms off). That path maps each partial to its segment
    // (a second [partials] int64 buffer) and accumulates into the gradient itself, through a zero-filled fp32
    // [V, H] copy when the gradient is 16-bit (whole-run streams, BERT / RoBERTa token types: two [821] int64
    // buffers, no [821, 768] accumulator).
    const int64_t n = numel(ids);
    if (n > 3072) {
      const int64_t rows = shape(weight)[0], width = shape(weight)[1];
      const int64_t segments = std::min(n, rows);
      const int64_t partials = checked_add(n / 10, segments);
      const int64_t warped = (width + 31) / 32 * 32, block = std::min<int64_t>(warped, 1024);
      const int64_t grid = (checked_mul(segments, warped) + block - 1) / block;
      const bool fused = grid < 4 * static_cast<int64_t>(cfg_.gpu_sm_count) && partials > 4 * grid;
      op.bwd_temp_bytes = {checked_mul(n, 8), checked_mul(n, 8), checked_mul(n, 8), checked_mul(n, 8),
                           checked_mul(partials, 8)};
      if (!fused) {
        op.bwd_temp_bytes.push_back(checked_mul(checked_mul(partials, width), 4));
      } else {
        op.bwd_temp_bytes.push_back(checked_mul(partials, 8));
        if (dtype(weight) != DType::f32) op.bwd_temp_bytes.push_back(checked_mul(checked_mul(rows, width), 4));
      }
    }
  }
  if (input_grad_hook) {  // engine/lora.h input_requires_grad: a leaf its AccumulateGrad node keeps until backward
    g_.tensors[static_cast<size_t>(y)].requires_grad = true;
    op.has_backward = true;
    op.saved.push_back(y);
  }
  return y;
}

TensorId GraphBuilder::linear(TensorId x, TensorId w, TensorId b, bool conv1d) {
  // peft LoRA / bitsandbytes (engine/lora.h): a targeted layer runs base_layer(x), then the adapter path on the
  // same x; a quantised base layer is bitsandbytes' Linear4bit / Linear8bitLt.
  if ((!cfg_.lora.enabled() && !cfg_.quant.enabled()) || info(w).kind != TensorKind::param || info(w).name < 0)
    return linear_base(x, w, b, conv1d);
  const std::string wname = g_.name_of(info(w).name);
  const bool adapted = cfg_.lora.enabled() && lora::targets(cfg_.lora, lora_, wname, w);
  const bool quantized = cfg_.quant.enabled() && lora::quantizable(lora_, wname, w);
  const TensorId y = quantized ? quantized_linear(x, w, b, conv1d) : linear_base(x, w, b, conv1d);
  if (!adapted) return y;
  const int64_t in = conv1d ? shape(w)[0] : shape(w)[1];
  const int64_t out = conv1d ? shape(w)[1] : shape(w)[0];
  const TensorId r = lora::adapt(*this, lora_, x, y, lora::module_of(wname), in, out);
  if (explicit_release_[static_cast<size_t>(x)] != -2) drop(x);  // lora::adapt: the caller's frame holds x
  return r;
}

void GraphBuilder::unreached_linear(TensorId w) {
  unreached_param(w);
  if (!cfg_.lora.enabled() || info(w).kind != TensorKind::param || info(w).name < 0) return;
  const std::string wname = g_.name_of(info(w).name);
  if (!lora::targets(cfg_.lora, lora_, wname, w)) return;
  const auto [a, b] = lora::adapter_weights(*this, lora_, lora::module_of(wname), shape(w)[1], shape(w)[0]);
  unreached_param(a);
  unreached_param(b);
}

TensorId GraphBuilder::linear_base(TensorId x, TensorId w, TensorId b, bool conv1d) {
  // Autocast casts the arguments last to first (traces): F.linear(x, w, b) casts b, w, x; GPT-2's
  // Conv1D addmm(b, x, w) casts w, x, b.
  TensorId wc, xc, bc;
  if (conv1d) {
    wc = autocast_low(w);
    xc = autocast_low(x);
    bc = autocast_low(b);
  } else {
    bc = autocast_low(b);
    wc = autocast_low(w);
    xc = autocast_low(x);
  }
  const int64_t out_features = conv1d ? shape(w)[1] : shape(w)[0];
  TensorId y = new_tensor(with_last(shape(xc), out_features), promote(dtype(xc), dtype(wc)), TensorKind::activation);
  std::vector<TensorId> reads{xc, wc};
  if (bc != kNoTensor) reads.push_back(bc);
  Op& op = emit(conv1d || bc != kNoTensor ? "addmm" : "linear", reads);
  op.outs = {y};
  finish_outs(op);
  save_for_product(op, xc, wc);
  if (op.has_backward) {
    if (bc != kNoTensor) {
      // AddmmBackward: grad input, grad weight; the bias's gradient is the output gradient passed through
      // (beta = 1), which validate_outputs sums to the bias's shape after the node returns: a column sum
      // with its reduction workspace. Under checkpointing that comes after the node's unpacked saved tensors
      // are gone (whole-run stream, GPT-2 amp eager + checkpointing).
      add_grads(op, {xc, wc});
      if (info(bc).requires_grad) {
        GradSpec g{bc, 0, 0};
        g.cast_to_bytes = info(bc).bytes;
        set_reduce_workspace(g, bc, y);
        op.grads.push_back(g);
      }
    } else {
      // MmBackward on the flattened input: the weight gradient is produced before the input gradient.
      add_grads(op, {wc, xc});
    }
    for (GradSpec& g : op.grads) {
      if (g.input == xc && shape(xc).size() >= 3) g.arrives_as_view = true;
      // F.linear's weight enters the GEMM transposed: its gradient comes back as a transposed view of the mm
      // output (Conv1D's addmm takes the weight as stored).
      if (g.input == wc && !conv1d) g.arrives_as_view = true;
    }
  }
  return y;
}

TensorId GraphBuilder::matmul(TensorId a, TensorId b, Shape out_shape, bool copy_a, bool copy_b) {
  // Autocast casts the arguments last to first and keeps the casts until the op returns (whole-run stream,
  // Qwen2 eager amp inference: v's cast before the probabilities', the casts freed after the bmm output).
  TensorId bc = autocast_low(b);
  TensorId ac = autocast_low(a);
  const TensorId casts[2] = {ac != a ? ac : kNoTensor, bc != b ? bc : kNoTensor};
  for (TensorId t : casts)
    if (t != kNoTensor) hold(t);
  if (copy_a) ac = contiguous_copy(ac, shape(ac));
  if (copy_b) bc = contiguous_copy(bc, shape(bc));
  TensorId y = new_tensor(std::move(out_shape), promote(dtype(ac), dtype(bc)), TensorKind::activation);
  Op& op = emit("matmul", {ac, bc});
  op.outs = {y};
  finish_outs(op);
  for (TensorId t : casts)
    if (t != kNoTensor) drop(t);
  save_for_product(op, ac, bc);
  // BmmBackward computes mat2's gradient before self's (whole-run streams: [B*H, S, D] before [B*H, S, S]
  // in the context bmm of BERT and GPT-2 eager attention).
  if (op.has_backward) add_grads(op, {bc, ac});
  return y;
}

TensorId GraphBuilder::layer_norm(TensorId x, TensorId w, TensorId b, bool contiguous_copy, bool grad_contiguous) {
  // fp32 autocast policy: a low-precision input is copied to fp32 first (that copy is what gets saved).
  TensorId xc = autocast_fp32(x);
  TensorId wc = autocast_fp32(w);
  TensorId bc = autocast_fp32(b);
  // native_layer_norm makes the input contiguous (expect_contiguous) before it allocates Y, mean and rstd; the
  // copy dies when the kernel returns (whole-run whisper streams, fp32 / amp bf16 / amp fp16: copy, output, then
  // the row statistics). Replayed so (a tensor of its own, made just before the op, released after it) only
  // with grad_contiguous, the whisper encoder's permuted stream: the other contiguous_copy norms keep the copy
  // as a workspace after the outputs (ordering them all this way moves the torchvision ViT rows, some closer
  // and some further, and makes the phi qk-LayerNorm row's reserved exact; those streams are not re-read yet).
  const bool copy_first = contiguous_copy && grad_contiguous;
  TensorId xcopy = kNoTensor;
  if (copy_first) {
    xcopy = generic_one("layer_norm_input_copy", {}, shape(xc), dtype(xc));
    hold(xcopy);
  }
  TensorId y = new_tensor(shape(xc), dtype(xc), TensorKind::activation);
  Shape stat = drop_last(shape(xc));
  TensorId mean = new_tensor(stat, DType::f32, TensorKind::activation);
  TensorId rstd = new_tensor(stat, DType::f32, TensorKind::activation);
  std::vector<TensorId> reads{xc};
  if (wc != kNoTensor) reads.push_back(wc);
  if (bc != kNoTensor) reads.push_back(bc);
  Op& op = emit("layer_norm", reads);
  op.outs = {y, mean, rstd};
  if (contiguous_copy && !copy_first) op.fwd_temp_bytes.push_back(info(y).bytes);
  // layer_norm_backward makes the same copy of x, and one of the incoming gradient (ViT amp trace).
  if (contiguous_copy) op.bwd_temp_bytes = {info(y).bytes, info(y).bytes};
  if (contiguous_copy && grad_contiguous) op.bwd_temp_bytes = {info(y).bytes};
  finish_outs(op);
  op.saved = {xc, mean, rstd};
  if (wc != kNoTensor) op.saved.push_back(wc);
  if (op.has_backward) add_grads(op, {xc, wc, bc});
  if (xcopy != kNoTensor) drop(xcopy);
  return y;
}

TensorId GraphBuilder::dropout(TensorId x, double p) {
  if (p <= 0.0 || !training() || !cfg_.dropout) return x;
  // native_dropout allocates the bool mask first, then the output; backward needs only the mask.
  TensorId mask = new_tensor(shape(x), DType::boolean, TensorKind::activation);
  TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
  Op& op = emit("dropout", {x});
  op.outs = {mask, y};
  finish_outs(op);
  op.saved = {mask};
  if (op.has_backward) add_grads(op, {x});
  return y;
}

TensorId GraphBuilder::softmax_last(TensorId x) {
  // Under autocast softmax runs in fp32 (fp32_set_opt_dtype): fp32 output, no separate input copy.
  const DType out_dt = autocast_ ? DType::f32 : dtype(x);
  TensorId y = new_tensor(shape(x), out_dt, TensorKind::activation);
  Op& op = emit("softmax", {x});
  op.outs = {y};
  finish_outs(op);
  op.saved = {y};
  if (op.has_backward) {
    add_grads(op, {x});
    // _softmax_backward_data stages a temporary the size of its result, freed before it returns (whole-run
    // streams: BERT-base fp32 eager and GPT-2 small amp eager attention, fp32 softmax of [B, H, S, S]).
    op.bwd_temp_bytes = {info(y).bytes};
  }
  return y;
}

TensorId GraphBuilder::sdpa_masked_inference(TensorId q, TensorId k, TensorId v, TensorId mask) {
  const Shape qs = shape(q);
  if (qs.size() != 4) throw InputError("sdpa.q", std::to_string(qs.size()), "expects a 4-d query");
  TensorId additive = generic({"attn_mask_to_float", {mask}, {{{qs[0], 1, qs[2], shape(k)[2]}, dtype(q)}}, {}, {}, {}, {}})[0];
  Shape out_shape = qs;
  out_shape[3] = shape(v)[3];
  TensorId out = new_tensor(out_shape, dtype(q), TensorKind::activation);
  Op& op = emit("sdpa_efficient", {q, k, v, additive});
  op.outs = {out};
  finish_outs(op);
  return out;
}

TensorId GraphBuilder::sdpa(TensorId q, TensorId k, TensorId v, double dropout_p, bool causal, TensorId bool_mask,
                            bool float_mask) {
  TensorId bias = kNoTensor;
  if (float_mask && bool_mask != kNoTensor) bias = autocast_low(bool_mask);
  v = autocast_low(v);  // autocast casts the arguments last to first (whole-run stream: k's cast before q's)
  k = autocast_low(k);
  q = autocast_low(q);
  const Shape qs = shape(q);  // [B, H, L, D]; a copy: new tensors below reallocate the table
  if (qs.size() != 4) throw InputError("sdpa.q", std::to_string(qs.size()), "expects a 4-d query");
  if (bool_mask != kNoTensor && !float_mask)
    bias = generic({"attn_mask_to_float", {bool_mask}, {{{qs[0], 1, qs[2], shape(k)[2]}, dtype(q)}}, {}, {}, {}, {}})[0];
  const DType dt = dtype(q);
  // Backend choice measured on H200 / torch 2.11: 16-bit -> cuDNN (also with dropout or a mask); fp32 ->
  // memory-efficient, except with grouped KV heads (enable_gqa), which only the math backend supports.
  if (dt == DType::f32 && shape(k)[1] != qs[1]) return sdpa_math(q, k, v, dropout_p, causal);
  const bool fused_low = dt != DType::f32;
  Shape lse_shape{qs[0], qs[1], qs[2]};
  std::vector<TensorId> outs;
  TensorId seed = kNoTensor, offset = kNoTensor;
  if (fused_low) {  // philox seed and offset live on the device for flash / cuDNN
    seed = new_tensor({1}, DType::i64, TensorKind::activation);
    offset = new_tensor({1}, DType::i64, TensorKind::activation);
    outs = {seed, offset};
  }
  Shape out_shape = qs;
  out_shape[3] = shape(v)[3];
  TensorId out = new_tensor(out_shape, dt, TensorKind::activation);
  outs.push_back(out);
  // The softmax row sums exist only for a backward (sdp_utils' should_compute_logsumexp: grad mode and an
  // input that requires grad); inference allocates none (whole-run amp TinyLlama-shape prefill stream).
  const bool grad = training() && (info(q).requires_grad || info(k).requires_grad || info(v).requires_grad);
  TensorId lse = grad ? new_tensor(lse_shape, DType::f32, TensorKind::activation) : kNoTensor;
  if (lse != kNoTensor) outs.push_back(lse);
  std::vector<TensorId> reads{q, k, v};
  if (bias != kNoTensor) reads.push_back(bias);
  Op& op = emit(fused_low ? "sdpa_flash" : "sdpa_efficient", reads);
  op.outs = outs;
  op.dropout = dropout_p > 0 && training();
  op.causal = causal;
  if (fused_low) op.fwd_temp_bytes = {256};
  finish_outs(op);
  op.saved = {q, k, v, out};
  if (bias != kNoTensor) op.saved.push_back(bias);
  if (lse != kNoTensor) {
    g_.tensors[static_cast<size_t>(lse)].requires_grad = false;
    op.saved.push_back(lse);
  }
  if (seed != kNoTensor) { op.saved.push_back(seed); op.saved.push_back(offset); }
  if (op.has_backward) {
    add_grads(op, {q, k, v});
    const int64_t bhl = checked_mul(checked_mul(qs[0], qs[1]), qs[2]);
    const int64_t q_f32 = checked_mul(checked_mul(bhl, qs[3]), 4);
    if (fused_low) {
      // cuDNN's workspace: an fp32 dq accumulator (two with grouped KV heads), the softmax row sums and 256 B
      // more, after the three gradients. calibrate/sdpa_workspace.py measured it to the byte over B, H, Hkv,
      // S, D and both q/k/v layouts (data/calibration/raw/h200-cudnn-sdpa-backward.json.gz); the whole-run
      // streams agree (GPT-2 small b8 s1024 25559296 B, Llama-3.2-1B b2 s1024 33816832 B, TinyLlama b4 s2048
      // 135266560 B, the 24-head Llama-3 shape b1 s2048 50528512 B).
      const bool gqa = shape(k)[1] != qs[1];
      op.bwd_temp_bytes = {checked_add(checked_add(checked_mul(q_f32, gqa ? 2 : 1), checked_mul(bhl, 4)), 256)};
    } else {
      // memory-efficient backward: delta rows and a grad-output sized scratch.
      op.bwd_temp_bytes = {checked_mul(bhl, 4), checked_add(q_f32, 24576)};
    }
  }
  (void)dropout_p;
  return out;
}

TensorId GraphBuilder::sdpa_math(TensorId q, TensorId k, TensorId v, double dropout_p, bool causal) {
  // _scaled_dot_product_attention_math: q and k each scaled by sqrt(scale) (copies), k/v repeated for GQA,
  // scores = q @ k^T [B, H, L, L], causal bias added in place, _safe_softmax, dropout, @ v.
  const Shape qs = shape(q);
  const int64_t B = qs[0], H = qs[1], L = qs[2], D = qs[3];
  const int64_t Lk = shape(k)[2];
  // Order and lifetimes as aten's _scaled_dot_product_attention_math writes them, the same in training and
  // inference (whole-run fp32 streams: gemma2 GQA prefill rq-gemma2-infer-fp32-b2s2048-g8; Qwen2 GQA training
  // f13-qwen2-seqcls-fp32-b4s512, every event >= 1 MiB of the run): `query` scaled, then the causal mask
  // (ones.tril() converted to an additive [L, S] float mask), the repeated key / value, then
  // key.transpose(-2, -1) * scale (its result keeps the transposed strides, which matmul copies); query, the
  // repeated K / V and the mask are C++ locals that live until the function returns. With autograd on, the
  // scaled key lives as long (freed with them, after the context bmm); without, it goes after the scores bmm.
  TensorId qsc = scalar_op("mul_scalar", q, false);
  hold(qsc);
  TensorId bias = kNoTensor;
  if (causal) {
    bias = generic({"causal_bias", {}, {{{L, Lk}, dtype(qsc)}}, {}, {}, {}, {}})[0];
    hold(bias);
  }
  TensorId kr = shape(k)[1] != H ? contiguous_copy(k, {B, H, Lk, D}) : k;
  TensorId vr = shape(v)[1] != H ? contiguous_copy(v, {B, H, Lk, shape(v)[3]}) : v;
  hold(kr);
  hold(vr);
  TensorId ksc = scalar_op("mul_scalar", kr, false);
  if (training()) hold(ksc);
  TensorId scores = matmul(qsc, ksc, {B, H, L, Lk}, false, true);
  if (causal) scores = inplace("add_", scores, false, {bias});
  TensorId probs = new_tensor({B, H, L, Lk}, dtype(scores), TensorKind::activation);
  {
    const int64_t n = checked_mul(checked_mul(checked_mul(B, H), L), Lk);
    Op& op = emit("safe_softmax", {scores});
    op.outs = {probs};
    // The output plus a 1 B/element -inf mask (the fp32 GQA prefill case l3b8-infer: peak minus live set =
    // scores + probs + 1 B/element; the Qwen2 training stream: a [B, H, L, L] output, a 1 B/element block freed at
    // once). Its backward holds a second [B, H, L, L] buffer besides the gradient (training stream: two
    // allocations, then the incoming gradient, the temporary and the saved output freed).
    op.fwd_temp_bytes = {n};
    finish_outs(op);
    op.saved = {probs};
    if (op.has_backward) {
      add_grads(op, {scores});
      op.bwd_temp_bytes = {checked_mul(n, dtype_bytes(dtype(scores)))};
    }
  }
  probs = dropout(probs, dropout_p);
  TensorId out = matmul(probs, vr, {B, H, L, shape(vr)[3]});
  for (TensorId t : {qsc, kr, vr, bias, training() ? ksc : kNoTensor})
    if (t != kNoTensor) drop(t);
  return out;
}

TensorId GraphBuilder::cross_entropy(TensorId logits2d, TensorId labels) {
  // cross_entropy = nll_loss(log_softmax(x)). Under autocast log_softmax runs in the logits' dtype and nll_loss
  // (fp32 policy) casts its input to fp32 (BERT amp trace: a bf16 [N, V] then an fp32 [N, V] allocation).
  // log_softmax saves its output; nll_loss saves its input (for the shape), target and total_weight.
  TensorId lsm = new_tensor(shape(logits2d), dtype(logits2d), TensorKind::activation);
  {
    Op& op = emit("log_softmax", {logits2d});
    op.outs = {lsm};
    finish_outs(op);
    op.saved = {lsm};
    if (op.has_backward) add_grads(op, {logits2d});
  }
  TensorId x = autocast_fp32(lsm);
  TensorId loss = new_tensor({}, dtype(x), TensorKind::activation);
  TensorId total_weight = new_tensor({}, dtype(x), TensorKind::activation);
  Op& op = emit("nll_loss", {x, labels});
  op.outs = {loss, total_weight};
  finish_outs(op);
  g_.tensors[static_cast<size_t>(total_weight)].requires_grad = false;
  op.saved = {x, labels, total_weight};
  if (op.has_backward) add_grads(op, {x});  // nll_loss_backward: a zero-filled [N, V] gradient
  return loss;
}

TensorId GraphBuilder::conv2d(TensorId x, TensorId w, TensorId b, int64_t conv_stride, int64_t conv_pad,
                              Shape out_shape) {
  TensorId wc = autocast_low(w);
  TensorId xc = autocast_low(x);
  TensorId bc = autocast_low(b);
  TensorId y = new_tensor(std::move(out_shape), dtype(xc), TensorKind::activation);
  std::vector<TensorId> reads{xc, wc};
  if (bc != kNoTensor) reads.push_back(bc);
  Op& op = emit("conv2d", reads);
  op.conv = static_cast<int32_t>(g_.convs.size());
  g_.convs.push_back({conv_stride, conv_pad, 1, 1, false});
  op.outs = {y};
  finish_outs(op);
  // cuDNN's workspaces (engine/conv_workspace.h): forward after the output; dgrad after grad_input, wgrad after
  // grad_weight (the order of convolution_backward in the traces).
  const Shape& xs = shape(xc);
  const Shape& ws = shape(wc);
  const ConvShape cs{xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], conv_stride, conv_pad, dtype(xc)};
  const ConvWorkspaceModel& model = cfg_.conv_workspace ? *cfg_.conv_workspace : shipped_conv_workspace();
  const ConvWorkspaceBytes cw = model.workspace(cs);
  if (cw.forward > 0) op.fwd_temp_bytes.push_back(cw.forward);
  op.optional_workspaces = true;  // ATen's try_plans: a workspace that cannot be allocated -> the next engine
  save_for_product(op, xc, wc);
  // As conv2d_ex: the weight is kept even where only the weight needs a gradient.
  if (op.has_backward && !info(xc).requires_grad && info(wc).requires_grad) op.saved.push_back(wc);
  if (op.has_backward) {
    add_grads(op, {xc, wc, bc});
    // convolution_backward sums the bias gradient after the cuDNN kernels, grad_output.sum((0, 2, 3)): a column
    // reduction of [N * OH * OW, C] whose staging buffer comes right after the bias gradient (whole-run HF ViT
    // streams: 12.50 MiB + 32 B for [8 * 196, 1024] fp32, 73.50 MiB for [64 * 196, 768] bf16).
    const ReduceWorkspace bias_ws = column_sum(cfg_, numel(y), ws[0]);
    for (GradSpec& g : op.grads) {
      if (g.input == xc) g.then_temp_bytes = cw.dgrad;
      if (g.input == wc) g.then_temp_bytes = cw.wgrad;
      if (g.input == bc) g.then_temp_bytes = bias_ws.buffer_bytes;
    }
  }
  return y;
}

TensorId GraphBuilder::batch_norm(TensorId x, TensorId w, TensorId b) {
  // cudnn_batch_norm: output, save_mean, save_invstd [C] fp32 and a reserve buffer; saves input and stats.
  const int64_t c = shape(x)[1];
  if (!training()) {
    // model.eval(): the running statistics normalise. cudnn_batch_norm in inference allocates the output only
    // (save_mean / save_var / reserve are empty tensors). ATen takes cuDNN unless the input is fp16 with fp16
    // weights (pure fp16) or has 2^31 - 1 elements or more; the native batch_norm_cuda then allocates save_mean
    // and save_invstd [C] in the accumulate type (fp32) after the output, dropped when batch_norm returns.
    const bool native = (dtype(x) == DType::f16 && dtype(w) == DType::f16) || numel(x) >= INT32_MAX;
    TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
    Op& op = emit("batch_norm", {x, w, b});
    op.outs = {y};
    if (native) {
      op.outs.push_back(new_tensor({c}, DType::f32, TensorKind::activation));
      op.outs.push_back(new_tensor({c}, DType::f32, TensorKind::activation));
    }
    finish_outs(op);
    return y;
  }
  TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
  TensorId mean = new_tensor({c}, DType::f32, TensorKind::activation);
  TensorId invstd = new_tensor({c}, DType::f32, TensorKind::activation);
  Op& op = emit("batch_norm", {x, w, b});
  op.outs = {y, mean, invstd};
  finish_outs(op);
  op.saved = {x, w, mean, invstd};
  if (op.has_backward) add_grads(op, {x, w, b});
  return y;
}

TensorId GraphBuilder::max_pool2d(TensorId x, Shape out_shape) {
  TensorId y = new_tensor(out_shape, dtype(x), TensorKind::activation);
  TensorId idx = new_tensor(out_shape, DType::i64, TensorKind::activation);
  Op& op = emit("max_pool2d", {x});
  op.outs = {y, idx};
  finish_outs(op);
  g_.tensors[static_cast<size_t>(idx)].requires_grad = false;
  op.saved = {x, idx};
  if (op.has_backward) add_grads(op, {x});
  return y;
}

TensorId GraphBuilder::adaptive_avg_pool(TensorId x, Shape out_shape) {
  TensorId y = new_tensor(std::move(out_shape), dtype(x), TensorKind::activation);
  Op& op = emit("adaptive_avg_pool2d", {x});
  op.outs = {y};
  finish_outs(op);
  op.saved = {x};
  if (op.has_backward) add_grads(op, {x});
  return y;
}

TensorId GraphBuilder::conv2d_ex(TensorId x, TensorId w, TensorId b, const Conv2dArgs& a) {
  TensorId wc = autocast_low(w);
  TensorId xc = autocast_low(x);
  TensorId bc = autocast_low(b);
  const Shape xs = shape(xc);  // copies: new tensors below reallocate the table
  const Shape ws = shape(wc);
  if (xs.size() != 4 || ws.size() != 4 || a.groups < 1 || xs[1] != ws[1] * a.groups || ws[0] % a.groups != 0)
    throw InputError("conv2d.groups", std::to_string(a.groups), "input channels must equal weight in-channels x groups");
  const auto extent = [&](int64_t in) {
    return (in + 2 * a.pad - a.dilation * (ws[2] - 1) - 1) / a.stride + 1;
  };
  const int64_t oh = extent(xs[2]), ow = extent(xs[3]);
  if (oh < 1 || ow < 1)
    throw InputError("image_size", std::to_string(cfg_.image_size), "too small for the model's convolutions");
  TensorId y = new_tensor({xs[0], ws[0], oh, ow}, dtype(xc), TensorKind::activation);
  std::vector<TensorId> reads{xc, wc};
  if (bc != kNoTensor) reads.push_back(bc);
  const bool depthwise = a.groups > 1 && a.groups == xs[1] && ws[0] % xs[1] == 0;
  // ConvParams::use_cudnn_depthwise (torch 2.11): cuDNN takes depthwise convs only in fp16; fp32 and bf16 run
  // the native depthwise kernels.
  const bool native = depthwise && dtype(xc) != DType::f16 && !a.channels_last;
  const bool weight_copy = a.channels_last && ws[1] > 1 && ws[2] > 1;
  Op& op = emit(native ? "conv2d_depthwise" : "conv2d", reads);
  op.conv = static_cast<int32_t>(g_.convs.size());
  g_.convs.push_back({a.stride, a.pad, a.dilation, a.groups, a.channels_last});
  op.outs = {y};
  finish_outs(op);
  ConvWorkspaceBytes cw;
  if (!native) {
    const ConvShape cs{xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], a.stride, a.pad, dtype(xc), a.groups, a.dilation,
                       a.channels_last};
    const ConvWorkspaceModel& model = cfg_.conv_workspace ? *cfg_.conv_workspace : shipped_conv_workspace();
    cw = model.workspace(cs);
  }
  if (weight_copy) op.fwd_temp_bytes.push_back(bytes_of(ws, dtype(wc)));
  if (cw.forward > 0) op.fwd_temp_bytes.push_back(cw.forward);
  op.optional_workspaces = true;
  save_for_product(op, xc, wc);
  // ConvolutionBackward0 has one formula for input, weight and bias, so autograd keeps the weight even where only
  // the weight needs a gradient (an image input): under autocast its 16-bit cast outlives the autocast cache until
  // the conv's backward (whole-run HF ViT amp fp16 stream: the patch conv's 1.12 MiB fp16 weight freed there).
  if (op.has_backward && !info(xc).requires_grad && info(wc).requires_grad) op.saved.push_back(wc);
  if (op.has_backward) {
    add_grads(op, {xc, wc, bc});
    // A channels-last conv's bias gradient, grad_output.sum((0, 2, 3)), is a column reduction of [N * OH * OW, C]
    // (the gradient has the output's NHWC strides), staged as conv2d's is (whole-run HF ConvNeXt streams: 24.75 MiB
    // after the depthwise wgrad of [48 * 56 * 56, 96] fp32, 16.25 MiB for [21 * 14 * 14, 512] bf16). A contiguous
    // gradient reduces its fastest dimension instead: another configuration, not modelled (no bias there so far).
    int64_t bias_ws_bytes = 0;
    if (a.channels_last && bc != kNoTensor)
      bias_ws_bytes = column_sum(cfg_, numel(y), ws[0]).buffer_bytes;
    for (GradSpec& g : op.grads) {
      if (g.input == xc) g.then_temp_bytes = cw.dgrad;
      if (g.input == wc) g.then_temp_bytes = cw.wgrad;
      if (g.input == bc) g.then_temp_bytes = bias_ws_bytes;
    }
    if (weight_copy) op.bwd_pre_temp_bytes.push_back(bytes_of(ws, dtype(wc)));
  }
  return y;
}

TensorId GraphBuilder::conv1d(TensorId x, TensorId w, TensorId b, int64_t stride, int64_t pad) {
  TensorId wc = autocast_low(w);
  TensorId xc = autocast_low(x);
  TensorId bc = autocast_low(b);
  const Shape xs = shape(xc);  // copies: new tensors below reallocate the table
  const Shape ws = shape(wc);
  if (xs.size() != 3 || ws.size() != 3 || xs[1] != ws[1] || stride < 1)
    throw InputError("conv1d.in_channels", std::to_string(xs.size() == 3 ? xs[1] : 0), "must equal the weight's");
  const int64_t len = (xs[2] + 2 * pad - (ws[2] - 1) - 1) / stride + 1;
  if (len < 1) throw InputError("seq_len", std::to_string(xs[2]), "too short for the model's convolutions");
  TensorId y = new_tensor({xs[0], ws[0], len}, dtype(xc), TensorKind::activation);
  std::vector<TensorId> reads{xc, wc};
  if (bc != kNoTensor) reads.push_back(bc);
  Op& op = emit("conv1d", reads);
  op.outs = {y};
  finish_outs(op);
  const int64_t io_w = checked_add(checked_add(info(xc).bytes, info(y).bytes), info(wc).bytes);
  op.fwd_temp_bytes.push_back(checked_add(io_w, 147));
  op.optional_workspaces = true;
  op.saved = {xc, wc};
  if (op.has_backward) {
    add_grads(op, {xc, wc, bc});
    for (GradSpec& g : op.grads) {
      if (g.input == xc) g.then_temp_bytes = checked_add(io_w, 147);
      if (g.input == wc) g.then_temp_bytes = checked_add(io_w, 16);
    }
  }
  return y;
}

TensorId GraphBuilder::mean_hw(TensorId x) {
  Shape s = shape(x);
  if (s.size() != 4) throw InputError("mean_hw", std::to_string(s.size()), "expects a 4-d input");
  s[2] = s[3] = 1;
  return generic({"mean_hw", {x}, {{s, dtype(x)}}, {}, {}, {}, {}})[0];
}

TensorId GraphBuilder::upsample_bilinear2d(TensorId x, int64_t out_h, int64_t out_w, bool grad_copy) {
  x = autocast_fp32(x);  // AT_FORALL_FP32 lists the upsample ops (torch >= 2.4): a 16-bit input is cast to fp32
  Shape s = shape(x);
  if (s.size() != 4) throw InputError("upsample_bilinear2d", std::to_string(s.size()), "expects a 4-d input");
  const bool same = s[2] == out_h && s[3] == out_w;
  s[2] = out_h;
  s[3] = out_w;
  TensorId y = new_tensor(s, dtype(x), TensorKind::activation);
  Op& op = emit("upsample_bilinear2d", {x});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) {
    add_grads(op, {x});
    if (grad_copy && !same) op.bwd_pre_temp_bytes = {info(y).bytes};
  }
  return y;
}

TensorId GraphBuilder::avg_pool2d(TensorId x, Shape out_shape) {
  return generic({"avg_pool2d", {x}, {{std::move(out_shape), dtype(x)}}, {0}, {}, {}, {}})[0];
}

}  // namespace memplan
