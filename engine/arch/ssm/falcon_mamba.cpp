// FalconMambaForCausalLM (transformers 5.17 models/falcon_mamba/modeling_falcon_mamba.py: tiiuae/falcon-mamba-7b) on
// its PyTorch path: training forward + loss, or one inference pass (prefill / decode step of generate()). The file is
// MambaForCausalLM's (mamba.cpp's header) statement for statement but for FalconMambaMixer's three
// FalconMambaWeightlessRMSNorm calls (mamba_parts.h mamba_mixer with MambaMixerNorms::falcon):
//     time_step, B, C = torch.split(x_proj(hidden_states_B_C), [R, N, N], dim=-1)
//     time_step = dt_layernorm(time_step); B = b_layernorm(B); C = c_layernorm(C)
//       each x.float() (a copy unless fp32), x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps), .type_as(x);
//       the x_proj output, unbound, dies with its last view
// and the three unused ones(size) buffers each mixer registers (dt: intermediate_size, b / c: state_size).
// The sequential selective scan runs (use_mambapy is forced False by the config; the associative scan only under
// torch.compile); mamba_ssm / causal_conv1d kernels are not installed: a run with them is not modelled.
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/errors.h"
#include "engine/limits.h"

namespace memplan {

void build_falcon_mamba(GraphBuilder& b, const TransformerSpec& s) {
  if (s.ssm_state_size < 1 || s.ssm_inner_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_time_step_rank < 1)
    throw InputError("model.ssm_state_size", std::to_string(s.ssm_state_size),
                     "falcon_mamba needs positive state_size, intermediate_size, conv_kernel and time_step_rank");
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     "falcon_mamba has no attention: transformers refuses attn_implementation=\"sdpa\" for "
                     "FalconMambaForCausalLM (eager is accepted and changes nothing)");
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len;
  if (S * s.num_layers > kMaxGraphOps / 12)
    throw InputError("seq_len", std::to_string(S),
                     "times num_hidden_layers (" + std::to_string(s.num_layers) + ") exceeds " +
                         std::to_string(kMaxGraphOps / 12) +
                         ": falcon_mamba's sequential scan is replayed op by op, about ten ops per token and layer, "
                         "and the graph is limited to " + std::to_string(kMaxGraphOps) + " ops");
  const bool generate_prefill = inf && b.pass().past_len == 0 && b.pass().from_generate;
  ssm_causal_lm(b, s, [&](const std::string& p, bool train) -> SsmMixerFn {
    const MambaMixerParams w = mamba_mixer_params(b, s, p, train, MambaMixerNorms::falcon);
    return [&b, &s, w, generate_prefill](TensorId x) { return mamba_mixer(b, s, w, x, generate_prefill); };
  });
}

}  // namespace memplan
