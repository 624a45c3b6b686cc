// MambaForCausalLM (transformers 5.17 models/mamba/modeling_mamba.py) on its PyTorch path: training forward + loss,
// or one inference pass (prefill / decode step of generate()). Neither mamba_ssm nor causal_conv1d is installed, so
// MambaMixer.forward runs slow_forward (use_mambapy false: the sequential scan; mambapy's pscan is refused by the
// importer). A run with the CUDA kernels (cuda_kernels_forward) allocates differently and is not modelled.
//   embeddings(input_ids) (inputs_embeds, bound until the forward returns) -> N x MambaBlock (mamba_parts.h
//   ssm_block: RMSNorm, fp32 residual) -> norm_f -> lm_head (tied by default) -> .float() -> the loss written out.
//   slow_forward(x) with D = intermediate_size, N = state_size, R = time_step_rank, dtype = x.dtype:
//     projected = in_proj(x).transpose(1, 2)                     [B, 2D, S] view of [B, S, 2D]
//     hidden, gate = projected.chunk(2, dim=1)                    [B, D, S] views
//     training: ssm_state = zeros(B, D, N, dtype)
//     inference with the cache: ssm_state = cache.ssm_states[i].clone(); prefill: conv_state = F.pad(hidden,
//       (K - S, 0)) (the last K columns, a copy) written into the cache (update_conv_state: roll copy, index_put,
//       zero_, +=), then the conv as in training; decode: update_conv_state with the new column, returning the cache
//       tensor; hidden = sum(conv_state * conv1d.weight[:, 0, :], -1) (+= bias), act, .to(dtype), unsqueeze(-1)
//     hidden = act(conv1d(hidden)[..., :S])                      depthwise conv on a strided view (a contiguous copy)
//     ssm_parameters = x_proj(hidden.transpose(1, 2))            [B, S, R + 2N] (ssm_linear_transposed)
//     time_step, B, C = split(...)                                views
//     dt = softplus(dt_proj(time_step)).transpose(1, 2)           [B, D, S] (softplus: fp32 under autocast)
//     A = -exp(A_log.float())                                     [D, N] (A_log is an fp32 parameter in every
//                                                                 precision: MambaMixer builds it from an fp32 arange)
//     discrete_A = exp(A[None, :, None, :] * dt[..., None])       [B, D, S, N] fp32
//     discrete_B = dt[..., None] * B[:, None].float()             [B, D, S, N] fp32
//     deltaB_u = discrete_B * hidden[..., None].float()           [B, D, S, N] fp32
//     for i in range(S): ssm_state = discrete_A[:, :, i] * ssm_state + deltaB_u[:, :, i]   [B, D, N] fp32
//                        scan_output = matmul(ssm_state.to(dtype), C[:, i].unsqueeze(-1)); list.append([:, :, 0])
//       (each select's backward zero-fills a gradient of the whole tensor it selects from; the states and their
//       casts are kept for backward)
//     scan_output = stack(list, -1) + hidden * D[None, :, None]; scan_output = scan_output * act(gate)
//     inference: cache.ssm_states[i].copy_(ssm_state)
//     out_proj(scan_output.transpose(1, 2))
//   Every local (projected, the chunks, hidden, the SSM parameters, dt, A, discrete_A / B, deltaB_u, the list, the
//   state) stays bound until slow_forward returns.
// Parameters per layer, registration order: norm.weight (MambaBlock creates its norm before the mixer), then the
// mixer's conv1d.weight [D, 1, K] (+ bias), in_proj [2D, H] (+ bias), x_proj [R + 2N, D], dt_proj [D, R] + bias,
// A_log [D, N] (fp32), D [D], out_proj [H, D] (+ bias). Before the layers: embeddings [V, H]; after: norm_f.
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
  w.a_log = b.param(p + "A_log", {D, N}, train, DType::f32);
  w.d = b.param(p + "D", {D}, train);
  w.out_w = b.param(p + "out_proj.weight", {H, D}, train);
  if (s.ssm_bias) w.out_b = b.param(p + "out_proj.bias", {H}, train);
  return w;
}

// The cache tensors of one layer inside an inference pass (MambaCache.conv_states[i] [B, D, K] and
// ssm_states[i] [B, D, N], in the cache's dtype), kNoTensor in training.
struct LayerCache {
  TensorId conv = kNoTensor, ssm = kNoTensor;
};

// MambaMixer.slow_forward on the normed input x [B, S, H] (the file header gives the statements).
TensorId slow_forward(GraphBuilder& b, const TransformerSpec& s, const MambaMixerParams& w, TensorId x,
                      const LayerCache& cache, bool with_mask) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const bool decode = inf && b.pass().past_len > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, D = s.ssm_inner_size,
                N = s.ssm_state_size, R = s.ssm_time_step_rank, K = s.ssm_conv_kernel;
  const DType dtype = b.dtype(x);
  std::vector<TensorId> locals;  // bound until slow_forward returns
  auto keep = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };

  const TensorId proj = keep(b.linear(x, w.in_w, w.in_b));  // [B, S, 2D]
  // .transpose(1, 2): the chunk's backward concatenates a contiguous [B, 2D, S] gradient, which the linear's
  // reshape to [B * S, 2D] must copy unless B == 1.
  const TensorId projT = B > 1 ? b.view_copying_grad(proj, {B, 2 * D, S}) : b.view(proj, {B, 2 * D, S});
  const std::vector<TensorId> chunks = b.split(projT, 2, {B, D, S});
  TensorId hidden = keep(chunks[0]);
  const TensorId gate = keep(chunks[1]);
  // generate()'s prefill passes its all-ones attention_mask: hidden * attention_mask.unsqueeze(1) (an int64 mask
  // does not promote), before and after the convolution
  if (with_mask) hidden = keep(b.scalar_op("mul_mask", hidden, false));

  TensorId state;
  if (!inf) {
    state = b.generic_one("zeros", {}, {B, D, N}, dtype);
  } else {
    state = b.generic_one("clone", {cache.ssm}, {B, D, N}, b.dtype(cache.ssm));
  }
  b.hold(state);

  if (decode) {
    // update_conv_state: conv_states[i].roll(-1, -1) (a copy), [:, :, cache_position] = new (index_put), then the
    // cache tensor zeroed and += the rolled copy; returns the cache tensor itself.
    const TensorId pos = b.generic_one("clamp", {}, {1}, DType::i64);
    const TensorId rolled = b.generic_one("roll", {cache.conv}, {B, D, K}, b.dtype(cache.conv));
    b.inplace("index_put_", rolled, false, {hidden, pos});
    b.inplace("add_", cache.conv, false, {rolled});
    const TensorId prod = b.mul(cache.conv, b.view(w.conv_w, {D, K}));  // conv_state * weight[:, 0, :]
    TensorId h = b.generic_one("sum", {prod}, {B, D}, b.dtype(prod));
    if (w.conv_b != kNoTensor) h = b.inplace("add_", h, false, {w.conv_b});
    h = b.unary("silu", h, true, false);
    h = b.to(h, dtype);
    hidden = keep(b.view(h, {B, D, 1}));
  } else {
    if (inf) {
      // conv_state = F.pad(hidden, (K - S, 0)): the last K columns (left-padded with zeros when S < K), a copy
      const TensorId padded = b.generic_one("constant_pad_nd", {hidden}, {B, D, K}, b.dtype(hidden));
      const TensorId pos = b.generic_one("clamp", {}, {K}, DType::i64);
      const TensorId rolled = b.generic_one("roll", {cache.conv}, {B, D, K}, b.dtype(cache.conv));
      const TensorId src = b.to(padded, b.dtype(cache.conv));
      b.inplace("index_put_", rolled, false, {src, pos});
      b.inplace("add_", cache.conv, false, {rolled});
    }
    const TensorId conv = ssm_depthwise_conv1d(b, hidden, w.conv_w, w.conv_b, K - 1, !with_mask);
    // [..., :seq_len]: SliceBackward zero-fills a gradient of the whole conv output
    const TensorId sl = b.view_copying_grad(conv, {B, D, S});
    hidden = keep(b.unary("silu", sl, true, false));
  }
  if (with_mask) hidden = keep(b.scalar_op("mul_mask", hidden, false));

  // 3.a selection
  const TensorId params =
      keep(ssm_linear_transposed(b, b.view(hidden, {B, S, D}), w.x_w, kNoTensor, w.train));  // [B, S, R + 2N]
  const std::vector<TensorId> tbc = b.split(params, {{B, S, R}, {B, S, N}, {B, S, N}});
  const TensorId time_step = keep(tbc[0]), Bm = keep(tbc[1]), Cm = keep(tbc[2]);
  const TensorId dt_lin = b.linear(time_step, w.dt_w, w.dt_b);  // [B, S, D]
  const TensorId dt = keep(b.view(b.unary("softplus", dt_lin, true, false, true), {B, D, S}));
  // 3.b discretization
  const TensorId A = keep(b.unary("neg", b.unary("exp", w.a_log, false, true, true), false, false));
  const TensorId a_dt = b.mul(b.view(A, {1, D, 1, N}), b.view(dt, {B, D, S, 1}));
  const TensorId dA = keep(b.unary("exp", a_dt, false, true, true));                  // [B, D, S, N] fp32
  const TensorId dB = keep(b.mul(b.view(dt, {B, D, S, 1}), b.view(b.to(Bm, DType::f32), {B, 1, S, N})));
  const TensorId dBu = keep(b.mul(dB, b.view(b.to(hidden, DType::f32), {B, D, S, 1})));

  // 3.c the sequential scan
  const int64_t c_grad_bytes = B * S * N * static_cast<int64_t>(dtype_bytes(b.dtype(Cm)));
  std::vector<TensorId> outs;
  outs.reserve(static_cast<size_t>(S));
  TensorId prev = state;
  for (int64_t i = 0; i < S; ++i) {
    const TensorId m = b.mul(b.view_copying_grad(dA, {B, D, N}), prev);
    const TensorId next = b.add(m, b.view_copying_grad(dBu, {B, D, N}));
    b.hold(next);
    b.drop(prev);
    prev = next;
    const TensorId y = b.matmul(b.to(next, dtype), b.view_copying_grad(Cm, {B, N, 1}, c_grad_bytes), {B, D, 1});
    keep(y);  // the list scan_outputs keeps scan_output[:, :, 0] until slow_forward returns
    outs.push_back(b.view(y, {B, D, 1}));
  }
  const TensorId stacked = b.cat_list("stack", outs, 2);  // [B, D, S]
  const TensorId Dv = b.view(w.d, {1, D, 1});
  TensorId so = b.add(stacked, b.mul(hidden, Dv));
  so = b.mul(so, b.unary("silu", gate, true, false));
  if (inf) b.inplace("copy_", cache.ssm, false, {prev});
  const TensorId out = ssm_linear_transposed(b, b.view(so, {B, S, D}), w.out_w, w.out_b, w.train);
  b.drop(prev);
  for (const TensorId t : locals) b.drop(t);
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
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                D = s.ssm_inner_size, N = s.ssm_state_size, K = s.ssm_conv_kernel;
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
  hf_construction_scalar(b);
  const TensorId embed = b.param("embeddings.weight", {s.vocab_size, H}, !cfg.freeze_embeddings);
  const TensorId ids = b.input({B, S}, DType::i64);
  // MambaCache: per layer conv_states [B, D, K] and ssm_states [B, D, N] zeros in the model's dtype, made by
  // prepare_inputs_for_generation before generate()'s prefill, or by MambaModel.forward after the embedding in a
  // plain forward; cache_position = arange(conv_kernel) after it. Updated in place afterwards (slots conv, ssm per
  // layer).
  std::vector<LayerCache> caches(static_cast<size_t>(s.num_layers));
  const DType cdt = b.param_dtype();
  const auto make_cache = [&] {
    for (auto& c : caches) {
      c.conv = b.generic_one("zeros", {}, {B, D, K}, cdt);
      c.ssm = b.generic_one("zeros", {}, {B, D, N}, cdt);
      b.kv_cache_out(c.conv);
      b.kv_cache_out(c.ssm);
    }
    b.generic_one("arange", {}, {K}, DType::i64);
  };
  if (inf && !prefill) {
    for (auto& c : caches) {
      c.conv = b.kv_cache_in({B, D, K}, cdt);
      c.ssm = b.kv_cache_in({B, D, N}, cdt);
      b.kv_cache_out(c.conv);
      b.kv_cache_out(c.ssm);
    }
  }
  if (prefill && from_generate) make_cache();
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  b.hold(inputs_embeds);
  if (prefill && !from_generate) make_cache();
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    const TensorId norm = b.param(p + "norm.weight", {H}, train);
    const MambaMixerParams w = mixer_params(b, s, p + "mixer.", train);
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    const LayerCache cache = caches[static_cast<size_t>(i)];
    h = ssm_block(b, h, norm, s.ssm_residual_in_fp32, [&](TensorId x) {
      return slow_forward(b, s, w, x, cache, prefill && from_generate);
    });
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

}  // namespace memplan
