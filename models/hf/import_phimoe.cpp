// PhimoeConfig (transformers 5.17 models/phimoe/configuration_phimoe.py) and what PhimoeAttention,
// PhimoeRotaryEmbedding, PhimoeTopKRouter, PhimoeExperts and PhimoeForCausalLM read of it (modeling_phimoe.py).
//
// Class defaults: vocab 32064, hidden 4096, intermediate 6400, 32 layers, 32 heads, num_key_value_heads 8 (None
// => num_attention_heads, __post_init__), silu, max_position_embeddings 131072, tie_word_embeddings False,
// sliding_window None (set => create_sliding_window_causal_mask and a sliding DynamicCache), attention_dropout
// 0.0, num_experts_per_tok 2, num_local_experts 16, output_router_logits False, router_jitter_noise 0.01 (a
// threshold in sparsemixer: no tensor size depends on it), input_jitter_noise 0.0, attention_bias False (q / k / v
// / o together), lm_head_bias False. head_dim: getattr(config, "head_dim", hidden // heads).
// Rotary: rope_parameters (or the legacy rope_scaling) of rope_type default or longrope. PhimoeRotaryEmbedding
// recomputes inv_freq on every forward either way and scales cos / sin by a Python float (short_mscale /
// long_mscale for longrope), so longrope changes no tensor the builder models. Not modelled, refused naming the
// key: other rope types, output_router_logits (the load-balancing loss keeps every layer's router logits), a
// generate() whose sequence crosses a longrope config's original_max_position_embeddings (prepare_inputs_for_
// generation then drops the cache and runs the whole sequence again; checked by the builder), quantization_config.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// The rope dict transformers reads: rope_scaling wins over rope_parameters (convert_rope_params_to_dict).
const json* phimoe_rope_dict(const ConfigReader& r, std::string& key) {
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    if (const json* d = r.raw(k)) {
      if (!d->is_object()) throw InputError(r.name(k), dump_short(*d), "must be an object");
      key = k;
      return d;
    }
  }
  return nullptr;
}

}  // namespace

TransformerSpec import_phimoe(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized phimoe weights are not modelled; remove the key to size the bf16 model");
  // num_key_value_heads: 8 when absent, None (null) => num_attention_heads (__post_init__).
  const int64_t kv_default = r.explicit_null("num_key_value_heads") ? 0 : 8;
  TransformerSpec s = read_decoder_sizes(r, {32064, 4096, 6400, 32, 32, kv_default});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for phimoe (silu, swish, gelu, gelu_pytorch_tanh, relu are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.sliding_window = r.explicit_null("sliding_window") ? 0 : r.non_negative({"sliding_window"}, 0);
  s.attention_bias = s.qkv_bias = s.o_bias = r.boolean({"attention_bias"}, false);
  s.lm_head_bias = r.boolean({"lm_head_bias"}, false);

  s.num_experts = r.positive({"num_local_experts"}, 16, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
  if (s.num_experts_per_tok != 2)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "phimoe's sparsemixer always routes each token to 2 experts; only 2 is modelled");
  if (s.num_experts < 2)
    throw InputError(r.name("num_local_experts"), std::to_string(s.num_experts),
                     "sparsemixer picks 2 distinct experts, so at least 2 are needed");
  s.moe_intermediate_size = s.intermediate_size;  // PhimoeExperts: intermediate_dim = config.intermediate_size
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the auxiliary load-balancing loss over every layer's router logits is not modelled for phimoe");
  // input_jitter_noise multiplies the MoE input by uniform(1 - eps, 1 + eps) noise in training.
  if (const json* j = r.raw("input_jitter_noise")) {
    if (!j->is_number() || j->get<double>() < 0.0)
      throw InputError(r.name("input_jitter_noise"), dump_short(*j), "must be a non-negative number");
    s.phimoe_input_jitter_noise = j->get<double>();
  }
  if (const json* j = r.raw("router_jitter_noise"))
    if (!j->is_number()) throw InputError(r.name("router_jitter_noise"), dump_short(*j), "must be a number");

  std::string key;
  if (const json* rope = phimoe_rope_dict(r, key)) {
    auto t = rope->find("rope_type");
    std::string tkey = key + ".rope_type";
    if (t == rope->end()) {
      t = rope->find("type");
      tkey = key + ".type";
    }
    if (t != rope->end() && !t->is_null()) {
      const std::string type = t->is_string() ? t->get<std::string>() : "";
      if (type != "default" && type != "longrope")
        throw InputError(r.name(tkey), dump_short(*t),
                         "phimoe models rope_type default or longrope only (PhimoeRotaryEmbedding)");
      if (type == "longrope") {
        for (const char* m : {"short_mscale", "long_mscale"}) {
          auto v = rope->find(m);
          if (v == rope->end() || !v->is_number())
            throw InputError(r.name(key + "." + m), v == rope->end() ? "absent" : dump_short(*v),
                             "must be a number for longrope (PhimoeConfig.validate_rope)");
        }
        auto o = rope->find("original_max_position_embeddings");
        int64_t omp = 0;
        if (o != rope->end() && o->is_number_integer() && o->get<int64_t>() > 0)
          omp = o->get<int64_t>();
        else if (auto top = r.opt_positive({"original_max_position_embeddings"}))
          omp = *top;
        else
          throw InputError(r.name(key + ".original_max_position_embeddings"),
                           o == rope->end() ? "absent" : dump_short(*o),
                           "longrope needs original_max_position_embeddings (a positive integer)");
        s.phimoe_longrope_original_max = omp;
      }
    }
  }
  return s;
}

}  // namespace memplan::hf
