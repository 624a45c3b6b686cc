// GPTBigCodeConfig (transformers 5.17 models/gpt_bigcode/configuration_gpt_bigcode.py) and what GPTBigCodeModel /
// GPTBigCodeAttention read of it.
//
// Class defaults: vocab 50257, n_positions 1024, n_embd 768, n_layer 12, n_head 12, n_inner None (=> 4 * n_embd),
// activation_function gelu_pytorch_tanh, resid / embd / attn_pdrop 0.1, multi_query True (__post_init__:
// num_key_value_heads = 1 if multi_query else n_head), add_cross_attention False, tie_word_embeddings True.
// GPTBigCodeAttention requires n_embd % n_head == 0. scale_attn_weights, attention_softmax_in_fp32 and
// scale_attention_softmax_in_fp32 change no allocation in 5.17 (the attention runs eager_attention_forward or
// SDPA, whose softmax is fp32 either way; the scaling is a Python float): read for their type only.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_gpt_bigcode(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50257);
  s.max_position_embeddings = r.positive({"n_positions", "max_position_embeddings"}, 1024);
  s.learned_positions = true;  // wpe: seq_len plus fed-back tokens may not pass n_positions
  s.hidden_size = r.positive({"n_embd", "hidden_size"}, 768);
  s.num_layers = r.positive({"n_layer", "num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"n_head", "num_attention_heads"}, 12);
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "n_head", "n_embd");
  s.multi_query = r.boolean({"multi_query"}, true);
  s.num_kv_heads = s.multi_query ? 1 : s.num_heads;
  s.intermediate_size = r.opt_positive({"n_inner"}).value_or(checked_mul(4, s.hidden_size, "config.n_embd"));
  s.hidden_act = r.string({"activation_function"}, "gelu_pytorch_tanh");
  if (s.hidden_act != "gelu_new" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     "is not modelled (gelu_pytorch_tanh, gelu, gelu_new, silu, relu)");
  s.resid_dropout = r.probability({"resid_pdrop"}, 0.1);
  s.embd_dropout = r.probability({"embd_pdrop"}, 0.1);
  s.attn_dropout = r.probability({"attn_pdrop"}, 0.1);
  if (r.boolean({"add_cross_attention"}, false))
    throw InputError(r.name("add_cross_attention"), "true",
                     "cross-attention blocks (an encoder's hidden states) are not modelled (false only)");
  for (const char* key : {"scale_attn_weights", "attention_softmax_in_fp32", "scale_attention_softmax_in_fp32"})
    (void)r.boolean({key}, true);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;  // nn.Linear layers, all with biases
  return s;
}

}  // namespace memplan::hf
