// MambaConfig and Mamba2Config (transformers 5.17 models/mamba/configuration_mamba.py,
// models/mamba2/configuration_mamba2.py) and the shapes their modeling files derive from them.
//
// mamba defaults: vocab 50280, hidden 768, state_size 16, 32 layers, expand 2 (intermediate_size =
// int(expand * hidden_size)), conv_kernel 4, use_bias False, use_conv_bias True, hidden_act "silu",
// residual_in_fp32 True, time_step_rank "auto" (ceil(hidden / 16)), use_mambapy False, tie_word_embeddings True.
// mamba2 defaults: num_heads 128, head_dim 64, vocab 32768, hidden 4096, state_size 128, 64 layers, expand 2,
// conv_kernel 4, n_groups 8, use_bias False, use_conv_bias True, hidden_act "silu", residual_in_fp32 True,
// chunk_size 256, tie_word_embeddings False.
// Refused, naming the field: a hidden_act other than silu (the mixers' activation and the gated norm's gate;
// only silu is measured), use_mambapy true (mambapy's parallel scan, not modelled), mamba2 heads x head_dim other
// than the intermediate size or groups not dividing the heads (the modeling code's reshapes fail).
#include <cmath>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// int(expand * hidden_size), expand an int or a float as Python computes it.
int64_t inner_size(const ConfigReader& r, int64_t hidden) {
  const double expand = r.opt_positive_number({"expand"}).value_or(2.0);
  const double inner = std::floor(expand * static_cast<double>(hidden));
  if (!(inner >= 1.0 && inner <= static_cast<double>(kMaxDim)))
    throw InputError("config.expand", std::to_string(expand),
                     "gives an intermediate size outside [1, " + std::to_string(kMaxDim) + "]");
  return static_cast<int64_t>(inner);
}

void common_ssm(const ConfigReader& r, TransformerSpec& s) {
  s.family = TransformerSpec::Family::llama;
  const std::string act = r.string({"hidden_act"}, "silu");
  if (act != "silu")
    throw InputError("config.hidden_act", "\"" + act + "\"", "is not modelled for " + s.model_type + " (silu is)");
  s.hidden_act = act;
  s.ssm_conv_kernel = r.positive({"conv_kernel"}, 4, kMaxDim);
  s.ssm_bias = r.boolean({"use_bias"}, false);
  s.ssm_conv_bias = r.boolean({"use_conv_bias"}, true);
  s.ssm_residual_in_fp32 = r.boolean({"residual_in_fp32"}, true);
  // No positions and no attention: no context limit (the engine's bound stands in), and the attention fields the
  // engine's limits check read hold one placeholder head (mamba) or the SSM heads (mamba2), used by no builder.
  s.max_position_embeddings = kMaxDim;
}

int64_t time_step_rank(const ConfigReader& r, int64_t hidden) {
  const json* v = r.raw("time_step_rank");
  if (v == nullptr || (v->is_string() && v->get<std::string>() == "auto")) return (hidden + 15) / 16;
  return r.positive({"time_step_rank"}, 1);
}

}  // namespace

TransformerSpec import_mamba(const ConfigReader& r) {
  TransformerSpec s;
  s.model_type = "mamba";
  s.vocab_size = r.positive({"vocab_size"}, 50280);
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.ssm_state_size = r.positive({"state_size"}, 16);
  common_ssm(r, s);
  s.ssm_inner_size = inner_size(r, s.hidden_size);
  s.intermediate_size = s.ssm_inner_size;
  s.ssm_time_step_rank = time_step_rank(r, s.hidden_size);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.num_heads = s.num_kv_heads = 1;
  s.head_dim = s.ssm_inner_size;
  if (r.boolean({"use_mambapy"}, false))
    throw InputError("config.use_mambapy", "true",
                     "mambapy's parallel scan is not modelled (the sequential scan, use_mambapy false, is)");
  return s;
}

TransformerSpec import_mamba2(const ConfigReader& r) {
  TransformerSpec s;
  s.model_type = "mamba2";
  s.vocab_size = r.positive({"vocab_size"}, 32768);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.num_layers = r.positive({"num_hidden_layers"}, 64, kMaxLayers);
  s.ssm_state_size = r.positive({"state_size"}, 128);
  common_ssm(r, s);
  s.ssm_inner_size = inner_size(r, s.hidden_size);
  s.intermediate_size = s.ssm_inner_size;
  s.ssm_time_step_rank = time_step_rank(r, s.hidden_size);
  s.ssm_num_heads = r.positive({"num_heads"}, 128);
  s.ssm_head_dim = r.positive({"head_dim"}, 64);
  s.ssm_groups = r.positive({"n_groups"}, 8);
  s.ssm_chunk_size = r.positive({"chunk_size"}, 256);
  s.num_heads = s.ssm_num_heads;
  s.head_dim = s.ssm_head_dim;
  s.num_kv_heads = s.ssm_num_heads;
  if (s.ssm_num_heads * s.ssm_head_dim != s.ssm_inner_size)
    throw InputError("config.num_heads", std::to_string(s.ssm_num_heads),
                     "times head_dim (" + std::to_string(s.ssm_head_dim) + ") must equal the intermediate size " +
                         std::to_string(s.ssm_inner_size) + " (int(expand * hidden_size))");
  if (s.ssm_num_heads % s.ssm_groups != 0)
    throw InputError("config.n_groups", std::to_string(s.ssm_groups),
                     "must divide num_heads (" + std::to_string(s.ssm_num_heads) + ")");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  return s;
}

}  // namespace memplan::hf
