// The typed config.json reader every HF importer uses (models/hf_config.cpp and models/hf/import_*.cpp), and
// the per-family importers the dispatch in hf_config.cpp calls. Each importer applies transformers 5.17's class
// defaults for absent keys and cites the configuration file it follows.
#pragma once
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/arch/spec.h"
#include "engine/errors.h"
#include "engine/limits.h"
#include "models/json_input.h"

namespace memplan::hf {

using nlohmann::json;

// Typed access to config keys. A key may have aliases (transformers' attribute_map: gpt2 accepts hidden_size
// for n_embd); the first present, non-null spelling wins and is the one named in errors.
class ConfigReader {
 public:
  explicit ConfigReader(const json& cfg) : cfg_(cfg) {}
  // A nested config (gemma3's text_config): errors name `prefix` + key, e.g. "config.text_config.hidden_size".
  ConfigReader(const json& cfg, std::string prefix) : cfg_(cfg), prefix_(std::move(prefix)) {}

  // Absent or null -> nullopt. Present -> must be a positive integer, at most `limit` (engine/limits.h).
  std::optional<int64_t> opt_positive(std::initializer_list<const char*> keys, int64_t limit = kMaxDim) const {
    auto [key, v] = find(keys);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() ||
        (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) ||
        v->get<int64_t>() <= 0)
      throw InputError(name(key), dump_short(*v), "must be a positive integer");
    if (v->get<int64_t>() > limit)
      throw InputError(name(key), dump_short(*v), "exceeds the limit of " + std::to_string(limit));
    return v->get<int64_t>();
  }

  // Absent or null -> dflt. Present -> must be an integer >= 0.
  int64_t non_negative(std::initializer_list<const char*> keys, int64_t dflt) const {
    auto [key, v] = find(keys);
    if (!v) return dflt;
    if (!v->is_number_integer() ||
        (v->is_number_unsigned() ? v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())
                                 : v->get<int64_t>() < 0))
      throw InputError(name(key), dump_short(*v), "must be a non-negative integer");
    return v->get<int64_t>();
  }

  int64_t positive(std::initializer_list<const char*> keys, int64_t dflt, int64_t limit = kMaxDim) const {
    return opt_positive(keys, limit).value_or(dflt);
  }

  // Absent or null -> nullopt. Present -> must be a number in [0, 1).
  std::optional<double> opt_probability(std::initializer_list<const char*> keys) const {
    auto [key, v] = find(keys);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw InputError(name(key), dump_short(*v), "must be a number in [0, 1)");
    double p = v->get<double>();
    if (!(p >= 0.0 && p < 1.0)) throw InputError(name(key), dump_short(*v), "must be a number in [0, 1)");
    return p;
  }

  double probability(std::initializer_list<const char*> keys, double dflt) const {
    return opt_probability(keys).value_or(dflt);
  }

  bool boolean(std::initializer_list<const char*> keys, bool dflt) const {
    auto [key, v] = find(keys);
    if (!v) return dflt;
    if (!v->is_boolean()) throw InputError(name(key), dump_short(*v), "must be true or false");
    return v->get<bool>();
  }

  std::string string(std::initializer_list<const char*> keys, const std::string& dflt) const {
    auto [key, v] = find(keys);
    if (!v) return dflt;
    if (!v->is_string() || v->get<std::string>().empty())
      throw InputError(name(key), dump_short(*v), "must be a non-empty string");
    return v->get<std::string>();
  }

  // Present with any value other than null.
  bool present(const char* key) const {
    auto it = cfg_.find(key);
    return it != cfg_.end() && !it->is_null();
  }

  // Present with value null: Python None, which differs from an absent key where the default is not None.
  bool explicit_null(const char* key) const {
    auto it = cfg_.find(key);
    return it != cfg_.end() && it->is_null();
  }

  static std::string field(const std::string& key) { return "config." + key; }
  // The field name this reader's errors use for `key` (field(key) for a top-level config).
  std::string name(const std::string& key) const { return prefix_ + key; }

  // Absent or null -> nullopt. Present -> must be a number > 0 (softcapping caps, scaling constants).
  std::optional<double> opt_positive_number(std::initializer_list<const char*> keys) const {
    auto [key, v] = find(keys);
    if (!v) return std::nullopt;
    if (!v->is_number() || !(v->get<double>() > 0.0)) throw InputError(name(key), dump_short(*v), "must be a positive number");
    return v->get<double>();
  }

  // The value of the first present, non-null spelling (nullptr when absent), for keys an importer reads itself
  // (lists such as layer_types, nested objects such as text_config).
  const json* raw(const char* key) const { return find({key}).second; }

 private:
  std::pair<std::string, const json*> find(std::initializer_list<const char*> keys) const {
    for (const char* k : keys) {
      auto it = cfg_.find(k);
      if (it != cfg_.end() && !it->is_null()) return {k, &*it};
    }
    return {*keys.begin(), nullptr};
  }

  const json& cfg_;
  std::string prefix_ = "config.";
};

// hidden = heads * head_dim when the config gives no head_dim (gpt2, bert, the llama family, ...).
int64_t head_dim_from_hidden(const ConfigReader& r, int64_t hidden, int64_t heads, const char* heads_key,
                             const char* hidden_key);
// getattr(config, "head_dim", hidden_size // num_attention_heads) with floor division (cohere2, olmo3): refused
// when 0 (more heads than hidden units) or odd (rotate_half pairs dimensions), naming the key that set it.
int64_t rotary_head_dim_floor(const ConfigReader& r, const TransformerSpec& s);
// config.layer_types of a model with sliding and full attention layers (cohere2, olmo3): when present, a list of
// num_hidden_layers entries, each "sliding_attention" or "full_attention" (anything else refused naming the entry),
// written into s.sliding_layers (sized num_layers by the caller); returns false when absent (the caller's class
// builds its default pattern).
bool read_sliding_layer_types(const ConfigReader& r, TransformerSpec& s);
// nn.Embedding(vocab_size, ..., padding_idx=pad_token_id) raises unless -vocab_size <= index < vocab_size: a
// present, non-null pad_token_id outside that range is refused naming the key (the index changes no memory).
void check_padding_idx(const ConfigReader& r, int64_t vocab_size);
// chunk_size_feed_forward > 0 makes apply_chunking_to_forward split the feed-forward over the sequence (BERT-style
// encoders): not modelled, refused naming the key.
void refuse_chunked_feed_forward(const ConfigReader& r);
// The Gemma families' MLP activation (config key `key`: hidden_act or hidden_activation): the ACT2FN entries their
// builders model (gelu_pytorch_tanh, gelu, silu, swish, relu), else InputError naming the key and `family`.
void check_gemma_activation(const ConfigReader& r, const char* key, const std::string& act, const char* family);
// num_attention_heads % num_key_value_heads == 0, as every GQA attention requires.
void check_kv_heads(const ConfigReader& r, const TransformerSpec& s);
// A decoder whose rotary embedding covers the whole head: s.head_dim must be even (rotate_half pairs dimensions), else
// InputError naming head_dim (when the config gives it) or hidden_size (hidden // heads).
void check_rotary_head_dim(const ConfigReader& r, const TransformerSpec& s);

// The decoder sizes the llama-derived configs name alike, with a class's defaults: vocab_size, hidden_size,
// intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads (absent or null: `kv`, or the
// head count when kv is 0; checked), and head_dim as the modeling files read it, getattr(config, "head_dim",
// hidden // heads): the key, else hidden / heads, which must then divide. Returns a spec of family llama.
struct DecoderDefaults {
  int64_t vocab, hidden, intermediate, layers, heads, kv = 0;
};
TransformerSpec read_decoder_sizes(const ConfigReader& r, const DecoderDefaults& d);

// Importers of the families added after the first six (one file each, models/hf/import_<family>.cpp). Each sets
// family, model_type-specific fields and every memory-relevant key; hf_config.cpp sets model_type afterwards.
TransformerSpec import_qwen3(const ConfigReader& r, const std::string& type);       // qwen3, qwen3_moe
// The MoE keys Qwen3MoeConfig and Qwen2MoeConfig share (models/hf/import_qwen3.cpp): num_experts,
// num_experts_per_tok, moe_intermediate_size (with the class's defaults), norm_topk_prob, output_router_logits
// (refused), decoder_sparse_step and mlp_only_layers, which decide s.moe_layers.
struct QwenMoeDefaults {
  int64_t experts, experts_per_tok, moe_intermediate;
};
void read_qwen_moe(const ConfigReader& r, TransformerSpec& s, const QwenMoeDefaults& d);
TransformerSpec import_qwen2_moe(const ConfigReader& r);
TransformerSpec import_olmoe(const ConfigReader& r);
TransformerSpec import_granitemoe(const ConfigReader& r, const std::string& type);  // granitemoe, granitemoeshared
// granite_swa, granitemoe_swa (models/hf/import_granite_swa.cpp)
TransformerSpec import_granite_swa(const ConfigReader& r, const std::string& type);
TransformerSpec import_ernie4_5(const ConfigReader& r);
TransformerSpec import_exaone4(const ConfigReader& r);
TransformerSpec import_seed_oss(const ConfigReader& r);
TransformerSpec import_arcee(const ConfigReader& r);
TransformerSpec import_llama4(const ConfigReader& r, const std::string& type);  // llama4_text, llama4
TransformerSpec import_hunyuan_v1_dense(const ConfigReader& r);
TransformerSpec import_lfm2(const ConfigReader& r);  // models/hf/import_lfm2.cpp
// layer_types of lfm2 / lfm2_moe (models/hf/import_lfm2.cpp): one "full_attention" or "conv" per layer, as
// TransformerSpec::lfm2_conv_layers (1 for conv); anything else refused naming config.layer_types[i].
std::vector<uint8_t> read_lfm2_layer_types(const json& lt, int64_t layers);
TransformerSpec import_lfm2_moe(const ConfigReader& r);  // models/hf/import_lfm2_moe.cpp
TransformerSpec import_minimax_m2(const ConfigReader& r);  // models/hf/import_minimax_m2.cpp
TransformerSpec import_mamba(const ConfigReader& r);   // models/hf/import_mamba.cpp
TransformerSpec import_mamba2(const ConfigReader& r);  // models/hf/import_mamba.cpp
// The mamba_* keys GraniteMoeHybridConfig and BambaConfig share (models/hf/import_granitemoehybrid.cpp) into the
// [mamba] ssm_* fields, with their defaults (mamba_d_state `d_state_default`), and hidden_act (silu only). Reads
// s.hidden_size and s.model_type (for messages).
void read_hybrid_mamba(const ConfigReader& r, TransformerSpec& s, int64_t d_state_default);
TransformerSpec import_granitemoehybrid(const ConfigReader& r);  // models/hf/import_granitemoehybrid.cpp
TransformerSpec import_bamba(const ConfigReader& r);             // models/hf/import_bamba.cpp
TransformerSpec import_falcon_mamba(const ConfigReader& r);      // models/hf/import_falcon_mamba.cpp
TransformerSpec import_falcon_h1(const ConfigReader& r);   // models/hf/import_falcon_h1.cpp
TransformerSpec import_nemotron_h(const ConfigReader& r);  // models/hf/import_nemotron_h.cpp
TransformerSpec import_jamba(const ConfigReader& r);   // models/hf/import_jamba.cpp
TransformerSpec import_apertus(const ConfigReader& r);
TransformerSpec import_olmo2(const ConfigReader& r);
TransformerSpec import_gemma(const ConfigReader& r, const std::string& type);       // gemma, gemma3_text
TransformerSpec import_gemma4(const ConfigReader& r, const std::string& type);      // gemma4_text, gemma4 (import_gemma4.cpp)
TransformerSpec import_gemma3n_text(const ConfigReader& r);  // gemma3n_text (import_gemma3n.cpp)
TransformerSpec import_phi3(const ConfigReader& r);
// int(head_dim * factor) for a partial rotary embedding; refused unless a positive even number of dimensions
// (models/hf/import_phi3.cpp; phi3, gpt_neox, phi, stablelm).
int64_t rotary_dim_from_factor(const ConfigReader& r, const std::string& key, double factor, int64_t head_dim);
// partial_rotary_factor from the rope dict (rope_scaling, else rope_parameters), else the top-level key, else
// dflt; `key` receives the field it came from (phi, phi3, stablelm).
double partial_rotary_factor(const ConfigReader& r, double dflt, std::string& key);
TransformerSpec import_phi(const ConfigReader& r);
TransformerSpec import_stablelm(const ConfigReader& r);
TransformerSpec import_cohere(const ConfigReader& r);
TransformerSpec import_cohere2(const ConfigReader& r);  // models/hf/import_cohere2.cpp
TransformerSpec import_modernbert(const ConfigReader& r);  // models/hf/import_modernbert.cpp
TransformerSpec import_roberta(const ConfigReader& r, const std::string& type);  // roberta, xlm-roberta, data2vec-text
// RobertaEmbeddings' padding index checks on a spec read with BERT's fields: sets position_id_offset (pad + 1).
void read_roberta_padding(const ConfigReader& r, TransformerSpec& s);
TransformerSpec import_xlm_roberta_xl(const ConfigReader& r);  // models/hf/import_xlm_roberta_xl.cpp
TransformerSpec import_camembert(const ConfigReader& r);  // import_camembert.cpp (roberta's reader)
TransformerSpec import_electra(const ConfigReader& r);
TransformerSpec import_albert(const ConfigReader& r);  // models/hf/import_albert.cpp
TransformerSpec import_mpnet(const ConfigReader& r);  // models/hf/import_mpnet.cpp
TransformerSpec import_esm(const ConfigReader& r);    // models/hf/import_esm.cpp
TransformerSpec import_resnet(const ConfigReader& r);  // models/hf/import_resnet.cpp (ResNetForImageClassification)
TransformerSpec import_dinov3_vit(const ConfigReader& r);  // models/hf/import_dinov3_vit.cpp (DINOv3ViTModel)
// models/hf/import_beit.cpp (BeitForImageClassification; `type` beit or data2vec-vision)
TransformerSpec import_beit(const ConfigReader& r, const std::string& type);
TransformerSpec import_segformer(const ConfigReader& r);  // models/hf/import_segformer.cpp (both Segformer heads)
TransformerSpec import_opt(const ConfigReader& r);
TransformerSpec import_biogpt(const ConfigReader& r);
TransformerSpec import_mpt(const ConfigReader& r);  // models/hf/import_mpt.cpp (MptForCausalLM)  // models/hf/import_biogpt.cpp (BioGptForCausalLM)
TransformerSpec import_codegen(const ConfigReader& r);  // models/hf/import_codegen.cpp (CodeGenForCausalLM)
TransformerSpec import_nanochat(const ConfigReader& r);  // models/hf/import_nanochat.cpp (NanoChatForCausalLM)
TransformerSpec import_vaultgemma(const ConfigReader& r);  // models/hf/import_vaultgemma.cpp (VaultGemmaForCausalLM)
TransformerSpec import_t5gemma(const ConfigReader& r);  // models/hf/import_t5gemma.cpp (T5GemmaForConditionalGeneration)
TransformerSpec import_distilbert(const ConfigReader& r);
TransformerSpec import_deberta_v2(const ConfigReader& r);  // models/hf/import_deberta_v2.cpp
TransformerSpec import_glm4(const ConfigReader& r);
TransformerSpec import_nemotron(const ConfigReader& r);
// Refuses a rope dict (rope_scaling, else rope_parameters) whose rope_type changes more than inv_freq's values
// (models/hf/import_glm4.cpp; glm4, nemotron).
void check_rope_type(const ConfigReader& r, const char* family);
// The attention keys glm4 and nemotron read alike (models/hf/import_glm4.cpp): a sliding_window key refused (no
// sliding-window attention), check_rope_type, then rotary_dim = int(head_dim * partial_rotary_factor), the factor
// 0.5 unless the rope dict or the top-level key sets it. Reads s.head_dim.
void read_partial_rope(const ConfigReader& r, const char* family, TransformerSpec& s);
// The fields, class defaults and refusals GlmConfig and Glm4Config share (models/hf/import_glm4.cpp): `family` names
// the model_type in messages, `null_why` says why a null num_key_value_heads / head_dim is refused.
TransformerSpec import_glm_decoder(const ConfigReader& r, const char* family, const char* null_why);
TransformerSpec import_smollm3(const ConfigReader& r);
TransformerSpec import_olmo(const ConfigReader& r);
TransformerSpec import_gpt_bigcode(const ConfigReader& r);
TransformerSpec import_gptj(const ConfigReader& r);
// GPTJConfig's block keys, which CodeGenConfig repeats (models/hf/import_gptj.cpp): rotary_dim (64; even, at most the
// head size; null refused with `null_rotary_reason`), n_inner (4 x n_embd), activation_function (gelu_new), the three
// dropouts, tie_word_embeddings (false); the parallel residual, lm_head and MLP biases.
void read_gptj_block_keys(const ConfigReader& r, TransformerSpec& s, const char* null_rotary_reason);
TransformerSpec import_falcon(const ConfigReader& r);
TransformerSpec import_bloom(const ConfigReader& r);
// BertConfig's fields with its defaults but the vocabulary's (hf_config.cpp; bert, roberta, xlm-roberta).
TransformerSpec import_bert(const ConfigReader& r, int64_t default_vocab);
// The same fields under another config class's defaults (XLMRobertaXLConfig).
struct BertDefaults {
  int64_t vocab = 30522, hidden = 768, layers = 12, heads = 12, intermediate = 3072, max_positions = 512,
          type_vocab = 2;
};
TransformerSpec import_bert(const ConfigReader& r, const BertDefaults& d);
// config.problem_type into s.problem_type, refusing a name PreTrainedConfig rejects (models/hf/import_cls_heads.cpp;
// the sequence-classification heads of bert, roberta, xlm-roberta, distilbert, modernbert).
void read_problem_type(const ConfigReader& r, TransformerSpec& s);
TransformerSpec import_gpt_neox(const ConfigReader& r);
TransformerSpec import_starcoder2(const ConfigReader& r);
// deepseek_v2 / deepseek_v3 (models/hf/import_deepseek_v2.cpp, _v3.cpp): the MLA + MoE keys both read, with
// each class's defaults (0 = None where the class default is None).
struct DeepseekDefaults {
  int64_t vocab, hidden, intermediate, layers, heads, max_positions, routed_experts, shared_experts,
      moe_intermediate, first_dense, experts_per_tok, n_group, topk_group;
};
void import_deepseek_mla_moe(const ConfigReader& r, TransformerSpec& s, const DeepseekDefaults& d);
TransformerSpec import_deepseek_v2(const ConfigReader& r);
TransformerSpec import_deepseek_v3(const ConfigReader& r);
TransformerSpec import_deepseek_v32(const ConfigReader& r);  // models/hf/import_deepseek_v32.cpp (DeepseekV32ForCausalLM)
TransformerSpec import_glm_moe_dsa(const ConfigReader& r);  // models/hf/import_glm_moe_dsa.cpp (GlmMoeDsaForCausalLM)
TransformerSpec import_solar_open(const ConfigReader& r);  // models/hf/import_solar_open.cpp (SolarOpenForCausalLM)
TransformerSpec import_gpt_oss(const ConfigReader& r);
TransformerSpec import_t5(const ConfigReader& r);
TransformerSpec import_granite(const ConfigReader& r);
TransformerSpec import_bart(const ConfigReader& r);  // models/hf/import_bart.cpp
// The keys the decoder classification heads read (models/hf/import_cls_decoder.cpp; TransformerSpec's section
// "seq_cls / token_cls heads of decoders"): pad_token_id, classifier_dropout / hidden_dropout,
// token_classification_bias, problem_type. Called for llama, mistral, qwen2, qwen3 and gpt2.
void read_decoder_cls_keys(const ConfigReader& r, TransformerSpec& s);
// The encoder-decoder keys MBartConfig and WhisperConfig spell alike (models/hf/import_mbart.cpp), with a class's
// defaults: vocab_size, d_model, encoder_/decoder_ layers, attention_heads, ffn_dim, activation_function, dropout,
// attention_dropout, activation_dropout, the layerdrops (refused above 0), scale_embedding, tie_word_embeddings.
struct BartDefaults {
  int64_t vocab, d_model, layers, heads, ffn;
  double dropout;
  bool gelu_new = false;  // activation_function "gelu_new" accepted (BART's builder replays it; measured: no)
};
void read_bart_stacks(const ConfigReader& r, TransformerSpec& s, const BartDefaults& d);
TransformerSpec import_mbart(const ConfigReader& r);
TransformerSpec import_whisper(const ConfigReader& r);
TransformerSpec import_vit(const ConfigReader& r);  // models/hf/import_vit.cpp (ViTForImageClassification)
TransformerSpec import_convnext(const ConfigReader& r, const std::string& type);  // models/hf/import_convnext.cpp (convnext, convnextv2)
TransformerSpec import_swin(const ConfigReader& r);  // models/hf/import_swin.cpp (SwinForImageClassification)
TransformerSpec import_swinv2(const ConfigReader& r);  // models/hf/import_swinv2.cpp (Swinv2ForImageClassification)
TransformerSpec import_dinov2(const ConfigReader& r);  // models/hf/import_dinov2.cpp (Dinov2ForImageClassification)
TransformerSpec import_deit(const ConfigReader& r);  // models/hf/import_deit.cpp (DeiTForImageClassification)
TransformerSpec import_wav2vec2(const ConfigReader& r, const std::string& type);  // models/hf/import_wav2vec2.cpp (wav2vec2, hubert, wavlm)
TransformerSpec import_deit(const ConfigReader& r);
TransformerSpec import_clip(const ConfigReader& r, const std::string& type);  // models/hf/import_clip.cpp (clip, siglip, siglip2)  // models/hf/import_deit.cpp (DeiTForImageClassification)
TransformerSpec import_idefics3(const ConfigReader& r, const std::string& type);  // models/hf/import_idefics3.cpp (idefics3, smolvlm)
TransformerSpec import_gpt_neo(const ConfigReader& r);
TransformerSpec import_marian(const ConfigReader& r);   // models/hf/import_marian.cpp
TransformerSpec import_pegasus(const ConfigReader& r);  // models/hf/import_marian.cpp
TransformerSpec import_m2m_100(const ConfigReader& r);  // models/hf/import_m2m_100.cpp
TransformerSpec import_glm4_moe(const ConfigReader& r);  // models/hf/import_glm4_moe.cpp
TransformerSpec import_phimoe(const ConfigReader& r);    // models/hf/import_phimoe.cpp
// MT5Config / UMT5Config (models/hf/import_mt5.cpp): one reader, `type` "mt5" or "umt5".
TransformerSpec import_mt5(const ConfigReader& r, const std::string& type);
TransformerSpec import_olmo3(const ConfigReader& r);  // models/hf/import_olmo3.cpp
TransformerSpec import_ernie4_5_moe(const ConfigReader& r);  // models/hf/import_ernie4_5_moe.cpp
TransformerSpec import_mistral4(const ConfigReader& r);    // models/hf/import_mistral4.cpp
TransformerSpec import_ministral3(const ConfigReader& r);  // models/hf/import_ministral3.cpp
// Mistral3Config (models/hf/import_ministral3.cpp): its text_config's decoder (ministral3 or mistral4, anything else
// refused naming config.text_config.model_type), the top-level tie_word_embeddings (default True); `type` becomes
// the text type.
TransformerSpec import_mistral3(const ConfigReader& r, std::string& type);
// The rope dict (rope_parameters, else rope_scaling) of ministral3 / mistral4, whose attention scales the queries
// by 1 + llama_4_scaling_beta * log(1 + floor(position / original_max_position_embeddings)) every forward: when
// present it must carry both keys (absent: the class's default dict does), and a modelled rope_type
// (check_rope_type). InputError names the key.
void check_llama4_scaled_rope(const ConfigReader& r, const char* family);
// pad_token_id with Mistral's default 11 (ministral3, mistral4): null accepted; present: check_padding_idx; absent:
// vocab_size must exceed 11.
void check_mistral_pad(const ConfigReader& r, int64_t vocab);
// quantization_config present (the published fp8 checkpoints of ministral3 / mistral4 / their mistral3 wrappers):
// refused naming the key; from_config builds bf16 / fp32 modules.
void refuse_quantized_mistral(const ConfigReader& r, const char* family);
// qwen3_next, qwen3_5_text, qwen3_5_moe_text; qwen3_5 / qwen3_5_moe: their text_config (models/hf/import_qwen3_next.cpp)
TransformerSpec import_qwen3_next(const ConfigReader& r, const std::string& type);
// qwen2_vl / qwen2_5_vl: the text decoder, the vision tower and the merger (models/hf/import_qwen2_vl.cpp).
TransformerSpec import_qwen2_vl(const ConfigReader& r, const std::string& type);
TransformerSpec import_helium(const ConfigReader& r);  // models/hf/import_helium.cpp
TransformerSpec import_glm(const ConfigReader& r);     // models/hf/import_glm.cpp
TransformerSpec import_hunyuan_v1_moe(const ConfigReader& r);  // models/hf/import_hunyuan_v1_moe.cpp
TransformerSpec import_dots1(const ConfigReader& r);   // models/hf/import_dots1.cpp
TransformerSpec import_dbrx(const ConfigReader& r);    // models/hf/import_dbrx.cpp
TransformerSpec import_jetmoe(const ConfigReader& r);  // models/hf/import_jetmoe.cpp
// qwen3_vl, qwen3_vl_moe: text_config's decoder and vision_config's tower (models/hf/import_qwen3_vl.cpp)
TransformerSpec import_qwen3_vl(const ConfigReader& r, const std::string& type);
// The text decoder of a multimodal wrapper (llava, paligemma): `r` (the text_config, keys named under its prefix)
// read by model_type `type`'s own importer (llama, mistral, qwen2, gemma, gemma2; anything else refused naming
// model_type); model_type set to `type`.
TransformerSpec import_sub_decoder(const ConfigReader& r, const std::string& type);
// The vision tower of llava / paligemma (models/hf/import_llava.cpp): vision_config `v` into the [clip / siglip]
// vision_* fields and mm_vision_clip, with the tower class's defaults `d`; refusals name the key.
struct MmVisionDefaults {
  int64_t hidden, inter, layers, heads, image, patch;
};
void read_mm_vision_tower(const ConfigReader& v, TransformerSpec& s, bool clip, const MmVisionDefaults& d);
TransformerSpec import_llava(const ConfigReader& r);      // models/hf/import_llava.cpp
// A LlavaConfig-shaped config with another class's defaults (llava_onevision): what an absent key means.
struct LlavaDefaults {
  const char* text_type = "llama";                    // text_config without model_type
  const char* vision_type = "clip_vision_model";      // vision_config without model_type
  const char* absent_vision_type = "clip_vision_model";  // vision_config absent: this class ...
  MmVisionDefaults absent_vision{1024, 4096, 24, 16, 336, 14};  // ... with these widths
  int64_t feature_layer = -2;
  const char* strategy = "default";
  int64_t image_token = 32000;
  int64_t image_seq_length = 576;  // -1: the class has no such key
};
TransformerSpec import_llava(const ConfigReader& r, const LlavaDefaults& d);
TransformerSpec import_paligemma(const ConfigReader& r);  // models/hf/import_paligemma.cpp
TransformerSpec import_llava_next(const ConfigReader& r); // models/hf/import_llava_next.cpp
TransformerSpec import_qwen2_audio(const ConfigReader& r);  // models/hf/import_qwen2_audio.cpp
// image_grid_pinpoints into s.mm_grid_pinpoints (flattened [h, w] pairs): positive multiples of the tower's
// image_size; absent: `fallback` (the class's defaults, refused naming the key when the tower's size does not
// divide them). models/hf/import_llava_next.cpp.
void read_grid_pinpoints(const ConfigReader& r, TransformerSpec& s, const std::vector<int64_t>& fallback,
                         const char* fallback_text);
TransformerSpec import_llava_onevision(const ConfigReader& r);  // models/hf/import_llava_onevision.cpp
TransformerSpec import_ernie(const ConfigReader& r);  // models/hf/import_ernie.cpp (BERT's fields, use_task_id)
// mllama (MllamaConfig: vision_config + text_config) and mllama_text_model (MllamaTextConfig at the top level,
// MllamaForCausalLM): models/hf/import_mllama.cpp.
TransformerSpec import_mllama(const ConfigReader& r, const std::string& type);
TransformerSpec import_internvl(const ConfigReader& r);   // models/hf/import_internvl.cpp

}  // namespace memplan::hf
