// GPTJConfig (transformers 5.17 models/gptj/configuration_gptj.py) and what GPTJModel / GPTJAttention read of it.
//
// Class defaults: vocab 50400, n_positions 2048, n_embd 4096, n_layer 28, n_head 16, rotary_dim 64, n_inner None
// (=> 4 * n_embd), activation_function gelu_new, resid / embd / attn_pdrop 0.0, tie_word_embeddings False.
// GPTJAttention requires n_embd % n_head == 0. Each attention keeps a sin / cos table of n_positions rows and
// gathers from it by position id, so a sequence may not pass n_positions (learned_positions: estimate.cpp checks).
// rotary_dim None would make that table n_embd wide and the rotary product fail to broadcast unless there is one
// head: refused, as are odd values and values above the head size (the slices would not match the table).
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

void read_gptj_block_keys(const ConfigReader& r, TransformerSpec& s, const char* null_rotary_reason) {
  if (r.explicit_null("rotary_dim")) throw InputError(r.name("rotary_dim"), "null", null_rotary_reason);
  s.rotary_dim = r.positive({"rotary_dim"}, 64);
  if (s.rotary_dim % 2 != 0 || s.rotary_dim > s.head_dim)
    throw InputError(r.name("rotary_dim"), std::to_string(s.rotary_dim),
                     "must be even and at most the head size (" + std::to_string(s.head_dim) + ")");
  s.intermediate_size = r.opt_positive({"n_inner"}).value_or(checked_mul(4, s.hidden_size, "config.n_embd"));
  s.hidden_act = r.string({"activation_function"}, "gelu_new");
  if (s.hidden_act != "gelu_new" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     "is not modelled (gelu_new, gelu, gelu_pytorch_tanh, silu, relu)");
  s.resid_dropout = r.probability({"resid_pdrop"}, 0.0);
  s.embd_dropout = r.probability({"embd_pdrop"}, 0.0);
  s.attn_dropout = r.probability({"attn_pdrop"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.parallel_residual = true;   // one ln_1 feeds the attention and the MLP
  s.lm_head_bias = true;        // nn.Linear(n_embd, vocab_size) with its bias
  s.mlp_bias = true;            // fc_in / fc_out; the attention projections have none
}

TransformerSpec import_gptj(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50400);
  s.max_position_embeddings = r.positive({"n_positions", "max_position_embeddings"}, 2048);
  s.learned_positions = true;
  s.hidden_size = r.positive({"n_embd", "hidden_size"}, 4096);
  s.num_layers = r.positive({"n_layer", "num_hidden_layers"}, 28, kMaxLayers);
  s.num_heads = r.positive({"n_head", "num_attention_heads"}, 16);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "n_head", "n_embd");
  read_gptj_block_keys(r, s,
                       "rotates the whole n_embd-wide table against each head: not modelled (an even size up to "
                       "the head size only)");
  return s;
}

}  // namespace memplan::hf
