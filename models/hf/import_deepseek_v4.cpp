// DeepseekV4Config (transformers 5.17 models/deepseek_v4/configuration_deepseek_v4.py).
//
// Class defaults (the dataclass fields of 5.17): vocab 129280, hidden 4096, moe_intermediate_size 2048 (also the
// shared expert's width: attribute_map intermediate_size -> moe_intermediate_size), 43 layers, 64 heads,
// num_key_value_heads 1 (not read: kv_proj makes one head_dim head), head_dim 512, q_lora_rank 1024,
// partial_rotary_factor 64 / 512 (rope dims int(head_dim * factor); legacy qk_rope_head_dim / head_dim),
// num_experts_per_tok 6, n_routed_experts 256 (num_local_experts), n_shared_experts 1 (not read: one shared
// DeepseekV4MLP), scoring_func "sqrtsoftplus", routed_scaling_factor 1.5, max_position_embeddings 1048576,
// hc_mult 4, hc_sinkhorn_iters 20, swiglu_limit 10.0, sliding_window 128, o_groups 8, o_lora_rank 1024,
// index_n_heads 64, index_head_dim 128, index_topk 512, tie False, attention_dropout 0.0, mlp_bias False,
// hidden_act "silu". layer_types None => 2 x "heavily_compressed_attention" then alternating
// compressed_sparse / heavily_compressed (legacy compress_ratios: 0 / 4 / 128 per layer); mlp_layer_types None =>
// min(N, num_hash_layers (default 3)) x "hash_moe", then "moe".
// Not modelled, refused naming the field: a layer_types entry other than "sliding_attention" (and an absent
// layer_types, whose default schedules compressed layers; legacy compress_ratios with a non-zero ratio): the CSA /
// HCA compressors, the Lightning Indexer and the block-bias cat onto the mask are not replayed; quantization_config
// (the published fp8 experts); output_router_logits (the auxiliary loss keeps every layer's logits); mlp_bias true
// (the shared expert's biases); a hidden_act other than silu; a scoring_func other than sqrtsoftplus / sigmoid /
// softmax (ACT2FN has no other router activation the class accepts).
// V4's own values go to the spec's family_fields (engine/arch/decoders/moe/deepseek_v4_fields.h).
#include <memory>

#include "engine/arch/decoders/moe/deepseek_v4_fields.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

std::vector<std::string> string_list(const ConfigReader& r, const char* key, int64_t n) {
  const json& v = *r.raw(key);
  if (!v.is_array() || static_cast<int64_t>(v.size()) != n)
    throw InputError(r.name(key), dump_short(v),
                     "must be a list of num_hidden_layers (" + std::to_string(n) + ") entries");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw InputError(r.name(key) + "[" + std::to_string(i) + "]", dump_short(v[i]), "must be a string");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

}  // namespace

TransformerSpec import_deepseek_v4(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError(r.name("quantization_config"), "present",
                     "quantized deepseek_v4 weights (fp8 experts) are not modelled; remove the key to size the bf16 "
                     "model");
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the auxiliary router loss (router logits kept per layer) is not modelled");
  if (r.boolean({"mlp_bias"}, false))
    throw InputError(r.name("mlp_bias"), "true", "the shared expert's biases are not modelled");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 129280);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 2048);
  s.intermediate_size = s.moe_intermediate_size;
  s.num_layers = r.positive({"num_hidden_layers"}, 43, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = 1;  // kv_proj: one shared K = V head, whatever num_key_value_heads says
  s.head_dim = r.positive({"head_dim"}, 512);
  s.q_lora_rank = r.positive({"q_lora_rank"}, 1024);
  s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 256, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 6);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed n_routed_experts (" + std::to_string(s.num_experts) + ")");
  s.num_shared_experts = 1;
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1048576);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "only silu is modelled for deepseek_v4");
  s.sliding_window = r.positive({"sliding_window"}, 128);

  // The rotary slice: int(head_dim * partial_rotary_factor), the factor from the config, else the legacy
  // qk_rope_head_dim / head_dim, else 64 / 512.
  if (auto f = r.opt_positive_number({"partial_rotary_factor"})) {
    if (*f > 1.0) throw InputError(r.name("partial_rotary_factor"), std::to_string(*f), "must be in (0, 1]");
    s.qk_rope_head_dim = static_cast<int64_t>(static_cast<double>(s.head_dim) * *f);
  } else if (auto q = r.opt_positive({"qk_rope_head_dim"})) {
    s.qk_rope_head_dim = *q;
  } else {
    s.qk_rope_head_dim = static_cast<int64_t>(static_cast<double>(s.head_dim) * (64.0 / 512.0));
  }
  if (s.qk_rope_head_dim < 2 || s.qk_rope_head_dim % 2 != 0 || s.qk_rope_head_dim > s.head_dim)
    throw InputError(r.name("partial_rotary_factor"), std::to_string(s.qk_rope_head_dim) + " rotary dims",
                     "must give an even number of rotary dims in [2, head_dim (" + std::to_string(s.head_dim) +
                         ")] (the interleaved rotary pairs channels)");

  // Attention schedule: sliding-window layers only.
  if (r.raw("layer_types") != nullptr) {
    const auto lt = string_list(r, "layer_types", s.num_layers);
    for (size_t i = 0; i < lt.size(); ++i)
      if (lt[i] != "sliding_attention")
        throw InputError(r.name("layer_types") + "[" + std::to_string(i) + "]", "\"" + lt[i] + "\"",
                         "only sliding_attention layers are modelled (the compressed_sparse / heavily_compressed "
                         "attention's compressor, Lightning Indexer and block bias are not)");
  } else if (r.raw("compress_ratios") != nullptr) {
    const json& cr = *r.raw("compress_ratios");
    if (!cr.is_array() || static_cast<int64_t>(cr.size()) < s.num_layers)
      throw InputError(r.name("compress_ratios"), dump_short(cr),
                       "must list num_hidden_layers (" + std::to_string(s.num_layers) + ") ratios");
    for (int64_t i = 0; i < s.num_layers; ++i)
      if (!(cr[static_cast<size_t>(i)].is_number_integer() && cr[static_cast<size_t>(i)].get<int64_t>() == 0))
        throw InputError(r.name("compress_ratios") + "[" + std::to_string(i) + "]",
                         dump_short(cr[static_cast<size_t>(i)]),
                         "only ratio 0 (sliding_attention) is modelled; compressed layers (4, 128) are not");
  } else {
    throw InputError(r.name("layer_types"), "absent",
                     "the default schedules heavily_compressed / compressed_sparse attention layers, which are not "
                     "modelled; give layer_types with \"sliding_attention\" for every layer");
  }
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 1);

  auto fields = std::make_shared<DeepseekV4Fields>();
  DeepseekV4Fields& f = *fields;
  f.hc_mult = r.positive({"hc_mult"}, 4, 64);
  f.hc_sinkhorn_iters = r.positive({"hc_sinkhorn_iters"}, 20, 10000);
  f.o_groups = r.positive({"o_groups"}, 8);
  f.o_lora_rank = r.positive({"o_lora_rank"}, 1024);
  if ((s.num_heads * s.head_dim) % f.o_groups != 0)
    throw InputError(r.name("o_groups"), std::to_string(f.o_groups),
                     "must divide num_attention_heads * head_dim (" + std::to_string(s.num_heads * s.head_dim) +
                         "): DeepseekV4GroupedLinear splits the heads into o_groups groups");
  const std::string sf = r.string({"scoring_func"}, "sqrtsoftplus");
  if (sf == "sqrtsoftplus")
    f.score_func = 0;
  else if (sf == "sigmoid")
    f.score_func = 1;
  else if (sf == "softmax")
    f.score_func = 2;
  else
    throw InputError(r.name("scoring_func"), "\"" + sf + "\"", "must be sqrtsoftplus, sigmoid or softmax");
  f.hash_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (r.raw("mlp_layer_types") != nullptr) {
    const auto mt = string_list(r, "mlp_layer_types", s.num_layers);
    for (size_t i = 0; i < mt.size(); ++i) {
      if (mt[i] != "hash_moe" && mt[i] != "moe")
        throw InputError(r.name("mlp_layer_types") + "[" + std::to_string(i) + "]", "\"" + mt[i] + "\"",
                         "must be \"hash_moe\" or \"moe\"");
      f.hash_layers[i] = mt[i] == "hash_moe" ? 1 : 0;
    }
  } else {
    const int64_t n_hash = r.non_negative({"num_hash_layers"}, 3);
    for (int64_t i = 0; i < std::min(n_hash, s.num_layers); ++i) f.hash_layers[static_cast<size_t>(i)] = 1;
  }
  s.family_fields = fields;
  return s;
}

}  // namespace memplan::hf
