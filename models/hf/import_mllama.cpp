// MllamaConfig / MllamaTextConfig / MllamaVisionConfig (transformers 5.17 models/mllama/configuration_mllama.py),
// read into the [mllama] fields of the spec (engine/arch/spec.h) for engine/arch/vlm/mllama.cpp.
//   "mllama": text_config (a dict; None -> MllamaTextConfig()) into the decoder fields, vision_config (None ->
//     MllamaVisionConfig()) into the [clip / siglip] vision_* fields and the [mllama] ones.
//   "mllama_text_model": MllamaForCausalLM's config, the text keys at the top level (no vision model).
//
// MllamaTextConfig defaults: vocab_size 128256, hidden_size 4096, hidden_act "silu", num_hidden_layers 40,
// num_attention_heads 32, num_key_value_heads 8, intermediate_size 14336, rms_norm_eps 1e-5,
// max_position_embeddings 131072, tie_word_embeddings false, cross_attention_layers [3, 8, 13, 18, 23, 28, 33, 38],
// dropout 0, pad_token_id 128004. head_dim is hidden_size // num_attention_heads whatever the config says (the
// attention modules compute it; a head_dim key changes nothing).
// MllamaVisionConfig defaults: hidden_size 1280, hidden_act "gelu", num_hidden_layers 32, num_global_layers 8,
// attention_heads 16 (num_attention_heads is its attribute_map alias), num_channels 3, intermediate_size 5120,
// vision_output_dim 7680, image_size 448, patch_size 14, max_num_tiles 4, intermediate_layers_indices
// [3, 7, 15, 23, 30], supported_aspect_ratios the eight [h, w] grids of at most 4 tiles.
// MllamaConfig: image_token_index 128256.
// Keys that change no allocation (read for their type only): rms_norm_eps, norm_eps, initializer_range, the rope
// dict (its rope_type checked: default, linear, dynamic, yarn, llama3), tie_word_embeddings (MllamaFor* tie
// nothing: _tied_weights_keys is commented out, and the embedding has vocab_size + 8 rows), bos / eos ids.
// Refused, naming the key: a text hidden_act other than silu, a dropout other than 0 (attention dropout never
// measured), heads not dividing hidden_size, an odd head_dim, num_key_value_heads not dividing the heads,
// cross_attention_layers that is not a list of integers, a vision hidden_act the towers do not model, heads not
// dividing the vision hidden_size, a patch larger than the image, intermediate_layers_indices outside the local
// transformer's num_hidden_layers outputs, vision_output_dim other than hidden_size * (1 + the indices) (the
// projector's Linear would not take the concatenated features), supported_aspect_ratios that is not a non-empty
// list of [h, w] pairs of positive integers with h * w <= max_num_tiles, the default aspect ratios with
// max_num_tiles other than 4 (validate_architecture raises), image_token_index outside the embedding's
// vocab_size + 8 rows.
#include "engine/limits.h"
#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

const json& sub_object(const ConfigReader& r, const char* key) {
  static const json kEmpty = json::object();
  const json* v = r.raw(key);
  if (!v) return kEmpty;
  if (!v->is_object()) throw InputError(r.name(key), dump_short(*v), "must be a JSON object");
  return *v;
}

// An optional list of integers under `key` (absent: `dflt`).
std::vector<int64_t> int_list(const ConfigReader& r, const char* key, std::vector<int64_t> dflt) {
  const json* v = r.raw(key);
  if (!v) return dflt;
  if (!v->is_array() || v->size() > static_cast<size_t>(kMaxLayers))
    throw InputError(r.name(key), dump_short(*v), "must be a list of integers");
  std::vector<int64_t> out;
  for (const json& e : *v) {
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(kMaxLayers)))
      throw InputError(r.name(key), dump_short(*v), "must be a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

void read_text(const ConfigReader& t, TransformerSpec& s) {
  TransformerSpec d = read_decoder_sizes(t, {128256, 4096, 14336, 40, 32, 8});
  s.family = d.family;
  s.vocab_size = d.vocab_size;
  s.hidden_size = d.hidden_size;
  s.intermediate_size = d.intermediate_size;
  s.num_layers = d.num_layers;
  s.num_heads = d.num_heads;
  s.num_kv_heads = d.num_kv_heads;
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(t.name("num_attention_heads"), std::to_string(s.num_heads),
                     "does not divide hidden_size (" + std::to_string(s.hidden_size) +
                         "): the attention's views raise");
  s.head_dim = s.hidden_size / s.num_heads;  // MllamaText*Attention: hidden_size // num_heads
  if (s.head_dim % 2 != 0)
    throw InputError(t.name("hidden_size"), std::to_string(s.hidden_size),
                     "gives an odd head_dim (" + std::to_string(s.head_dim) + "): rotate_half pairs dimensions");
  s.hidden_act = t.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu")
    throw InputError(t.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled for mllama (silu is)");
  if (const json* dr = t.raw("dropout"); dr && (!dr->is_number() || dr->get<double>() != 0.0))
    throw InputError(t.name("dropout"), dump_short(*dr),
                     "is not modelled (the attention dropout of mllama was never measured; 0 is)");
  s.max_position_embeddings = t.positive({"max_position_embeddings"}, 131072);
  check_rope_type(t, "mllama");
  t.boolean({"tie_word_embeddings"}, false);
  t.opt_positive_number({"rms_norm_eps"});
  t.opt_positive_number({"initializer_range"});
  check_padding_idx(t, s.vocab_size + 8);
  // `idx in self.cross_attention_layers`: entries outside [0, num_hidden_layers) match no layer.
  for (int64_t i : int_list(t, "cross_attention_layers", {3, 8, 13, 18, 23, 28, 33, 38}))
    if (i >= 0 && i < s.num_layers &&
        std::find(s.mllama_cross_layers.begin(), s.mllama_cross_layers.end(), i) == s.mllama_cross_layers.end())
      s.mllama_cross_layers.push_back(i);
  std::sort(s.mllama_cross_layers.begin(), s.mllama_cross_layers.end());
}

void read_vision(const ConfigReader& v, TransformerSpec& s) {
  s.vision_hidden_size = v.positive({"hidden_size"}, 1280);
  s.vision_intermediate_size = v.positive({"intermediate_size"}, 5120);
  s.vision_num_layers = v.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.mllama_global_layers = v.positive({"num_global_layers"}, 8, kMaxLayers);
  s.vision_num_heads = v.positive({"attention_heads", "num_attention_heads"}, 16);
  if (s.vision_hidden_size % s.vision_num_heads != 0)
    throw InputError(v.name("attention_heads"), std::to_string(s.vision_num_heads),
                     "does not divide hidden_size (" + std::to_string(s.vision_hidden_size) + "): the attention raises");
  s.vision_hidden_act = v.string({"hidden_act"}, "gelu");
  if (s.vision_hidden_act != "gelu" && s.vision_hidden_act != "gelu_pytorch_tanh" && s.vision_hidden_act != "quick_gelu")
    throw InputError(v.name("hidden_act"), "\"" + s.vision_hidden_act + "\"",
                     "is not modelled (gelu, gelu_pytorch_tanh and quick_gelu are)");
  s.vision_num_channels = v.positive({"num_channels"}, 3);
  s.vision_image_size = image::square_size(v, "image_size", 448);
  s.vision_patch_size = image::square_size(v, "patch_size", 14);
  if (s.vision_patch_size > s.vision_image_size)
    throw InputError(v.name("patch_size"), std::to_string(s.vision_patch_size),
                     "exceeds image_size (" + std::to_string(s.vision_image_size) + "): the patch Conv2d has no output");
  s.mllama_max_tiles = v.positive({"max_num_tiles"}, 4, 64);
  v.opt_positive_number({"norm_eps"});
  v.opt_positive_number({"initializer_range"});

  // supported_aspect_ratios: [h, w] tile grids; the embeddings have len + 1 rows (id 0: padding).
  const std::string ar_key = v.name("supported_aspect_ratios");
  if (const json* ar = v.raw("supported_aspect_ratios")) {
    if (!ar->is_array() || ar->empty() || ar->size() > 4096)
      throw InputError(ar_key, dump_short(*ar), "must be a non-empty list of [h, w] tile grids");
    for (const json& e : *ar) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_integer() ||
          e[0].get<int64_t>() <= 0 || e[1].get<int64_t>() <= 0 || e[0].get<int64_t>() > s.mllama_max_tiles ||
          e[1].get<int64_t>() > s.mllama_max_tiles || e[0].get<int64_t>() * e[1].get<int64_t>() > s.mllama_max_tiles)
        throw InputError(ar_key, dump_short(*ar),
                         "must hold [h, w] pairs of positive integers with h * w <= max_num_tiles (" +
                             std::to_string(s.mllama_max_tiles) + ")");
    }
    s.mllama_aspect_ratios = static_cast<int64_t>(ar->size());
    const json dflt = json::parse("[[1,1],[1,2],[1,3],[1,4],[2,1],[2,2],[3,1],[4,1]]");
    if (*ar == dflt && s.mllama_max_tiles != 4)
      throw InputError(v.name("max_num_tiles"), std::to_string(s.mllama_max_tiles),
                       "must be 4 with the default supported_aspect_ratios (validate_architecture raises)");
  } else {
    if (s.mllama_max_tiles != 4)
      throw InputError(v.name("max_num_tiles"), std::to_string(s.mllama_max_tiles),
                       "must be 4 with the default supported_aspect_ratios (validate_architecture raises)");
    s.mllama_aspect_ratios = 8;
  }

  // intermediate_layers_indices: output.hidden_states[i], one entry per local layer (Python indexing).
  const int64_t L = s.vision_num_layers;
  const std::vector<int64_t> idx = int_list(v, "intermediate_layers_indices", {3, 7, 15, 23, 30});
  if (!v.raw("intermediate_layers_indices") && 30 >= L)
    throw InputError(v.name("num_hidden_layers"), std::to_string(L),
                     "is too few for the default intermediate_layers_indices [3, 7, 15, 23, 30] (set the key)");
  for (int64_t i : idx) {
    if (i < -L || i >= L)
      throw InputError(v.name("intermediate_layers_indices"), dump_short(*v.raw("intermediate_layers_indices")),
                       "must index the local transformer's " + std::to_string(L) +
                           " layer outputs (num_hidden_layers): hidden_states[i] raises otherwise");
    s.mllama_intermediate_layers.push_back(i < 0 ? i + L : i);
  }
  const int64_t out_dim = v.positive({"vision_output_dim"}, 7680);
  const int64_t want = s.vision_hidden_size * (1 + static_cast<int64_t>(idx.size()));
  if (out_dim != want)
    throw InputError(v.name("vision_output_dim"), std::to_string(out_dim),
                     "must equal hidden_size * (1 + len(intermediate_layers_indices)) = " + std::to_string(want) +
                         ": the projector's Linear takes the concatenated features");
}

}  // namespace

TransformerSpec import_mllama(const ConfigReader& r, const std::string& type) {
  TransformerSpec s;
  if (type == "mllama_text_model") {
    read_text(r, s);
    return s;
  }
  const json& tj = sub_object(r, "text_config");
  const ConfigReader t(tj, r.name("text_config."));
  read_text(t, s);
  const json& vj = sub_object(r, "vision_config");
  const ConfigReader v(vj, r.name("vision_config."));
  read_vision(v, s);
  s.projection_dim = s.hidden_size;  // multi_modal_projector's output: the text hidden size
  const int64_t img = r.non_negative({"image_token_index", "image_token_id"}, 128256);
  if (img >= s.vocab_size + 8)
    throw InputError(r.name("image_token_index"), std::to_string(img),
                     "is outside the embedding's vocab_size + 8 rows (" + std::to_string(s.vocab_size + 8) + ")");
  r.boolean({"tie_word_embeddings"}, false);
  return s;
}

}  // namespace memplan::hf
