// T5ForConditionalGeneration (transformers 5.17 models/t5/modeling_t5.py), training forward + seq2seq loss.
//   encoder: shared(ids) -> dropout -> N x T5Block(self-attn, FF) -> final_layer_norm -> dropout
//   decoder: shared(_shift_right(labels)) -> dropout -> M x T5Block(causal self-attn, cross-attn over the
//            encoder output, FF) -> final_layer_norm -> dropout -> (* d_model**-0.5 when scale_decoder_outputs)
//   lm_head (always tied to `shared` in 5.17) -> CrossEntropyLoss over [B*T, V] (no fp32 upcast of the logits).
//   Sub-layers: h + dropout(sublayer(T5LayerNorm(h))); T5LayerNorm is RMS without mean or bias, its variance in
//   fp32, `h * rsqrt(var + eps)` promoting a 16-bit h to fp32, cast back only for 16-bit weights.
//   Attention has no scaling (scaling = 1.0) and adds a relative position bias [1, H, q, k]: the first block
//   of each stack computes it (compute_bias: int64 bucket arithmetic over [q, k], an embedding lookup
//   [q, k, H], a permuted view) and every later block reuses it; cross-attention uses a zero bias
//   [1, H, T, S] created in the decoder's first block.
//   SDPA (integrations/sdpa_attention.py): the bias is the float attn_mask (decoder: torch.where over a
//   causal bool [T, T] first, per layer, laid out like the bias). The permuted relative bias sends every
//   self-attention to the math backend (observed in training and inference); the contiguous zero
//   cross-attention bias keeps cuDNN (16-bit) / memory-efficient (fp32), memory-efficient when it requires
//   grad (checkpointing), which computes its gradient at the batch-expanded size [B, H, q, k].
//   Eager: matmul(q, k^T) * 1.0 + bias (+ the decoder's causal float mask), softmax, dropout, matmul(., v).
//   T5DenseActDense / T5DenseGatedActDense cast the activation to wo's dtype first (fp32 weights under amp:
//   an fp32 copy that the wo linear autocasts back to the low dtype).
//   fp16 weights: T5Block clamps hidden_states after every sub-layer (isinf().any(), where, clamp).
// Layer indices (grad_checkpointing_layers, frozen_layers): encoder blocks 0..N-1, decoder blocks N..N+M-1.
// Inference: the encoder and the first decoder step, then one decoder step per generated token with an
// EncoderDecoderCache (build_inference).
// mt5 runs this builder (MT5ForConditionalGeneration is this Python without the output scaling). umt5 runs the
// same drivers (build_t5_family: both stacks and the loss, the generate passes) with its own attention; they and
// the pieces it shares are in namespace t5parts (engine/arch/seq2seq/t5_parts.h).
#include <cmath>
#include <string>

#include "engine/arch/sdpa_bias.h"
#include "engine/arch/seq2seq/t5_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace t5parts {

bool low_precision(DType t) { return t == DType::bf16 || t == DType::f16; }

// T5LayerNorm.forward: variance = h.to(f32).pow(2).mean(-1, keepdim); h = h * rsqrt(variance + eps) (a 16-bit
// h times the fp32 rsqrt promotes to fp32); .to(weight dtype) only for 16-bit weights; weight * h.
// (LlamaRMSNorm differs: it multiplies the fp32 copy, so the builders' rms_norm does not apply.)
TensorId t5_norm(GraphBuilder& b, TensorId x, TensorId w) {
  TensorId x32 = b.to(x, DType::f32);
  TensorId sq = b.pow_scalar(x32);
  TensorId var = b.reduce_last("mean", sq, false);
  b.hold(var);  // `variance` stays bound until forward returns
  TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  TensorId n = b.mul(x, r);
  if (low_precision(b.dtype(w))) n = b.to(n, b.dtype(w));
  TensorId y = b.mul(w, n);
  b.drop(var);
  return y;
}

TensorId t5_act(GraphBuilder& b, const std::string& act, TensorId x) {
  if (act == "relu") return b.unary("relu", x, false, true);  // nn.ReLU saves its result
  if (act == "gelu_new") return gelu_new(b, x);
  if (act == "gelu" || act == "gelu_pytorch_tanh" || act == "silu" || act == "swish")
    return b.unary(act, x, true, false);
  throw InputError("model.hidden_act", act, "is not modelled for t5");
}

// T5Block's fp16 clamp: torch.isinf(h).any() (a bool copy of h, then one element), torch.where of two
// scalars, torch.clamp(h, min=-c, max=c) with tensor bounds: a new h whose backward keeps h.
TensorId fp16_clamp(GraphBuilder& b, TensorId h) {
  if (b.dtype(h) != DType::f16) return h;
  const Shape hs = b.shape(h);
  TensorId inf = b.generic_one("isinf", {h}, hs, DType::boolean);
  TensorId any = b.generic_one("any", {inf}, {}, DType::boolean);
  TensorId bound = b.generic_one("where", {any}, {}, DType::f16);
  b.hold(bound);  // clamp_value: bound until the block returns
  TensorId lo = b.generic_one("neg", {bound}, {}, DType::f16);
  TensorId out = b.generic({"clamp", {h, lo, bound}, {{hs, DType::f16}}, {0, 1, 2}, {}, {}, {}})[0];
  b.drop(bound);
  return out;
}

// T5Attention.compute_bias(q, k) with _relative_position_bucket, as its statements run: int64 [q, k]
// arithmetic (each expression a temporary, the named locals bound until their function returns), then the
// relative_attention_bias lookup [q, k, H] and values.permute([2, 0, 1]).unsqueeze(0), a view.
TensorId compute_bias(GraphBuilder& b, TensorId table, int64_t q, int64_t k, int64_t heads, bool bidirectional,
                      bool log_ratio_local) {
  const Shape qk{q, k};
  TensorId ctx = b.generic_one("add_scalar", {b.generic_one("arange", {}, {q}, DType::i64)}, {q, 1}, DType::i64);
  TensorId mem = b.generic_one("arange", {}, {1, k}, DType::i64);
  const TensorId rel = b.generic_one("sub", {mem, ctx}, qk, DType::i64);
  b.hold(rel);  // relative_position: bound in compute_bias until it returns
  TensorId buckets = kNoTensor, relp;
  if (bidirectional) {
    TensorId gt = b.generic_one("gt", {rel}, qk, DType::boolean);
    TensorId as_long = b.generic_one("to_copy", {gt}, qk, DType::i64);
    buckets = b.generic_one("mul_scalar", {as_long}, qk, DType::i64);  // 0 + tensor: the sum is a new tensor
    buckets = b.generic_one("add_scalar", {buckets}, qk, DType::i64);
    relp = b.generic_one("abs", {rel}, qk, DType::i64);
  } else {
    TensorId zeros = b.generic_one("zeros_like", {rel}, qk, DType::i64);
    relp = b.generic_one("neg", {b.generic_one("minimum", {rel, zeros}, qk, DType::i64)}, qk, DType::i64);
  }
  const TensorId held_buckets = buckets;  // `relative_buckets`, bound until the bucket function returns
  if (buckets != kNoTensor) b.hold(buckets);
  b.hold(relp);
  const TensorId is_small = b.generic_one("lt", {relp}, qk, DType::boolean);
  b.hold(is_small);
  TensorId f = b.generic_one("to_copy", {relp}, qk, DType::f32);
  f = b.generic_one("div_scalar", {f}, qk, DType::f32);
  f = b.generic_one("log", {f}, qk, DType::f32);
  f = b.generic_one("div_scalar", {f}, qk, DType::f32);
  f = b.generic_one("mul_scalar", {f}, qk, DType::f32);
  if (log_ratio_local) b.hold(f);
  TensorId large = b.generic_one("add_scalar", {b.generic_one("to_copy", {f}, qk, DType::i64)}, qk, DType::i64);
  TensorId full = b.generic_one("full_like", {large}, qk, DType::i64);
  large = b.generic_one("minimum", {large, full}, qk, DType::i64);
  TensorId chosen = b.generic_one("where", {is_small, relp, large}, qk, DType::i64);
  if (bidirectional) {
    buckets = b.inplace("add_", buckets, false, {chosen});
  } else {
    buckets = b.generic_one("add_scalar", {chosen}, qk, DType::i64);
  }
  b.drop(is_small);
  if (log_ratio_local) b.drop(f);
  b.drop(relp);
  TensorId values = b.embedding(buckets, table);  // [q, k, H]
  // the held id, not the in-place add's alias of it (dropping the alias had kept the int64 [q, k] buckets until
  // the end of the forward where nothing saves them: a checkpointed layer's first forward)
  if (bidirectional) b.drop(held_buckets);
  b.drop(rel);
  return b.view(values, {1, heads, q, k});
}

// torch.matmul as the math SDPA backend runs it: inside the autocast wrapper of scaled_dot_product_attention
// (autocast_mode.h WrapFunction_ excludes the Autocast key for the call), so no cast even under amp, which
// GraphBuilder::matmul would apply (whole-run stream, amp bf16 t5-small b8 s512: fp32 [B, H, L, L] scores,
// 8 MiB fp32 copies of the scaled q and k). The head-split operands are copied (`copy_*`) and bmm saves the
// copies; BmmBackward computes mat2's gradient before self's.
TensorId matmul_no_autocast(GraphBuilder& b, TensorId x, TensorId y, Shape out, bool copy_x, bool copy_y) {
  if (copy_x) x = b.contiguous_copy(x, b.shape(x));
  if (copy_y) y = b.contiguous_copy(y, b.shape(y));
  std::vector<int> saved;  // indices into the reads {y, x}
  if (b.info(y).requires_grad) saved.push_back(1);  // y's gradient needs x
  if (b.info(x).requires_grad) saved.push_back(0);
  const DType dt = b.dtype(x);
  return b.generic({"matmul", {y, x}, {{std::move(out), dt}}, saved, {}, {}, {}})[0];
}

// The float-mask SDPA of sdpa_attention_forward with T5's bias. Autocast casts the mask with q, k, v (last to
// first). Backend (observed on the H200, torch 2.11, whole-run streams): the permuted relative position bias
// (`bias_permuted`: every self-attention, with or without grad, training and inference) gets the math backend;
// the cross-attention's contiguous zero bias does not: cuDNN for 16-bit, memory-efficient for fp32 and for a
// zero bias that requires grad (gradient checkpointing).
// Math (_scaled_dot_product_attention_math): 16-bit q, k, v are upcast to fp32 (allowFP16BF16ReductionMathSDP
// off), q * sqrt(scale) and k^T * sqrt(scale) keep the head-split layout, so matmul copies both; the mask is
// added to the scores in place, _safe_softmax (its output and a -inf test), dropout, matmul with v (copied too),
// the output and the probabilities cast back to the input dtype (the latter discarded by
// F.scaled_dot_product_attention). Until the twenty-fifth session the add was out of place and _safe_softmax kept
// an fp32 copy of the scores, which the older streams had been fitted with (data/validation/NOTES.md "T5's
// attention as the recordings run it").
// Returns the output [B, H, q, D]; for the fused kernels its memory is [B, q, H, D] (the transpose(1, 2)
// .contiguous() that follows is free), for math the caller's contiguous() copies.
TensorId biased_sdpa(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId bias, bool bias_permuted,
                     double dropout_p, bool& out_contiguous_heads) {
  if (!bias_permuted) {  // the fused kernels (engine/arch/sdpa_bias.h)
    out_contiguous_heads = false;
    return sdpa_float_mask(b, q, k, v, bias, dropout_p);
  }
  const TensorId bias_in = bias;
  bias = b.autocast_low(bias);
  v = b.autocast_low(v);
  k = b.autocast_low(k);
  q = b.autocast_low(q);
  const Shape qs = b.shape(q);
  const int64_t B = qs[0], H = qs[1], L = qs[2], D = qs[3], Lk = b.shape(k)[2];
  const DType dt = b.dtype(q);
  const int64_t bhl = checked_mul(checked_mul(B, H), L);
  {
    out_contiguous_heads = true;
    const bool up = low_precision(dt);
    TensorId q32 = up ? b.to(q, DType::f32) : q, k32 = up ? b.to(k, DType::f32) : k,
             v32 = up ? b.to(v, DType::f32) : v;
    TensorId qsc = b.scalar_op("mul_scalar", q32, false);
    TensorId ksc = b.scalar_op("mul_scalar", k32, false);
    // query_acc / key_acc / value_acc and the scaled query are C++ locals of the math function, alive until it
    // returns; the scaled key^T is a temporary of the matmul's full expression (whole-run inference stream:
    // seven q-sized fp32 buffers before the scores, three of them freed after the q k^T matmul)
    std::vector<TensorId> locals{qsc};
    if (up) locals.insert(locals.end(), {q32, k32, v32});
    for (TensorId t : locals) b.hold(t);
    // autocast's cast of the mask is an argument of the math function, alive until the call returns (whole-run
    // stream f15-umt5s-ampfp16: the 16-bit bias freed after the context matmul, not at the in-place add)
    if (bias != bias_in) b.hold(bias);
    b.hold(ksc);
    TensorId qk = matmul_no_autocast(b, qsc, ksc, {B, H, L, Lk}, true, true);
    b.drop(ksc);
    // attn.add_(mask): in place (the math function's own scores; no tensor subclass), as GraphBuilder::sdpa_math
    TensorId scores = b.inplace("add_", qk, false, {bias});
    const int64_t n = checked_mul(bhl, Lk);
    const int64_t sb = checked_mul(n, 4);
    // _safe_softmax: its output and a 1 B/element -inf test, freed at once (GraphBuilder::sdpa_math)
    TensorId probs = b.generic({"safe_softmax", {scores}, {{{B, H, L, Lk}, DType::f32}}, {}, {0},
                                std::vector<int64_t>{n}, {sb}})[0];
    // `attn` (the probabilities after dropout) is the math function's local and its second return value: alive
    // until it returns. make_tuple(matmul(attn, v).to(dt), attn.to(dt)) evaluates its arguments last to first
    // (GCC): the probabilities' cast, then the context; on return attn, the locals, the discarded cast, then
    // autocast's mask (whole-run stream f15-umt5s-ampfp16 under checkpointing, whose first forward saves nothing)
    probs = b.dropout(probs, dropout_p);
    b.hold(probs);
    TensorId weights = kNoTensor;
    if (up) {
      weights = b.generic_one("to_copy", {probs}, {B, H, L, Lk}, dt);
      b.hold(weights);
    }
    TensorId out = matmul_no_autocast(b, probs, v32, {B, H, L, D}, false, true);
    // the 16-bit path's output gradient comes back through the caller's contiguous() (a view there) and the cast
    // back (ToCopyBackward keeps its strides): bmm's backward copies that fp32 gradient contiguous and releases it
    // (whole-run stream f16-mt5b-bf16 checkpointed: an fp32 [B, H, q, D] copy after the cast's, not a 16-bit one
    // at the contiguous()'s backward); fp32 runs copy at the contiguous()
    if (up) out = b.to(b.view_copying_grad(out, {B, H, L, D}), dt);
    b.drop(probs);
    for (TensorId t : locals) b.drop(t);
    if (up) b.drop(weights);
    if (bias != bias_in) b.drop(bias);
    return out;
  }
}

AttnParams attn_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t d = s.hidden_size, inner = s.num_heads * s.head_dim;
  AttnParams a;
  a.q = b.param(p + "q.weight", {inner, d}, train);
  a.k = b.param(p + "k.weight", {inner, d}, train);
  a.v = b.param(p + "v.weight", {inner, d}, train);
  a.o = b.param(p + "o.weight", {d, inner}, train);
  return a;
}

FfParams ff_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t d = s.hidden_size, f = s.intermediate_size;
  FfParams w;
  if (s.gated_ffn) {
    w.wi = b.param(p + "DenseReluDense.wi_0.weight", {f, d}, train);
    w.wi1 = b.param(p + "DenseReluDense.wi_1.weight", {f, d}, train);
  } else {
    w.wi = b.param(p + "DenseReluDense.wi.weight", {f, d}, train);
  }
  w.wo = b.param(p + "DenseReluDense.wo.weight", {d, f}, train);
  w.norm = b.param(p + "layer_norm.weight", {d}, train);
  return w;
}

TensorId attention_output_residual(GraphBuilder& b, const TransformerSpec& s, TensorId ctx, TensorId o, TensorId h,
                                   TensorId x, std::initializer_list<TensorId> dead) {
  // ctx is [B, q, H, D] or, from the fused kernels, [B, H, q, D] over that memory: viewed as [B, q, H * D]
  const Shape hs = b.shape(h), cs = b.shape(ctx);
  TensorId out = b.linear(b.view(ctx, {hs[0], hs[1], cs[2] * cs[3] * cs[1] / hs[1]}), o);
  // the layer's `attention_output` tuple holds o's output until the layer returns, after the residual add and
  // after `normed_hidden_states` (whole-run stream f15-umt5s-ampfp16, checkpointed forward: nothing saved)
  b.hold(out);
  for (TensorId t : dead) b.drop(t);
  TensorId res = b.add(h, b.dropout(out, s.resid_dropout));
  b.drop(x);
  b.drop(out);
  return res;
}

// `hidden_states = self.wo(hidden_states)`: the input is bound to the local until wo returns, so under autocast it
// outlives the 16-bit cast the linear makes of it (whole-run stream f15-umt5s-ampfp16: the fp32 input freed after
// wo's output and its cast, not at the cast).
TensorId wo_call(GraphBuilder& b, TensorId y, TensorId wo) {
  b.hold(y);
  TensorId out = b.linear(y, wo);
  b.drop(y);
  return out;
}

// T5LayerFF: h + dropout(DenseReluDense(layer_norm(h))).
TensorId feed_forward(GraphBuilder& b, const TransformerSpec& s, const FfParams& w, TensorId h) {
  const double p = s.resid_dropout;
  TensorId x = t5_norm(b, h, w.norm);
  // forwarded_states: bound to the norm's output until DenseReluDense returns, then rebound to its output, which
  // lives until T5LayerFF returns (whole-run stream f2-flanl-bf16 checkpointed: the norm's output freed before the
  // dropout, the sub-layer's output after the residual add)
  b.hold(x);
  TensorId y;
  if (s.gated_ffn) {
    TensorId g = t5_act(b, s.hidden_act, b.linear(x, w.wi));
    b.hold(g);  // hidden_gelu / hidden_linear: locals until forward returns
    TensorId lin = b.linear(x, w.wi1);
    b.hold(lin);
    y = b.mul(g, lin);
    y = b.dropout(y, p);
    y = b.to(y, b.dtype(w.wo));  // `hidden_states.to(self.wo.weight.dtype)` when they differ
    y = wo_call(b, y, w.wo);
    b.drop(g);
    b.drop(lin);
  } else {
    y = t5_act(b, s.hidden_act, b.linear(x, w.wi));
    y = b.dropout(y, p);
    y = b.to(y, b.dtype(w.wo));
    y = wo_call(b, y, w.wo);
  }
  b.drop(x);
  b.hold(y);
  TensorId out = b.add(h, b.dropout(y, p));
  b.drop(y);
  return out;
}

AttnInputs attn_inputs(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId norm_w, TensorId h,
                       TensorId kv_src) {
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], Lq = hs[1], nh = s.num_heads, hd = s.head_dim;
  AttnInputs in;
  in.x = t5_norm(b, h, norm_w);
  b.hold(in.x);  // normed_hidden_states: bound until the sub-layer returns
  const TensorId src = kv_src != kNoTensor ? kv_src : in.x;
  const int64_t Lk = b.shape(src)[1];
  in.q = b.view(b.linear(in.x, w.q), {B, nh, Lq, hd});
  in.k = b.view(b.linear(src, w.k), {B, nh, Lk, hd});
  in.v = b.view(b.linear(src, w.v), {B, nh, Lk, hd});
  for (TensorId t : {in.q, in.k, in.v}) b.hold(t);  // query/key/value_states: bound until the attention returns
  return in;
}

// eager_attention_forward: torch.matmul copies the head-split views (batch and head dims cannot merge).
TensorId eager_context(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k, TensorId v, TensorId bias,
                       TensorId mask, TensorId& weights) {
  const Shape qs = b.shape(q);
  const int64_t B = qs[0], nh = qs[1], Lq = qs[2], hd = qs[3], Lk = b.shape(k)[2];
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, Lq, Lk}, true, true), false);
  scores = b.add(scores, bias);
  if (mask != kNoTensor) scores = b.add(scores, mask);
  TensorId probs = b.dropout(b.softmax_last(scores), s.attn_dropout);
  weights = probs;
  b.hold(weights);
  return b.contiguous_copy(b.matmul(probs, v, {B, nh, Lq, hd}, false, true), {B, Lq, nh, hd},
                           /*grad_copied=*/true);
}

}  // namespace t5parts

namespace {

using namespace t5parts;

// T5Attention.forward + T5LayerSelfAttention / T5LayerCrossAttention: h + dropout(o(attn(layer_norm(h)))).
// `kv_src`: the encoder output for cross-attention, kNoTensor for self-attention. `table`: the block's
// relative_attention_bias (first block, self-attention) or kNoTensor. `causal`: decoder self-attention.
// `mask`: the eager decoder's causal float mask [B, 1, T, T] (or kNoTensor). `bias`: the stack's position
// bias, computed here when still kNoTensor (the first block) and reused after. `weights` receives eager
// attention's probabilities (held: T5Block binds them to `_`), kNoTensor for SDPA.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId norm_w, TensorId h,
                   TensorId kv_src, TensorId table, bool causal, TensorId mask, TensorId& bias, TensorId& weights) {
  const auto& cfg = b.config();
  const Shape hs = b.shape(h);
  const int64_t B = hs[0], Lq = hs[1], nh = s.num_heads, hd = s.head_dim;
  const bool cross = kv_src != kNoTensor;
  weights = kNoTensor;
  const AttnInputs in = attn_inputs(b, s, w, norm_w, h, kv_src);
  const TensorId x = in.x, q = in.q, k = in.k, v = in.v;
  const int64_t Lk = b.shape(k)[2];
  if (bias == kNoTensor) {
    if (table != kNoTensor) {
      bias = compute_bias(b, table, Lq, Lk, nh, /*bidirectional=*/!causal, /*log_ratio_local=*/false);
    } else {
      // torch.zeros((1, H, q, k), dtype=query dtype). Under gradient checkpointing (T5Attention.gradient_
      // checkpointing is set by _set_gradient_checkpointing on every module with the flag, whichever blocks
      // checkpoint) and training it is a leaf with requires_grad=True: the cross-attention mask then requires
      // grad, which cuDNN does not take, so every cross-attention runs the memory-efficient kernel, and the
      // mask's gradient is summed to [1, H, q, k] in each decoder block (whole-run stream, subset
      // checkpointing: the non-checkpointed decoder blocks keep no math-backend scores). GraphBuilder has no
      // non-parameter leaf that requires grad: the read of this sub-layer's norm weight makes the zeros
      // require grad (that gradient, d floats, lands in the weight's .grad). The real leaf keeps its accumulated .grad until `del loss` frees the graph after
      // backward; here it is released at decoder block 0's backward (the encoder's backward runs without it).
      const bool leaf = cfg.grad_checkpointing && b.training() && b.info(norm_w).requires_grad;
      bias = b.generic_one("zeros", leaf ? std::vector<TensorId>{norm_w} : std::vector<TensorId>{}, {1, nh, Lq, Lk},
                 b.dtype(q));
    }
  }
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    TensorId m = bias;
    if (causal) {
      // create_position_bias_mask: arange(q)[:, None] >= arange(k)[None, :] -> bool [q, k], then
      // torch.where(causal, position_bias, finfo.min): a new [1, H, q, k] in the bias dtype, laid out like
      // the permuted bias (TensorIterator follows its strides). WhereBackward saves the condition.
      TensorId cond = b.generic_one("ge", {b.generic_one("arange", {}, {Lq}, DType::i64), b.generic_one("arange", {}, {Lk}, DType::i64)},
                          {Lq, Lk}, DType::boolean);
      m = b.generic_one("where", {cond, bias}, {1, nh, Lq, Lk}, b.dtype(bias), {0});
      // a local of the attention's forward: alive past the SDPA call, through the output's contiguous copy
      // (whole-run stream f2-flanl-bf16 checkpointed decoder: freed after that copy, not at the math add)
      b.hold(m);
    }
    bool heads_contiguous = false;
    ctx = biased_sdpa(b, q, k, v, m, /*bias_permuted=*/!cross, s.attn_dropout, heads_contiguous);
    if (heads_contiguous)
      ctx = b.contiguous_copy(ctx, {B, Lq, nh, hd}, /*grad_copied=*/!low_precision(b.dtype(ctx)));  // biased_sdpa
    if (m != bias) b.drop(m);
  } else {
    ctx = eager_context(b, s, q, k, v, bias, mask, weights);
  }
  return attention_output_residual(b, s, ctx, w.o, h, x, {q, k, v});
}

}  // namespace

namespace t5parts {

// The cache's dtype: the k / v projections' outputs (the autocast dtype under amp).
DType cache_dtype(const GraphBuilder& b) { return b.autocast() ? b.low_dtype() : b.param_dtype(); }

// DynamicLayer.update (cache_utils.py): cat([cached, new], dim=-2), a fresh tensor every step (the first
// step's cat of an empty tensor copies too), with the decoder's own past length (the pass's past_len counts
// the encoder's tokens, see build_t5); as common.cpp kv_update without a window.
TensorId cache_cat(GraphBuilder& b, TensorId x, int64_t past) {
  TensorId full;
  if (past == 0) {
    full = b.cat("kv_cat", {x}, 2, b.dtype(x));
  } else {
    Shape old = b.shape(x);
    old[2] = past;
    full = b.cat("kv_cat", {b.kv_cache_in(old, b.dtype(x)), x}, 2);
  }
  b.kv_cache_out(full);
  return full;
}

// The k / v that one generate step's attention reads (EncoderDecoderCache): self-attention appends the new
// position's projections of `x` to the cache; cross-attention (`enc` the encoder output) projects `enc` into
// the cache at the first step (past 0) and reads it back later.
void cached_kv(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId x, TensorId enc,
               int64_t past, TensorId& kc, TensorId& vc) {
  const int64_t B = b.shape(x)[0], Lq = b.shape(x)[1], nh = s.num_heads, hd = s.head_dim;
  const bool cross = enc != kNoTensor;
  const int64_t S = cross ? b.shape(enc)[1] : 0;
  if (!cross) {
    TensorId k = b.view(b.linear(x, w.k), {B, nh, Lq, hd});
    TensorId v = b.view(b.linear(x, w.v), {B, nh, Lq, hd});
    kc = cache_cat(b, k, past);
    vc = cache_cat(b, v, past);
  } else if (past == 0) {
    TensorId k = b.view(b.linear(enc, w.k), {B, nh, S, hd});
    TensorId v = b.view(b.linear(enc, w.v), {B, nh, S, hd});
    kc = cache_cat(b, k, 0);
    vc = cache_cat(b, v, 0);
  } else {
    for (TensorId* t : {&kc, &vc}) {
      *t = b.kv_cache_in({B, nh, S, hd}, cache_dtype(b));
      b.kv_cache_out(*t);
    }
  }
}

}  // namespace t5parts

namespace {

using namespace t5parts;

// T5Attention.forward for one decoder position (q = 1) with an EncoderDecoderCache. Self-attention: k / v of
// the new position appended to self_attention_cache; the first block computes the bias for (1, past + 1)
// with past_seen_tokens = past. Cross-attention: the first step projects the encoder output and stores k / v
// in cross_attention_cache (is_updated), later steps read them back; the zero bias [1, H, 1, S]. SDPA gets
// the bias as its mask as it is (is_causal is False for one query, no attention_mask: create_causal_mask and
// create_bidirectional_mask skip it for sdpa); eager adds the decoder's causal float mask `mask`.
// `stack_bias`: the stack's bias (position_bias / encoder_decoder_position_bias), made here when still kNoTensor.
// `own_bias` (UMT5Attention): every attention makes its own bias (`table` in every block), a local freed when
// it returns, and leaves `stack_bias` alone.
TensorId step_attention(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId norm_w, TensorId h,
                        TensorId enc, int64_t past, TensorId table, TensorId mask, bool own_bias,
                        TensorId& stack_bias) {
  const auto& cfg = b.config();
  const int64_t B = b.shape(h)[0], Lq = b.shape(h)[1], nh = s.num_heads, hd = s.head_dim;
  const bool cross = enc != kNoTensor;
  TensorId x = t5_norm(b, h, norm_w);
  b.hold(x);
  TensorId q = b.view(b.linear(x, w.q), {B, nh, Lq, hd});
  b.hold(q);
  TensorId kc, vc;
  cached_kv(b, s, w, x, enc, past, kc, vc);
  const int64_t Lk = b.shape(kc)[2];
  TensorId bias = own_bias ? kNoTensor : stack_bias;
  if (bias == kNoTensor) {
    if (table != kNoTensor) {
      // context_position = arange(q)[:, None] + past_seen_tokens: one more [q, 1] int64 temporary
      bias = compute_bias(b, table, Lq, Lk, nh, /*bidirectional=*/false, /*log_ratio_local=*/false);
    } else {
      bias = b.generic_one("zeros", {}, {1, nh, Lq, Lk}, b.dtype(q));
    }
    if (own_bias) {
      b.hold(bias);  // position_bias: a local of UMT5Attention.forward
    } else {
      stack_bias = bias;
    }
  }
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    bool heads_contiguous = false;
    ctx = biased_sdpa(b, q, kc, vc, bias, /*bias_permuted=*/!cross, 0.0, heads_contiguous);
  } else {
    // one query: the head-split q merges into [B * H, 1, D] and the cached k / v are contiguous, so matmul
    // copies nothing; the [B, H, 1, D] context is already contiguous after transpose(1, 2)
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, kc, {B, nh, Lq, Lk}), false);
    scores = b.add(scores, bias);
    if (mask != kNoTensor && !cross) scores = b.add(scores, mask);
    TensorId probs = b.softmax_last(scores);
    ctx = b.matmul(probs, vc, {B, nh, Lq, hd});
  }
  TensorId out = b.linear(b.view(ctx, {B, Lq, nh * hd}), w.o);
  b.drop(q);
  if (own_bias) b.drop(bias);
  TensorId res = b.add(h, out);
  b.drop(x);
  return res;
}

}  // namespace

namespace t5parts {

// The stack's position-bias locals: position_bias and encoder_decoder_position_bias, filled by the first block's
// attention that makes them (T5) and held by the stack from then on; kNoTensor when every attention makes its own
// (UMT5).
struct StackBias {
  TensorId bias = kNoTensor;       // the relative position bias [1, H, q, k] (a permuted view)
  TensorId cross_bias = kNoTensor; // the decoder's zero cross-attention bias [1, H, T, S]
};

StackParams stack_params(GraphBuilder& b, const TransformerSpec& s, bool decoder, bool bias_per_attention) {
  const auto& cfg = b.config();
  const int64_t n = decoder ? s.num_decoder_layers : s.num_layers, base = decoder ? s.num_layers : 0;
  const std::string prefix = decoder ? "decoder." : "encoder.";
  StackParams sp;
  for (int64_t i = 0; i < n; ++i) {
    const std::string p = prefix + "block." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, base + i);
    BlockParams w;
    w.sa = attn_params(b, s, p + "layer.0.SelfAttention.", train);
    if (i == 0 || bias_per_attention)
      w.table = b.param(p + "layer.0.SelfAttention.relative_attention_bias.weight",
                        {s.relative_attention_num_buckets, s.num_heads}, train);
    w.sa_norm = b.param(p + "layer.0.layer_norm.weight", {s.hidden_size}, train);
    if (decoder) {
      w.ca = attn_params(b, s, p + "layer.1.EncDecAttention.", train);
      w.ca_norm = b.param(p + "layer.1.layer_norm.weight", {s.hidden_size}, train);
    }
    w.ff = ff_params(b, s, p + "layer." + std::to_string(decoder ? 2 : 1) + ".", train);
    sp.blocks.push_back(w);
  }
  sp.final_norm = b.param(prefix + "final_layer_norm.weight", {s.hidden_size}, true);
  return sp;
}

namespace {

// One T5Stack (UMT5Stack) over `ids` ([B, L] token ids) with the family's attention. Decoder: `enc` is the
// encoder output. Returns the stack's output after final_layer_norm and dropout.
TensorId stack(GraphBuilder& b, const TransformerSpec& s, const Family& f, const StackParams& sp, TensorId shared,
               TensorId ids, TensorId enc, bool decoder) {
  const auto& cfg = b.config();
  const int64_t n = decoder ? s.num_decoder_layers : s.num_layers, base = decoder ? s.num_layers : 0;
  const std::string prefix = decoder ? "decoder." : "encoder.";
  const int64_t L = b.shape(ids)[1];
  const TensorId embeds = b.embedding(ids, shared);
  b.hold(embeds);  // inputs_embeds: bound until T5Stack.forward returns
  // create_causal_mask (eager decoder only: sdpa skips it, and the bidirectional masks are None without
  // padding): a bool [1, 1, T, T] expanded to [B, 1, T, T], then torch.where into the embeddings' dtype.
  TensorId mask = kNoTensor;
  if (decoder && cfg.attn == AttnImpl::eager) {
    mask = eager_mask(b, 1, L, L, b.dtype(embeds));
    b.hold(mask);
  }
  TensorId h = b.dropout(embeds, s.embd_dropout);
  StackBias biases;
  for (int64_t i = 0; i < n; ++i) {
    const BlockParams& bp = sp.blocks[static_cast<size_t>(i)];
    b.begin_layer(prefix + "block." + std::to_string(i), layer_checkpointed(cfg, base + i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the stack's loop variable holds the block input until the block returns
    TensorId w1 = kNoTensor, w2 = kNoTensor;
    const TensorId before = biases.bias;
    h = f.attention(b, s, bp.sa, bp.sa_norm, h, kNoTensor, bp.table, decoder, mask, biases.bias, w1);
    if (before == kNoTensor && biases.bias != kNoTensor) b.hold(biases.bias);  // position_bias: the stack's local
    h = fp16_clamp(b, h);
    if (decoder) {
      const TensorId before_cross = biases.cross_bias;
      h = f.attention(b, s, bp.ca, bp.ca_norm, h, enc, kNoTensor, false, kNoTensor, biases.cross_bias, w2);
      if (before_cross == kNoTensor && biases.cross_bias != kNoTensor)
        b.hold(biases.cross_bias);  // encoder_decoder_position_bias
      if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
      w1 = kNoTensor;
      h = fp16_clamp(b, h);
    }
    h = feed_forward(b, s, bp.ff, h);
    h = fp16_clamp(b, h);
    for (TensorId t : {w1, w2})
      if (t != kNoTensor) b.drop(t);
    b.drop(layer_in);
    b.end_layer();
  }
  h = b.dropout(t5_norm(b, h, sp.final_norm), s.resid_dropout);
  for (TensorId t : {biases.bias, biases.cross_bias})
    if (t != kNoTensor) b.drop(t);
  if (mask != kNoTensor) b.drop(mask);
  b.drop(embeds);
  return h;
}

// The decoder stack for one generate step over `ids` [B, 1] with `past` cached positions.
TensorId decoder_step(GraphBuilder& b, const TransformerSpec& s, const Family& f, const StackParams& sp,
                      TensorId shared, TensorId ids, TensorId enc, int64_t past) {
  const TensorId embeds = b.embedding(ids, shared);
  b.hold(embeds);
  // create_causal_mask: eager materialises [B, 1, 1, past + 1] (sdpa skips it for one query)
  TensorId mask = kNoTensor;
  if (b.config().attn == AttnImpl::eager) {
    mask = eager_mask(b, 1, b.shape(ids)[1], past + b.shape(ids)[1], b.dtype(embeds));
    b.hold(mask);
  }
  TensorId h = embeds;
  StackBias biases;
  for (size_t i = 0; i < sp.blocks.size(); ++i) {
    const BlockParams& bp = sp.blocks[i];
    b.begin_layer("decoder.block." + std::to_string(i), false);
    const TensorId layer_in = h;
    b.hold(layer_in);
    const TensorId before = biases.bias, before_cross = biases.cross_bias;
    h = step_attention(b, s, bp.sa, bp.sa_norm, h, kNoTensor, past, bp.table, mask, f.bias_per_attention,
                       biases.bias);
    if (before == kNoTensor && biases.bias != kNoTensor) b.hold(biases.bias);
    h = fp16_clamp(b, h);
    h = step_attention(b, s, bp.ca, bp.ca_norm, h, enc, past, kNoTensor, kNoTensor, f.bias_per_attention,
                       biases.cross_bias);
    if (before_cross == kNoTensor && biases.cross_bias != kNoTensor) b.hold(biases.cross_bias);
    h = fp16_clamp(b, h);
    h = feed_forward(b, s, bp.ff, h);
    h = fp16_clamp(b, h);
    b.drop(layer_in);
    b.end_layer();
  }
  h = t5_norm(b, h, sp.final_norm);
  for (TensorId t : {biases.bias, biases.cross_bias, mask, embeds})
    if (t != kNoTensor) b.drop(t);
  return h;
}

// One inference pass (engine/inference_replay.cpp): past_len 0 runs the encoder over the seq_len ids and the
// first decoder step ([B, 1] decoder_start_token_id ids); a decode pass with past_len P is decoder step
// P - seq_len + 1 over the cached encoder output. Inside generate() the encoder output lives in model_kwargs
// for every step, so it is carried from pass to pass as the first cache slot (a plain forward drops it with
// its output). Cache slots per decoder block: self k, self v, cross k, cross v (EncoderDecoderCache).
void build_inference(GraphBuilder& b, const TransformerSpec& s, const Family& f) {
  const auto& cfg = b.config();
  const auto& p = b.pass();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, V = s.vocab_size, d = s.hidden_size;
  const int64_t past = p.past_len == 0 ? 0 : p.past_len - S + 1;
  if (past < 0)
    throw InputError("inference.past_len", std::to_string(p.past_len),
                     std::string("is shorter than the ") + f.name + " prompt");
  hf_construction_scalar(b);
  const TensorId shared = b.param("shared.weight", {V, d}, false);
  const StackParams enc_params = stack_params(b, s, false, f.bias_per_attention);
  const StackParams dec_params = stack_params(b, s, true, f.bias_per_attention);
  TensorId enc;
  if (p.past_len == 0) {
    TensorId ids = b.input({B, S}, DType::i64);
    enc = stack(b, s, f, enc_params, shared, ids, kNoTensor, false);
  } else {
    enc = b.kv_cache_in({B, S, d}, b.param_dtype());
  }
  if (p.from_generate) b.kv_cache_out(enc);
  b.hold(enc);
  TensorId dec_ids = b.input({B, 1}, DType::i64);
  TensorId h = decoder_step(b, s, f, dec_params, shared, dec_ids, enc, past);
  if (s.scale_decoder_outputs) h = b.scalar_op("mul_scalar", h, false);
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  inference_head(b, h, shared);
  b.drop(enc);
  b.exit_autocast();
}

}  // namespace

void build_t5_family(GraphBuilder& b, const TransformerSpec& s, const Family& f) {
  if (!b.training()) {
    build_inference(b, s, f);
    return;
  }
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, T = cfg.target_len > 0 ? cfg.target_len : cfg.seq_len,
                V = s.vocab_size, d = s.hidden_size;
  hf_construction_scalar(b);
  const TensorId shared = b.param("shared.weight", {V, d}, !cfg.freeze_embeddings);
  TensorId ids = b.input({B, S}, DType::i64);
  TensorId labels = b.input({B, T}, DType::i64);
  const StackParams enc_params = stack_params(b, s, false, f.bias_per_attention);
  const TensorId enc = stack(b, s, f, enc_params, shared, ids, kNoTensor, false);
  b.hold(enc);  // encoder_outputs: bound until T5ForConditionalGeneration.forward returns
  // _shift_right(labels): new_zeros [B, T], labels[..., :-1].clone() copied in, masked_fill_(== -100, pad).
  TensorId dec_ids = b.generic_one("new_zeros", {}, {B, T}, DType::i64);
  TensorId shifted = b.generic_one("clone", {labels}, {B, T > 1 ? T - 1 : 1}, DType::i64);
  TensorId eq = b.generic_one("eq", {dec_ids, shifted}, {B, T}, DType::boolean);
  dec_ids = b.inplace("masked_fill_", dec_ids, false, {eq});
  b.hold(dec_ids);  // decoder_input_ids: bound until forward returns
  const StackParams dec_params = stack_params(b, s, true, f.bias_per_attention);
  TensorId h = stack(b, s, f, dec_params, shared, dec_ids, enc, true);
  if (s.scale_decoder_outputs) h = b.scalar_op("mul_scalar", h, false);  // sequence_output * d_model**-0.5
  b.hold(h);  // sequence_output: bound until forward returns
  // lm_head: its own weight exists from construction until tie_weights() (as do both stacks' embed_tokens).
  for (int i = 0; i < 3; ++i) b.construction_temp(b.info(shared).bytes);
  const TensorId head = b.tied_param("lm_head.weight", shared, !cfg.freeze_embeddings);  // or modules_to_save's copy
  TensorId logits = b.linear(h, head);
  b.mark_model_end();
  b.hold(logits);  // lm_logits live in the output until forward returns
  TensorId loss = b.cross_entropy(b.view(logits, {B * T, V}), b.view(labels, {B * T}));
  b.drop(logits);
  b.drop(h);
  b.drop(dec_ids);
  b.drop(enc);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace t5parts

void build_t5(GraphBuilder& b, const TransformerSpec& s) {
  build_t5_family(b, s, {"t5", /*bias_per_attention=*/false, attention});
}

}  // namespace memplan
