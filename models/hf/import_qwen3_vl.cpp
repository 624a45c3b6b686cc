// Qwen3VLConfig / Qwen3VLMoeConfig (transformers 5.17 models/qwen3_vl/configuration_qwen3_vl.py,
// models/qwen3_vl_moe/configuration_qwen3_vl_moe.py): a text_config, a vision_config and the top-level
// tie_word_embeddings (default False: PreTrainedModel ties lm_head to embed_tokens from the top-level flag; the text
// config's own default is not read).
//
// Qwen3VLTextConfig defaults: vocab 151936, hidden 4096, intermediate 22016, 32 layers, 32 heads, 32 kv heads (None
// => heads), head_dim 128, silu, max_position_embeddings 128000, attention_bias False, attention_dropout 0.
// Qwen3VLMoeTextConfig: vocab 151936, hidden 2048, intermediate 5632, 24 layers, 16 heads, 16 kv heads, head_dim
// None => hidden // heads, decoder_sparse_step 1, moe_intermediate_size 1408, 4 of 60 experts, mlp_only_layers
// None => []; its router always renormalises the top-k weights (Qwen3VLMoeTextTopKRouter: no norm_topk_prob).
// Qwen3VLVisionConfig (and Qwen3VLMoeVisionConfig): depth 27, hidden 1152, gelu_pytorch_tanh, intermediate 4304,
// 16 heads, 3 channels, patch 16, spatial_merge_size 2, temporal_patch_size 2, out_hidden_size 3584,
// num_position_embeddings 2304, deepstack_visual_indexes [8, 16, 24].
// rope_parameters (mrope_section, mrope_interleaved, rope_theta) change values, not sizes: not read.
#include <algorithm>
#include <cmath>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

const json& sub_config(const ConfigReader& r, const char* key) {
  static const json kEmpty = json::object();
  const json* c = r.raw(key);
  if (c && !c->is_object()) throw InputError(r.name(key), dump_short(*c), "must be a JSON object");
  return c ? *c : kEmpty;
}

void read_vision(const ConfigReader& v, TransformerSpec& s) {
  s.qwen3vl_depth = v.positive({"depth"}, 27, kMaxLayers);
  s.qwen3vl_hidden = v.positive({"hidden_size"}, 1152);
  s.qwen3vl_intermediate = v.positive({"intermediate_size"}, 4304);
  s.qwen3vl_heads = v.positive({"num_heads", "num_attention_heads"}, 16);
  if (s.qwen3vl_hidden % s.qwen3vl_heads != 0)
    throw InputError(v.name("num_heads"), std::to_string(s.qwen3vl_heads),
                     "must divide vision hidden_size (" + std::to_string(s.qwen3vl_hidden) + ")");
  if ((s.qwen3vl_hidden / s.qwen3vl_heads) % 4 != 0)
    throw InputError(v.name("num_heads"), std::to_string(s.qwen3vl_heads),
                     "the vision head_dim (hidden_size / num_heads) must be a multiple of 4 (its 2-D rotary "
                     "embedding splits it into h and w halves of rotated pairs)");
  s.qwen3vl_in_channels = v.positive({"in_channels"}, 3);
  s.qwen3vl_patch = v.positive({"patch_size"}, 16, kMaxImageSize);
  s.qwen3vl_temporal_patch = v.positive({"temporal_patch_size"}, 2, kMaxImageSize);
  s.qwen3vl_merge = v.positive({"spatial_merge_size"}, 2, kMaxImageSize);
  s.qwen3vl_out_hidden = v.positive({"out_hidden_size"}, 3584);
  s.qwen3vl_num_pos = v.positive({"num_position_embeddings"}, 2304);
  const int64_t side = static_cast<int64_t>(std::sqrt(static_cast<double>(s.qwen3vl_num_pos)));
  if (side < 2)
    throw InputError(v.name("num_position_embeddings"), std::to_string(s.qwen3vl_num_pos),
                     "must be at least 4 (the bilinear interpolation reads a square table of int(sqrt(n)) a side)");
  const std::string act = v.string({"hidden_act"}, "gelu_pytorch_tanh");
  if (act != "gelu_pytorch_tanh" && act != "gelu")
    throw InputError(v.name("hidden_act"), "\"" + act + "\"",
                     "the vision MLP is modelled with gelu_pytorch_tanh or gelu (one kernel)");
  s.qwen3vl_deepstack = {8, 16, 24};
  if (const json* d = v.raw("deepstack_visual_indexes")) {
    if (!d->is_array()) throw InputError(v.name("deepstack_visual_indexes"), dump_short(*d), "must be a list of block indexes");
    s.qwen3vl_deepstack.clear();
    for (const json& e : *d) {
      if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() >= s.qwen3vl_depth)
        throw InputError(v.name("deepstack_visual_indexes"), dump_short(*d),
                         "must hold block indexes in [0, depth = " + std::to_string(s.qwen3vl_depth) + ")");
      if (std::find(s.qwen3vl_deepstack.begin(), s.qwen3vl_deepstack.end(), e.get<int64_t>()) !=
          s.qwen3vl_deepstack.end())
        throw InputError(v.name("deepstack_visual_indexes"), dump_short(*d),
                         "repeats an index (the model would run one merger twice); not modelled");
      s.qwen3vl_deepstack.push_back(e.get<int64_t>());
    }
  } else if (s.qwen3vl_depth <= 24) {
    throw InputError(v.name("deepstack_visual_indexes"), "absent",
                     "the default [8, 16, 24] needs depth > 24 (depth " + std::to_string(s.qwen3vl_depth) + ")");
  }
}

}  // namespace

TransformerSpec import_qwen3_vl(const ConfigReader& r, const std::string& type) {
  const bool moe = type == "qwen3_vl_moe";
  const ConfigReader t(sub_config(r, "text_config"), r.name("text_config."));
  const ConfigReader v(sub_config(r, "vision_config"), r.name("vision_config."));
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = t.positive({"vocab_size"}, 151936);
  s.hidden_size = t.positive({"hidden_size"}, moe ? 2048 : 4096);
  s.intermediate_size = t.positive({"intermediate_size"}, moe ? 5632 : 22016);
  s.num_layers = t.positive({"num_hidden_layers"}, moe ? 24 : 32, kMaxLayers);
  s.num_heads = t.positive({"num_attention_heads"}, moe ? 16 : 32);
  // Absent: the class default (16 / 32); null: __post_init__ makes it num_attention_heads.
  s.num_kv_heads = t.opt_positive({"num_key_value_heads"})
                       .value_or(t.explicit_null("num_key_value_heads") ? s.num_heads : (moe ? 16 : 32));
  check_kv_heads(t, s);
  if (auto hd = t.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else if (moe)  // `self.head_dim or hidden_size // num_attention_heads`
    s.head_dim = s.hidden_size / s.num_heads;
  else
    s.head_dim = 128;
  if (s.head_dim == 0 || s.head_dim % 2 != 0)
    throw InputError(t.name("head_dim"), std::to_string(s.head_dim),
                     "must be a positive even number (rotate_half pairs dimensions)");
  s.max_position_embeddings = t.positive({"max_position_embeddings"}, 128000);
  s.hidden_act = t.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(t.name("hidden_act"), "\"" + s.hidden_act + "\"", "qwen3_vl's text MLP is modelled with silu");
  s.attn_dropout = t.probability({"attention_dropout"}, 0.0);
  s.attention_bias = t.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  if (const json* lt = t.raw("layer_types"))
    throw InputError(t.name("layer_types"), dump_short(*lt), "is not a qwen3_vl text field (every layer attends fully); not modelled");
  if (t.boolean({"use_sliding_window"}, false))
    throw InputError(t.name("use_sliding_window"), "true", "qwen3_vl's text model has no sliding window; not modelled");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  if (moe) {
    read_qwen_moe(t, s, {60, 4, 1408});
    s.norm_topk_prob = true;  // Qwen3VLMoeTextTopKRouter renormalises unconditionally
  }
  read_vision(v, s);
  if (s.qwen3vl_out_hidden != s.hidden_size)
    throw InputError(v.name("out_hidden_size"), std::to_string(s.qwen3vl_out_hidden),
                     "must equal text_config.hidden_size (" + std::to_string(s.hidden_size) +
                         "): the image features replace token embeddings");
  return s;
}

}  // namespace memplan::hf
