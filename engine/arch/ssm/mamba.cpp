// MambaForCausalLM (transformers 5.17 models/mamba/modeling_mamba.py) on its PyTorch path: training forward + loss,
// or one inference pass (prefill / decode step of generate()). Neither mamba_ssm nor causal_conv1d is installed, so
// the kernelized functions fall back to their torch bodies (mamba_inner_fn is a stub returning None, so the
// unfused path runs); use_mambapy is refused by the importer, and the associative scan runs only under
// torch.compile. A run with the CUDA kernels allocates differently and is not modelled.
//   embeddings(input_ids) (inputs_embeds, bound until the forward returns) -> N x MambaBlock (mamba_parts.h
//   ssm_block: RMSNorm, fp32 residual) -> norm_f -> lm_head (tied by default) -> .float() -> ForCausalLMLoss.
//   MambaMixer.forward(x) (mamba_parts.h mamba_mixer, shared with jamba.cpp and falcon_mamba.cpp) with
//   D = intermediate_size, N = state_size, R = time_step_rank, K = conv_kernel:
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
    const MambaMixerParams w = mamba_mixer_params(b, s, p, train);
    const bool generate_prefill = prefill && from_generate;
    return [&b, &s, w, generate_prefill](TensorId x) { return mamba_mixer(b, s, w, x, generate_prefill); };
  });
}

}  // namespace memplan
