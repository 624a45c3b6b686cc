// MambaForCausalLM (transformers 5.17 models/mamba/modeling_mamba.py) on its PyTorch path: training forward + loss,
// or one inference pass (prefill / decode step of generate()). Neither mamba_ssm nor causal_conv1d is installed, so
// the kernelized functions fall back to their torch bodies (mamba_inner_fn is a stub returning None, so the
// unfused path runs); use_mambapy is refused by the importer, and the associative scan runs only under
// torch.compile. A run with the CUDA kernels allocates differently and is not modelled.
//   embeddings(input_ids) (inputs_embeds, bound until the forward returns) -> N x MambaBlock (mamba_parts.h
//   ssm_block: RMSNorm, fp32 residual) -> norm_f -> lm_head (tied by default) -> .float() -> ForCausalLMLoss.
//   MambaMixer.forward(x) with D = intermediate_size, N = state_size, R = time_step_rank, K = conv_kernel:
//     projected = in_proj(x).transpose(1, 2)                  [B, 2D, S] view of [B, S, 2D]
//     A = -exp(A_log.float())                                  [D, N] fp32 (A_log in the model's dtype)
//     xBC, gate = projected.chunk(2, dim=1)                    [B, D, S] views
//     prefill with a cache: update_conv_state (the layer's lazy zeros [B, D, K], copy_ of the last K columns)
//     decode: causal_conv1d_update over the cached state; else causal_conv1d_fn: F.conv1d(x.to(weight.dtype),
//       padding K - 1) on the strided channel slice (a contiguous copy), [..., :S], silu, .to(x.dtype)
//     time_step, B, C = x_proj(xBC.transpose(1, 2)).split(...)  (ssm_linear_transposed)
//     time_step = dt_proj.weight @ time_step.transpose(1, 2)   [B, D, S] (folded mm + .mT().contiguous())
//     mamba_selective_scan: dt + bias.float().to(dt.dtype), softplus; discrete_A = exp(A * dt), discrete_B =
//       dt * B.float(), deltaB_u = discrete_B * x.float() ([B, D, S, N] fp32, bound until it returns); per token
//       ssm_state = discrete_A[:, :, i] * ssm_state + deltaB_u[:, :, i], matmul(ssm_state.to(x.dtype), C[:, i]
//       .unsqueeze(-1)) appended to a list (each select's backward zero-fills a gradient of the whole tensor it
//       selects from; states and casts are saved); stack, + x * D.float(), * silu(gate)
//     decode: mamba_selective_state_update over the cached fp32 state (updated in place)
//     inference: update_recurrent_state(final state): zeros_like on first use, copy_
//     out_proj(y.transpose(1, 2).to(dtype))
//   generate()'s prefill passes its all-ones mask: apply_mask_to_padding_states multiplies x and the conv output.
// Parameters per layer, registration order: norm.weight (MambaBlock creates its norm before the mixer), then the
// mixer's conv1d.weight [D, 1, K] (+ bias), in_proj [2D, H] (+ bias), x_proj [R + 2N, D], dt_proj [D, R] + bias,
// A_log [D, N], D [D], out_proj [H, D] (+ bias). Before the layers: embeddings [V, H]; after: norm_f.
#include <string>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/errors.h"
#include "engine/limits.h"

namespace memplan {

namespace {

struct MambaMixerParams {
  TensorId conv_w = kNoTensor, conv_b = kNoTensor, in_w = kNoTensor, in_b = kNoTensor, x_w = kNoTensor,
           dt_w = kNoTensor, dt_b = kNoTensor, a_log = kNoTensor, d = kNoTensor, out_w = kNoTensor, out_b = kNoTensor;
  bool train = true;
};

MambaMixerParams mixer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, D = s.ssm_inner_size, N = s.ssm_state_size, R = s.ssm_time_step_rank,
                K = s.ssm_conv_kernel;
  MambaMixerParams w;
  w.train = train;
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
  return w;
}

// MambaMixer.forward on the normed input x [B, S, H] (the file header gives the statements). `with_mask`:
// generate()'s prefill, whose all-ones attention_mask apply_mask_to_padding_states multiplies in twice.
TensorId mixer_forward(GraphBuilder& b, const TransformerSpec& s, const MambaMixerParams& w, TensorId x,
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
  const TensorId params = keep(ssm_linear_transposed(b, hs_t, w.x_w, kNoTensor, w.train));  // [B, S, R + 2N]
  const std::vector<TensorId> tbc = b.split(params, {{B, S, R}, {B, S, N}, {B, S, N}});
  const TensorId Bm = keep(tbc[1]), Cm = keep(tbc[2]);
  // matmul(weight [D, R], time_step.transpose(1, 2) [B, R, S]): when the weight operand requires grad (a trainable
  // weight, or any parameter outside autocast even under inference_mode) matmul folds: an mm over time_step's
  // [B * S, R] rows (a view), whose [B, S, D] output it returns as output.mT().contiguous() (a [B, D, S] copy; the
  // mm output dies; the copy's gradient reaches the mm reshaped, a copy unless B == 1). Otherwise bmm over the
  // expanded weight writes [B, D, S] directly.
  TensorId ts;
  if (w.train && (b.training() || !b.autocast())) {
    const TensorId mm = b.linear(tbc[0], w.dt_w);
    const TensorId mmT = B > 1 ? b.view_copying_grad(mm, {B, D, S}) : b.view(mm, {B, D, S});
    ts = keep(b.contiguous_copy(mmT, {B, D, S}));
  } else {
    ts = keep(b.matmul(b.expand(b.view(w.dt_w, {1, D, R}), {B, D, R}), b.view(tbc[0], {B, R, S}), {B, D, S}));
  }
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
    TensorId dt = b.add(ts, b.view(b.to(bias32, b.dtype(ts)), {D, 1}));
    dt = skeep(b.unary("softplus", dt, true, false, true));  // [B, D, S]
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

void check_fields(const TransformerSpec& s) {
  if (s.ssm_state_size < 1 || s.ssm_inner_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_time_step_rank < 1)
    throw InputError("model.ssm_state_size", std::to_string(s.ssm_state_size),
                     "mamba needs positive state_size, intermediate_size, conv_kernel and time_step_rank");
}

}  // namespace

void build_mamba(GraphBuilder& b, const TransformerSpec& s) {
  check_fields(s);
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     "mamba has no attention: transformers refuses attn_implementation=\"sdpa\" for MambaForCausalLM "
                     "(eager is accepted and changes nothing)");
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len;
  const bool prefill = inf && b.pass().past_len == 0;
  const bool from_generate = inf && b.pass().from_generate;
  // The sequential scan is about ten graph ops per token and layer: refuse, naming the length, what would pass the
  // graph's op limit (engine/limits.h) rather than fail inside the build.
  if (S * s.num_layers > kMaxGraphOps / 10)
    throw InputError("seq_len", std::to_string(S),
                     "times num_hidden_layers (" + std::to_string(s.num_layers) + ") exceeds " +
                         std::to_string(kMaxGraphOps / 10) +
                         ": mamba's sequential scan (slow_forward) is replayed op by op, about ten ops per token and "
                         "layer, and the graph is limited to " + std::to_string(kMaxGraphOps) + " ops");
  ssm_causal_lm(b, s, [&](const std::string& p, bool train) -> SsmMixerFn {
    const MambaMixerParams w = mixer_params(b, s, p, train);
    const bool generate_prefill = prefill && from_generate;
    return [&b, &s, w, generate_prefill](TensorId x) { return mixer_forward(b, s, w, x, generate_prefill); };
  });
}

}  // namespace memplan
