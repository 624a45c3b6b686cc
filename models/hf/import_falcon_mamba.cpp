// FalconMambaConfig (transformers 5.17 models/falcon_mamba/configuration_falcon_mamba.py) and the shapes
// modeling_falcon_mamba.py derives from it.
//
// Defaults: vocab 50280, hidden 768, state_size 16, 32 layers, expand 2, conv_kernel 4, use_bias False,
// use_conv_bias True, hidden_act "silu", residual_in_fp32 True, time_step_rank "auto" (ceil(hidden / 16)),
// tie_word_embeddings True, mixer_rms_eps 1e-6. __post_init__ sets intermediate_size = int(expand * hidden_size),
// then the remaining config.json keys are set as attributes, so a published intermediate_size key wins (tiiuae/
// falcon-mamba-7b says expand 16 and intermediate_size 8192; its weights are 8192 wide). use_mambapy is replaced by
// the use_falcon_mambapy key (default False): true is refused (mambapy's parallel scan is not modelled); the
// associative scan (use_associative_scan) runs only under torch.compile and changes nothing here.
// Refused, naming the field: hidden_act other than silu, use_falcon_mambapy true, a non-positive size.
#include <cmath>

#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_falcon_mamba(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.model_type = "falcon_mamba";
  s.vocab_size = r.positive({"vocab_size"}, 50280);
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.ssm_state_size = r.positive({"state_size"}, 16);
  const std::string act = r.string({"hidden_act"}, "silu");
  if (act != "silu") throw InputError(r.name("hidden_act"), "\"" + act + "\"", "is not modelled for falcon_mamba (silu is)");
  s.hidden_act = act;
  s.ssm_conv_kernel = r.positive({"conv_kernel"}, 4, kMaxDim);
  s.ssm_bias = r.boolean({"use_bias"}, false);
  s.ssm_conv_bias = r.boolean({"use_conv_bias"}, true);
  s.ssm_residual_in_fp32 = r.boolean({"residual_in_fp32"}, true);
  if (auto inner = r.opt_positive({"intermediate_size"})) {
    s.ssm_inner_size = *inner;
  } else {
    const double expand = r.opt_positive_number({"expand"}).value_or(2.0);
    const double inner_d = std::floor(expand * static_cast<double>(s.hidden_size));
    if (!(inner_d >= 1.0 && inner_d <= static_cast<double>(kMaxDim)))
      throw InputError(r.name("expand"), std::to_string(expand),
                       "gives an intermediate size outside [1, " + std::to_string(kMaxDim) + "]");
    s.ssm_inner_size = static_cast<int64_t>(inner_d);
  }
  s.intermediate_size = s.ssm_inner_size;
  const json* tsr = r.raw("time_step_rank");
  if (tsr == nullptr || (tsr->is_string() && tsr->get<std::string>() == "auto"))
    s.ssm_time_step_rank = (s.hidden_size + 15) / 16;
  else
    s.ssm_time_step_rank = r.positive({"time_step_rank"}, 1);
  if (r.boolean({"use_falcon_mambapy"}, false))
    throw InputError(r.name("use_falcon_mambapy"), "true",
                     "mambapy's parallel scan is not modelled (the sequential scan is)");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  // No positions and no attention (as import_mamba): the engine's bound stands in for a context limit, and the
  // attention fields its limits check reads hold one placeholder head.
  s.max_position_embeddings = kMaxDim;
  s.num_heads = s.num_kv_heads = 1;
  s.head_dim = s.ssm_inner_size;
  return s;
}

}  // namespace memplan::hf
