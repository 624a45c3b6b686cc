#include "engine/arch/ssm/mamba_parts.h"

#include <string>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

TensorId ssm_depthwise_conv1d(GraphBuilder& b, TensorId x, TensorId w, TensorId bias, int64_t pad, bool x_strided) {
  const TensorId bc = bias == kNoTensor ? kNoTensor : b.autocast_low(bias);
  const TensorId wc = b.autocast_low(w);
  const TensorId xc = b.autocast_low(x);
  const Shape xs = b.shape(xc), ws = b.shape(wc);
  const int64_t len = xs[2] + 2 * pad - ws[2] + 1;
  if (len < 1) throw InputError("seq_len", std::to_string(xs[2]), "too short for the model's convolution");
  GraphBuilder::GenericOp op{"conv1d_depthwise", {xc, wc}, {{{xs[0], ws[0], len}, b.dtype(xc)}}, {0, 1}, {}, {}, {}};
  if (bc != kNoTensor) op.reads.push_back(bc);
  if (x_strided) {
    op.reads.push_back(b.generic_one("contiguous", {}, xs, b.dtype(xc)));
    op.bwd_pre_temp_bytes.push_back(b.info(xc).bytes);
  }
  return b.generic(op)[0];
}

TensorId ssm_linear_transposed(GraphBuilder& b, TensorId x_t, TensorId w, TensorId bias, bool trainable) {
  const Shape xs = b.shape(x_t);
  const bool fold = trainable && (b.training() || !b.autocast());
  // autocast's linear wrapper casts its arguments right to left (bias, weight, then the input: whole-run amp
  // streams, the weight's cast before the input's), as GraphBuilder::linear does itself
  const TensorId bc = b.autocast_low(bias);
  const TensorId wc = b.autocast_low(w);
  TensorId x = b.autocast_low(x_t);  // a cast keeps the transposed strides (preserve_format)
  if (fold && xs[0] > 1) x = b.contiguous_copy(x, xs);
  return b.linear(x, wc, bc);
}

TensorId ssm_block(GraphBuilder& b, TensorId h, TensorId norm_w, bool residual_in_fp32, const SsmMixerFn& mixer) {
  const TensorId residual = h;
  const TensorId cast = b.to(h, b.dtype(norm_w));
  const TensorId n = rms_norm(b, cast, norm_w, cast != h);
  TensorId res = residual_in_fp32 ? b.to(residual, DType::f32) : residual;
  b.hold(res);  // `residual` until the block returns
  b.hold(n);  // the block's hidden_states until the mixer returns
  const TensorId out = mixer(n);
  b.drop(n);
  const TensorId y = b.add(res, out);
  b.drop(res);
  return y;
}

void ssm_causal_lm_head(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId embed, TensorId ids) {
  const auto& cfg = b.config();
  const int64_t H = s.hidden_size, V = s.vocab_size;
  const TensorId head =
      s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, !cfg.freeze_embeddings) : b.param("lm_head.weight", {V, H}, !cfg.freeze_embeddings);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);
  Shape hs = b.shape(hidden);
  if (!b.training()) {
    const int64_t keep = cfg.logits_to_keep;
    if (keep > 0 && keep < hs[1]) hs[1] = keep;
    const TensorId last = b.to(b.view(hidden, hs), b.dtype(head));
    const TensorId logits = b.to(b.linear(last, head), DType::f32);
    b.hold(logits);
    b.mark_model_end();
    return;
  }
  const TensorId hc = b.to(hidden, b.dtype(head));
  const TensorId logits = b.to(b.linear(hc, head), DType::f32);
  b.mark_model_end();
  const TensorId loss = causal_lm_loss(b, logits, ids);  // self.loss_function: ForCausalLMLoss
  b.exit_autocast();
  b.set_loss(loss);
}

void ssm_causal_lm(GraphBuilder& b, const TransformerSpec& s, const SsmMixerFactory& mixer) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embeddings.weight", {s.vocab_size, H}, !cfg.freeze_embeddings);
  const TensorId ids = b.input({B, S}, DType::i64);
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  b.hold(inputs_embeds);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    const TensorId norm = b.param(p + "norm.weight", {H}, train);
    const SsmMixerFn forward = mixer(p + "mixer.", train);
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    h = ssm_block(b, h, norm, s.ssm_residual_in_fp32, forward);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  const TensorId hn = rms_norm(b, h, b.param("norm_f.weight", {H}, !cfg.freeze_embeddings), false);
  b.drop(h);
  b.drop(inputs_embeds);
  b.hold(hn);  // last_hidden_state until the forward returns
  ssm_causal_lm_head(b, s, hn, embed, ids);
  b.drop(hn);
}

TensorId mamba2_causal_conv_seq(GraphBuilder& b, TensorId x, TensorId conv_w, TensorId conv_b, int64_t K,
                                bool inf) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], C = xs[1], S = xs[2];
  if (inf) {
    const TensorId cstate = b.generic_one("zeros", {}, {B, C, K}, b.dtype(x));
    const TensorId src = S < K ? b.generic_one("constant_pad_nd", {x}, {B, C, K}, b.dtype(x)) : x;
    b.inplace("copy_", cstate, false, {src});
    b.kv_cache_out(cstate);
  }
  const TensorId xin = b.to(x, b.dtype(conv_w));
  b.hold(xin);
  const TensorId conv = ssm_depthwise_conv1d(b, xin, conv_w, conv_b, K - 1, true);
  b.drop(xin);
  const TensorId act = b.unary("silu", b.view_copying_grad(conv, {B, C, S}), true, false);
  return b.to(act, b.dtype(x));
}

TensorId ssm_causal_conv_seq(GraphBuilder& b, TensorId x, TensorId conv_w, TensorId conv_b, int64_t K, bool inf) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], C = xs[1], S = xs[2];
  if (inf) {
    const TensorId cstate = b.generic_one("zeros", {}, {B, C, K}, b.dtype(x));
    const TensorId src = S < K ? b.generic_one("constant_pad_nd", {x}, {B, C, K}, b.dtype(x)) : x;
    b.inplace("copy_", cstate, false, {src});
    b.kv_cache_out(cstate);
  }
  const TensorId xin = b.to(x, b.dtype(conv_w));
  b.hold(xin);  // F.conv1d's argument until it returns
  const TensorId conv = ssm_depthwise_conv1d(b, xin, conv_w, conv_b, K - 1, true);
  b.drop(xin);
  const TensorId act = b.unary("silu", b.view_copying_grad(conv, {B, C, S}), true, false);
  return b.to(act, b.dtype(x));
}

}  // namespace memplan

// ---- MambaMixer

namespace memplan {

namespace {

// FalconMambaWeightlessRMSNorm.forward: self._norm(x.float()).type_as(x), _norm(x) = x * torch.rsqrt(x.pow(2)
// .mean(-1, keepdim=True) + eps), one expression: the float copy is _norm's argument, bound until it returns.
TensorId weightless_rms_norm(GraphBuilder& b, TensorId x) {
  const TensorId xf = b.to(x, DType::f32);
  b.hold(xf);
  const TensorId r =
      b.unary("rsqrt", b.add_scalar(b.reduce_last("mean", b.pow_scalar(xf), false)), false, true, true);
  const TensorId n = b.mul(xf, r);
  b.drop(xf);
  return b.to(n, b.dtype(x));
}

}  // namespace


MambaMixerParams mamba_mixer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train,
                                    MambaMixerNorms norms) {
  const int64_t H = s.hidden_size, D = s.ssm_inner_size, N = s.ssm_state_size, R = s.ssm_time_step_rank,
                K = s.ssm_conv_kernel;
  MambaMixerParams w;
  w.train = train;
  w.norms = norms;
  w.conv_w = b.param(p + "conv1d.weight", {D, 1, K}, train);
  if (s.ssm_conv_bias) w.conv_b = b.param(p + "conv1d.bias", {D}, train);
  w.in_w = b.param(p + "in_proj.weight", {2 * D, H}, train);
  if (s.ssm_bias) w.in_b = b.param(p + "in_proj.bias", {2 * D}, train);
  w.x_w = b.param(p + "x_proj.weight", {R + 2 * N, D}, train);
  w.dt_w = b.param(p + "dt_proj.weight", {D, R}, train);
  w.dt_b = b.param(p + "dt_proj.bias", {D}, train);
  w.a_log = b.param(p + "A_log", {D, N}, train);
  w.d = b.param(p + "D", {D}, train);
  w.out_w = b.param(p + "out_proj.weight", {H, D}, train);
  if (s.ssm_bias) w.out_b = b.param(p + "out_proj.bias", {H}, train);
  if (norms == MambaMixerNorms::jamba) {  // JambaMambaMixer's dt_layernorm, b_layernorm, c_layernorm (RMSNorms)
    w.dt_norm = b.param(p + "dt_layernorm.weight", {R}, train);
    w.b_norm = b.param(p + "b_layernorm.weight", {N}, train);
    w.c_norm = b.param(p + "c_layernorm.weight", {N}, train);
  }
  if (norms == MambaMixerNorms::falcon) {  // FalconMambaWeightlessRMSNorm's unused ones(size) buffers, in the default dtype
    for (auto [name, n] : {std::pair<const char*, int64_t>{"dt_layernorm.weight", D}, {"b_layernorm.weight", N},
                           {"c_layernorm.weight", N}})
      b.buffer(p + name, {n}, b.param_dtype());
  }
  return w;
}

TensorId mamba_mixer(GraphBuilder& b, const TransformerSpec& s, const MambaMixerParams& w, TensorId x,
                     bool with_mask) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const bool decode = inf && b.pass().past_len > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, D = s.ssm_inner_size,
                N = s.ssm_state_size, R = s.ssm_time_step_rank, K = s.ssm_conv_kernel;
  const DType dtype = b.dtype(x);
  std::vector<TensorId> locals;  // bound until the function that made them returns
  auto keep = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  if (with_mask) x = keep(b.scalar_op("mul_mask", x, false));  // (x * attention_mask[:, :, None]).to(dtype)
  const TensorId proj = keep(b.linear(x, w.in_w, w.in_b));    // [B, S, 2D]
  // .transpose(1, 2): the chunk's backward concatenates a contiguous [B, 2D, S] gradient, which the linear's
  // reshape to [B * S, 2D] must copy unless B == 1.
  const TensorId projT = B > 1 ? b.view_copying_grad(proj, {B, 2 * D, S}) : b.view(proj, {B, 2 * D, S});
  const TensorId A = keep(b.unary("neg", b.unary("exp", b.to(w.a_log, DType::f32), false, true, true), false, false));
  const std::vector<TensorId> chunks = b.split(projT, 2, {B, D, S});
  const TensorId hbc = keep(chunks[0]), gate = keep(chunks[1]);

  TensorId conv_out;
  if (decode) {
    // causal_conv1d_update over the cached conv_states[0]: cat([conv_state, x], -1).to(weight.dtype) [B, D, K + 1],
    // conv_state.copy_(its last K columns), F.conv1d without padding, [:, :, -1:], silu, .to(x.dtype)
    const TensorId cstate = b.kv_cache_in({B, D, K}, b.dtype(hbc));
    const TensorId cat = b.to(b.cat("cat", {cstate, hbc}, 2), b.dtype(w.conv_w));
    b.hold(cat);
    b.inplace("copy_", cstate, false, {cat});
    b.kv_cache_out(cstate);
    const TensorId conv = ssm_depthwise_conv1d(b, cat, w.conv_w, w.conv_b, 0, false);
    b.drop(cat);
    conv_out = b.to(b.unary("silu", b.view(conv, {B, D, 1}), true, false), b.dtype(hbc));
  } else {
    // update_conv_state (prefill), then causal_conv1d_fn: F.conv1d(x.to(weight.dtype), padding=K - 1)[..., :S], silu
    conv_out = ssm_causal_conv_seq(b, hbc, w.conv_w, w.conv_b, K, inf);
  }
  // hidden_states_B_C [B, D, S], viewed .transpose(1, 2); apply_mask_to_padding_states multiplies it by the mask
  // (a product in its memory order) and the rebinding frees the conv's output
  TensorId hs = with_mask ? b.scalar_op("mul_mask", conv_out, false) : conv_out;
  keep(hs);
  const TensorId hs_t = b.view(hs, {B, S, D});
  // 3. x_proj(hidden_states_B_C) split into time_step, B, C; time_step = dt_proj.weight @ time_step.transpose(1, 2)
  TensorId time_step, Bm, Cm;
  if (w.norms == MambaMixerNorms::none) {
    const TensorId params = keep(ssm_linear_transposed(b, hs_t, w.x_w, kNoTensor, w.train));  // [B, S, R + 2N]
    const std::vector<TensorId> tbc = b.split(params, {{B, S, R}, {B, S, N}, {B, S, N}});
    time_step = tbc[0];
    Bm = keep(tbc[1]);
    Cm = keep(tbc[2]);
  } else if (w.norms == MambaMixerNorms::jamba) {
    // JambaMambaMixer: time_step = dt_layernorm(time_step), B = b_layernorm(B), C = c_layernorm(C), each a
    // rebinding: once C is rebound no name binds x_proj's output (what its views' norms saved keeps it).
    const TensorId params = ssm_linear_transposed(b, hs_t, w.x_w, kNoTensor, w.train);  // [B, S, R + 2N]
    const std::vector<TensorId> tbc = b.split(params, {{B, S, R}, {B, S, N}, {B, S, N}});
    b.hold(params);
    time_step = rms_norm(b, tbc[0], w.dt_norm);
    b.hold(time_step);  // bound until dt_proj's matmul rebinds it
    Bm = keep(rms_norm(b, tbc[1], w.b_norm));
    Cm = keep(rms_norm(b, tbc[2], w.c_norm));
    b.drop(params);
  } else {
    // falcon_mamba: time_step, B, C = torch.split(x_proj(...)) (the projection unbound, alive through its views),
    // then each rebound to its weightless RMSNorm: the projection dies with the last view.
    const TensorId params = ssm_linear_transposed(b, hs_t, w.x_w, kNoTensor, w.train);
    const std::vector<TensorId> tbc = b.split(params, {{B, S, R}, {B, S, N}, {B, S, N}});
    for (TensorId t : tbc) b.hold(t);
    time_step = weightless_rms_norm(b, tbc[0]);
    b.drop(tbc[0]);
    b.hold(time_step);
    Bm = keep(weightless_rms_norm(b, tbc[1]));
    b.drop(tbc[1]);
    Cm = keep(weightless_rms_norm(b, tbc[2]));
    b.drop(tbc[2]);
  }
  // matmul(weight [D, R], time_step.transpose(1, 2) [B, R, S]): when the weight operand requires grad (a trainable
  // weight, or any parameter outside autocast even under inference_mode) matmul folds: an mm over time_step's
  // [B * S, R] rows (a view), whose [B, S, D] output it returns as output.mT().contiguous() (a [B, D, S] copy; the
  // mm output dies; the copy's gradient reaches the mm reshaped, a copy unless B == 1). Otherwise bmm over the
  // expanded weight writes [B, D, S] directly.
  TensorId ts;
  if (w.train && (b.training() || !b.autocast())) {
    const TensorId mm = b.linear(time_step, w.dt_w);
    const TensorId mmT = B > 1 ? b.view_copying_grad(mm, {B, D, S}) : b.view(mm, {B, D, S});
    ts = keep(b.contiguous_copy(mmT, {B, D, S}));
  } else {
    // under autocast the weight is cast before matmul expands it (whole-run amp_fp16 jamba prefill: a [D, R]
    // 16-bit copy, freed once the bmm returns)
    ts = keep(b.matmul(b.expand(b.view(b.autocast_low(w.dt_w), {1, D, R}), {B, D, R}), b.view(time_step, {B, R, S}),
                       {B, D, S}));
  }
  if (w.norms != MambaMixerNorms::none) b.drop(time_step);  // rebound by the matmul statement
  const TensorId bias32 = keep(b.to(w.dt_b, DType::f32));  // time_proj_bias = dt_proj.bias.float()

  TensorId y;
  TensorId final_state = kNoTensor;
  if (decode) {
    // mamba_selective_state_update over the cached recurrent_states[0] [B, D, N] (fp32)
    const TensorId state = b.kv_cache_in({B, D, N}, DType::f32);
    b.kv_cache_out(state);
    const TensorId xs = b.view(hs, {B, D});
    TensorId d = b.add(b.view(ts, {B, D}), b.to(bias32, b.dtype(ts)));
    d = b.unary("softplus", d, true, false, true);
    const TensorId dA = b.unary("exp", b.mul(b.view(b.to(d, DType::f32), {B, D, 1}), A), false, true, true);
    const TensorId dB = b.mul(b.view(b.to(d, DType::f32), {B, D, 1}), b.view(b.to(b.view(Bm, {B, N}), DType::f32),
                                                                             {B, 1, N}));
    const TensorId dBx = b.mul(dB, b.view(b.to(xs, DType::f32), {B, D, 1}));
    const TensorId ns = b.add(b.mul(b.to(state, DType::f32), dA), dBx);
    b.hold(ns);
    b.inplace("copy_", state, false, {b.to(ns, DType::f32)});
    TensorId o = b.matmul(b.to(ns, b.dtype(Cm)), b.view(Cm, {B, N, 1}), {B, D, 1});
    b.drop(ns);
    o = b.add(b.view(o, {B, D}), b.mul(xs, w.d));
    o = b.mul(o, b.unary("silu", b.view(gate, {B, D}), true, false));
    y = b.view(b.to(o, b.dtype(xs)), {B, D, 1});
  } else {
    // mamba_selective_scan(hidden [B, D, S], time_step, A, B, C, D.float(), z=gate, delta_bias, softplus), its
    // locals bound until it returns
    std::vector<TensorId> scan_locals;
    auto skeep = [&](TensorId t) {
      b.hold(t);
      scan_locals.push_back(t);
      return t;
    };
    const TensorId D32 = keep(b.to(w.d, DType::f32));
    const DType in_dt = b.dtype(hs);
    const TensorId dt_biased = b.add(ts, b.view(b.to(bias32, b.dtype(ts)), {D, 1}));
    b.hold(dt_biased);  // `dt` until softplus's result rebinds it (under autocast softplus reads an fp32 cast)
    const TensorId dt = skeep(b.unary("softplus", dt_biased, true, false, true));  // [B, D, S]
    b.drop(dt_biased);
    const TensorId a_dt = b.mul(b.view(A, {1, D, 1, N}), b.view(dt, {B, D, S, 1}));
    const TensorId dA = skeep(b.unary("exp", a_dt, false, true, true));  // [B, D, S, N] fp32
    const TensorId dB = skeep(b.mul(b.view(dt, {B, D, S, 1}), b.view(b.to(Bm, DType::f32), {B, 1, S, N})));
    const TensorId dBu = skeep(b.mul(dB, b.view(b.to(hs, DType::f32), {B, D, S, 1})));
    // the sequential scan
    const int64_t c_grad_bytes = B * S * N * static_cast<int64_t>(dtype_bytes(b.dtype(Cm)));
    std::vector<TensorId> outs;
    outs.reserve(static_cast<size_t>(S));
    TensorId prev = b.generic_one("zeros", {}, {B, D, N}, in_dt);
    b.hold(prev);
    for (int64_t i = 0; i < S; ++i) {
      const TensorId m = b.mul(b.view_copying_grad(dA, {B, D, N}), prev);
      const TensorId next = b.add(m, b.view_copying_grad(dBu, {B, D, N}));
      b.hold(next);
      b.drop(prev);
      prev = next;
      const TensorId o = b.matmul(b.to(next, in_dt), b.view_copying_grad(Cm, {B, N, 1}, c_grad_bytes), {B, D, 1});
      skeep(o);  // the list scan_outputs keeps scan_output[:, :, 0] until the function returns
      outs.push_back(b.view(o, {B, D, 1}));
    }
    TensorId so = b.cat_list("stack", outs, 2);  // [B, D, S]
    so = b.add(so, b.mul(hs, b.view(D32, {1, D, 1})));
    so = b.mul(so, b.unary("silu", gate, true, false));
    b.hold(so);
    final_state = prev;
    for (TensorId t : scan_locals) b.drop(t);
    if (inf) {  // update_recurrent_state(final_state): zeros_like on first use, then copy_
      const TensorId rs = b.generic_one("zeros_like", {}, {B, D, N}, b.dtype(final_state));
      b.inplace("copy_", rs, false, {final_state});
      b.kv_cache_out(rs);
    }
    b.drop(final_state);
    y = so;
  }
  // out_proj(scan_output.transpose(1, 2).to(dtype)): the cast keeps the transposed memory order
  const TensorId yt = b.to(b.view(y, {B, S, D}), dtype);
  const TensorId out = ssm_linear_transposed(b, yt, w.out_w, w.out_b, w.train);
  if (y != kNoTensor) b.drop(y);
  for (TensorId t : locals) b.drop(t);
  return out;
}

}  // namespace memplan

// ---- Mamba2Mixer

namespace memplan {

namespace {

// segment_sum(x) over x [..., T]: x[..., None].expand(..., T, T), masked_fill(~tril(ones(T, T), -1), 0),
// cumsum(dim=-2), masked_fill(~tril(ones(T, T), 0), -inf): each step a fresh [..., T, T] tensor; the masks are
// bool [T, T] (ones, tril, ~ each a tensor; `mask` stays bound until rebound).
TensorId segment_sum(GraphBuilder& b, TensorId x) {
  Shape s = b.shape(x);
  const int64_t T = s.back();
  Shape col = s;
  col.push_back(1);
  Shape full = s;
  full.push_back(T);
  const TensorId e = b.expand(b.view(x, col), full);
  auto tril = [&] {
    const TensorId ones = b.generic_one("ones", {}, {T, T}, DType::boolean);
    return b.generic_one("tril", {ones}, {T, T}, DType::boolean);
  };
  TensorId mask = tril();
  b.hold(mask);
  const TensorId f = b.binary("masked_fill", e, b.generic_one("bitwise_not", {mask}, {T, T}, DType::boolean), false,
                              true);
  b.hold(f);  // input_tensor, rebound to the masked tensor, stays bound until segment_sum returns
  const TensorId c = b.cumsum(f, b.shape(f).size() - 2);  // dim=-2
  const TensorId mask2 = tril();
  b.drop(mask);
  b.hold(mask2);
  const TensorId r =
      b.binary("masked_fill", c, b.generic_one("bitwise_not", {mask2}, {T, T}, DType::boolean), false, true);
  b.drop(mask2);
  b.drop(f);
  return r;
}

// F.pad / pad_tensor_by_size on dim `dim` by `pad` (a clone even when pad is 0: constant_pad_nd clones when no pad
// is positive); its backward narrows and clones the gradient (a fresh x-sized buffer).
TensorId pad_dim(GraphBuilder& b, TensorId x, size_t dim, int64_t pad) {
  Shape s = b.shape(x);
  s[dim] += pad;
  return b.generic_one("constant_pad_nd", {x}, s, b.dtype(x));
}

// MambaRMSNormGated.forward(x, gate): x.to(float32) * silu(gate.to(float32)), variance, x * rsqrt(var + eps),
// weight * x.to(input dtype).
TensorId gated_rms_norm(GraphBuilder& b, TensorId x, TensorId gate, TensorId w) {
  const DType in_dt = b.dtype(x);
  const TensorId x32 = b.to(x, DType::f32);
  const TensorId g = b.unary("silu", b.to(gate, DType::f32), true, false);
  const TensorId x2 = b.mul(x32, g);
  const TensorId var = b.reduce_last("mean", b.pow_scalar(x2), false);
  b.hold(var);
  const TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  const TensorId n = b.mul(x2, r);
  b.hold(n);
  const TensorId y = b.mul(w, b.to(n, in_dt));
  b.drop(n);
  b.drop(var);
  return y;
}

// hidden_states.pow(2) on a view of a row-grouped tensor: GraphBuilder::pow_scalar sizes its backward's two
// temporaries by the input's own bytes, which a view has none of; PowBackward0's are full-size (whole-run
// Nemotron-H stream: two [B, S, I] fp32 blocks per mixer in the norm's backward).
TensorId pow2_grouped(GraphBuilder& b, TensorId x) {
  x = b.autocast_fp32(x);
  const int64_t bytes = b.numel(x) * dtype_bytes(b.dtype(x));
  return b.generic({"pow", {x}, {{b.shape(x), b.dtype(x)}}, {0}, {}, {}, {}, {bytes, bytes}})[0];
}

// Zamba2RMSNormGated.forward(x, gate) (NemotronHMamba2Mixer's norm): gated_rms_norm's statements with the RMS taken
// over `groups` groups of each row (x viewed [..., G, I / G]: variance [..., G, 1]).
TensorId grouped_gated_rms_norm(GraphBuilder& b, TensorId x, TensorId gate, TensorId w, int64_t groups) {
  const DType in_dt = b.dtype(x);
  const Shape xs = b.shape(x);
  Shape gs = xs;
  gs.back() = xs.back() / groups;
  gs.insert(gs.end() - 1, groups);
  const TensorId x32 = b.to(x, DType::f32);
  const TensorId g = b.unary("silu", b.to(gate, DType::f32), true, false);
  const TensorId x2 = b.view(b.mul(x32, g), gs);
  const TensorId var = b.reduce_last("mean", pow2_grouped(b, x2), false);
  b.hold(var);
  const TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  const TensorId n = b.view(b.mul(x2, r), xs);
  b.hold(n);
  const TensorId y = b.mul(w, b.to(n, in_dt));
  b.drop(n);
  b.drop(var);
  return y;
}

// FalconH1RMSNormGated.forward(x, gate) on the scan output x (fp32): without norm_before_gate first
// x * silu(gate.to(float32)); x viewed [..., G, I / G]; variance (bound until it returns) = pow(2).mean(-1);
// x * rsqrt(variance + eps); weight.view(G, I / G) * x (fp32: the weight is not cast); with norm_before_gate then
// x * silu(gate.to(float32)); .to(input dtype). Each statement rebinds hidden_states, so each product dies with the
// next unless autograd saved it.
TensorId falcon_gated_rms_norm(GraphBuilder& b, TensorId x, TensorId gate, TensorId w, int64_t groups,
                               bool norm_before_gate) {
  const DType in_dt = b.dtype(x);
  const Shape xs = b.shape(x);
  Shape gs = xs;
  gs.back() = xs.back() / groups;
  gs.insert(gs.end() - 1, groups);
  auto gated = [&](TensorId t) { return b.mul(t, b.unary("silu", b.to(gate, DType::f32), true, false)); };
  TensorId h = norm_before_gate ? x : gated(x);
  h = b.view(b.to(h, DType::f32), gs);
  const TensorId var = b.reduce_last("mean", pow2_grouped(b, h), false);
  b.hold(var);
  h = b.mul(h, b.unary("rsqrt", b.add_scalar(var), false, true, true));
  h = b.view(b.mul(b.view(w, {groups, xs.back() / groups}), h), xs);
  if (norm_before_gate) h = gated(h);
  h = b.to(h, in_dt);
  b.drop(var);
  return h;
}

}  // namespace

Mamba2MixerParams mamba2_mixer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.ssm_inner_size, nh = s.ssm_num_heads, K = s.ssm_conv_kernel,
                conv_dim = I + 2 * s.ssm_groups * s.ssm_state_size;
  Mamba2MixerParams w;
  w.train = train;
  w.conv_w = b.param(p + "conv1d.weight", {conv_dim, 1, K}, train);
  if (s.ssm_conv_bias) w.conv_b = b.param(p + "conv1d.bias", {conv_dim}, train);
  w.in_w = b.param(p + "in_proj.weight", {I + conv_dim + nh, H}, train);
  if (s.ssm_bias) w.in_b = b.param(p + "in_proj.bias", {I + conv_dim + nh}, train);
  w.dt_bias = b.param(p + "dt_bias", {nh}, train);
  w.a_log = b.param(p + "A_log", {nh}, train);
  w.norm_w = b.param(p + "norm.weight", {I}, train);
  w.d = b.param(p + "D", {nh}, train);
  w.out_w = b.param(p + "out_proj.weight", {H, I}, train);
  if (s.ssm_bias) w.out_b = b.param(p + "out_proj.bias", {H}, train);
  return w;
}

namespace {

// mamba2_selective_state_update's torch fallback (one decode token) over the cached state `state` [B, h, hd, N]
// (updated in place): x [B, h, hd], dt [B, h] (expanded over hd), B / C [B, G, N].
// `z` (kNoTensor: None): FalconH1Mixer's gate without mamba_rms_norm, `out * silu(z)` before the final cast.
TensorId selective_state_update(GraphBuilder& b, const TransformerSpec& s, const Mamba2MixerParams& w, TensorId A,
                                TensorId x, TensorId dt, TensorId Bm, TensorId Cm, TensorId state,
                                TensorId z = kNoTensor) {
  const int64_t B = b.config().batch_size, nh = s.ssm_num_heads, hd = s.ssm_head_dim, N = s.ssm_state_size,
                G = s.ssm_groups;
  const TensorId dte = b.expand(b.view(dt, {B, nh, 1}), {B, nh, hd});
  TensorId d = b.add(dte, b.to(b.expand(b.view(w.dt_bias, {nh, 1}), {nh, hd}), b.dtype(dt)));
  d = b.unary("softplus", d, true, false, true);
  const TensorId d4 = b.view(d, {B, nh, hd, 1});
  const TensorId dA = b.unary("exp", b.mul(b.to(d4, DType::f32), b.view(A, {nh, 1, 1})), false, true, true);
  const TensorId Bc = b.generic_one("contiguous", {Bm}, {B, G, nh / G, N}, b.dtype(Bm));
  const TensorId dB = b.mul(d4, b.view(Bc, {B, nh, 1, N}));
  const TensorId dBx = b.mul(dB, b.view(x, {B, nh, hd, 1}));
  const TensorId ns = b.add(b.mul(state, dA), dBx);
  b.hold(ns);
  b.inplace("copy_", state, false, {b.to(ns, b.dtype(state))});
  const TensorId Cc = b.generic_one("contiguous", {Cm}, {B, G, nh / G, N}, b.dtype(Cm));
  const TensorId nsc = b.to(ns, b.dtype(Cc));
  const TensorId y = b.matmul(b.view(nsc, {B * nh, hd, N}), b.view(Cc, {B * nh, N, 1}), {B * nh, hd, 1});
  b.drop(ns);
  TensorId out = b.add(b.view(y, {B, nh, hd}), b.mul(x, b.expand(b.view(w.d, {nh, 1}), {nh, hd})));
  out = b.to(out, b.dtype(y));  // (out + hidden_states * D).to(out.dtype)
  if (z != kNoTensor) out = b.mul(out, b.unary("silu", z, true, false));
  out = b.to(out, b.dtype(x));
  return out;
}

}  // namespace

TensorId mamba2_mixer(GraphBuilder& b, const TransformerSpec& s, const Mamba2MixerParams& w, TensorId x) {
  return mamba2_mixer_variant(b, s, w, x, Mamba2MixerVariant{});
}

TensorId mamba2_mixer_variant(GraphBuilder& b, const TransformerSpec& s, const Mamba2MixerParams& w, TensorId x,
                              const Mamba2MixerVariant& v) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, I = s.ssm_inner_size,
                G = s.ssm_groups, N = s.ssm_state_size, nh = s.ssm_num_heads, hd = s.ssm_head_dim,
                K = s.ssm_conv_kernel, cs = s.ssm_chunk_size, conv_dim = I + 2 * G * N;
  const DType dtype = b.dtype(x);
  std::vector<TensorId> locals;  // bound until the function that made them returns
  auto keep = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  // FalconH1Mixer: hidden_states * ssm_in_multiplier (bound until the split after the convolution rebinds it),
  // then projected_states * mup_vector (the in_proj output dies with the rebinding).
  const TensorId x_in = v.mup != kNoTensor ? b.scalar_op("mul_scalar", x, false) : x;
  if (x_in != x) b.hold(x_in);
  const TensorId proj0 = b.linear(x_in, w.in_w, w.in_b);
  const TensorId proj = keep(v.mup != kNoTensor ? b.mul(proj0, v.mup) : proj0);
  const TensorId A = keep(b.unary("neg", b.unary("exp", b.to(w.a_log, DType::f32), false, true, true), false, false));
  const std::vector<TensorId> gxd = b.split(proj, {{B, S, I}, {B, S, conv_dim}, {B, S, nh}});
  const TensorId gate = keep(gxd[0]), xbc = keep(gxd[1]), dt = keep(gxd[2]);
  const bool decode = inf && b.pass().past_len > 0;
  const TensorId xbct = b.view(xbc, {B, conv_dim, S});  // .transpose(1, 2)
  TensorId conv_out;
  TensorId rec_state = kNoTensor;
  if (decode) {
    // The layer's cached conv_states[0] / recurrent_states[0]; causal_conv1d_update: cat([conv_state, x], -1)
    // .to(weight.dtype) [B, C, K + 1], conv_state.copy_(its last K columns), F.conv1d without padding [B, C, 2],
    // [:, :, -1:], silu, .to(x.dtype).
    const TensorId cstate = b.kv_cache_in({B, conv_dim, K}, b.dtype(xbc));
    const TensorId cat = b.to(b.cat("cat", {cstate, xbct}, 2), b.dtype(w.conv_w));
    b.hold(cat);
    b.inplace("copy_", cstate, false, {cat});
    b.kv_cache_out(cstate);
    rec_state = b.kv_cache_in({B, nh, hd, N}, DType::f32);
    b.kv_cache_out(rec_state);
    const TensorId conv = ssm_depthwise_conv1d(b, cat, w.conv_w, w.conv_b, 0, false);
    b.drop(cat);
    const TensorId act = b.unary("silu", b.view(conv, {B, conv_dim, 1}), true, false);
    conv_out = b.to(act, b.dtype(xbct));
  } else {
    // update_conv_state (prefill), then causal_conv1d_fn(x, weight, bias, activation="silu")
    conv_out = mamba2_causal_conv_seq(b, xbct, w.conv_w, w.conv_b, K, inf);
  }
  const TensorId xbc2 = keep(b.view(conv_out, {B, S, conv_dim}));  // .transpose(1, 2)
  if (x_in != x) b.drop(x_in);  // hidden_states, B, C = torch.split(...)
  const std::vector<TensorId> xbcs = b.split(xbc2, {{B, S, I}, {B, S, G * N}, {B, S, G * N}});
  const TensorId xs = keep(b.view(xbcs[0], {B, S, nh, hd}));
  const TensorId Bm = keep(b.view(xbcs[1], {B, S, G, N}));
  const TensorId Cm = keep(b.view(xbcs[2], {B, S, G, N}));
  // The norm after the scan (Mamba2MixerVariant::Norm) on y [B, S, I]; silu_gate's decode step gated inside the
  // state update instead.
  const auto norm = [&](TensorId y, bool gated_already) {
    switch (v.norm) {
      case Mamba2MixerVariant::Norm::mamba2: return gated_rms_norm(b, y, gate, w.norm_w);
      case Mamba2MixerVariant::Norm::grouped: return grouped_gated_rms_norm(b, y, gate, w.norm_w, G);
      case Mamba2MixerVariant::Norm::falcon:
        return falcon_gated_rms_norm(b, y, gate, w.norm_w, G, v.norm_before_gate);
      case Mamba2MixerVariant::Norm::silu_gate: break;
    }
    return gated_already ? y : b.mul(y, b.unary("silu", gate, true, false));
  };
  if (decode) {
    const bool z_gate = v.norm == Mamba2MixerVariant::Norm::silu_gate;
    const TensorId y = selective_state_update(b, s, w, A, b.view(xs, {B, nh, hd}), b.view(dt, {B, nh}),
                                              b.view(Bm, {B, G, N}), b.view(Cm, {B, G, N}), rec_state,
                                              z_gate ? b.view(gate, {B, nh, hd}) : kNoTensor);
    const TensorId n = norm(b.view(y, {B, 1, I}), z_gate);
    keep(n);  // scan_output, bound until the mixer returns
    const TensorId out = b.linear(b.to(n, dtype), w.out_w, w.out_b);
    for (TensorId t : locals) b.drop(t);
    return out;
  }

  // ---- the chunked scan (mamba2 chunk scan's torch fallback), its locals bound until it returns
  std::vector<TensorId> scan_locals;
  auto skeep = [&](TensorId t) {
    b.hold(t);
    scan_locals.push_back(t);
    return t;
  };
  TensorId d = b.add(dt, b.to(w.dt_bias, b.dtype(dt)));  // dt + dt_bias.to(dt.dtype)
  d = b.unary("softplus", d, true, false, true);
  d = skeep(b.unary("clamp", d, true, false));  // torch.clamp(dt, *dt_limit)
  const int64_t pad = (cs - S % cs) % cs, Sp = S + pad, c = Sp / cs;
  TensorId hsf = b.to(xs, DType::f32);
  b.hold(hsf);
  const auto rep = [&](TensorId t) {
    return b.generic_one("repeat_interleave", {b.to(t, DType::f32)}, {B, S, nh, N}, DType::f32);
  };
  TensorId Br = rep(Bm);
  b.hold(Br);
  TensorId Cr = rep(Cm);
  b.hold(Cr);
  const TensorId Dres = skeep(b.mul(b.view(w.d, {nh, 1}), pad_dim(b, hsf, 1, pad)));
  const TensorId hs2 = b.mul(hsf, b.view(b.to(d, DType::f32), {B, S, nh, 1}));
  b.drop(hsf);
  b.hold(hs2);
  const TensorId A2 = b.mul(A, b.to(d, DType::f32));
  b.hold(A2);
  const TensorId hs_c = skeep(b.view(pad_dim(b, hs2, 1, pad), {B, c, cs, nh, hd}));
  const TensorId A_c = skeep(b.view(pad_dim(b, A2, 1, pad), {B, c, cs, nh}));
  const TensorId B_c = skeep(b.view(pad_dim(b, Br, 1, pad), {B, c, cs, nh, N}));
  const TensorId C_c = skeep(b.view(pad_dim(b, Cr, 1, pad), {B, c, cs, nh, N}));
  for (TensorId t : {hs2, A2, Br, Cr}) b.drop(t);
  const TensorId Ap = b.view(A_c, {B, nh, c, cs});  // .permute(0, 3, 1, 2)
  const TensorId Acs = skeep(b.cumsum(Ap, 3));  // dim=-1
  const TensorId L = skeep(b.unary("exp", segment_sum(b, Ap), false, true, true));  // [B, h, c, cs, cs]
  const TensorId Gm = skeep(b.sum_expand_grad(
      "sum", b.mul(b.view(C_c, {B, c, cs, 1, nh, N}), b.view(B_c, {B, c, 1, cs, nh, N})), {B, c, cs, cs, nh}));
  const TensorId M = skeep(b.sum_expand_grad(
      "sum", b.mul(b.view(Gm, {B, c, cs, cs, nh, 1}), b.view(L, {B, c, cs, cs, nh, 1})), {B, c, cs, cs, nh}));
  const TensorId Yd = skeep(b.sum_expand_grad(
      "sum", b.mul(b.view(M, {B, c, cs, cs, nh, 1}), b.view(hs_c, {B, c, 1, cs, nh, hd})), {B, c, cs, nh, hd}));
  const TensorId ds = skeep(b.unary("exp", b.sub(b.view(Acs, {B, nh, c, 1}), Acs), false, true, true));
  const TensorId Bdec = skeep(b.mul(B_c, b.view(ds, {B, c, cs, nh, 1})));
  const TensorId st = b.sum_expand_grad(
      "sum", b.mul(b.view(Bdec, {B, c, cs, nh, 1, N}), b.view(hs_c, {B, c, cs, nh, hd, 1})), {B, c, nh, hd, N});
  b.hold(st);
  const TensorId prev = skeep(b.generic_one("zeros_like", {}, {B, 1, nh, hd, N}, DType::f32));
  const TensorId st2 = b.cat("cat", {prev, st}, 1);  // [B, c + 1, h, hd, N]
  b.hold(st2);
  b.drop(st);  // `states = torch.cat(...)` rebinds
  const TensorId dc = skeep(b.view(
      b.unary("exp", segment_sum(b, pad_dim(b, b.view(Acs, {B, nh, c}), 2, 1)), false, true, true),
      {B, c + 1, c + 1, nh}));  // .transpose(1, 3)
  const TensorId ns = b.sum_expand_grad(
      "sum", b.mul(b.view(dc, {B, c + 1, c + 1, nh, 1, 1}), b.view(st2, {B, c + 1, 1, nh, hd, N})),
      {B, c + 1, nh, hd, N});
  b.hold(ns);  // new_states, then final_state's base: in inference bound by scan_result until the mixer returns
  (inf ? locals : scan_locals).push_back(ns);
  const TensorId states = skeep(b.view(ns, {B, c, nh, hd, N}));  // new_states[:, :-1]
  b.drop(st2);  // `states, final_state = ...` rebinds the cat
  const TensorId sdo = skeep(b.unary("exp", Acs, false, true, true));
  const TensorId cts = skeep(b.mul(b.view(C_c, {B, c, cs, nh, 1, N}), b.view(states, {B, c, 1, nh, hd, N})));
  const TensorId Yoff =
      skeep(b.mul(b.sum_expand_grad("sum", cts, {B, c, cs, nh, hd}), b.view(sdo, {B, c, cs, nh, 1})));
  TensorId y = b.add(Yd, Yoff);
  y = b.add(b.view(y, {B, Sp, nh, hd}), Dres);
  if (pad > 0) y = b.view(y, {B, S, nh, hd});
  b.hold(y);
  // ---- back in the mixer: the scan has returned (its locals are gone) before the cache is written; the
  // whole-run Falcon-H1 prefill stream allocates each layer's state after the scan's last [B, c, cs, nh, hd]
  // block is freed (allocated first, the state split the big segment the next layer's [B, c, cs, cs, nh, N]
  // product needs: a second 12 GiB segment, reserved +87 %).
  for (TensorId t : scan_locals) b.drop(t);
  if (inf) {  // cache_params.update_recurrent_state(final_state): zeros_like on first use, then copy_ (in place)
    const TensorId rs = b.generic_one("zeros_like", {}, {B, nh, hd, N}, DType::f32);
    b.inplace("copy_", rs, false, {ns});
    b.kv_cache_out(rs);
  }
  const TensorId y2 = b.view(y, {B, S, I});
  locals.push_back(y);  // scan_result, bound until the mixer returns
  const TensorId n = norm(y2, false);
  keep(n);  // scan_output, bound until the mixer returns
  const TensorId out = b.linear(b.to(n, dtype), w.out_w, w.out_b);
  for (TensorId t : locals) b.drop(t);
  return out;
}

HybridPrelude hybrid_positions_and_masks(GraphBuilder& b, const TransformerSpec& s, DType model_dtype) {
  HybridPrelude p;
  const bool inf = !b.training();
  const int64_t B = b.config().batch_size, S = inf ? b.pass().new_tokens : b.config().seq_len;
  if (!(inf && b.pass().from_generate)) {
    p.positions = b.generic_one("add", {b.generic_one("arange", {}, {S}, DType::i64)}, {S}, DType::i64);
    b.hold(p.positions);
  }
  p.mask = full_and_sliding_masks(b, s, true, false, model_dtype).full;
  if (inf && b.pass().from_generate && S > 1) {
    const TensorId eq = b.generic_one("eq", {}, {B, b.pass().past_len + S}, DType::boolean);
    b.generic_one("all", {eq}, {}, DType::boolean);
  }
  return p;
}

}  // namespace memplan
