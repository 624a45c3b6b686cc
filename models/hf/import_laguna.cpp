// LagunaConfig (transformers 5.17 models/laguna/configuration_laguna.py) and what the modeling file
// (modeling_laguna.py) reads of it.
//
// Class defaults: vocab 100352, hidden 2048, intermediate 8192 (the dense MLP), 40 layers, 48 heads, 8 KV heads,
// head_dim 128, silu, max_position_embeddings 131072, tie False, sliding_window 512, attention_dropout 0,
// attention_bias False (q / k / v / o), moe_intermediate_size 512, shared_expert_intermediate_size 512,
// num_experts_per_tok 8, num_experts 256, output_router_logits False, gating True (per head),
// moe_routed_scaling_factor 1.0, moe_apply_router_weight_on_input False, moe_router_logit_softcapping 0.0,
// eos_token_id None. __post_init__: layer_types None -> every layer "full_attention"; mlp_layer_types None -> "dense"
// then "sparse"; num_attention_heads_per_layer None -> num_attention_heads for every layer; rope_parameters None ->
// {"full_attention": {"rope_type": "default", "rope_theta": 5e5, "partial_rotary_factor": 0.5}, "sliding_attention":
// {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 1.0}}; convert_rope_params_to_dict is
// overridden: LagunaRotaryEmbedding reads rope_parameters[layer_type] for each type present, int(head_dim * its
// partial_rotary_factor (default 1.0)) dimensions rotate.
// Refused, naming the field: moe_apply_router_weight_on_input True (validate_architecture raises), output_router_logits
// True (the auxiliary loss is not modelled), list lengths other than num_hidden_layers (validate_architecture raises),
// layer_types / mlp_layer_types entries other than the known strings, a gating string other than "per-head" /
// "per-element", a rope_parameters not keyed by the layer types present, a rope type other than default / linear /
// yarn / llama3, an odd rotary dimension, heads not divisible by the KV heads, hidden_act other than silu, null for an
// int field (strict dataclass), quantization_config.
#include <memory>
#include <string>

#include "engine/arch/decoders/moe/laguna_fields.h"
#include "engine/checked.h"
#include "models/hf/per_type_rope.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// A per-layer list of num_layers strings, each one of `a` / `b`: returns 1 where the entry is `b`.
std::vector<uint8_t> read_type_list(const ConfigReader& r, const char* key, int64_t layers, const char* a,
                                    const char* b, std::vector<uint8_t> dflt) {
  const json* lt = r.raw(key);
  if (!lt) return dflt;
  if (!lt->is_array() || static_cast<int64_t>(lt->size()) != layers)
    throw InputError(r.name(key), dump_short(*lt),
                     "must be a list of " + std::to_string(layers) + " entries (num_hidden_layers)");
  std::vector<uint8_t> out(static_cast<size_t>(layers), 0);
  for (size_t i = 0; i < lt->size(); ++i) {
    const json& t = (*lt)[i];
    const std::string v = t.is_string() ? t.get<std::string>() : std::string();
    if (v != a && v != b)
      throw InputError(r.name(key) + "[" + std::to_string(i) + "]", dump_short(t),
                       std::string("must be \"") + a + "\" or \"" + b + "\"");
    out[i] = v == b ? 1 : 0;
  }
  return out;
}

}  // namespace

TransformerSpec import_laguna(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized laguna weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                        "num_key_value_heads", "max_position_embeddings", "moe_intermediate_size",
                        "shared_expert_intermediate_size", "num_experts_per_tok", "num_experts", "head_dim",
                        "sliding_window"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (LagunaConfig: int)");
  if (r.boolean({"moe_apply_router_weight_on_input"}, false))
    throw InputError(r.name("moe_apply_router_weight_on_input"), "true",
                     "LagunaConfig.validate_architecture raises NotImplementedError");
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true", "the router's auxiliary loss is not modelled");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 100352);
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.intermediate_size = r.positive({"intermediate_size"}, 8192);
  s.num_layers = r.positive({"num_hidden_layers"}, 40, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 48);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  s.head_dim = r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "laguna is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = s.o_bias = r.boolean({"attention_bias"}, false);
  check_padding_idx(r, s.vocab_size);
  s.generate_without_eos = !r.present("eos_token_id");  // class default None
  auto f = std::make_shared<LagunaFields>();

  // Query heads per layer.
  f->heads_per_layer.assign(static_cast<size_t>(s.num_layers), s.num_heads);
  if (const json* hl = r.raw("num_attention_heads_per_layer")) {
    if (!hl->is_array() || static_cast<int64_t>(hl->size()) != s.num_layers)
      throw InputError(r.name("num_attention_heads_per_layer"), dump_short(*hl),
                       "must be a list of " + std::to_string(s.num_layers) + " head counts (num_hidden_layers)");
    for (size_t i = 0; i < hl->size(); ++i) {
      const json& h = (*hl)[i];
      if (!h.is_number_integer() || h.get<int64_t>() <= 0 || h.get<int64_t>() > kMaxDim)
        throw InputError(r.name("num_attention_heads_per_layer") + "[" + std::to_string(i) + "]", dump_short(h),
                         "must be a positive integer");
      f->heads_per_layer[i] = h.get<int64_t>();
    }
  }
  for (size_t i = 0; i < f->heads_per_layer.size(); ++i)
    if (f->heads_per_layer[i] % s.num_kv_heads != 0)
      throw InputError(r.name(r.raw("num_attention_heads_per_layer") ? "num_key_value_heads" : "num_key_value_heads"),
                       std::to_string(s.num_kv_heads),
                       "must divide every layer's query heads (layer " + std::to_string(i) + ": " +
                           std::to_string(f->heads_per_layer[i]) + ")");

  // gating: True / "per-head" one gate per head; "per-element" one per channel; False is refused by nothing in the
  // modeling file and gives per-element gates.
  if (const json* g = r.raw("gating")) {
    if (g->is_boolean()) {
      f->gate_per_head = g->get<bool>();
    } else if (g->is_string() && (g->get<std::string>() == "per-head" || g->get<std::string>() == "per-element")) {
      f->gate_per_head = g->get<std::string>() == "per-head";
    } else {
      throw InputError(r.name("gating"), dump_short(*g), "must be true, false, \"per-head\" or \"per-element\"");
    }
  }

  // layer_types (default: every layer full), mlp_layer_types (default: dense then sparse).
  s.sliding_window = r.positive({"sliding_window"}, 512);
  s.sliding_layers = read_type_list(r, "layer_types", s.num_layers, "full_attention", "sliding_attention",
                                    std::vector<uint8_t>(static_cast<size_t>(s.num_layers), 0));
  std::vector<uint8_t> moe_dflt(static_cast<size_t>(s.num_layers), 1);
  if (s.num_layers > 0) moe_dflt[0] = 0;
  s.moe_layers = read_type_list(r, "mlp_layer_types", s.num_layers, "dense", "sparse", moe_dflt);
  bool any_full = false, any_sliding = false, any_moe = false;
  for (uint8_t t : s.sliding_layers) (t ? any_sliding : any_full) = true;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;

  // The experts, the shared expert and the router.
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 512);
  f->shared_intermediate = r.positive({"shared_expert_intermediate_size"}, 512);
  s.num_experts = r.positive({"num_experts"}, 256, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  if (any_moe && s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + "): torch.topk raises");
  for (const char* k : {"moe_routed_scaling_factor", "moe_router_logit_softcapping"})
    if (const json* v = r.raw(k); v && !v->is_number()) throw InputError(r.name(k), dump_short(*v), "must be a number");
  if (const json* v = r.raw("moe_router_logit_softcapping")) f->router_softcap = v->get<double>();

  const json* rope = r.raw("rope_parameters");
  if (rope != nullptr && !rope->is_object())
    throw InputError(r.name("rope_parameters"), dump_short(*rope), "must be a dict keyed by layer type");
  // the class's rope_parameters give full layers 0.5 and sliding ones 1.0; a type's dict without the key, 1.0
  const char* rotary = "LagunaRotaryEmbedding";
  if (any_full) f->full_rotary_dim = per_type_rotary_dim(r, rope, "full_attention", 0.5, 1.0, s.head_dim, rotary, "laguna");
  if (any_sliding)
    f->sliding_rotary_dim = per_type_rotary_dim(r, rope, "sliding_attention", 1.0, 1.0, s.head_dim, rotary, "laguna");
  s.family_fields = f;
  return s;
}

}  // namespace memplan::hf
