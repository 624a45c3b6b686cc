// Mamba2ForCausalLM (transformers 5.17 models/mamba2/modeling_mamba2.py) on its PyTorch path: training forward + loss,
// or one inference pass. Without mamba_ssm / causal_conv1d the mixer runs the torch fallbacks: causal_conv1d_fn
// (F.conv1d on x.to(weight.dtype), sliced, silu) and the chunked SSD scan written in broadcast products
// (mamba_parts.h ssd_chunk_scan). A run with the CUDA kernels allocates differently and is not modelled.
//   embeddings -> N x Mamba2Block (mamba_parts.h ssm_block) -> norm_f -> lm_head -> .float() -> the loss.
//   Mamba2Mixer.forward(x) with I = intermediate_size, G = n_groups, N = state_size, h heads of hd:
//     projected = in_proj(x)                                              [B, S, I + (I + 2GN) + h]
//     gate, xBC, dt = projected.split([I, I + 2GN, h], -1)                 views
//     xBC = causal_conv1d_fn(xBC.transpose(1, 2), ...).transpose(1, 2)     [B, S, I + 2GN] view of [B, I + 2GN, S]
//     x, B, C = xBC.split([I, GN, GN], -1)
//     y = chunk_scan(x.view(B, S, h, hd), dt, A = -exp(A_log.float()), B.view(B, S, G, N), C.view(...), D, dt_bias)
//     y = norm(y.reshape(B, S, I), gate)   (MambaRMSNormGated: y * silu(gate.float()), RMS, weight * y.to(dtype))
//     out_proj(y.to(dtype))
// Parameters per layer, registration order: norm.weight, then mixer conv1d.weight [I + 2GN, 1, K] (+ bias),
// in_proj [2I + 2GN + h, H] (+ bias), dt_bias [h], A_log [h], norm.weight [I], D [h], out_proj [H, I] (+ bias).
#include <string>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_mamba2(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (s.ssm_num_heads < 1 || s.ssm_head_dim < 1 || s.ssm_groups < 1 || s.ssm_chunk_size < 1 ||
      s.ssm_state_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_num_heads * s.ssm_head_dim != s.ssm_inner_size ||
      s.ssm_num_heads % s.ssm_groups != 0)
    throw InputError("model.ssm_num_heads", std::to_string(s.ssm_num_heads),
                     "mamba2 needs positive heads, head_dim, groups, chunk_size, state_size and conv_kernel, heads x "
                     "head_dim == intermediate size and groups dividing the heads");
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     "mamba2 has no attention: transformers refuses attn_implementation=\"sdpa\" for "
                     "Mamba2ForCausalLM (eager is accepted and changes nothing)");
  ssm_causal_lm(b, s, [&](const std::string& p, bool train) -> SsmMixerFn {
    const Mamba2MixerParams w = mamba2_mixer_params(b, s, p, train);
    return [&b, &s, w](TensorId x) { return mamba2_mixer(b, s, w, x); };
  });
}

}  // namespace memplan
