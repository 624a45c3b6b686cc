// HF config.json importer.
//
// Stages: (1) resolve model_type (hint, else config), (2) read each memory-relevant key with its JSON type
// checked, falling back to the transformers default, (3) apply the class's derived defaults
// (__post_init__), (4) validate the shape relations transformers enforces at model construction.
//
// Defaults were read from huggingface/transformers, src/transformers/models/<name>/configuration_<name>.py at
// commit 008e574391258935f3ecc3035c882e73bbcac419 (5.x dataclass configs: llama, mistral, qwen2, mixtral), and
// for gpt2 / bert at commit 008f5c8c29be84d4721dc6d1e0fcd72300580be4 (their defaults are unchanged in 5.x; in 5.x
// tie_word_embeddings moved from PreTrainedConfig into each class, True for gpt2 and bert, False for the
// llama family). Bias layouts come from the modeling files: gpt2 Conv1D and bert nn.Linear all carry biases;
// llama honours attention_bias / mlp_bias; mistral and mixtral hard-code bias=False; qwen2 has q/k/v bias,
// no o_proj bias, no MLP bias. The class defaults above and the parameter counts they imply were checked
// against an installed transformers 5.17.0 (default configs' attributes; models built on the meta device).
#include "models/hf_config.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <optional>

#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/limits.h"
#include "models/hf_config_reader.h"
#include "models/json_input.h"

namespace memplan {
namespace hf {

// models/hf/import_glm4_moe_lite.cpp (Glm4MoeLiteForCausalLM)
TransformerSpec import_glm4_moe_lite(const ConfigReader& r);
// models/hf/import_afmoe.cpp (AfmoeForCausalLM)
TransformerSpec import_afmoe(const ConfigReader& r);

int64_t head_dim_from_hidden(const ConfigReader& r, int64_t hidden, int64_t heads, const char* heads_key,
                             const char* hidden_key) {
  if (hidden % heads != 0)
    throw InputError(r.name(heads_key), std::to_string(heads),
                     std::string("must divide ") + hidden_key + " (" + std::to_string(hidden) +
                         ") when head_dim is not given");
  return hidden / heads;
}

namespace {
// rotate_half pairs a head's dimensions: an odd head_dim is refused naming head_dim when the config gives it, else
// hidden_size (hidden // heads).
void refuse_odd_rotary_head_dim(const ConfigReader& r, int64_t head_dim, int64_t hidden_size) {
  if (head_dim % 2 == 0) return;
  const bool given = r.raw("head_dim") != nullptr;
  throw InputError(r.name(given ? "head_dim" : "hidden_size"), std::to_string(given ? head_dim : hidden_size),
                   "gives an odd head_dim " + std::to_string(head_dim) + "; rotate_half pairs dimensions");
}
}  // namespace

int64_t rotary_head_dim_floor(const ConfigReader& r, const TransformerSpec& s) {
  const int64_t head_dim = r.opt_positive({"head_dim"}).value_or(s.hidden_size / s.num_heads);
  if (head_dim == 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim = hidden // heads is 0");
  refuse_odd_rotary_head_dim(r, head_dim, s.hidden_size);
  return head_dim;
}

void check_rotary_head_dim(const ConfigReader& r, const TransformerSpec& s) {
  refuse_odd_rotary_head_dim(r, s.head_dim, s.hidden_size);
}

bool read_sliding_layer_types(const ConfigReader& r, TransformerSpec& s) {
  const json* lt = r.raw("layer_types");
  if (!lt) return false;
  if (!lt->is_array() || static_cast<int64_t>(lt->size()) != s.num_layers)
    throw InputError(r.name("layer_types"), dump_short(*lt),
                     "must be a list of " + std::to_string(s.num_layers) + " layer types (num_hidden_layers)");
  for (size_t i = 0; i < lt->size(); ++i) {
    const json& t = (*lt)[i];
    const bool sliding = t.is_string() && t.get<std::string>() == "sliding_attention";
    if (!sliding && !(t.is_string() && t.get<std::string>() == "full_attention"))
      throw InputError(r.name("layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                       "must be \"sliding_attention\" or \"full_attention\"");
    s.sliding_layers[i] = sliding ? 1 : 0;
  }
  return true;
}

void check_padding_idx(const ConfigReader& r, int64_t vocab_size) {
  const json* pad = r.raw("pad_token_id");
  if (!pad) return;
  const bool in_table = pad->is_number_integer() &&
                        (pad->is_number_unsigned() ? pad->get<uint64_t>() < uint64_t(vocab_size)
                                                   : pad->get<int64_t>() >= -vocab_size &&
                                                         pad->get<int64_t>() < vocab_size);
  if (!in_table)
    throw InputError(r.name("pad_token_id"), dump_short(*pad),
                     "must be an integer in [-vocab_size, vocab_size) (vocab_size " + std::to_string(vocab_size) +
                         ") or null");
}

void check_gemma_activation(const ConfigReader& r, const char* key, const std::string& act, const char* family) {
  for (const char* a : {"gelu_pytorch_tanh", "gelu", "silu", "swish", "relu"})
    if (act == a) return;
  throw InputError(r.name(key), "\"" + act + "\"",
                   std::string("activation not modelled for ") + family + " (gelu_pytorch_tanh, gelu, silu, swish, relu are)");
}

void refuse_chunked_feed_forward(const ConfigReader& r) {
  if (r.non_negative({"chunk_size_feed_forward"}, 0) != 0)
    throw InputError(r.name("chunk_size_feed_forward"), dump_short(*r.raw("chunk_size_feed_forward")),
                     "a chunked feed-forward is not modelled (0 only)");
}

void check_kv_heads(const ConfigReader& r, const TransformerSpec& s) {
  if (s.num_heads % s.num_kv_heads != 0)
    throw InputError(r.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "must divide num_attention_heads (" + std::to_string(s.num_heads) + ")");
}

TransformerSpec read_decoder_sizes(const ConfigReader& r, const DecoderDefaults& d) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, d.vocab);
  s.hidden_size = r.positive({"hidden_size"}, d.hidden);
  s.intermediate_size = r.positive({"intermediate_size"}, d.intermediate);
  s.num_layers = r.positive({"num_hidden_layers"}, d.layers, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, d.heads);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(d.kv > 0 ? d.kv : s.num_heads);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else
    s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  return s;
}

namespace {

// GPT2Config: vocab 50257, n_positions 1024, n_embd 768, n_layer 12, n_head 12, n_inner None (=> 4*n_embd),
// activation gelu_new, resid/embd/attn_pdrop 0.1, tie True. GPT2Attention requires n_embd % n_head == 0.
TransformerSpec import_gpt2(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::gpt2;
  s.vocab_size = r.positive({"vocab_size"}, 50257);
  s.max_position_embeddings = r.positive({"n_positions", "max_position_embeddings"}, 1024);
  s.hidden_size = r.positive({"n_embd", "hidden_size"}, 768);
  s.num_layers = r.positive({"n_layer", "num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"n_head", "num_attention_heads"}, 12);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "n_head", "n_embd");
  s.intermediate_size = r.opt_positive({"n_inner"}).value_or(checked_mul(4, s.hidden_size, "config.n_embd"));
  s.hidden_act = r.string({"activation_function"}, "gelu_new");
  s.resid_dropout = r.probability({"resid_pdrop"}, 0.1);
  s.embd_dropout = r.probability({"embd_pdrop"}, 0.1);
  s.attn_dropout = r.probability({"attn_pdrop"}, 0.1);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;  // Conv1D layers all have biases
  return s;
}

// Per-class defaults of the llama family (transformers 5.x dataclass fields).
struct LlamaDefaults {
  int64_t vocab, hidden, intermediate, layers, heads;
  std::optional<int64_t> kv_heads;  // nullopt: None => num_attention_heads
  int64_t max_positions;
  int64_t sliding_window;  // 0: None
};

TransformerSpec import_llama_family(const ConfigReader& r, const std::string& type) {
  LlamaDefaults d;
  if (type == "llama")
    d = {32000, 4096, 11008, 32, 32, std::nullopt, 2048, 0};
  else if (type == "mistral")
    d = {32000, 4096, 14336, 32, 32, 8, 4096 * 32, 4096};
  else if (type == "qwen2")
    d = {151936, 4096, 22016, 32, 32, 32, 32768, 4096};
  else  // mixtral
    d = {32000, 4096, 14336, 32, 32, 8, 4096 * 32, 0};

  // num_key_value_heads: null in config.json means None => num_attention_heads, for every class. head_dim: a
  // config field for llama/mistral/mixtral; qwen2's modeling reads getattr(config, "head_dim", ...), which an
  // extra config.json key sets too. Absent => hidden // heads, which must then divide evenly.
  TransformerSpec s = read_decoder_sizes(r, {d.vocab, d.hidden, d.intermediate, d.layers, d.heads,
                                             d.kv_heads.value_or(0)});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, d.max_positions);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  check_rotary_head_dim(r, s);

  if (type == "llama") {
    s.attention_bias = r.boolean({"attention_bias"}, false);
    s.qkv_bias = s.o_bias = s.attention_bias;
    s.mlp_bias = r.boolean({"mlp_bias"}, false);
  } else if (type == "qwen2") {
    s.qkv_bias = true;  // Qwen2Attention: q/k/v bias=True, o_proj bias=False
    s.attention_bias = s.qkv_bias;
  }

  // Sliding window. mistral/mixtral: every layer uses config.sliding_window (null => full attention).
  // qwen2: Qwen2Config.__post_init__ drops sliding_window unless use_sliding_window, and then only layers
  // i >= max_window_layers slide.
  int64_t window = d.sliding_window;  // 0: full attention
  if (r.explicit_null("sliding_window"))
    window = 0;
  else if (auto w = r.opt_positive({"sliding_window"}))
    window = *w;
  if (type == "qwen2") {
    bool use = r.boolean({"use_sliding_window"}, false);
    int64_t max_window_layers = r.non_negative({"max_window_layers"}, 28);
    if (!use || max_window_layers >= s.num_layers) window = 0;
    if (window) s.first_sliding_layer = max_window_layers;
  }
  s.sliding_window = window;

  if (type == "mixtral") {
    s.num_experts = r.positive({"num_local_experts", "num_experts"}, 8, kMaxExperts);
    s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
    if (s.num_experts_per_tok > s.num_experts)
      throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                       "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  }
  return s;
}

// deepseek_v2: models/hf/import_deepseek_v2.cpp.

}  // namespace

// BertConfig: vocab 30522, hidden 768, 12 layers, 12 heads, intermediate 3072, gelu, hidden/attention dropout
// 0.1, max_position_embeddings 512, type_vocab_size 2, tie True (BertForMaskedLM decoder shares word embeddings).
// RobertaConfig and XLMRobertaConfig have the same fields and defaults but the vocabulary (import_roberta.cpp).
TransformerSpec import_bert(const ConfigReader& r, int64_t default_vocab) {
  BertDefaults d;
  d.vocab = default_vocab;
  return import_bert(r, d);
}

TransformerSpec import_bert(const ConfigReader& r, const BertDefaults& d) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;
  s.vocab_size = r.positive({"vocab_size"}, d.vocab);
  s.hidden_size = r.positive({"hidden_size"}, d.hidden);
  s.num_layers = r.positive({"num_hidden_layers"}, d.layers, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, d.heads);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.intermediate_size = r.positive({"intermediate_size"}, d.intermediate);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.1);
  s.embd_dropout = s.resid_dropout;  // BertEmbeddings applies hidden_dropout_prob
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.1);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, d.max_positions);
  s.type_vocab_size = r.positive({"type_vocab_size"}, d.type_vocab);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  // ...ForSequenceClassification / ...ForTokenClassification: nn.Dropout(classifier_dropout, None ->
  // hidden_dropout_prob) before the classifier (both heads; RobertaClassificationHead applies it twice).
  s.seq_cls_dropout = s.token_cls_dropout = r.opt_probability({"classifier_dropout"}).value_or(s.resid_dropout);
  read_problem_type(r, s);
  return s;
}

}  // namespace hf

using hf::ConfigReader;

namespace {

// Levenshtein distance over bytes, lower-cased, with '-' and '_' equal (qwen3-moe vs qwen3_moe).
size_t edit_distance(const std::string& a, const std::string& b) {
  auto norm = [](char c) { return c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (norm(a[i - 1]) == norm(b[j - 1]) ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string unsupported_type_message(const std::string& type) {
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& t : supported_hf_model_types()) ranked.emplace_back(edit_distance(type.substr(0, 64), t), t);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string nearest;
  for (size_t i = 0; i < ranked.size() && i < 3; ++i) nearest += (i ? ", " : "") + ranked[i].second;
  std::string all;
  for (const auto& t : supported_hf_model_types()) all += (all.empty() ? "" : ", ") + t;
  return "unsupported model_type; nearest supported: " + nearest + " (all: " + all +
         "); other architectures can be described in the native JSON format (models/NATIVE-FORMAT.md)";
}

const std::vector<std::string>& supported_hf_model_types() {
  static const std::vector<std::string> kTypes = {
      "gpt2",      "llama",       "mistral",   "qwen2", "mixtral", "bert",        "deepseek_v2", "gemma2",
      "qwen3",     "qwen3_moe",   "olmo2",     "gemma", "gemma3_text", "phi3",  "gpt_neox",    "starcoder2",
      "deepseek_v3", "gpt_oss",   "t5", "gemma3",    "granite", "phi", "stablelm", "cohere",
      "roberta",   "xlm-roberta", "opt", "qwen2_moe",
      "distilbert", "glm4", "nemotron", "modernbert", "olmoe", "smollm3", "olmo", "gpt_bigcode", "gptj",
      "falcon", "bloom", "ernie4_5", "exaone4", "seed_oss", "arcee", "granitemoe", "granitemoeshared", "bart",
      "llama4_text", "llama4", "hunyuan_v1_dense", "apertus", "deberta-v2", "mbart", "whisper", "cohere2",
      "vit", "gpt_neo", "marian", "pegasus", "camembert", "electra", "m2m_100", "glm4_moe", "mt5", "umt5",
      "albert", "mpnet", "dinov2", "deit", "phimoe", "olmo3", "lfm2", "ernie4_5_moe", "mistral4", "ministral3",
      "mistral3", "minimax_m2", "lfm2_moe", "gemma4_text", "gemma4", "qwen3_next", "qwen3_5_text",
      "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe", "qwen2_vl", "qwen2_5_vl", "helium", "glm", "hunyuan_v1_moe",
      "dots1", "dbrx", "jetmoe", "wav2vec2", "hubert", "wavlm", "mamba", "mamba2", "qwen3_vl", "qwen3_vl_moe",
      "clip", "siglip", "siglip2", "idefics3", "smolvlm", "granitemoehybrid", "bamba", "falcon_mamba",
      "falcon_h1", "nemotron_h", "convnext", "convnextv2", "swin", "llava", "paligemma", "jamba", "esm", "resnet", "dinov3_vit", "beit",
      "data2vec-vision", "segformer", "llava_next", "mllama", "mllama_text_model", "internvl", "gemma3n_text", "llava_onevision", "ernie", "biogpt", "xlm-roberta-xl", "data2vec-text", "mpt", "codegen", "swinv2", "qwen2_audio", "glm4_moe_lite", "afmoe", "nanochat", "vaultgemma", "deepseek_v32", "t5gemma", "cohere2_moe", "ministral", "deepseek_v4", "granite_swa", "granitemoe_swa", "glm_moe_dsa", "solar_open", "minicpm3", "longcat_flash", "cwm", "jais2", "hyperclovax", "exaone_moe", "hy_v3", "mimo_v2_flash", "laguna"};
  return kTypes;
}

namespace hf {
// Declared here rather than in hf_config_reader.h, which every importer includes (family sets 60 / 61).
TransformerSpec import_cohere2_moe(const ConfigReader& r);  // models/hf/import_cohere2_moe.cpp (Cohere2MoeForCausalLM)
TransformerSpec import_ministral(const ConfigReader& r);    // models/hf/import_ministral.cpp (MinistralForCausalLM)
TransformerSpec import_minicpm3(const ConfigReader& r);     // models/hf/import_minicpm3.cpp (MiniCPM3ForCausalLM)
TransformerSpec import_longcat_flash(const ConfigReader& r);  // models/hf/import_longcat_flash.cpp (LongcatFlashForCausalLM)
// Family sets 73 .. 75 (thirty-sixth session), declared here for the same reason.
TransformerSpec import_cwm(const ConfigReader& r);          // models/hf/import_cwm.cpp (CwmForCausalLM)
TransformerSpec import_jais2(const ConfigReader& r);        // models/hf/import_jais2.cpp (Jais2ForCausalLM)
TransformerSpec import_hyperclovax(const ConfigReader& r);  // models/hf/import_hyperclovax.cpp (HyperCLOVAXForCausalLM)
TransformerSpec import_exaone_moe(const ConfigReader& r);   // models/hf/import_exaone_moe.cpp (ExaoneMoeForCausalLM)
TransformerSpec import_hy_v3(const ConfigReader& r);        // models/hf/import_hy_v3.cpp (HYV3ForCausalLM)
// models/hf/import_mimo_v2_flash.cpp (MiMoV2FlashForCausalLM; family set 69)
TransformerSpec import_mimo_v2_flash(const ConfigReader& r);
// models/hf/import_laguna.cpp (LagunaForCausalLM; family set 70)
TransformerSpec import_laguna(const ConfigReader& r);
}  // namespace hf

namespace hf {

// models/hf/import_deepseek_v4.cpp (DeepseekV4ForCausalLM); declared here rather than in hf_config_reader.h,
// which every importer includes.
TransformerSpec import_deepseek_v4(const ConfigReader& r);

TransformerSpec import_sub_decoder(const ConfigReader& r, const std::string& type) {
  TransformerSpec s;
  if (type == "llama" || type == "mistral" || type == "qwen2")
    s = import_llama_family(r, type);
  else if (type == "gemma" || type == "gemma2")
    s = import_gemma(r, type);
  else
    throw InputError(r.name("model_type"), "\"" + type + "\"", "is not modelled as a multimodal text decoder");
  s.model_type = type;
  return s;
}

}  // namespace hf

TransformerSpec import_hf_config(const nlohmann::json& config, const std::string& model_type_hint) {
  if (!config.is_object()) throw InputError("config", dump_short(config, 40), "must be a JSON object");
  ConfigReader r(config);
  std::string type = model_type_hint;
  if (type.empty()) {
    auto it = config.find("model_type");
    if (it == config.end() || it->is_null())
      throw InputError("config.model_type", "absent", "must name the architecture (see memplan models)");
    type = r.string({"model_type"}, "");
  }

  if (type == "gemma3n")  // Gemma3nForConditionalGeneration (see models/hf/import_gemma3n.cpp)
    throw InputError("config.model_type", "\"gemma3n\"",
                     "is not modelled: Gemma3nForConditionalGeneration builds a timm MobileNetV5 vision tower and an "
                     "audio conformer whose parameters (and in training their gradients and optimizer state) count "
                     "even for text-only use, and their sizes are not derived here; give its text_config as a "
                     "gemma3n_text config (Gemma3nForCausalLM)");
  const auto& types = supported_hf_model_types();
  if (std::find(types.begin(), types.end(), type) == types.end())
    throw InputError("config.model_type", "\"" + type + "\"", unsupported_type_message(type));

  using namespace hf;
  TransformerSpec s;
  if (type == "gpt2")
    s = import_gpt2(r);
  else if (type == "bert")
    s = import_bert(r, 30522);
  else if (type == "ernie")  // BERT with ERNIE 2.0 / 3.0's task-type embedding (engine/arch/encoders/ernie.cpp)
    s = import_ernie(r);
  else if (type == "deepseek_v2")
    s = import_deepseek_v2(r);
  else if (type == "qwen3" || type == "qwen3_moe")
    s = import_qwen3(r, type);
  else if (type == "olmo2")
    s = import_olmo2(r);
  else if (type == "gemma" || type == "gemma2" || type == "gemma3_text")
    s = import_gemma(r, type);
  else if (type == "gemma3") {  // multimodal: its text_config's decoder, built as gemma3_text
    s = import_gemma(r, type);
    type = "gemma3_text";
  }
  else if (type == "phi3")
    s = import_phi3(r);
  else if (type == "gpt_neox")
    s = import_gpt_neox(r);
  else if (type == "starcoder2")
    s = import_starcoder2(r);
  else if (type == "deepseek_v3")
    s = import_deepseek_v3(r);
  else if (type == "cohere2_moe")  // Cohere2 + routed / shared experts (engine/arch/decoders/moe/cohere2_moe.cpp)
    s = import_cohere2_moe(r);
  else if (type == "ministral")  // Qwen2-based, both masks always (engine/arch/decoders/dense/ministral.cpp)
    s = import_ministral(r);
  else if (type == "cwm")  // Llama's layers, both masks always (engine/arch/decoders/dense/cwm.cpp)
    s = import_cwm(r);
  else if (type == "jais2")  // Llama's layers with nn.LayerNorm and a relu2 MLP (engine/arch/decoders/dense/jais2.cpp)
    s = import_jais2(r);
  else if (type == "hyperclovax")  // Granite's multipliers + peri-LN (engine/arch/decoders/dense/hyperclovax.cpp)
    s = import_hyperclovax(r);
  else if (type == "deepseek_v4")  // mHC streams, shared-KV sliding attention with sinks, hash / top-k MoE
    s = import_deepseek_v4(r);     // (engine/arch/decoders/moe/deepseek_v4.cpp)
  else if (type == "deepseek_v32")  // MLA + the DSA lightning indexer (engine/arch/decoders/moe/deepseek_v32.cpp)
    s = import_deepseek_v32(r);
  else if (type == "glm_moe_dsa")  // GLM-5: DeepSeek-V3.2's DSA with cross-layer top-k sharing (engine/arch/decoders/moe/glm_moe_dsa.cpp)
    s = import_glm_moe_dsa(r);
  else if (type == "solar_open")  // LlamaAttention + Glm4MoeMoE in every layer (engine/arch/decoders/moe/solar_open.cpp)
    s = import_solar_open(r);
  else if (type == "minicpm3")  // MLA + MiniCPM's embedding / residual / head scalings (engine/arch/decoders/dense/minicpm3.cpp)
    s = import_minicpm3(r);
  else if (type == "longcat_flash")  // two MLA sublayers + a shortcut MoE with identity experts (engine/arch/decoders/moe/longcat_flash.cpp)
    s = import_longcat_flash(r);
  else if (type == "exaone_moe")  // Exaone4Attention + DeepseekV3MoE, pre-norm (engine/arch/decoders/moe/exaone_moe.cpp)
    s = import_exaone_moe(r);
  else if (type == "hy_v3")  // qk-normed heads + sigmoid top-k MoE, fp32 combine (engine/arch/decoders/moe/hy_v3.cpp)
    s = import_hy_v3(r);
  else if (type == "mimo_v2_flash")  // full / sliding layers with sinks, DeepSeek-V3's router (engine/arch/decoders/moe/mimo_v2_flash.cpp)
    s = import_mimo_v2_flash(r);
  else if (type == "laguna")  // gated attention with per-layer heads, sigmoid router + shared expert (engine/arch/decoders/moe/laguna.cpp)
    s = import_laguna(r);
  else if (type == "gpt_oss")
    s = import_gpt_oss(r);
  else if (type == "t5")
    s = import_t5(r);
  else if (type == "granite")
    s = import_granite(r);
  else if (type == "phi")
    s = import_phi(r);
  else if (type == "stablelm")
    s = import_stablelm(r);
  else if (type == "cohere")
    s = import_cohere(r);
  else if (type == "roberta" || type == "xlm-roberta")
    s = import_roberta(r, type);
  else if (type == "camembert")
    s = import_camembert(r);
  else if (type == "data2vec-text")  // Data2VecTextConfig: RobertaConfig's fields, BertConfig's defaults
    s = import_roberta(r, type);
  else if (type == "electra")
    s = import_electra(r);
  else if (type == "albert")
    s = import_albert(r);
  else if (type == "mpnet")
    s = import_mpnet(r);
  else if (type == "esm")
    s = import_esm(r);
  else if (type == "resnet")
    s = import_resnet(r);
  else if (type == "dinov3_vit")
    s = import_dinov3_vit(r);
  else if (type == "beit" || type == "data2vec-vision")
    s = import_beit(r, type);
  else if (type == "segformer")
    s = import_segformer(r);
  else if (type == "modernbert")
    s = import_modernbert(r);
  else if (type == "opt")
    s = import_opt(r);
  else if (type == "xlm-roberta-xl")  // pre-LN BERT layers, RoBERTa's embeddings (engine/arch/encoders/xlm_roberta_xl.cpp)
    s = import_xlm_roberta_xl(r);
  else if (type == "afmoe")  // Trinity: gated q / k-normed attention, sliding layers, sandwich norms, sigmoid MoE (engine/arch/decoders/moe/afmoe.cpp)
    s = import_afmoe(r);
  else if (type == "glm4_moe_lite")  // DeepSeek-V3's MLA decoder, MoE layers by mlp_layer_types (engine/arch/decoders/moe/glm4_moe_lite.cpp)
    s = import_glm4_moe_lite(r);
  else if (type == "nanochat")  // Llama's skeleton, weightless RMSNorms, relu2 MLP, q / k norms after RoPE, softcap (engine/arch/decoders/dense/nanochat.cpp)
    s = import_nanochat(r);
  else if (type == "vaultgemma")  // Gemma 2's decoder without the post-attention / post-feed-forward norms (engine/arch/decoders/dense/vaultgemma.cpp)
    s = import_vaultgemma(r);
  else if (type == "codegen")  // GPT-J's block with a fused, 4-way sharded qkv_proj (engine/arch/decoders/gpt/codegen.cpp)
    s = import_codegen(r);
  else if (type == "t5gemma")  // Gemma 2 encoder and decoder stacks with cross-attention (engine/arch/seq2seq/t5gemma.cpp)
    s = import_t5gemma(r);
  else if (type == "mpt")  // MPT's own eager attention with ALiBi (engine/arch/decoders/gpt/mpt.cpp)
    s = import_mpt(r);
  else if (type == "biogpt")  // BART's pre-LN decoder layers, a learned position table offset by 2 (engine/arch/decoders/gpt/biogpt.cpp)
    s = import_biogpt(r);
  else if (type == "qwen2_moe")
    s = import_qwen2_moe(r);
  else if (type == "distilbert")
    s = import_distilbert(r);
  else if (type == "glm4")
    s = import_glm4(r);
  else if (type == "nemotron")
    s = import_nemotron(r);
  else if (type == "olmoe")
    s = import_olmoe(r);
  else if (type == "granitemoe" || type == "granitemoeshared")
    s = import_granitemoe(r, type);
  else if (type == "granite_swa" || type == "granitemoe_swa")  // sliding windows + sinks (granite_swa_parts.h)
    s = import_granite_swa(r, type);
  else if (type == "smollm3")
    s = import_smollm3(r);
  else if (type == "olmo")
    s = import_olmo(r);
  else if (type == "gpt_bigcode")
    s = import_gpt_bigcode(r);
  else if (type == "gptj")
    s = import_gptj(r);
  else if (type == "falcon")
    s = import_falcon(r);
  else if (type == "bloom")
    s = import_bloom(r);
  else if (type == "ernie4_5")
    s = import_ernie4_5(r);
  else if (type == "exaone4")
    s = import_exaone4(r);
  else if (type == "seed_oss")
    s = import_seed_oss(r);
  else if (type == "arcee")
    s = import_arcee(r);
  else if (type == "bart")
    s = import_bart(r);
  else if (type == "llama4_text" || type == "llama4") {  // llama4: its text_config's decoder, as llama4_text
    s = import_llama4(r, type);
    type = "llama4_text";
  }
  else if (type == "hunyuan_v1_dense")
    s = import_hunyuan_v1_dense(r);
  else if (type == "apertus")
    s = import_apertus(r);
  else if (type == "deberta-v2")
    s = import_deberta_v2(r);
  else if (type == "mbart")
    s = import_mbart(r);
  else if (type == "whisper")
    s = import_whisper(r);
  else if (type == "cohere2")
    s = import_cohere2(r);
  else if (type == "vit")
    s = import_vit(r);
  else if (type == "clip" || type == "siglip" || type == "siglip2")
    s = import_clip(r, type);
  else if (type == "dinov2")
    s = import_dinov2(r);
  else if (type == "convnext" || type == "convnextv2")
    s = import_convnext(r, type);
  else if (type == "swin")
    s = import_swin(r);
  else if (type == "swinv2")  // post-norm windows, scaled cosine attention, a continuous position bias MLP (hf_swinv2.cpp)
    s = import_swinv2(r);
  else if (type == "deit")
    s = import_deit(r);
  else if (type == "gpt_neo")
    s = import_gpt_neo(r);
  else if (type == "marian")
    s = import_marian(r);
  else if (type == "pegasus")
    s = import_pegasus(r);
  else if (type == "m2m_100")
    s = import_m2m_100(r);
  else if (type == "glm4_moe")
    s = import_glm4_moe(r);
  else if (type == "phimoe")
    s = import_phimoe(r);
  else if (type == "mt5" || type == "umt5")
    s = import_mt5(r, type);
  else if (type == "olmo3")
    s = import_olmo3(r);
  else if (type == "lfm2")
    s = import_lfm2(r);
  else if (type == "ernie4_5_moe")
    s = import_ernie4_5_moe(r);
  else if (type == "mistral4")
    s = import_mistral4(r);
  else if (type == "ministral3")
    s = import_ministral3(r);
  else if (type == "mistral3")  // multimodal: its text_config's decoder, built as ministral3 / mistral4
    s = import_mistral3(r, type);
  else if (type == "minimax_m2")
    s = import_minimax_m2(r);
  else if (type == "lfm2_moe")
    s = import_lfm2_moe(r);
  else if (type == "gemma4_text")
    s = import_gemma4(r, type);
  else if (type == "gemma3n_text")
    s = import_gemma3n_text(r);
  else if (type == "gemma4") {  // multimodal: its text_config's decoder, built as gemma4_text
    s = import_gemma4(r, type);
    type = "gemma4_text";
  }
  else if (type == "qwen3_next" || type == "qwen3_5_text" || type == "qwen3_5_moe_text")
    s = import_qwen3_next(r, type);
  else if (type == "wav2vec2" || type == "hubert" || type == "wavlm")
    s = import_wav2vec2(r, type);
  else if (type == "qwen3_5" || type == "qwen3_5_moe") {  // multimodal: its text_config's decoder
    s = import_qwen3_next(r, type);
    type += "_text";
  }
  else if (type == "qwen2_vl" || type == "qwen2_5_vl")  // text decoder + vision tower (engine/arch/vlm/)
    s = import_qwen2_vl(r, type);
  else if (type == "helium")
    s = import_helium(r);
  else if (type == "glm")
    s = import_glm(r);
  else if (type == "hunyuan_v1_moe")
    s = import_hunyuan_v1_moe(r);
  else if (type == "dots1")
    s = import_dots1(r);
  else if (type == "dbrx")
    s = import_dbrx(r);
  else if (type == "jetmoe")
    s = import_jetmoe(r);
  else if (type == "mamba")
    s = import_mamba(r);
  else if (type == "mamba2")
    s = import_mamba2(r);
  else if (type == "idefics3" || type == "smolvlm")  // vision transformer + Llama text model (engine/arch/vlm/)
    s = import_idefics3(r, type);
  else if (type == "granitemoehybrid")
    s = import_granitemoehybrid(r);
  else if (type == "bamba")
    s = import_bamba(r);
  else if (type == "falcon_mamba")
    s = import_falcon_mamba(r);
  else if (type == "falcon_h1")
    s = import_falcon_h1(r);
  else if (type == "nemotron_h")
    s = import_nemotron_h(r);
  else if (type == "jamba")
    s = import_jamba(r);
  else if (type == "qwen3_vl" || type == "qwen3_vl_moe")  // vision tower + text decoder (engine/arch/vlm/qwen3_vl.cpp)
    s = import_qwen3_vl(r, type);
  else if (type == "llava")  // vision tower + projector + text decoder (engine/arch/vlm/llava.cpp)
    s = import_llava(r);
  else if (type == "paligemma")  // (engine/arch/vlm/paligemma.cpp)
    s = import_paligemma(r);
  else if (type == "llava_next")  // anyres tiles through llava's tower (engine/arch/vlm/llava_next.cpp)
    s = import_llava_next(r);
  else if (type == "llava_onevision")  // anyres_max tiles through a SigLIP tower (engine/arch/vlm/llava_onevision.cpp)
    s = import_llava_onevision(r);
  else if (type == "mllama" || type == "mllama_text_model")  // tiled vision + cross-attention decoder (vlm/mllama.cpp)
    s = import_mllama(r, type);
  else if (type == "internvl")  // InternVL's tower, pixel shuffle and projector (engine/arch/vlm/internvl.cpp)
    s = import_internvl(r);
  else if (type == "qwen2_audio")  // Whisper-style audio encoder + Qwen2 decoder (engine/arch/audio/qwen2_audio.cpp)
    s = import_qwen2_audio(r);
  else
    s = import_llama_family(r, type);
  // The other decoders whose rotary embedding covers the whole head (the llama family's importer checks its own,
  // nested text_configs included): an odd head_dim is refused naming the key it came from.
  for (const char* t : {"qwen3_moe", "olmo2", "starcoder2", "granite", "smollm3", "olmo", "falcon", "exaone4", "arcee",
                        "hunyuan_v1_dense", "apertus", "phimoe", "hunyuan_v1_moe", "nanochat", "exaone_moe", "hy_v3"})
    if (type == t) check_rotary_head_dim(r, s);
  for (const char* t : {"llama", "mistral", "qwen2", "qwen3", "gpt2"})  // their classification heads' keys
    if (type == t) read_decoder_cls_keys(r, s);
  s.config_use_cache = r.boolean({"use_cache"}, true);
  if (const json* tc = r.raw("text_config"); tc && tc->is_object() && tc->contains("use_cache"))
    s.config_use_cache = s.config_use_cache && ConfigReader(*tc, r.name("text_config.")).boolean({"use_cache"}, true);
  s.model_type = type;
  return s;
}

}  // namespace memplan
