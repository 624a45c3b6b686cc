// Qwen2VLConfig / Qwen2_5_VLConfig (transformers 5.17 models/qwen2_vl/configuration_qwen2_vl.py,
// models/qwen2_5_vl/configuration_qwen2_5_vl.py) and what the modeling files read of them.
//
// Stages: (1) the text decoder's keys from text_config, or from the top level when there is none (published
// config.json files are flat: __post_init__ pops the text keys out of the kwargs); (2) the vision tower's keys from
// vision_config; (3) derived sizes (head dims, the MLP width, M-RoPE's sections); (4) refusals naming the key for
// what the builders (engine/arch/vlm/) do not model.
//
// Text defaults (Qwen2VLTextConfig and Qwen2_5_VLTextConfig alike): vocab 152064, hidden 8192, intermediate 29568,
// 80 layers, 64 heads, 8 KV heads, silu, max_position_embeddings 32768, rms_norm_eps 1e-5, use_sliding_window
// false, attention_dropout 0.0, rope theta 1e6 with mrope_section [16, 24, 24] (the rotary embedding's default).
// Qwen2VLAttention: head_dim = hidden_size // num_attention_heads (must divide), q / k / v with bias, o without.
// Qwen2VLVisionConfig: depth 32, embed_dim 1280, hidden_size 3584 (the merger's output), quick_gelu, mlp_ratio 4,
// 16 heads, 3 in_channels, patch 14, spatial_merge_size 2, temporal_patch_size 2.
// Qwen2_5_VLVisionConfig: depth 32, hidden_size 3584, silu, intermediate_size 3420, 16 heads, 3 in_channels, patch
// 14, spatial_merge_size 2, temporal_patch_size 2, window_size 112, out_hidden_size 3584 (the merger's output),
// fullatt_block_indexes (7, 15, 23, 31).
// Top level: tie_word_embeddings false (true also when text_config sets it: the pre-v5 spelling), image_token_id
// 151655, vision_start / end 151652 / 151653.
#include <numeric>

#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// mrope_section from rope_scaling or rope_parameters (rope_scaling wins, as convert_rope_params_to_dict reads it);
// rope types other than default / mrope are refused (no scaling variant was measured).
std::vector<int64_t> read_mrope_section(const ConfigReader& t, int64_t head_dim) {
  std::vector<int64_t> sec{16, 24, 24};
  const char* key = t.raw("rope_scaling") ? "rope_scaling" : "rope_parameters";
  if (const json* rp = t.raw(key)) {
    if (!rp->is_object()) throw InputError(t.name(key), dump_short(*rp), "must be an object");
    for (const char* tk : {"rope_type", "type"}) {
      auto it = rp->find(tk);
      if (it == rp->end() || it->is_null()) continue;
      const bool ok = it->is_string() && (it->get<std::string>() == "default" || it->get<std::string>() == "mrope");
      if (!ok)
        throw InputError(t.name(key) + "." + tk, dump_short(*it),
                         "is not modelled for Qwen2-VL (\"default\" / \"mrope\" is)");
    }
    auto ms = rp->find("mrope_section");
    if (ms != rp->end() && !ms->is_null()) {
      if (!ms->is_array() || ms->size() != 3)
        throw InputError(t.name(key) + ".mrope_section", dump_short(*ms), "must be a list of three positive integers");
      sec.clear();
      for (const json& v : *ms) {
        if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > kMaxDim)
          throw InputError(t.name(key) + ".mrope_section", dump_short(*ms),
                           "must be a list of three positive integers");
        sec.push_back(v.get<int64_t>());
      }
    }
  }
  const int64_t sum = std::accumulate(sec.begin(), sec.end(), int64_t{0});
  if (sum * 2 != head_dim)
    throw InputError(t.name(key) + ".mrope_section", "[" + std::to_string(sec[0]) + ", " + std::to_string(sec[1]) +
                         ", " + std::to_string(sec[2]) + "]",
                     "must sum to head_dim / 2 (" + std::to_string(head_dim / 2) +
                         "): the rotary embedding splits its frequencies by it");
  return sec;
}

void read_text(const ConfigReader& t, TransformerSpec& s) {
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = t.positive({"vocab_size"}, 152064);
  s.hidden_size = t.positive({"hidden_size"}, 8192);
  s.intermediate_size = t.positive({"intermediate_size"}, 29568);
  s.num_layers = t.positive({"num_hidden_layers"}, 80, kMaxLayers);
  s.num_heads = t.positive({"num_attention_heads"}, 64);
  // num_key_value_heads: 8 when absent, None (null) => num_attention_heads.
  s.num_kv_heads =
      t.opt_positive({"num_key_value_heads"}).value_or(t.explicit_null("num_key_value_heads") ? s.num_heads : 8);
  if (s.num_kv_heads > s.num_heads || s.num_heads % s.num_kv_heads != 0)
    throw InputError(t.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "must divide num_attention_heads (" + std::to_string(s.num_heads) + ")");
  // Qwen2VLAttention: head_dim = hidden_size // num_heads, and a ValueError unless head_dim * heads == hidden.
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(t.name("num_attention_heads"), std::to_string(s.num_heads),
                     "must divide hidden_size (" + std::to_string(s.hidden_size) + ")");
  s.head_dim = s.hidden_size / s.num_heads;
  if (t.raw("head_dim") && t.positive({"head_dim"}, s.head_dim) != s.head_dim)
    throw InputError(t.name("head_dim"), dump_short(*t.raw("head_dim")),
                     "is not read by Qwen2-VL's attention (head_dim = hidden_size // num_attention_heads = " +
                         std::to_string(s.head_dim) + ")");
  if (s.head_dim % 2 != 0)
    throw InputError(t.name("hidden_size"), std::to_string(s.hidden_size),
                     "gives an odd head_dim " + std::to_string(s.head_dim) + "; rotate_half pairs dimensions");
  s.max_position_embeddings = t.positive({"max_position_embeddings"}, 32768);
  s.hidden_act = t.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu")
    throw InputError(t.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled for Qwen2-VL's MLP (silu is)");
  s.attn_dropout = t.probability({"attention_dropout"}, 0.0);
  if (t.boolean({"use_sliding_window"}, false))
    throw InputError(t.name("use_sliding_window"), "true",
                     "sliding-window layers are not modelled for Qwen2-VL (no published checkpoint uses them)");
  if (const json* lt = t.raw("layer_types")) {
    if (!lt->is_array()) throw InputError(t.name("layer_types"), dump_short(*lt), "must be a list");
    for (const json& e : *lt)
      if (!e.is_string() || e.get<std::string>() != "full_attention")
        throw InputError(t.name("layer_types"), dump_short(*lt),
                         "only \"full_attention\" layers are modelled for Qwen2-VL");
  }
  s.qkv_bias = true;  // q / k / v with bias, o_proj without
  s.attention_bias = true;
  s.o_bias = false;
  s.mlp_bias = false;
  check_padding_idx(t, s.vocab_size);
  s.vl_mrope_section = read_mrope_section(t, s.head_dim);
}

void read_vision(const ConfigReader& v, TransformerSpec& s, bool v25) {
  s.vl_vision_depth = v.positive({"depth"}, 32, kMaxLayers);
  s.vl_vision_width = v25 ? v.positive({"hidden_size"}, 3584) : v.positive({"embed_dim"}, 1280);
  s.vl_vision_heads = v.positive({"num_heads", "num_attention_heads"}, 16);
  const char* width_key = v25 ? "hidden_size" : "embed_dim";
  if (s.vl_vision_width % s.vl_vision_heads != 0 || (s.vl_vision_width / s.vl_vision_heads) % 4 != 0)
    throw InputError(v.name("num_heads"), std::to_string(s.vl_vision_heads),
                     std::string("must divide ") + width_key + " (" + std::to_string(s.vl_vision_width) +
                         ") into heads of a multiple of 4 dimensions (the 2-D rotary's h and w halves of pairs)");
  if (v25) {
    s.vl_vision_mlp = v.positive({"intermediate_size"}, 3420);
    s.vl_merger_out = v.positive({"out_hidden_size"}, 3584);
  } else {
    s.vl_vision_mlp = checked_mul(s.vl_vision_width, v.positive({"mlp_ratio"}, 4), "config.vision_config.mlp_ratio");
    if (s.vl_vision_mlp > kMaxDim)
      throw InputError(v.name("mlp_ratio"), dump_short(*v.raw("mlp_ratio")), "makes the MLP wider than the limit");
    s.vl_merger_out = v.positive({"hidden_size"}, 3584);
  }
  s.vl_vision_act = v.string({"hidden_act"}, v25 ? "silu" : "quick_gelu");
  const char* want = v25 ? "silu" : "quick_gelu";
  if (s.vl_vision_act != want)
    throw InputError(v.name("hidden_act"), "\"" + s.vl_vision_act + "\"",
                     std::string("is not modelled for this vision tower (") + want + " is)");
  s.vl_in_channels = v.positive({"in_channels"}, 3);
  for (const char* k : {"patch_size", "temporal_patch_size"})
    if (const json* p = v.raw(k); p && !p->is_number_integer())
      throw InputError(v.name(k), dump_short(*p), "must be one positive integer (a cubic kernel per axis is modelled)");
  s.vl_patch = v.positive({"patch_size"}, 14);
  s.vl_temporal_patch = v.positive({"temporal_patch_size"}, 2);
  s.vl_merge = v.positive({"spatial_merge_size"}, 2);
  if (v25) {
    s.vl_window_size = v.positive({"window_size"}, 112);
    if (s.vl_window_size / s.vl_merge / s.vl_patch < 1)
      throw InputError(v.name("window_size"), std::to_string(s.vl_window_size),
                       "must span at least one merge block (window_size // spatial_merge_size // patch_size >= 1)");
    s.vl_fullatt_blocks = {7, 15, 23, 31};
    if (const json* f = v.raw("fullatt_block_indexes")) {
      if (!f->is_array()) throw InputError(v.name("fullatt_block_indexes"), dump_short(*f), "must be a list");
      s.vl_fullatt_blocks.clear();
      for (const json& e : *f) {
        if (!e.is_number_integer())
          throw InputError(v.name("fullatt_block_indexes"), dump_short(*f), "must be a list of block indices");
        s.vl_fullatt_blocks.push_back(e.get<int64_t>());  // indices past depth select no block (a `in` test)
      }
    }
  }
}

}  // namespace

TransformerSpec import_qwen2_vl(const ConfigReader& r, const std::string& type) {
  const bool v25 = type == "qwen2_5_vl";
  TransformerSpec s;
  static const json kEmpty = json::object();
  const json* tc = r.raw("text_config");
  if (tc && !tc->is_object()) throw InputError(r.name("text_config"), dump_short(*tc), "must be a JSON object");
  if (tc) {
    read_text(ConfigReader(*tc, r.name("text_config.")), s);
  } else {
    read_text(r, s);
  }
  const json* vc = r.raw("vision_config");
  if (vc && !vc->is_object()) throw InputError(r.name("vision_config"), dump_short(*vc), "must be a JSON object");
  read_vision(ConfigReader(vc ? *vc : kEmpty, r.name("vision_config.")), s, v25);
  if (s.vl_merger_out != s.hidden_size)
    throw InputError(r.name(std::string("vision_config.") + (v25 ? "out_hidden_size" : "hidden_size")),
                     std::to_string(s.vl_merger_out),
                     "must equal the text hidden_size (" + std::to_string(s.hidden_size) +
                         "): the image embeddings are scattered into the text embeddings");
  // Qwen2VLConfig.__post_init__: a text_config carrying the pre-v5 tie_word_embeddings true ties too.
  bool tie = r.boolean({"tie_word_embeddings"}, false);
  if (!tie && tc) tie = ConfigReader(*tc, r.name("text_config.")).boolean({"tie_word_embeddings"}, false);
  s.tie_word_embeddings = tie;
  return s;
}

}  // namespace memplan::hf
