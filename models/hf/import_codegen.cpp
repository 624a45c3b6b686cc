// CodeGenConfig (transformers 5.17 models/codegen/configuration_codegen.py) and what CodeGenModel / CodeGenAttention
// read of it (the installed modeling_codegen.py; the configuration file is GPT-J's with n_ctx added).
//
// Class defaults: vocab 50400, n_positions 2048, n_ctx 2048, n_embd 4096, n_layer 28, n_head 16, rotary_dim 64,
// n_inner None (=> 4 * n_embd), activation_function gelu_new, resid / embd / attn_pdrop 0.0, tie_word_embeddings
// False. CodeGenAttention requires n_embd % n_head == 0, and its fused qkv_proj is split for mp_num = 4 model-parallel
// shards: qkv.reshape(..., 4, -1) then each part reshaped to (n_head // 4, head_dim), which only fits when n_head is a
// multiple of 4 (refused otherwise, naming n_head). Each attention keeps a sin / cos table of n_positions rows and
// indexes it by position id, so a sequence may not pass n_positions (learned_positions: estimate.cpp checks).
// rotary_dim None: CodeGenModel's min(config.rotary_dim, n_ctx // n_head) raises a TypeError, refused; odd values
// and values above the head size are refused as for GPT-J (the slices would not match the table). n_ctx is read
// only into that unused min(): a positive integer is accepted, anything else refused.
// CodeGen2-era configs (Salesforce/codegen2-*) say model_type "codegen" too: transformers' own class reads them with
// the same fields, and their auto_map / custom-code keys are ignored as the class ignores them.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_codegen(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50400);
  s.max_position_embeddings = r.positive({"n_positions", "max_position_embeddings"}, 2048);
  s.learned_positions = true;
  (void)r.positive({"n_ctx"}, 2048);
  s.hidden_size = r.positive({"n_embd", "hidden_size"}, 4096);
  s.num_layers = r.positive({"n_layer", "num_hidden_layers"}, 28, kMaxLayers);
  s.num_heads = r.positive({"n_head", "num_attention_heads"}, 16);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "n_head", "n_embd");
  if (s.num_heads % 4 != 0)
    throw InputError(r.name("n_head"), std::to_string(s.num_heads),
                     "must be a multiple of 4: CodeGenAttention splits qkv_proj's output into mp_num = 4 shards of "
                     "n_head / 4 heads");
  read_gptj_block_keys(r, s,  // CodeGenBlock is copied from GPTJBlock
                       "CodeGenModel takes min(rotary_dim, n_ctx // n_head), which fails on None: an even size up "
                       "to the head size only");
  return s;
}

}  // namespace memplan::hf
