// Qwen3Config / Qwen3MoeConfig (transformers 5.17 models/qwen3/configuration_qwen3.py,
// models/qwen3_moe/configuration_qwen3_moe.py) and the modeling code's reads of them.
//
// Qwen3Config defaults: vocab 151936, hidden 4096, intermediate 22016, 32 layers, 32 heads, 32 kv heads (None =>
// heads), head_dim 128, silu, max_position_embeddings 32768, tie False, attention_bias False, attention_dropout
// 0, use_sliding_window False, sliding_window 4096, max_window_layers 28, layer_types None. __post_init__: the
// window is dropped (None) unless use_sliding_window; absent layer_types become "sliding_attention" for
// i >= max_window_layers when the window survives, else "full_attention".
// Qwen3MoeConfig defaults: vocab 151936, hidden 2048, intermediate 6144, 24 layers, 32 heads, 4 kv heads,
// no head_dim field (Qwen3MoeAttention: getattr(config, "head_dim", hidden // heads), so a config.json key
// still sets it), decoder_sparse_step 1, moe_intermediate_size 768, 8 of 128 experts, norm_topk_prob False,
// output_router_logits False, mlp_only_layers None => [], same window rule (no layer_types: the cache and the
// mask then slide on every layer when the window survives).
#include <algorithm>

#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

std::string in_quotes(const std::string& v) { return "\"" + v + "\""; }

// A present, non-null key's value (nullptr otherwise), for the lists the typed getters do not read.
const json* list_value(const ConfigReader& r, const char* key) { return r.raw(key); }

// layer_types as transformers validates it (one of the known attention types per layer, one per layer).
std::vector<uint8_t> read_layer_types(const json& lt, int64_t layers) {
  if (!lt.is_array()) throw InputError("config.layer_types", dump_short(lt), "must be a list of attention types");
  if (static_cast<int64_t>(lt.size()) != layers)
    throw InputError("config.layer_types", std::to_string(lt.size()) + " entries",
                     "must have one entry per layer (num_hidden_layers = " + std::to_string(layers) + ")");
  std::vector<uint8_t> sliding(lt.size());
  for (size_t i = 0; i < lt.size(); ++i) {
    const json& t = lt[i];
    if (t.is_string() && t.get<std::string>() == "full_attention")
      sliding[i] = 0;
    else if (t.is_string() && t.get<std::string>() == "sliding_attention")
      sliding[i] = 1;
    else
      throw InputError("config.layer_types[" + std::to_string(i) + "]", dump_short(t),
                       "qwen3 models full_attention and sliding_attention layers");
  }
  return sliding;
}

}  // namespace

void read_qwen_moe(const ConfigReader& r, TransformerSpec& s, const QwenMoeDefaults& d) {
  s.num_experts = r.non_negative({"num_experts"}, d.experts);
  if (s.num_experts > kMaxExperts)
    throw InputError("config.num_experts", std::to_string(s.num_experts),
                     "exceeds the limit of " + std::to_string(kMaxExperts));
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, d.experts_per_tok);
  if (s.num_experts > 0 && s.num_experts_per_tok > s.num_experts)
    throw InputError("config.num_experts_per_tok", std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, d.moe_intermediate);
  s.norm_topk_prob = r.boolean({"norm_topk_prob"}, false);
  if (r.boolean({"output_router_logits"}, false))
    throw InputError("config.output_router_logits", "true",
                     "the router auxiliary loss (load_balancing_loss_func) is not modelled");
  const int64_t step = r.positive({"decoder_sparse_step"}, 1);
  std::vector<uint8_t> dense(static_cast<size_t>(s.num_layers), 0);
  if (const json* mp = list_value(r, "mlp_only_layers")) {
    const json& m = *mp;
    if (!m.is_array()) throw InputError("config.mlp_only_layers", dump_short(m), "must be a list of layer indices");
    for (const json& e : m) {
      // Python's `layer_idx not in mlp_only_layers`: an index outside [0, layers) simply matches no layer.
      if (!e.is_number_integer())
        throw InputError("config.mlp_only_layers", dump_short(m), "must be a list of integer layer indices");
      const int64_t i = e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX) ? -1 : e.get<int64_t>();
      if (i >= 0 && i < s.num_layers) dense[static_cast<size_t>(i)] = 1;
    }
  }
  if (s.num_experts > 0) {
    s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
    for (int64_t i = 0; i < s.num_layers; ++i)
      s.moe_layers[static_cast<size_t>(i)] = !dense[static_cast<size_t>(i)] && (i + 1) % step == 0;
  }
}

TransformerSpec import_qwen3(const ConfigReader& r, const std::string& type) {
  const bool moe = type == "qwen3_moe";
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 151936);
  s.hidden_size = r.positive({"hidden_size"}, moe ? 2048 : 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, moe ? 6144 : 22016);
  s.num_layers = r.positive({"num_hidden_layers"}, moe ? 24 : 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(moe ? 4 : s.num_heads);
  if (moe && r.explicit_null("num_key_value_heads"))
    throw InputError("config.num_key_value_heads", "null", "must be a positive integer (Qwen3MoeConfig: int)");
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else if (moe)  // getattr(config, "head_dim", hidden_size // num_attention_heads): floor division, as Python's //
    s.head_dim = s.hidden_size / s.num_heads;
  else
    s.head_dim = 128;  // Qwen3Config.head_dim
  if (s.head_dim == 0)
    throw InputError("config.num_attention_heads", std::to_string(s.num_heads),
                     "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim would be 0");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 32768);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("config.hidden_act", in_quotes(s.hidden_act), "qwen3 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;

  // Sliding window (__post_init__): kept only with use_sliding_window.
  const bool use_window = r.boolean({"use_sliding_window"}, false);
  int64_t window = 0;
  if (use_window && !r.explicit_null("sliding_window")) window = r.positive({"sliding_window"}, 4096);
  if (!moe) {
    std::vector<uint8_t> sliding;
    if (const json* lt = list_value(r, "layer_types")) {
      sliding = read_layer_types(*lt, s.num_layers);
    } else {
      const int64_t max_window_layers = r.non_negative({"max_window_layers"}, 28);
      sliding.assign(static_cast<size_t>(s.num_layers), 0);
      for (int64_t i = max_window_layers; window > 0 && i < s.num_layers; ++i) sliding[static_cast<size_t>(i)] = 1;
    }
    const bool any = std::find(sliding.begin(), sliding.end(), uint8_t{1}) != sliding.end();
    // create_sliding_window_causal_mask raises without a window (masking_utils.py).
    if (any && window == 0)
      throw InputError("config.layer_types", "has sliding_attention layers",
                       "needs use_sliding_window true and a sliding_window (transformers raises otherwise)");
    if (any) {
      s.sliding_window = window;
      s.sliding_layers = std::move(sliding);
    }
  } else {
    if (const json* lt = list_value(r, "layer_types"))
      throw InputError("config.layer_types", dump_short(*lt),
                       "is not a Qwen3MoeConfig field (the model masks by sliding_window alone); not modelled");
    if (window > 0) {
      s.sliding_window = window;
      s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 1);
    }
    read_qwen_moe(r, s, {128, 8, 768});
  }
  return s;
}

}  // namespace memplan::hf
