// JetMoeConfig (transformers 5.17 models/jetmoe/configuration_jetmoe.py) and what models/jetmoe/modeling_jetmoe.py
// reads of it.
//
// Class defaults: vocab 32000, hidden 2048, 12 layers, num_key_value_heads 16, kv_channels 128 (attribute_map:
// head_dim), intermediate_size 5632 (each MoE expert's width; input_linear is 2 x that), max_position_embeddings
// 4096, activation_function "silu", num_local_experts 8 (the MoE's and the MoA's experts), num_experts_per_tok 2,
// output_router_logits False (True adds the auxiliary load-balancing loss: not modelled, refused),
// tie_word_embeddings True, attention_dropout 0.0. __post_init__ sets num_attention_heads = num_key_value_heads *
// num_experts_per_tok whatever the config says (the key is ignored). The MoA's hidden size is kv_channels *
// num_key_value_heads. validate_architecture: num_experts_per_tok <= num_local_experts.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

#include "engine/checked.h"

namespace memplan::hf {

TransformerSpec import_jetmoe(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 32000);
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 16);
  s.head_dim = r.positive({"kv_channels", "head_dim"}, 128);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("kv_channels"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.intermediate_size = r.positive({"intermediate_size"}, 5632);
  s.moe_intermediate_size = s.intermediate_size;
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"activation_function"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for jetmoe (silu, swish, gelu, gelu_pytorch_tanh, relu are)");
  s.num_experts = r.positive({"num_local_experts"}, 8);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  s.num_heads = checked_mul(s.num_kv_heads, s.num_experts_per_tok);
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the routers' auxiliary load-balancing loss is not modelled (set it false)");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  check_rope_type(r, "jetmoe");
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
