#include <algorithm>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/moe/afmoe.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"  // build_glm4_moe_lite
#include "engine/arch/kv_cache_update.h"
#include "engine/arch/native/native.h"
#include "engine/errors.h"

namespace memplan {

bool layer_checkpointed(const RunConfig& cfg, int64_t i) {
  if (!cfg.grad_checkpointing) return false;
  if (cfg.checkpoint_layers.empty()) return true;
  return std::find(cfg.checkpoint_layers.begin(), cfg.checkpoint_layers.end(), i) != cfg.checkpoint_layers.end();
}

bool layer_frozen(const RunConfig& cfg, int64_t i) {
  return std::find(cfg.frozen_layers.begin(), cfg.frozen_layers.end(), i) != cfg.frozen_layers.end();
}

TensorId causal_lm_loss(GraphBuilder& b, TensorId logits, TensorId labels) {
  const Shape ls = b.shape(logits);  // [B, S, V]; a copy: b.to() below reallocates the tensor table
  const int64_t n = ls[0] * ls[1];
  b.hold(logits);  // the model output holds the logits until forward returns (after the loss)
  TensorId f = b.to(logits, DType::f32);
  b.hold(f);  // the local `logits` keeps the fp32 copy until the loss function returns
  // nn.functional.pad(labels, (0, 1), value=-100) then labels[..., 1:].contiguous()
  TensorId padded = b.generic({"pad", {labels}, {{{ls[0], ls[1] + 1}, DType::i64}}, {}, {}, {}, {}})[0];
  TensorId shifted = b.generic({"contiguous", {padded}, {{{ls[0], ls[1]}, DType::i64}}, {}, {}, {}, {}})[0];
  TensorId flat = b.view(f, {n, ls[2]});
  TensorId loss = b.cross_entropy(flat, b.view(shifted, {n}));
  b.drop(f);
  b.drop(logits);
  return loss;
}

void causal_lm_training_head(GraphBuilder& b, TensorId hidden, TensorId head_weight, TensorId ids, TensorId bias,
                             TensorId (*logits_op)(GraphBuilder&, TensorId)) {
  b.hold(hidden);
  TensorId logits = b.linear(hidden, head_weight, bias);
  if (logits_op) logits = logits_op(b, logits);
  b.mark_model_end();
  TensorId loss = causal_lm_loss(b, logits, ids);
  b.drop(hidden);
  b.exit_autocast();
  b.set_loss(loss);
}

void causal_lm_tail(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId embed, TensorId ids,
                    bool head_bias, TensorId (*logits_op)(GraphBuilder&, TensorId)) {
  if (b.config().task != Task::lm) {
    decoder_cls_head(b, s, hidden, ids);
    return;
  }
  const bool emb_train = !b.config().freeze_embeddings;
  const int64_t H = s.hidden_size, V = s.vocab_size;
  const TensorId head =
      s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train) : b.param("lm_head.weight", {V, H}, emb_train);
  const TensorId bias = head_bias ? b.param("lm_head.bias", {V}, emb_train) : kNoTensor;
  causal_lm_head_forward(b, s, hidden, embed, head, ids, bias, logits_op);
}

void causal_lm_head_forward(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId embed, TensorId head,
                            TensorId ids, TensorId bias, TensorId (*logits_op)(GraphBuilder&, TensorId)) {
  if (b.config().task != Task::lm)  // check_task admits no (type, task) pair that reaches here
    throw InputError("task", std::string(task_name(b.config().task)), "is not modelled for model_type " + s.model_type);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);
  if (!b.training()) {
    inference_head(b, hidden, head, bias, logits_op);
    return;
  }
  causal_lm_training_head(b, hidden, head, ids, bias, logits_op);
}

TensorId task_labels(GraphBuilder& b, TensorId ids) {
  const auto& cfg = b.config();
  if (!b.training()) return cfg.task == Task::lm ? ids : kNoTensor;  // inference: no labels are passed
  switch (cfg.task) {
    case Task::seq_cls: return b.input({cfg.batch_size}, DType::i64);
    case Task::token_cls: return b.input({cfg.batch_size, cfg.seq_len}, DType::i64);
    case Task::lm:
    case Task::feature:
    case Task::semantic_seg: break;  // segformer makes its own [B, H, W] labels (hf_segformer.cpp)
  }
  return ids;
}

void forward_output(GraphBuilder& b, std::initializer_list<TensorId> outputs) {
  for (TensorId t : outputs)
    if (t != kNoTensor) b.hold(t);
  b.mark_model_end();
}

void check_cls_loss(const GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.task != Task::seq_cls) return;
  if (s.problem_type == "regression" || s.problem_type == "multi_label_classification")
    throw InputError("config.problem_type", "\"" + s.problem_type + "\"",
                     "is not modelled (MSELoss / BCEWithLogitsLoss over float labels, not measured); cross entropy "
                     "(single_label_classification) is");
  if (s.problem_type.empty() && cfg.num_labels == 1)
    throw InputError("num_labels", "1",
                     "makes ...ForSequenceClassification a regression (MSELoss over float labels), which is not "
                     "modelled; num_labels >= 2 (cross entropy) is");
}

TensorId sliding_sdpa_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv) {
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::boolean}}, {}, {}, {}, {}})[0];
  };
  TensorId r = op("and", {op("gt", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  r = op("and", {r, op("le", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  if (rows > 1) r = op("and", {r, op("index", {}, {rows, 1, 1, kv})}, {rows, 1, q, kv});
  return r;
}

void hf_construction_scalar(GraphBuilder& b) { b.construction_persistent(dtype_bytes(b.param_dtype())); }

std::pair<TensorId, TensorId> kv_update(GraphBuilder& b, TensorId k, TensorId v, int64_t window) {
  // past_key_values is None (generate() with use_cache false): the attention reads its own K and V, no cat copies
  if (!b.pass().use_cache) return {k, v};
  return kv_cat_update(b, k, v, b.pass().past_len, window);
}

std::pair<TensorId, TensorId> kv_cat_update(GraphBuilder& b, TensorId k, TensorId v, int64_t past, int64_t window) {
  // DynamicLayer.lazy_initialization starts both caches as empty tensors of key_states' dtype, and torch.cat
  // promotes: under amp the rotated keys are fp32 (bf16 k times fp32 cos), so the values are cached in fp32
  // too (whole-run TinyLlama-shape amp stream: two 8 MiB cats per layer where bf16 would be 4 MiB).
  const DType cache_dt = b.dtype(k);
  auto one = [&](TensorId x) {
    TensorId full;
    if (past == 0) {
      full = b.cat("kv_cat", {x}, 2, cache_dt);  // cat([empty, x]): a fresh copy
    } else {
      Shape old = b.shape(x);
      old[2] = window > 0 ? std::min(past, window - 1) : past;
      full = b.cat("kv_cat", {b.kv_cache_in(old, cache_dt), x}, 2);
    }
    TensorId keep = full;
    if (window > 0) {
      Shape kept = b.shape(full);
      kept[2] = std::min(kept[2], window - 1);
      keep = b.view(full, kept);
    }
    b.kv_cache_out(keep);
    return full;
  };
  TensorId kc = one(k);
  TensorId vc = one(v);
  return {kc, vc};
}

TensorId eager_mask(GraphBuilder& b, int64_t bool_rows, int64_t q, int64_t kv, DType dtype) {
  TensorId allowed = b.generic({"sdpa_mask", {}, {{{bool_rows, 1, q, kv}, DType::boolean}}, {}, {}, {}, {}})[0];
  return b.generic({"causal_mask", {allowed}, {{{b.config().batch_size, 1, q, kv}, dtype}}, {}, {}, {}, {}})[0];
}

TensorId inference_mask(GraphBuilder& b, int64_t window, DType model_dtype) {
  const auto& p = b.pass();
  const int64_t B = b.config().batch_size, q = p.new_tokens;
  // kv length as get_mask_sizes reports it: a full sliding layer holds window - 1 past tokens.
  const int64_t kv = (window > 0 ? std::min(p.past_len, window - 1) : p.past_len) + q;
  const int64_t P = p.from_generate ? B : 1;
  if (b.config().attn == AttnImpl::eager) return eager_mask(b, P, q, kv, model_dtype);
  const bool skip = (q == 1 || kv == q) && (window == 0 || kv < window);
  if (skip) return kNoTensor;
  return b.generic({"sdpa_mask", {}, {{{P, 1, q, kv}, DType::boolean}}, {}, {}, {}, {}})[0];
}

TensorId inference_sliding_mask(GraphBuilder& b, int64_t window, DType model_dtype) {
  if (b.config().attn == AttnImpl::eager) return inference_mask(b, window, model_dtype);
  const auto& p = b.pass();
  const int64_t kv = std::min(p.past_len, window - 1) + p.new_tokens;
  const bool skip = (p.new_tokens == 1 || kv == p.new_tokens) && kv < window;
  if (skip) return kNoTensor;
  return sliding_sdpa_mask(b, p.from_generate ? b.config().batch_size : 1, p.new_tokens, kv);
}

CausalMasks full_and_sliding_masks(GraphBuilder& b, const TransformerSpec& s, bool want_full, bool any_sliding,
                                   DType model_dtype) {
  const auto& cfg = b.config();
  CausalMasks m;
  if (b.training()) {
    const int64_t S = cfg.seq_len;
    if (cfg.attn == AttnImpl::eager) {
      if (want_full) m.full = eager_mask(b, 1, S, S, model_dtype);
      if (any_sliding) m.sliding = eager_mask(b, 1, S, S, model_dtype);
    } else if (any_sliding && S >= s.sliding_window) {
      m.sliding = sliding_sdpa_mask(b, 1, S, S);
    }
  } else {
    if (want_full) m.full = inference_mask(b, 0, model_dtype);
    if (any_sliding) m.sliding = inference_sliding_mask(b, s.sliding_window, model_dtype);
  }
  for (TensorId t : {m.full, m.sliding})
    if (t != kNoTensor) b.hold(t);
  return m;
}

// NewGELUActivation: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))), evaluated left to right. Its
// `input` is bound until forward returns: where nothing saves x (a checkpointed first forward, inference) it dies
// after the product, not at the inner add (whole-run stream f2-flanl-bf16 checkpointed: the wi_0 output freed as
// the activation returns).
TensorId gelu_new(GraphBuilder& b, TensorId x) {
  b.hold(x);
  TensorId half_x = b.scalar_op("mul_scalar", x, false);
  TensorId cube = b.pow_scalar(x);
  TensorId scaled = b.scalar_op("mul_scalar", cube, false);
  TensorId inner = b.add(x, scaled);
  TensorId arg = b.scalar_op("mul_scalar", inner, false);
  TensorId th = b.unary("tanh", arg, false, /*save_out=*/true);
  TensorId one_plus = b.add_scalar(th);
  TensorId out = b.mul(half_x, one_plus);
  b.drop(x);
  return out;
}

TensorId inference_head(GraphBuilder& b, TensorId hidden, TensorId head_weight, TensorId bias,
                        TensorId (*logits_op)(GraphBuilder&, TensorId)) {
  Shape hs = b.shape(hidden);  // [B, S, H]
  const int64_t keep = b.config().logits_to_keep;
  if (keep > 0 && keep < hs[1]) hs[1] = keep;
  TensorId last = b.view(hidden, hs);  // hidden_states[:, -keep:, :]: a strided view, no copy
  TensorId logits = b.linear(last, head_weight, bias);
  if (logits_op) logits = logits_op(b, logits);  // a rebinding statement: the head's output dies
  b.hold(logits);
  b.mark_model_end();
  return logits;
}

// Cohere2MoeForCausalLM (engine/arch/decoders/moe/cohere2_moe.cpp) and MinistralForCausalLM
// (engine/arch/decoders/dense/ministral.cpp), declared here rather than in builders.h, a precompiled header whose
// every change rebuilds the engine (family sets 60 / 61, written on a 2-core machine shared by five builds).
void build_cohere2_moe(GraphBuilder& b, const TransformerSpec& s);
void build_ministral(GraphBuilder& b, const TransformerSpec& s);
// MiniCPM3ForCausalLM (engine/arch/decoders/dense/minicpm3.cpp), family set 67.
void build_minicpm3(GraphBuilder& b, const TransformerSpec& s);
// LongcatFlashForCausalLM (engine/arch/decoders/moe/longcat_flash.cpp), family set 68.
void build_longcat_flash(GraphBuilder& b, const TransformerSpec& s);
// CwmForCausalLM, Jais2ForCausalLM, HyperCLOVAXForCausalLM (engine/arch/decoders/dense/cwm.cpp, jais2.cpp,
// hyperclovax.cpp; family sets 73 .. 75), declared here for the same reason.
void build_cwm(GraphBuilder& b, const TransformerSpec& s);
void build_jais2(GraphBuilder& b, const TransformerSpec& s);
void build_hyperclovax(GraphBuilder& b, const TransformerSpec& s);
// ExaoneMoeForCausalLM (engine/arch/decoders/moe/exaone_moe.cpp) and HYV3ForCausalLM
// (engine/arch/decoders/moe/hy_v3.cpp), declared here for the same reason (family sets 72 / 71).
void build_exaone_moe(GraphBuilder& b, const TransformerSpec& s);
void build_hy_v3(GraphBuilder& b, const TransformerSpec& s);
// MiMoV2FlashForCausalLM (engine/arch/decoders/moe/mimo_v2_flash.cpp; family set 69), declared here for the same reason.
void build_mimo_v2_flash(GraphBuilder& b, const TransformerSpec& s);
// LagunaForCausalLM (engine/arch/decoders/moe/laguna.cpp; family set 70), likewise.
void build_laguna(GraphBuilder& b, const TransformerSpec& s);

namespace {
// model_type -> builder; the first row of a builder names its family (model_family).
const struct {
  const char* type;
  TransformerBuilder build;
} kBuilders[] = {
    {"gpt2", build_gpt2},           {"bert", build_bert},           {"llama", build_llama},
    {"mistral", build_llama},       {"qwen2", build_llama},         {"mixtral", build_llama},
    {"gemma2", build_gemma2},       {"deepseek_v2", build_deepseek_v2}, {"qwen3", build_qwen3},
    {"qwen3_moe", build_qwen3_moe}, {"olmo2", build_olmo2},         {"gemma", build_gemma},
    {"gemma3_text", build_gemma3},  {"phi3", build_phi3},           {"gpt_neox", build_gpt_neox},
    {"starcoder2", build_starcoder2}, {"deepseek_v3", build_deepseek_v3}, {"gpt_oss", build_gpt_oss},
    {"t5", build_t5},               {"granite", build_granite},     {"phi", build_phi},
    {"stablelm", build_stablelm},   {"cohere", build_cohere},       {"roberta", build_roberta},
    {"xlm-roberta", build_roberta}, {"opt", build_opt},         {"qwen2_moe", build_qwen2_moe},
    {"distilbert", build_distilbert},
    {"glm4", build_glm4},           {"nemotron", build_nemotron},
    {"modernbert", build_modernbert},
    {"olmoe", build_olmoe},
    {"smollm3", build_smollm3},     {"olmo", build_olmo},
    {"gpt_bigcode", build_gpt_bigcode}, {"gptj", build_gptj},
    {"falcon", build_falcon},       {"bloom", build_bloom},
    {"ernie4_5", build_ernie4_5},   {"exaone4", build_exaone4},     {"seed_oss", build_seed_oss},
    {"arcee", build_arcee},
    {"granitemoe", build_granitemoe}, {"granitemoeshared", build_granitemoe},
    {"granite_swa", build_granite_swa}, {"granitemoe_swa", build_granitemoe_swa},
    {"bart", build_bart},
    {"llama4_text", build_llama4},
    {"hunyuan_v1_dense", build_hunyuan_v1_dense},
    {"apertus", build_apertus},
    {"deberta-v2", build_deberta_v2},
    {"mbart", build_mbart},         {"whisper", build_whisper},
    {"cohere2", build_cohere2},
    {"vit", build_hf_vit},
    {"dinov2", build_hf_dinov2},    {"deit", build_hf_deit},
    {"wav2vec2", build_wav2vec2},   {"hubert", build_hubert},     {"wavlm", build_wavlm},
    {"gpt_neo", build_gpt_neo},
    {"marian", build_marian},       {"pegasus", build_pegasus},
    {"camembert", build_roberta},   // the roberta classes under other names, heads registered first
    {"data2vec-text", build_roberta},  // modular_data2vec_text.py: the Roberta classes under other names, same order
    {"electra", build_electra},
    {"m2m_100", build_m2m_100},
    {"glm4_moe", build_glm4_moe},
    {"mt5", build_t5},              {"umt5", build_umt5},
    {"albert", build_albert},
    {"mpnet", build_mpnet},
    {"phimoe", build_phimoe},
    {"olmo3", build_olmo3},
    {"lfm2", build_lfm2},
    {"ernie4_5_moe", build_ernie4_5_moe},
    {"mistral4", build_mistral4},
    {"glm4_moe_lite", build_glm4_moe_lite},
    {"afmoe", build_afmoe},
    {"ministral3", build_ministral3},
    {"minimax_m2", build_minimax_m2},
    {"lfm2_moe", build_lfm2_moe},
    {"gemma4_text", build_gemma4},
    {"gemma3n_text", build_gemma3n},
    {"qwen3_next", build_qwen3_next},
    {"qwen3_5_text", build_qwen3_next},
    {"qwen3_5_moe_text", build_qwen3_next},
    {"qwen2_vl", build_qwen2_vl},     {"qwen2_5_vl", build_qwen2_5_vl},
    {"helium", build_helium},
    {"glm", build_glm},
    {"hunyuan_v1_moe", build_hunyuan_v1_moe},
    {"dots1", build_dots1},
    {"dbrx", build_dbrx},
    {"jetmoe", build_jetmoe},
    {"mamba", build_mamba},
    {"mamba2", build_mamba2},
    {"granitemoehybrid", build_granitemoehybrid},
    {"bamba", build_bamba},
    {"falcon_mamba", build_falcon_mamba},
    {"qwen3_vl", build_qwen3_vl},   {"qwen3_vl_moe", build_qwen3_vl},
    {"clip", build_clip},           {"siglip", build_siglip},       {"siglip2", build_siglip2},
    {"idefics3", build_idefics3},   {"smolvlm", build_smolvlm},
    {"falcon_h1", build_falcon_h1},
    {"nemotron_h", build_nemotron_h},
    {"convnext", build_hf_convnext}, {"convnextv2", build_hf_convnext}, {"swin", build_hf_swin},
    {"swinv2", build_hf_swinv2},
    {"llava", build_llava},         {"paligemma", build_paligemma},
    {"llava_next", build_llava_next},
    {"llava_onevision", build_llava_onevision},
    {"ernie", build_ernie},
    {"biogpt", build_biogpt},
    {"mpt", build_mpt},
    {"codegen", build_codegen},
    {"nanochat", build_nanochat},
    {"vaultgemma", build_vaultgemma},
    {"deepseek_v32", build_deepseek_v32},
    {"cohere2_moe", build_cohere2_moe},
    {"ministral", build_ministral},
    {"cwm", build_cwm},
    {"jais2", build_jais2},
    {"hyperclovax", build_hyperclovax},
    {"deepseek_v4", build_deepseek_v4},  // declared in deepseek_parts.h
    {"glm_moe_dsa", build_glm_moe_dsa},
    {"solar_open", build_solar_open},
    {"minicpm3", build_minicpm3},
    {"longcat_flash", build_longcat_flash},
    {"exaone_moe", build_exaone_moe},
    {"hy_v3", build_hy_v3},
    {"mimo_v2_flash", build_mimo_v2_flash},
    {"laguna", build_laguna},
    {"t5gemma", build_t5gemma},
    {"xlm-roberta-xl", build_xlm_roberta_xl},
    {"mllama", build_mllama},       {"mllama_text_model", build_mllama},
    {"internvl", build_internvl},
    {"jamba", build_jamba},
    {"esm", build_esm},
    {"resnet", build_hf_resnet},
    {"dinov3_vit", build_hf_dinov3},
    {"beit", build_hf_beit},
    {"data2vec-vision", build_hf_beit},
    {"segformer", build_hf_segformer},
    {"qwen2_audio", build_qwen2_audio},
};
}  // namespace

TransformerBuilder transformer_builder(const TransformerSpec& s) {
  for (const auto& e : kBuilders)
    if (s.model_type == e.type) return e.build;
  // Specs made in code (tests, the planner) may leave model_type empty: the family decides.
  switch (s.family) {
    case TransformerSpec::Family::gpt2: return build_gpt2;
    case TransformerSpec::Family::bert: return build_bert;
    default: return build_llama;
  }
}

std::string model_family(const ModelSpec& m) {
  if (m.kind == ModelSpec::Kind::vision) return std::string("torchvision/") + vision_family_name(m.vision.family);
  if (m.kind == ModelSpec::Kind::graph) return "native";
  const TransformerBuilder build = transformer_builder(m.transformer);
  for (const auto& e : kBuilders)
    if (e.build == build) return e.type;
  return m.transformer.family == TransformerSpec::Family::gpt2 ? "gpt2" : "bert";  // build_gpt2 / build_bert rows exist
}

bool takes_images(const TransformerSpec& s) {
  return s.vl_vision_depth > 0 || s.qwen3vl_depth > 0 || s.id3_vision_layers > 0 || s.model_type == "siglip2" ||
         s.model_type == "llava" || s.model_type == "paligemma" ||
         s.model_type == "llava_next" || s.model_type == "llava_onevision" || s.model_type == "mllama" ||
         s.model_type == "internvl";
}

int64_t position_limit(const TransformerSpec& s) {
  if (s.model_type == "bart") return s.max_position_embeddings;
  if (s.model_type == "m2m_100") return s.max_position_embeddings + 1 - s.m2m_padding_idx;
  if (s.model_type == "esm" && s.esm_rotary) return 0;  // no position table: the rotary tables follow seq_len
  const bool learned = s.family == TransformerSpec::Family::gpt2 || s.family == TransformerSpec::Family::bert ||
                       s.learned_positions;
  if (!learned || s.max_position_embeddings <= 0) return 0;
  return s.max_position_embeddings - s.position_id_offset;
}

AttnImpl default_attn(const ModelSpec& spec) {
  if (spec.kind != ModelSpec::Kind::transformer) return AttnImpl::sdpa;
  // PreTrainedModel classes with _supports_sdpa = False in transformers 5.17 (their builders refuse sdpa).
  for (std::string_view mt : {"gptj", "codegen", "bloom", "mpt", "gpt_oss", "deberta-v2", "gpt_neo", "mpnet", "wavlm", "mamba", "mamba2",
                              "falcon_mamba", "convnext", "convnextv2", "resnet", "swinv2", "deepseek_v4", "granite_swa",
                              "granitemoe_swa", "mimo_v2_flash"})
    if (spec.transformer.model_type == mt) return AttnImpl::eager;
  return AttnImpl::sdpa;
}

namespace {
// (model_type, task) pairs beyond Task::lm whose head the family's builder replays (measured:
// data/validation/notes-f13/). One pair per line.
struct TaskRow {
  std::string_view type;
  Task task;
};
constexpr TaskRow kTasks[] = {
    {"", Task::lm},  // a placeholder (Task::lm is every family's)
    // GenericForSequenceClassification / GenericForTokenClassification over the shared CausalLM tail
    // (heads_decoder.cpp; notes-f13/classification-decoders.md), GPT2ForSequenceClassification.
    {"llama", Task::seq_cls},
    {"llama", Task::token_cls},
    {"mistral", Task::seq_cls},
    {"mistral", Task::token_cls},
    {"qwen2", Task::seq_cls},
    {"qwen2", Task::token_cls},
    {"qwen3", Task::seq_cls},
    {"qwen3", Task::token_cls},
    {"gpt2", Task::seq_cls},
    {"deberta-v2", Task::seq_cls},
    {"deberta-v2", Task::token_cls},
    {"bert", Task::seq_cls},            // engine/arch/encoders/heads_encoder.cpp (notes-f13/classification-encoders.md)
    {"bert", Task::token_cls},
    {"ernie", Task::seq_cls},           // BERT's heads after ErnieModel (engine/arch/encoders/ernie.cpp)
    {"ernie", Task::token_cls},
    {"roberta", Task::seq_cls},
    {"roberta", Task::token_cls},
    {"xlm-roberta", Task::seq_cls},     // the roberta classes under other names (same Python)
    {"xlm-roberta", Task::token_cls},
    {"xlm-roberta-xl", Task::seq_cls},  // RobertaClassificationHead / dropout + classifier after the XL model
    {"xlm-roberta-xl", Task::token_cls},
    {"distilbert", Task::seq_cls},
    {"distilbert", Task::token_cls},
    {"modernbert", Task::seq_cls},      // engine/arch/encoders/modernbert.cpp
    {"modernbert", Task::token_cls},
    {"camembert", Task::seq_cls},       // roberta.cpp (notes-f15/electra.md)
    {"camembert", Task::token_cls},
    {"data2vec-text", Task::seq_cls},
    {"data2vec-text", Task::token_cls},
    {"electra", Task::seq_cls},         // engine/arch/encoders/electra.cpp
    {"electra", Task::token_cls},
    {"albert", Task::seq_cls},          // engine/arch/encoders/albert.cpp (notes-f17/albert.md)
    {"albert", Task::token_cls},
    {"mpnet", Task::seq_cls},           // engine/arch/encoders/mpnet.cpp (notes-f17/mpnet.md)
    {"mpnet", Task::token_cls},
    {"esm", Task::seq_cls},             // engine/arch/encoders/esm.cpp (notes-f32/esm.md)
    {"esm", Task::token_cls},
    // AutoModel, the bare encoder (and its pooler), inference only (notes-f19/encinf.md)
    {"bert", Task::feature},
    {"ernie", Task::feature},
    {"roberta", Task::feature},
    {"xlm-roberta", Task::feature},
    {"xlm-roberta-xl", Task::feature},
    {"camembert", Task::feature},
    {"data2vec-text", Task::feature},
    {"electra", Task::feature},
    {"distilbert", Task::feature},
    {"modernbert", Task::feature},
    {"deberta-v2", Task::feature},
    {"albert", Task::feature},
    {"mpnet", Task::feature},
    {"esm", Task::feature},
    {"dinov3_vit", Task::feature},      // engine/arch/vision/hf_dinov3.cpp: DINOv3ViTModel, inference only
    {"segformer", Task::semantic_seg},  // engine/arch/vision/hf_segformer.cpp: SegformerForSemanticSegmentation
    // speech encoders (engine/arch/audio/; notes-f21/audio.md): <Type>ForSequenceClassification, the bare model
    {"wav2vec2", Task::seq_cls},
    {"wav2vec2", Task::feature},
    {"hubert", Task::seq_cls},
    {"hubert", Task::feature},
    {"wavlm", Task::seq_cls},
    {"wavlm", Task::feature},
};

// model_types whose inference is one forward of the batch (replay_inference's forward-only pass): the encoders
// and the Hugging Face image classifiers. Every other transformer is a causal LM or an encoder-decoder.
constexpr std::string_view kForwardOnlyTypes[] = {"bert",       "roberta",    "xlm-roberta", "camembert", "electra",
                                                  "distilbert", "modernbert", "deberta-v2",  "albert",    "mpnet",
                                                  "vit",        "dinov2",     "deit",        "wav2vec2",
                                                  "hubert",     "wavlm",
                                                  "clip",       "siglip",     "siglip2",  // contrastive: vlm/
                                                  "convnext",   "convnextv2", "swin",     "esm",
                                                  "resnet",     "dinov3_vit", "beit",      "data2vec-vision",
                                                  "segformer",  "ernie",      "xlm-roberta-xl", "data2vec-text",
                                                  "swinv2"};
}  // namespace

bool forward_only_inference(const ModelSpec& spec) {
  if (spec.kind == ModelSpec::Kind::vision) return true;
  if (spec.kind != ModelSpec::Kind::transformer) return false;
  for (std::string_view t : kForwardOnlyTypes)
    if (spec.transformer.model_type == t) return true;
  // A spec made in code with no model_type runs build_bert for family bert (transformer_builder).
  return spec.transformer.model_type.empty() && spec.transformer.family == TransformerSpec::Family::bert;
}

bool task_modelled(std::string_view model_type, Task task) {
  if (task == Task::lm) return true;
  for (const auto& e : kTasks)
    if (e.task == task && e.type == model_type) return true;
  return false;
}

void check_task(const ModelSpec& spec, const RunConfig& cfg) {
  if (cfg.task == Task::lm) return;
  const std::string t(task_name(cfg.task));
  if (cfg.task == Task::feature && cfg.mode == Mode::training)
    throw InputError("task", t, "(AutoModel, the bare encoder) is inference only: train a head (lm, seq_cls, token_cls)");
  if (cfg.task == Task::semantic_seg &&
      (spec.kind != ModelSpec::Kind::transformer || !task_modelled(spec.transformer.model_type, cfg.task)))
    throw InputError("task", t,
                     "is modelled for segformer only (SegformerForSemanticSegmentation), not " +
                         (spec.kind == ModelSpec::Kind::transformer ? "model_type " + spec.transformer.model_type
                                                                    : std::string("a torchvision or native model")));
  if (cfg.num_labels <= 0) throw InputError("num_labels", std::to_string(cfg.num_labels), "must be a positive integer");
  if (spec.kind != ModelSpec::Kind::transformer)
    throw InputError("task", t, "classification heads are modelled for Hugging Face transformers only (a vision "
                                "model's classifier is its own head; a native graph writes its own)");
  if (cfg.mode != Mode::training && !forward_only_inference(spec))
    throw InputError("task", t, "inference with a classification head is replayed for the encoders only (a "
                                "decoder's inference replays its causal LM head)");
  // LoRA with a head: peft's task_type SEQ_CLS / TOKEN_CLS, whose classifier trains as a modules_to_save copy
  // (engine/lora.h task_modules_to_save). Quantised bases with a head are not modelled.
  if (cfg.quant.enabled())
    throw InputError("task", t, "with a quantised base (QLoRA) is not modelled (LoRA with a full-precision base is)");
  if (!task_modelled(spec.transformer.model_type, cfg.task)) {
    std::string have;
    for (const auto& e : kTasks)
      if (e.task == cfg.task) have += (have.empty() ? "" : ", ") + std::string(e.type);
    throw InputError("task", t,
                     "is not modelled for model_type " + spec.transformer.model_type +
                         (have.empty() ? std::string(" (no family yet)") : " (modelled for: " + have + ")"));
  }
}

namespace {
// GraphBuilder::reserve's hint for a transformer: 64 ops and 80 tensors per layer, 64 / 80 more outside the
// layers. Dense decoder layers build 46-48 ops and about 1.26 tensors per op (llama-2-70b: 3,706 ops, 4,671
// tensors), t5's 61-66; MoE layers build more and grow the tables past the hint. Clamped, so that an absurd
// layer count (checked later, by kMaxGraphOps) reserves nothing absurd.
void reserve_for_layers(GraphBuilder& b, const TransformerSpec& s) {
  const int64_t layers = std::clamp<int64_t>(s.num_layers, 0, 1024) + std::clamp<int64_t>(s.num_decoder_layers, 0, 1024);
  b.reserve(static_cast<size_t>(64 * (layers + 1)), static_cast<size_t>(80 * (layers + 1)));
}
}  // namespace

Graph build_inference_graph(const ModelSpec& spec, const RunConfig& cfg, const InferencePass& pass) {
  if (cfg.mode != Mode::inference) throw InputError("mode", "training", "build_inference_graph needs mode inference");
  const bool forward_only = forward_only_inference(spec);
  if (spec.kind == ModelSpec::Kind::graph ||
      (spec.transformer.family == TransformerSpec::Family::bert && !forward_only))
    throw InputError("model", spec.name,
                     "inference replay covers causal LMs, encoder-decoders, the encoders (bert-like) and vision models");
  check_task(spec, cfg);
  GraphBuilder b(cfg);
  b.set_pass(pass);
  if (spec.kind == ModelSpec::Kind::vision) {
    build_vision(b, spec.vision);
    return b.finish();
  }
  reserve_for_layers(b, spec.transformer);
  transformer_builder(spec.transformer)(b, spec.transformer);
  return b.finish();
}

Graph build_graph(const ModelSpec& spec, const RunConfig& cfg) {
  if (spec.kind == ModelSpec::Kind::graph && spec.graph &&  // a native graph's lora / quantization blocks
      ((spec.graph->lora && !cfg.lora.enabled()) || (spec.graph->quantization && !cfg.quant.enabled()))) {
    RunConfig c = cfg;
    if (spec.graph->lora && !cfg.lora.enabled()) c.lora = *spec.graph->lora;
    if (spec.graph->quantization && !cfg.quant.enabled()) c.quant = *spec.graph->quantization;
    return build_graph(spec, c);
  }
  check_task(spec, cfg);
  GraphBuilder b(cfg);
  switch (spec.kind) {
    case ModelSpec::Kind::transformer:
      reserve_for_layers(b, spec.transformer);
      transformer_builder(spec.transformer)(b, spec.transformer);
      break;
    case ModelSpec::Kind::vision:
      build_vision(b, spec.vision);
      break;
    case ModelSpec::Kind::graph:
      if (!spec.graph) throw InputError("model", spec.name, "a native-graph model without its graph");
      build_native(b, *spec.graph);
      break;
  }
  return b.finish();
}

}  // namespace memplan
