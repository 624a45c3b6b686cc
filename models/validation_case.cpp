#include "models/validation_case.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/time/step_time.h"
#include "models/dist_config.h"
#include "models/json_input.h"
#include "models/lora_config.h"
#include "models/hf_config.h"
#include "models/torchvision.h"

namespace memplan {

namespace {

// Memory figures above 1e9 MiB (about 1 PB) are no GPU's; the cap keeps MiB -> byte conversions in int64.
constexpr double kMaxMib = 1e9;
constexpr double kMaxCapGib = kMaxMib / 1024;

// A JSON integer that fits int64 (nlohmann stores large ones as uint64, which get<int64_t> would wrap).
bool is_int64(const nlohmann::json& v) {
  return v.is_number_integer() &&
         !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
}

int64_t get_positive(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = j.at(key);
  if (!is_int64(v) || v.get<int64_t>() <= 0) throw InputError(where + key, dump_short(v), "must be a positive integer");
  return v.get<int64_t>();
}

std::string get_string(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw InputError(where + key, "missing", "required field");
  const auto& v = j.at(key);
  if (!v.is_string()) throw InputError(where + key, dump_short(v), "must be a string");
  return v.get<std::string>();
}

std::vector<int64_t> get_index_list(const nlohmann::json& j, const char* key, const std::string& where) {
  std::vector<int64_t> out;
  if (!j.contains(key)) return out;
  const auto& v = j.at(key);
  if (!v.is_array()) throw InputError(where + key, dump_short(v), "must be a list of layer indices");
  for (const auto& x : v) {
    if (!is_int64(x) || x.get<int64_t>() < 0)
      throw InputError(where + key, dump_short(x), "layer indices must be non-negative integers");
    out.push_back(x.get<int64_t>());
  }
  return out;
}

std::optional<double> opt_number(const nlohmann::json& m, const char* key) {
  if (!m.contains(key) || m.at(key).is_null()) return std::nullopt;
  const auto& v = m.at(key);
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= kMaxMib))
    throw InputError(std::string("measured.") + key, dump_short(v), "must be a number of MiB in [0, 1e9]");
  return v.get<double>();
}

Measured parse_measured(const nlohmann::json& m) {
  Measured out;
  if (!m.is_object()) throw InputError("measured", dump_short(m), "must be an object");
  if (m.contains("params") && is_int64(m.at("params"))) out.params = m.at("params").get<int64_t>();
  out.weights_mib = opt_number(m, "weights_mib");
  out.peak_allocated_mib = opt_number(m, "peak_allocated_mib");
  out.peak_reserved_mib = opt_number(m, "peak_reserved_mib");
  out.prefill_peak_mib = opt_number(m, "prefill_peak_mib");
  out.kv_cache_mib = opt_number(m, "kv_cache_mib");
  out.generate_peak_mib = opt_number(m, "generate_peak_mib");
  if (m.contains("oom") && m.at("oom").is_boolean()) out.oom = m.at("oom").get<bool>();
  if (m.contains("oom_message") && m.at("oom_message").is_string()) out.oom_message = m.at("oom_message").get<std::string>();
  if (m.contains("steps") && m.at("steps").is_array()) {
    for (const auto& s : m.at("steps")) {
      MeasuredStep st;
      if (!s.is_object()) throw InputError("measured.steps", dump_short(s), "each step must be an object");
      auto f = [&](const char* k, double& dst) {
        if (!s.contains(k) || !s.at(k).is_number()) return;
        const double v = s.at(k).get<double>();
        if (!(v >= 0 && v <= kMaxMib))
          throw InputError(std::string("measured.steps.") + k, dump_short(s.at(k)), "must be a number of MiB in [0, 1e9]");
        dst = v;
      };
      f("start_mib", st.start_mib); f("batch_mib", st.batch_mib); f("fwd_peak_mib", st.fwd_peak_mib);
      f("after_fwd_mib", st.after_fwd_mib); f("bwd_peak_mib", st.bwd_peak_mib); f("after_bwd_mib", st.after_bwd_mib);
      f("micro_rest_peak_mib", st.micro_rest_peak_mib); f("opt_peak_mib", st.opt_peak_mib); f("end_mib", st.end_mib);
      f("step_peak_mib", st.step_peak_mib);
      out.steps.push_back(st);
    }
  }
  if (m.contains("scaler_skipped_steps")) {
    const auto& v = m.at("scaler_skipped_steps");
    if (!v.is_array()) throw InputError("measured.scaler_skipped_steps", dump_short(v), "must be a list of step numbers");
    for (const auto& k : v) {
      if (!is_int64(k) || k.get<int64_t>() < 1 || k.get<int64_t>() > 1000)
        throw InputError("measured.scaler_skipped_steps", dump_short(k), "each must be a step number in [1, 1000]");
      out.scaler_skipped_steps.push_back(static_cast<int>(k.get<int64_t>()));
    }
  }
  return out;
}


// Every key a case may carry (CASE-FORMAT.md). Inputs change the prediction; outputs (measured, observed,
// predicted, error...) and `_`-prefixed notes are carried along unread. A key outside these lists is refused,
// as the native model format refuses one: a typo or a field of a newer format would otherwise be predicted as
// if it were absent.
constexpr std::string_view kCaseKeys[] = {
    "id", "model", "mode", "batch_size", "seq_len", "target_len", "image_size", "num_classes", "precision",
    "task", "num_labels",  // a classification head (RunConfig::task)
    "optimizer", "optimizer_impl", "grad_checkpointing", "grad_checkpointing_layers", "frozen_layers",
    "freeze_embeddings", "grad_accum_steps", "generate_tokens", "memory_cap_gib", "alloc_conf",
    "lora", "quantization",  // peft LoRA / bitsandbytes base (models/lora_config.h)
    "distributed",           // one rank of a multi-GPU step (models/dist_config.h)
    "load", "generate_first",  // how the run is driven (RunConfig::weights_load, generate_first)
    "image_grid", "images_per_sample", "audio_samples",  // images of a VLM, a waveform's length (RunConfig)
    "freeze_feature_encoder",  // speech encoders: freeze_feature_encoder() before training (RunConfig)
    "max_num_patches",                                   // SigLIP 2 NaFlex: patches per image after padding
    "image_splits",  // idefics3 / smolvlm: each image's [rows, cols] tiles (plus the global image)
    "image_hw",      // llava_next: every image's original [height, width] (anyres tiles)
    "image_tiles",   // internvl: every image's tiles (the processor's crop_to_patches count)
    "audio_clips",   // qwen2_audio: 30 s audio clips in every sample
    "gpu",           // the GPU a timed case ran on, when not the H200 (ValidationCase::timing_gpu)
    // outputs of the harness and of earlier predictions
    "measured", "observed", "predicted", "holdout", "tuned", "error", "error_traceback"};
constexpr std::string_view kHfModelKeys[] = {"source", "model_type", "config", "attn_implementation"};
constexpr std::string_view kVisionModelKeys[] = {"source", "name"};

template <size_t N>
bool listed(const std::string& key, const std::string_view (&keys)[N]) {
  for (std::string_view k : keys)
    if (key == k) return true;
  return false;
}

// The first offending key (in the document's key order) names the error; the others are listed after it.
void check_case_keys(const nlohmann::json& j) {
  std::vector<std::string> bad;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (!listed(k, kCaseKeys) && !(!k.empty() && k[0] == '_')) bad.push_back(k);
  }
  if (bad.empty()) return;
  std::string also;
  for (size_t i = 1; i < bad.size(); ++i) also += (i > 1 ? ", " : "; also refused: ") + bad[i];
  const std::string& k = bad[0];
  throw InputError(k, dump_short(j.at(k)),
                   "unknown key (a typo, or a field of a newer case format; data/validation/CASE-FORMAT.md lists "
                   "the keys)" + also);
}

template <size_t N>
void check_model_keys(const nlohmann::json& m, const std::string_view (&keys)[N], const std::string& source) {
  for (auto it = m.begin(); it != m.end(); ++it)
    if (!listed(it.key(), keys))
      throw InputError("model." + it.key(), dump_short(it.value()),
                       "unknown key for a " + source + " model (data/validation/CASE-FORMAT.md lists the keys)");
}

}  // namespace

ValidationCase parse_validation_case(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError("case", dump_short(j), "each line must be a JSON object");
  ValidationCase c;
  c.id = get_string(j, "id", "");
  const std::string w = c.id + ": ";
  try {
    check_case_keys(j);
    if (!j.contains("model") || !j.at("model").is_object()) throw InputError("model", "missing", "required object");
    const auto& m = j.at("model");
    const std::string source = get_string(m, "source", "model.");
    if (source == "huggingface") check_model_keys(m, kHfModelKeys, source);
    else if (source == "torchvision") check_model_keys(m, kVisionModelKeys, source);
    const std::string mode = j.contains("mode") ? get_string(j, "mode", "") : "training";
    if (mode == "training") c.run.mode = Mode::training;
    else if (mode == "inference") c.run.mode = Mode::inference;
    else throw InputError("mode", mode, "must be training or inference");
    c.run.batch_size = get_positive(j, "batch_size", "");
    if (source == "huggingface") {
      c.model.kind = ModelSpec::Kind::transformer;
      const std::string mt = get_string(m, "model_type", "model.");
      nlohmann::json cfg = m.contains("config") ? m.at("config") : nlohmann::json::object();
      if (!cfg.is_object()) throw InputError("model.config", dump_short(cfg), "must be an object");
      c.model.transformer = import_hf_config(cfg, mt);
      c.model.name = mt;
      if (m.contains("attn_implementation")) {
        const std::string a = get_string(m, "attn_implementation", "model.");
        if (!parse_attn(a, c.run.attn)) throw InputError("model.attn_implementation", a, "must be sdpa or eager");
      }
      if (const int64_t tokens = hf_image_tokens(c.model.transformer); tokens > 0) {
        // An image model (vit): the config fixes the image and so the encoder's sequence; neither is a case key.
        for (const char* k : {"seq_len", "target_len", "image_size"})
          if (j.contains(k) && !j.at(k).is_null())
            throw InputError(k, dump_short(j.at(k)),
                             "is not a key of a " + mt + " case: the image size and so the sequence ((image_size / "
                             "patch_size)^2 + 1 tokens) come from model.config");
        c.run.seq_len = tokens;
        c.run.image_size = c.model.transformer.image_size;
      } else if (!c.model.transformer.speech_conv_kernel.empty()) {
        // A speech encoder (wav2vec2 / hubert / wavlm): the waveform's length decides the frames (not a key).
        if (j.contains("seq_len") && !j.at("seq_len").is_null())
          throw InputError("seq_len", dump_short(j.at("seq_len")),
                           "is not a key of a " + mt + " case: audio_samples sets the waveform, the conv feature "
                           "encoder the frames");
        if (!j.contains("audio_samples") || j.at("audio_samples").is_null())
          throw InputError("audio_samples", "missing", "required for a " + mt + " case (samples per example)");
        c.run.audio_samples = get_positive(j, "audio_samples", "");
        c.run.seq_len = speech_frames(c.model.transformer, c.run.audio_samples);
        if (c.run.seq_len <= 0)
          throw InputError("audio_samples", std::to_string(c.run.audio_samples),
                           "is too short for the model's conv feature encoder (no frame left)");
      } else {
        c.run.seq_len = get_positive(j, "seq_len", "");
      }
      if (j.contains("target_len") && !j.at("target_len").is_null())
        c.run.target_len = get_positive(j, "target_len", "");
      if (j.contains("task") && !j.at("task").is_null()) {
        const std::string t = get_string(j, "task", "");
        if (!parse_task(t, c.run.task)) throw InputError("task", t, "must be lm, seq_cls, token_cls, feature or semantic_seg");
      }
      if (j.contains("num_labels") && !j.at("num_labels").is_null()) {
        c.run.num_labels = get_positive(j, "num_labels", "");
        // Both Segformer heads size their classifier from the config (its harness plugin refuses the key too).
        if (mt == "segformer")
          throw InputError("num_labels", dump_short(j.at("num_labels")),
                           "is not a key of a segformer case: the label count comes from model.config (num_labels / "
                           "id2label)");
      }
      if (j.contains("image_grid") && !j.at("image_grid").is_null()) {
        const auto& g = j.at("image_grid");
        if (!g.is_array() || g.size() != 3)
          throw InputError("image_grid", dump_short(g), "must be [t, h, w]: an image's patches in time, height, width");
        for (const auto& v : g) {
          if (!v.is_number_integer() || v.get<int64_t>() <= 0)
            throw InputError("image_grid", dump_short(g), "must hold three positive integers");
          c.run.image_grid.push_back(v.get<int64_t>());
        }
      }
      if (j.contains("images_per_sample") && !j.at("images_per_sample").is_null()) {
        const auto& v = j.at("images_per_sample");
        if (!v.is_number_integer() || v.get<int64_t>() < 0)
          throw InputError("images_per_sample", dump_short(v), "must be a non-negative integer");
        c.run.images_per_sample = v.get<int64_t>();
      }
      if (j.contains("audio_samples") && !j.at("audio_samples").is_null())
        c.run.audio_samples = get_positive(j, "audio_samples", "");
      if (j.contains("max_num_patches") && !j.at("max_num_patches").is_null())
        c.run.max_num_patches = get_positive(j, "max_num_patches", "");
      if (j.contains("image_splits") && !j.at("image_splits").is_null()) {
        const auto& g = j.at("image_splits");
        if (!g.is_array() || g.size() != 2)
          throw InputError("image_splits", dump_short(g), "must be [rows, cols]: each image's tiles ([0, 0]: none)");
        for (const auto& v : g) {
          if (!v.is_number_integer() || v.get<int64_t>() < 0)
            throw InputError("image_splits", dump_short(g), "must hold two non-negative integers");
          c.run.image_splits.push_back(v.get<int64_t>());
        }
      }
      if (j.contains("image_hw") && !j.at("image_hw").is_null()) {
        const auto& g = j.at("image_hw");
        if (!g.is_array() || g.size() != 2)
          throw InputError("image_hw", dump_short(g), "must be [height, width]: each image's original size in pixels");
        for (const auto& v : g) {
          if (!v.is_number_integer() || v.get<int64_t>() <= 0)
            throw InputError("image_hw", dump_short(g), "must hold two positive integers");
          c.run.image_hw.push_back(v.get<int64_t>());
        }
        if (mt != "llava_next" && mt != "llava_onevision")
          throw InputError("image_hw", dump_short(g), "applies to llava_next and llava_onevision only, not " + mt);
      }
      if (j.contains("image_tiles") && !j.at("image_tiles").is_null()) {
        const auto& v = j.at("image_tiles");
        if (!v.is_number_integer() || v.get<int64_t>() <= 0)
          throw InputError("image_tiles", dump_short(v), "must be a positive integer: each image's tiles");
        if (mt != "internvl")
          throw InputError("image_tiles", dump_short(v), "applies to internvl only, not " + mt);
        c.run.image_tiles = v.get<int64_t>();
      }
      if (j.contains("audio_clips") && !j.at("audio_clips").is_null()) {
        const auto& v = j.at("audio_clips");
        if (!v.is_number_integer() || v.get<int64_t>() < 0)
          throw InputError("audio_clips", dump_short(v), "must be a non-negative integer: 30 s clips in every sample");
        if (c.model.transformer.audio_layers == 0)
          throw InputError("audio_clips", dump_short(v), "applies to qwen2_audio only, not " + mt);
        c.run.audio_clips = v.get<int64_t>();
      }
      // Input keys of one kind of model, refused on any other (a key no builder reads would be a silent default):
      // images for the vision-language models and SigLIP 2's NaFlex grid, a waveform for the speech encoders.
      const TransformerSpec& t = c.model.transformer;
      const bool images = takes_images(t);
      for (const char* k : {"image_grid", "images_per_sample"})
        if (!images && j.contains(k) && !j.at(k).is_null())
          throw InputError(k, dump_short(j.at(k)),
                           std::string("applies to models that take images (") + kImageModelTypes + "), "
                           "not " + mt);
      if (t.id3_vision_layers == 0 && j.contains("image_splits") && !j.at("image_splits").is_null())
        throw InputError("image_splits", dump_short(j.at("image_splits")), "applies to idefics3 / smolvlm only, not " + mt);
      if (mt != "siglip2" && j.contains("max_num_patches") && !j.at("max_num_patches").is_null())
        throw InputError("max_num_patches", dump_short(j.at("max_num_patches")), "applies to siglip2 only, not " + mt);
      if (t.speech_conv_kernel.empty() && j.contains("audio_samples") && !j.at("audio_samples").is_null())
        throw InputError("audio_samples", dump_short(j.at("audio_samples")),
                         "applies to the speech encoders (wav2vec2, hubert, wavlm), not " + mt);
    } else if (source == "torchvision") {
      c.model.kind = ModelSpec::Kind::vision;
      const std::string name = get_string(m, "name", "model.");
      int64_t classes = j.contains("num_classes") ? get_positive(j, "num_classes", "") : 1000;
      c.model.vision = vision_spec_for(name, classes);
      c.model.name = name;
      if (j.contains("image_size")) c.run.image_size = get_positive(j, "image_size", "");
    } else {
      throw InputError("model.source", source, "must be huggingface or torchvision");
    }
    const std::string prec = get_string(j, "precision", "");
    if (!parse_precision(prec, c.run.precision))
      throw InputError("precision", prec, "must be one of fp32, amp_bf16, amp_fp16, bf16, fp16");
    if (c.run.mode == Mode::training) {
      const std::string opt = j.contains("optimizer") ? get_string(j, "optimizer", "") : "adamw";
      if (!parse_optimizer(opt, c.run.optimizer))
        throw InputError("optimizer", opt, "must be one of sgd, sgd_momentum, adam, adamw, adafactor, adam8bit");
      if (j.contains("optimizer_impl")) {
        const std::string impl = get_string(j, "optimizer_impl", "");
        if (!parse_optimizer_impl(impl, c.run.optimizer_impl))
          throw InputError("optimizer_impl", impl, "must be one of foreach, fused, forloop, default");
      }
      if (j.contains("grad_checkpointing")) {
        if (!j.at("grad_checkpointing").is_boolean())
          throw InputError("grad_checkpointing", dump_short(j.at("grad_checkpointing")), "must be true or false");
        c.run.grad_checkpointing = j.at("grad_checkpointing").get<bool>();
      }
      c.run.checkpoint_layers = get_index_list(j, "grad_checkpointing_layers", "");
      if (!c.run.checkpoint_layers.empty()) c.run.grad_checkpointing = true;
      c.run.frozen_layers = get_index_list(j, "frozen_layers", "");
      if (j.contains("freeze_feature_encoder") && !j.at("freeze_feature_encoder").is_null()) {
        if (!j.at("freeze_feature_encoder").is_boolean())
          throw InputError("freeze_feature_encoder", dump_short(j.at("freeze_feature_encoder")), "must be true or false");
        c.run.freeze_feature_encoder = j.at("freeze_feature_encoder").get<bool>();
        if (c.run.freeze_feature_encoder && c.model.transformer.speech_conv_kernel.empty())
          throw InputError("freeze_feature_encoder", "true",
                           "applies to the speech encoders only (wav2vec2, hubert, wavlm: their conv feature encoder)");
      }
      if (j.contains("freeze_embeddings")) {
        if (!j.at("freeze_embeddings").is_boolean())
          throw InputError("freeze_embeddings", dump_short(j.at("freeze_embeddings")), "must be true or false");
        c.run.freeze_embeddings = j.at("freeze_embeddings").get<bool>();
      }
      if (j.contains("grad_accum_steps")) c.run.grad_accum_steps = get_positive(j, "grad_accum_steps", "");
    } else if (j.contains("generate_tokens") && !j.at("generate_tokens").is_null()) {
      const auto& g = j.at("generate_tokens");
      if (!is_int64(g) || g.get<int64_t>() < 0)
        throw InputError("generate_tokens", dump_short(g), "must be a non-negative integer");
      c.run.generate_tokens = g.get<int64_t>();
    }
    if (j.contains("memory_cap_gib") && !j.at("memory_cap_gib").is_null()) {
      const auto& v = j.at("memory_cap_gib");
      if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= kMaxCapGib))
        throw InputError("memory_cap_gib", dump_short(v), "must be a positive number of GiB, at most 976562.5");
      c.memory_cap_gib = v.get<double>();
    }
    if (j.contains("alloc_conf") && !j.at("alloc_conf").is_null()) {
      const std::string conf = get_string(j, "alloc_conf", "");
      if (conf == "expandable_segments:True") c.expandable_segments = true;
      else if (!conf.empty() && conf != "expandable_segments:False")
        throw InputError("alloc_conf", conf, "only expandable_segments:True|False is modelled");
    }
    if (j.contains("load") && !j.at("load").is_null()) {
      const std::string load = get_string(j, "load", "");
      if (!parse_weights_load(load, c.run.weights_load))
        throw InputError("load", load, "must be on_device (built under torch.device(\"cuda\")) or to_device "
                         "(built on the CPU, then model.to(\"cuda\"))");
    }
    if (j.contains("generate_first") && !j.at("generate_first").is_null()) {
      if (!j.at("generate_first").is_boolean())
        throw InputError("generate_first", dump_short(j.at("generate_first")), "must be true or false");
      c.run.generate_first = j.at("generate_first").get<bool>();
      if (c.run.generate_first && c.run.mode != Mode::inference)
        throw InputError("generate_first", "true", "applies to inference cases only");
    }
    if (j.contains("lora") && !j.at("lora").is_null()) c.run.lora = parse_lora_json(j.at("lora"));
    if (j.contains("quantization") && !j.at("quantization").is_null()) c.run.quant = parse_quant_json(j.at("quantization"));
    // After the model and the run: its checks need the heads, the sequence length and the mode.
    if (j.contains("distributed") && !j.at("distributed").is_null()) {
      c.run.distributed = parse_distributed_json(j.at("distributed"));
      finish_distributed(c.run.distributed, c.model, c.run, kDistCaseFields);
    }
    if (j.contains("gpu") && !j.at("gpu").is_null()) {
      const std::string gpu = get_string(j, "gpu", "");
      if (timing::measured_gpu(gpu) == nullptr)
        throw InputError("gpu", gpu, "must be a GPU whose kernel rates are measured: h200-sxm-141gb or h100-sxm-80gb");
      c.timing_gpu = gpu;
    }
    if (j.contains("holdout") && j.at("holdout").is_boolean()) c.holdout = j.at("holdout").get<bool>();
    if (j.contains("measured") && !j.at("measured").is_null()) c.measured = parse_measured(j.at("measured"));
  } catch (const InputError& e) {
    throw InputError::prefixed(w, e);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(w + "case", dump_short(j).substr(0, 40), std::string("malformed field: ") + e.what());
  }
  return c;
}

EstimateOptions estimate_options_for(const ValidationCase& c) {
  EstimateOptions o;
  o.allocator.expandable_segments = c.expandable_segments;
  o.replay.steps = 3;  // the harness's protocol (data/validation/CASE-FORMAT.md)
  if (c.memory_cap_gib) {
    o.allocator.capacity_bytes = static_cast<int64_t>(*c.memory_cap_gib * static_cast<double>(kGiB));
    o.allocator.capacity_is_memory_fraction = true;
  }
  return o;
}

bool measured_steady_state(const Measured& m, int steps) {
  // Optimizer state exists in a forward or backward from the step after the first one GradScaler did not skip:
  // some step before the last must have stepped.
  for (int k = 1; k < steps; ++k)
    if (std::find(m.scaler_skipped_steps.begin(), m.scaler_skipped_steps.end(), k) == m.scaler_skipped_steps.end())
      return true;
  return steps <= 1;
}

bool case_short_of_steady_state(const ValidationCase& c) {
  return c.run.mode == Mode::training && c.measured &&
         !measured_steady_state(*c.measured, estimate_options_for(c).replay.steps);
}

}  // namespace memplan
