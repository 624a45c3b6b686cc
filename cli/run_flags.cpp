#include "cli/run_flags.h"

#include <sstream>

#include <CLI/CLI.hpp>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "engine/limits.h"
#include "models/dist_config.h"
#include "models/lora_config.h"
#include "models/json_input.h"
#include "models/load_model.h"

namespace memplan::cli {

namespace {
// "A,B,C": exactly `n` comma-separated integers of at least `min_value` (an image grid, a tile split).
std::vector<int64_t> parse_int_tuple(const std::string& s, const char* flag, size_t n, int64_t min_value) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  const std::string want = "expects " + std::to_string(n) + " comma-separated integers of at least " +
                           std::to_string(min_value);
  while (std::getline(ss, item, ',')) {
    size_t pos = 0;
    long long v = -1;
    try { v = std::stoll(item, &pos); } catch (...) { pos = 0; }
    if (item.empty() || pos != item.size() || v < min_value || v > kMaxDim) throw InputError(flag, s, want);
    out.push_back(v);
  }
  if (out.size() != n) throw InputError(flag, s, want);
  return out;
}

std::vector<int64_t> parse_index_list(const std::string& s, const char* flag) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t pos = 0;
    long long v = -1;
    try { v = std::stoll(item, &pos); } catch (...) { pos = 0; }
    if (pos != item.size() || v < 0) throw InputError(flag, item, "expects comma-separated non-negative layer indices");
    out.push_back(v);
  }
  return out;
}
}  // namespace

const char* const kModelHelp =
    "zoo name (`memplan models`), its Hugging Face id (Qwen/Qwen2.5-7B), a config.json / native model JSON file, "
    "a directory holding a config.json, or - to read the JSON from stdin";

std::string read_all(std::istream& in, const std::string& field) {
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxInputFileBytes)
      throw InputError(field, "stdin", "is larger than " + std::to_string(kMaxInputFileBytes >> 20) + " MiB");
  }
  return text;
}

ModelSpec load_model_for(const std::string& model, std::istream& in) {
  if (model == "-") return load_model_text(read_all(in, "model"), "stdin");
  return load_model(model);
}

ModelSpec load_model_for(const RunFlags& f, std::istream& in) {
  ModelSpec m = load_model_for(f.model, in);
  // --pad-token-id: what a fine-tuning script sets on a decoder config that has none (model.config.pad_token_id =
  // tokenizer.pad_token_id) before a sequence head can pool at batch > 1. Only its presence changes the replay.
  if (f.pad_token_id != kPadTokenIdUnset) {
    if (m.kind != ModelSpec::Kind::transformer)
      throw InputError("--pad-token-id", std::to_string(f.pad_token_id), "applies to Hugging Face models only");
    if (f.pad_token_id < 0 || f.pad_token_id >= m.transformer.vocab_size)
      throw InputError("--pad-token-id", std::to_string(f.pad_token_id),
                       "must be in [0, vocab_size " + std::to_string(m.transformer.vocab_size) + ")");
    m.transformer.has_pad_token_id = true;
  }
  return m;
}

void add_run_flags(CLI::App& cmd, RunFlags& f) {
  cmd.add_option("--model", f.model, kModelHelp);
  cmd.add_option("--batch-size", f.batch_size, "micro-batch size");
  cmd.add_option("--seq-len", f.seq_len, "sequence length (language models; default 2048, BERT 512, Whisper its 3000 log-mel frames)");
  cmd.add_option("--target-len", f.target_len, "encoder-decoders (T5): label length fed to the decoder (default: seq-len; Whisper: its max_target_positions)");
  cmd.add_option("--image-size", f.image_size, "image size (vision models)");
  cmd.add_option("--audio-samples", f.audio_samples,
                 "waveform samples per example (wav2vec2 / hubert / wavlm, 16000 a second; default 16000)");
  cmd.add_option("--images-per-sample", f.images_per_sample,
                 "vision-language models: images in every sample (training, and the prompt in inference; 0: text only)");
  cmd.add_option("--image-grid", f.image_grid,
                 "qwen2_vl / qwen2_5_vl / qwen3_vl(_moe), siglip2: each image's patches T,H,W (e.g. 1,32,48: a 448 x 672 "
                 "image at 14-pixel patches)");
  cmd.add_option("--image-splits", f.image_splits,
                 "idefics3 / smolvlm: each image's tiles ROWS,COLS besides the global image (0,0: the global image alone)");
  cmd.add_option("--image-hw", f.image_hw,
                 "llava_next, llava_onevision: every image's original size H,W in pixels, from which anyres picks its tiles (default: "
                 "the vision config's image_size square)");
  cmd.add_option("--image-tiles", f.image_tiles,
                 "internvl: every image's tiles, as the processor's crop_to_patches cuts it (the grid's crops plus the "
                 "thumbnail; default 1: the image alone)");
  cmd.add_option("--audio-clips", f.audio_clips,
                 "qwen2_audio: 30 s audio clips in every training sample, max_source_positions / 2 audio tokens each "
                 "(0: text only)");
  cmd.add_flag("--freeze-feature-encoder", f.freeze_feature_encoder,
               "speech encoders: freeze_feature_encoder() (the conv feature encoder frozen) before training");
  cmd.add_option("--precision", f.precision, "fp32 | amp_bf16 | amp_fp16 | bf16 | fp16");
  cmd.add_option("--optimizer", f.optimizer, "sgd | sgd_momentum | adam | adamw | adafactor | adam8bit");
  cmd.add_option("--optimizer-impl", f.optimizer_impl, "foreach | fused | forloop");
  cmd.add_option("--attn", f.attn,
                 "sdpa | eager (default: sdpa where the model's transformers class supports it, else eager)");
  cmd.add_option("--task", f.task,
                 "lm (the family's causal / masked / seq2seq LM head; default) | seq_cls (ForSequenceClassification) "
                 "| token_cls (ForTokenClassification) | feature (AutoModel, the bare encoder; encoder inference only) "
                 "| semantic_seg (ForSemanticSegmentation: segformer)");
  cmd.add_option("--num-labels", f.num_labels, "seq_cls / token_cls: the classifier's labels (default 2)");
  cmd.add_option("--pad-token-id", f.pad_token_id,
                 "sets config.pad_token_id (decoders without one: seq_cls pools the last non-pad token; transformers "
                 "refuses batch > 1 without it)");
  cmd.add_option("--grad-checkpointing", f.grad_checkpointing, "off | all | comma-separated layer indices");
  cmd.add_option("--frozen-layers", f.frozen_layers, "comma-separated layer indices with requires_grad=False");
  cmd.add_flag("--freeze-embeddings", f.freeze_embeddings, "freeze input embeddings (and a tied head)");
  cmd.add_flag("--no-dropout", f.no_dropout, "dropout modules inactive");
  cmd.add_option("--grad-accum-steps", f.grad_accum_steps, "micro-batches per optimizer step");
  cmd.add_option("--gpu", f.gpu, "GPU from data/gpus.json (e.g. h200, rtx-4090, a100-80gb)");
  cmd.add_option("--gpu-memory-gib", f.gpu_memory_gib, "usable GPU memory in GiB (overrides --gpu's capacity)");
  cmd.add_option("--calibration", f.calibration, "calibration profile (memplan calibrate) for non-PyTorch memory");
  cmd.add_flag("--expandable-segments", f.expandable_segments, "PYTORCH_ALLOC_CONF=expandable_segments:True");
  cmd.add_flag("--json", f.json, "machine-readable output: exactly one JSON document");
  cmd.add_flag("--quiet", f.quiet, "no progress lines or hints, for scripts (the answer is unchanged)");
  cmd.add_flag("--per-layer", f.per_layer, "per-layer table: parameters, saved activations, transient peak");
  cmd.add_option("--timeline", f.timeline, "write the memory timeline of the run as an SVG file");
  cmd.add_option("--mode", f.mode, "training | inference (decoders: prefill of batch x seq, KV cache, generate; encoders, image "
                 "classifiers and torchvision models: one forward of the batch)");
  cmd.add_option("--generate-tokens", f.generate_tokens, "inference: tokens generated after the prefill (causal LMs, encoder-decoders)");
  cmd.add_option("--logits-to-keep", f.logits_to_keep, "inference: positions whose logits are computed (0: all)");
  cmd.add_option("--load", f.load,
                 "how the weights reach the GPU: to_device (built on the CPU, then model.to(\"cuda\"); default) or "
                 "on_device (built under torch.device(\"cuda\"))");
  cmd.add_flag("--prefill-first", f.prefill_first,
               "inference: one prefill forward, its cache freed, before generate() (default: generate() first)");
  cmd.add_option("--lora-r", f.lora_r, "peft LoRA rank (0: full fine-tuning)");
  cmd.add_option("--lora-alpha", f.lora_alpha, "LoRA alpha (default 2 x rank)");
  cmd.add_option("--lora-dropout", f.lora_dropout, "LoRA dropout on the adapter input (default 0.05)");
  cmd.add_option("--lora-targets", f.lora_targets, "comma list of module names (q_proj,v_proj) or all-linear");
  cmd.add_option("--lora-modules-to-save", f.lora_modules_to_save, "comma list of modules trained in full (lm_head)");
  cmd.add_option("--quantize-base", f.quantize_base, "bitsandbytes base weights: nf4 | fp4 | int8 (QLoRA)");
  cmd.add_flag("--double-quant", f.double_quant, "bnb_4bit_use_double_quant (nf4 / fp4)");
  cmd.add_option("--quant-compute-dtype", f.quant_compute_dtype, "bnb_4bit_compute_dtype: bf16 | fp16");
}

void add_dist_flags(CLI::App& cmd, RunFlags& f, const std::string& gpus_help) {
  cmd.add_option("--gpus", f.gpus, gpus_help);
  cmd.add_option("--strategy", f.strategy, "data parallel: ddp | fsdp2 | zero1 | zero2 | zero3 (none: tensor parallel only)");
  cmd.add_option("--tp", f.tp, "tensor-parallel degree (DTensor ColwiseParallel / RowwiseParallel)");
  cmd.add_option("--pp", f.pp, "pipeline-parallel degree (not replayed yet: refused above 1)");
  cmd.add_option("--cp", f.cp, "context-parallel degree (not replayed yet: refused above 1)");
  cmd.add_flag("--sequence-parallel", f.sequence_parallel, "with --tp: norms and dropout on sequence shards");
  cmd.add_option("--rank", f.rank, "the rank whose ledger is replayed (default 0)");
  cmd.add_option("--reshard-after-forward", f.reshard_after_forward, "FSDP2: true (default) | false | K (a group of K ranks)");
  cmd.add_option("--mp-param-dtype", f.mp_param_dtype, "FSDP2 MixedPrecisionPolicy.param_dtype: bf16 | fp16 | fp32");
  cmd.add_option("--mp-reduce-dtype", f.mp_reduce_dtype, "FSDP2 MixedPrecisionPolicy.reduce_dtype: bf16 | fp16 | fp32");
  cmd.add_option("--bucket-cap-mb", f.bucket_cap_mb, "DDP gradient bucket size in MB (default 25)");
  cmd.add_flag("--gradient-as-bucket-view", f.gradient_as_bucket_view, "DDP: .grad views into the buckets");
  cmd.add_flag("--static-graph", f.static_graph, "DDP static_graph=True");
  cmd.add_option("--offload", f.offload, "CPU offload: optimizer (zero1-3) | params (zero3; fsdp2 CPUOffloadPolicy)");
}

namespace {
// The distributed flags into DistributedConfig, checked with the model and the rest of the run
// (models/dist_config.h finish_distributed names the flags).
DistributedConfig dist_config_from(const RunFlags& f, const ModelSpec& m, const RunConfig& run) {
  DistributedConfig d;
  const bool model_parallel = f.tp != 1 || f.pp != 1 || f.cp != 1;
  if (f.gpus < 0 || f.gpus > kMaxPlanGpus)
    throw InputError("--gpus", std::to_string(f.gpus), "must be in [1, " + std::to_string(kMaxPlanGpus) + "]");
  for (const auto& [flag, v] : {std::pair<const char*, int64_t>{"--tp", f.tp}, {"--pp", f.pp}, {"--cp", f.cp}})
    if (v <= 0 || v > kMaxPlanGpus)
      throw InputError(flag, std::to_string(v), "must be in [1, " + std::to_string(kMaxPlanGpus) + "]");
  if (!f.strategy.empty() && !parse_dist_strategy(f.strategy, d.strategy))
    throw InputError("--strategy", f.strategy, "must be one of ddp, fsdp2, zero1, zero2, zero3 (or none)");
  if (f.strategy.empty() && !model_parallel) {
    // No distributed run. `fit --gpus N` counts GPUs for its remedies; elsewhere --gpus needs a strategy, and
    // a rank option needs a distributed run.
    if (f.gpus > 1 && !f.gpus_for_remedies)
      throw InputError("--gpus", std::to_string(f.gpus), "needs --strategy (ddp, fsdp2, zero1, zero2, zero3) or --tp");
    const std::pair<const char*, bool> given[] = {
        {"--sequence-parallel", f.sequence_parallel}, {"--rank", f.rank != 0},
        {"--reshard-after-forward", !f.reshard_after_forward.empty()}, {"--mp-param-dtype", !f.mp_param_dtype.empty()},
        {"--mp-reduce-dtype", !f.mp_reduce_dtype.empty()}, {"--bucket-cap-mb", f.bucket_cap_mb != 0},
        {"--gradient-as-bucket-view", f.gradient_as_bucket_view}, {"--static-graph", f.static_graph},
        {"--offload", !f.offload.empty()}};
    for (const auto& [flag, set] : given)
      if (set) throw InputError(flag, "set", "needs a distributed run: --gpus N --strategy S (or --tp T)");
    return d;
  }
  if (f.gpus == 0 && d.strategy != DistStrategy::none && !model_parallel)
    throw InputError("--strategy", f.strategy, "needs --gpus N, the world size");
  // --tp / --pp / --cp alone: world = tp x pp x cp (no data parallel).
  d.world_size = f.gpus > 0 ? f.gpus : f.tp * f.pp * f.cp;
  d.tp = f.tp;
  d.pp = f.pp;
  d.cp = f.cp;
  d.sequence_parallel = f.sequence_parallel;
  d.rank = f.rank;
  if (!f.reshard_after_forward.empty() && !parse_reshard_text(f.reshard_after_forward, d.reshard_after_forward))
    throw InputError("--reshard-after-forward", f.reshard_after_forward, "must be true, false or a positive group size K");
  if (!f.mp_param_dtype.empty() && !parse_mp_dtype(f.mp_param_dtype, d.param_dtype))
    throw InputError("--mp-param-dtype", f.mp_param_dtype, "must be bf16, fp16 or fp32");
  if (!f.mp_reduce_dtype.empty() && !parse_mp_dtype(f.mp_reduce_dtype, d.reduce_dtype))
    throw InputError("--mp-reduce-dtype", f.mp_reduce_dtype, "must be bf16, fp16 or fp32");
  if (f.bucket_cap_mb != 0) {
    if (f.bucket_cap_mb < 0) throw InputError("--bucket-cap-mb", std::to_string(f.bucket_cap_mb), "must be a positive number of MB");
    d.bucket_cap_mb = f.bucket_cap_mb;
  }
  d.gradient_as_bucket_view = f.gradient_as_bucket_view;
  d.static_graph = f.static_graph;
  if (!f.offload.empty() && !parse_dist_offload(f.offload, d.offload))
    throw InputError("--offload", f.offload, "must be optimizer or params (or none)");
  finish_distributed(d, m, run, kDistFlagFields);
  return d;
}
// The default sequence: 2048 tokens (the bert family 512), or the position table's limit where it is lower.
int64_t default_seq(const TransformerSpec& t) {
  const int64_t dflt = t.family == TransformerSpec::Family::bert ? 512 : 2048;
  const int64_t limit = position_limit(t);
  return limit > 0 ? std::min(dflt, limit) : dflt;
}
}  // namespace

RunConfig run_config_from(const RunFlags& f, const ModelSpec& m) {
  RunConfig c;
  c.batch_size = f.batch_size;
  if (m.kind == ModelSpec::Kind::transformer && hf_image_tokens(m.transformer) > 0) {
    // An image model (vit): the config's image size fixes the encoder's sequence ((image_size / patch_size)^2 + 1).
    // ConvNeXt, Swin and ResNet have no token sequence: their input is the image itself.
    const std::string& mt = m.transformer.model_type;
    const bool hierarchical = mt == "convnext" || mt == "convnextv2" || mt == "swin" || mt == "swinv2" || mt == "resnet";
    if (f.seq_len != 0 && hierarchical)
      throw InputError("--seq-len", std::to_string(f.seq_len),
                       "does not apply to " + mt + ": its input is the config's image_size (" +
                           std::to_string(m.transformer.image_size) + " x " + std::to_string(m.transformer.image_size) +
                           " pixels), set in the config");
    if (f.seq_len != 0)
      throw InputError("--seq-len", std::to_string(f.seq_len),
                       "does not apply to " + mt + ": its sequence is the config's (image_size / "
                       "patch_size)^2 + " + std::to_string(1 + m.transformer.image_extra_tokens) + " = " +
                           std::to_string(hf_image_tokens(m.transformer)) + " tokens");
    if (f.target_len != 0)
      throw InputError("--target-len", std::to_string(f.target_len), "does not apply to " + m.transformer.model_type);
    c.seq_len = hf_image_tokens(m.transformer);
  } else if (m.kind == ModelSpec::Kind::transformer && !m.transformer.speech_conv_kernel.empty()) {
    // A speech encoder (wav2vec2 / hubert / wavlm): the waveform's length makes the frames.
    if (f.seq_len != 0)
      throw InputError("--seq-len", std::to_string(f.seq_len),
                       "does not apply to " + m.transformer.model_type + ": give --audio-samples (the conv feature "
                       "encoder makes the frames)");
    c.audio_samples = f.audio_samples != 0 ? f.audio_samples : 16000;
    c.seq_len = speech_frames(m.transformer, c.audio_samples);
    if (c.seq_len <= 0)
      throw InputError("--audio-samples", std::to_string(c.audio_samples),
                       "is too short for the model's conv feature encoder (no frame left)");
  } else if (m.kind == ModelSpec::Kind::transformer)
    // Whisper's encoder takes exactly 2 x max_source_positions log-mel frames (30 s of audio; 3000).
    // 2048 tokens (encoders 512), or fewer where the model's position table holds fewer (GPT-2 1024, BART 1024,
    // Marian 512, CLIP's text tower 77): a default the model cannot take would be an error nobody asked for.
    c.seq_len = f.seq_len != 0                          ? f.seq_len
                : m.transformer.model_type == "whisper" ? 2 * m.transformer.max_source_positions
                : default_seq(m.transformer);
  else
    c.seq_len = f.seq_len;
  c.image_size = f.image_size;
  if (m.kind == ModelSpec::Kind::transformer && hf_image_tokens(m.transformer) > 0) {
    // ViTEmbeddings raises on any other image size (interpolate_pos_encoding is off); 224 is also the flag's default.
    if (f.image_size != 224 && f.image_size != m.transformer.image_size)
      throw InputError("--image-size", std::to_string(f.image_size),
                       "differs from the config's image_size (" + std::to_string(m.transformer.image_size) +
                           "), which the model requires");
    c.image_size = m.transformer.image_size;
  }
  c.target_len = f.target_len;
  // Whisper's labels: at most its decoder's max_target_positions (448); left out, that cap (the seq_len default,
  // 3000 log-mel frames, is no label length).
  if (f.target_len == 0 && m.kind == ModelSpec::Kind::transformer && m.transformer.model_type == "whisper")
    c.target_len = m.transformer.max_position_embeddings;
  if (!parse_precision(f.precision, c.precision))
    throw InputError("--precision", f.precision, "must be one of fp32, amp_bf16, amp_fp16, bf16, fp16");
  if (!parse_optimizer(f.optimizer, c.optimizer))
    throw InputError("--optimizer", f.optimizer, "must be one of sgd, sgd_momentum, adam, adamw, adafactor, adam8bit");
  if (!parse_optimizer_impl(f.optimizer_impl, c.optimizer_impl))
    throw InputError("--optimizer-impl", f.optimizer_impl, "must be one of foreach, fused, forloop");
  if (f.attn.empty()) c.attn = default_attn(m);
  else if (!parse_attn(f.attn, c.attn)) throw InputError("--attn", f.attn, "must be sdpa or eager");
  if (!parse_task(f.task, c.task)) throw InputError("--task", f.task, "must be lm, seq_cls, token_cls, feature or semantic_seg");
  if (f.num_labels <= 0 || f.num_labels > kMaxDim)
    throw InputError("--num-labels", std::to_string(f.num_labels), "must be in [1, " + std::to_string(kMaxDim) + "]");
  c.num_labels = f.num_labels;
  if (f.grad_checkpointing == "all" || f.grad_checkpointing == "on" || f.grad_checkpointing == "true") {
    c.grad_checkpointing = true;
  } else if (f.grad_checkpointing != "off" && f.grad_checkpointing != "false" && !f.grad_checkpointing.empty()) {
    c.checkpoint_layers = parse_index_list(f.grad_checkpointing, "--grad-checkpointing");
    c.grad_checkpointing = !c.checkpoint_layers.empty();
  }
  c.frozen_layers = parse_index_list(f.frozen_layers, "--frozen-layers");
  c.freeze_embeddings = f.freeze_embeddings;
  if (f.audio_samples != 0 && (m.kind != ModelSpec::Kind::transformer || m.transformer.speech_conv_kernel.empty()))
    throw InputError("--audio-samples", std::to_string(f.audio_samples), "applies to the speech encoders only");
  if (f.freeze_feature_encoder && (m.kind != ModelSpec::Kind::transformer || m.transformer.speech_conv_kernel.empty()))
    throw InputError("--freeze-feature-encoder", "true", "applies to the speech encoders only (wav2vec2, hubert, wavlm)");
  c.freeze_feature_encoder = f.freeze_feature_encoder;
  // Images: flags of the vision-language models only (a flag no builder reads would be a silent default); which
  // of them a model reads its builder checks (image_grid for the Qwen-VL types and SigLIP 2, image_splits for
  // Idefics3 / SmolVLM), as it checks the case keys.
  const bool images = m.kind == ModelSpec::Kind::transformer && takes_images(m.transformer);
  if (f.images_per_sample < 0 || f.images_per_sample > kMaxBatch)
    throw InputError("--images-per-sample", std::to_string(f.images_per_sample),
                     "must be in [0, " + std::to_string(kMaxBatch) + "]");
  const std::pair<const char*, bool> image_flags[] = {{"--images-per-sample", f.images_per_sample != 0},
                                                      {"--image-grid", !f.image_grid.empty()},
                                                      {"--image-splits", !f.image_splits.empty()},
                                                      {"--image-hw", !f.image_hw.empty()},
                                                      {"--image-tiles", f.image_tiles != 0}};
  for (const auto& [flag, given] : image_flags)
    if (given && !images)
      throw InputError(flag, "set", std::string("applies to models that take images (") + kImageModelTypes + ")");
  c.images_per_sample = f.images_per_sample;
  if (!f.image_grid.empty()) c.image_grid = parse_int_tuple(f.image_grid, "--image-grid", 3, 1);
  if (!f.image_splits.empty()) c.image_splits = parse_int_tuple(f.image_splits, "--image-splits", 2, 0);
  if (!f.image_hw.empty()) c.image_hw = parse_int_tuple(f.image_hw, "--image-hw", 2, 1);
  if (f.image_tiles != 0) {
    if (f.image_tiles < 0 || f.image_tiles > kMaxBatch)
      throw InputError("--image-tiles", std::to_string(f.image_tiles),
                       "must be in [1, " + std::to_string(kMaxBatch) + "]");
    if (m.transformer.model_type != "internvl")
      throw InputError("--image-tiles", std::to_string(f.image_tiles),
                       "applies to internvl only, not " + m.transformer.model_type);
    c.image_tiles = f.image_tiles;
  }
  if (f.audio_clips != 0) {
    if (f.audio_clips < 0 || f.audio_clips > kMaxBatch)
      throw InputError("--audio-clips", std::to_string(f.audio_clips), "must be in [0, " + std::to_string(kMaxBatch) + "]");
    if (m.kind != ModelSpec::Kind::transformer || m.transformer.audio_layers == 0)
      throw InputError("--audio-clips", std::to_string(f.audio_clips), "applies to qwen2_audio only");
    c.audio_clips = f.audio_clips;
  }
  c.dropout = !f.no_dropout;
  c.grad_accum_steps = f.grad_accum_steps;
  if (f.mode == "inference") c.mode = Mode::inference;
  else if (f.mode != "training") throw InputError("--mode", f.mode, "must be training or inference");
  if (f.generate_tokens < 0)
    throw InputError("--generate-tokens", std::to_string(f.generate_tokens), "must be non-negative");
  if (f.logits_to_keep < 0) throw InputError("--logits-to-keep", std::to_string(f.logits_to_keep), "must be non-negative");
  c.generate_tokens = f.generate_tokens;
  if (f.lora_r < 0 || f.lora_r > 65536) throw InputError("--lora-r", std::to_string(f.lora_r), "must be in [0, 65536]");
  if (f.lora_r > 0) {
    c.lora.r = f.lora_r;
    if (f.lora_alpha < 0) throw InputError("--lora-alpha", std::to_string(f.lora_alpha), "must be positive");
    c.lora.alpha = f.lora_alpha > 0 ? f.lora_alpha : 2.0 * static_cast<double>(f.lora_r);
    if (!(f.lora_dropout >= 0 && f.lora_dropout < 1))
      throw InputError("--lora-dropout", std::to_string(f.lora_dropout), "must be a probability in [0, 1)");
    c.lora.dropout = f.lora_dropout;
    set_lora_targets(c.lora, f.lora_targets, "--lora-targets");
    if (!f.lora_modules_to_save.empty()) {
      LoraConfig tmp;
      set_lora_targets(tmp, f.lora_modules_to_save, "--lora-modules-to-save");
      c.lora.modules_to_save = tmp.target_modules;
    }
  }
  if (!f.quantize_base.empty()) {
    if (!parse_quant_base(f.quantize_base, c.quant.base) || c.quant.base == QuantBase::none)
      throw InputError("--quantize-base", f.quantize_base, "must be nf4, fp4 or int8");
    if (f.quant_compute_dtype != "bf16" && f.quant_compute_dtype != "fp16")
      throw InputError("--quant-compute-dtype", f.quant_compute_dtype, "must be bf16 or fp16");
    c.quant.compute_bf16 = f.quant_compute_dtype == "bf16";
    c.quant.double_quant = f.double_quant && c.quant.base != QuantBase::int8;
  } else if (f.double_quant) {
    throw InputError("--double-quant", "set", "needs --quantize-base nf4 or fp4");
  }
  c.logits_to_keep = f.logits_to_keep;
  if (!parse_weights_load(f.load, c.weights_load))
    throw InputError("--load", f.load, "must be to_device or on_device");
  c.generate_first = !f.prefill_first;
  if (f.batch_size <= 0) throw InputError("--batch-size", std::to_string(f.batch_size), "must be a positive integer");
  if (f.grad_accum_steps <= 0)
    throw InputError("--grad-accum-steps", std::to_string(f.grad_accum_steps), "must be a positive integer");
  if (f.seq_len < 0) throw InputError("--seq-len", std::to_string(f.seq_len), "must be a positive integer");
  if (f.target_len < 0) throw InputError("--target-len", std::to_string(f.target_len), "must be a positive integer");
  if (f.image_size <= 0) throw InputError("--image-size", std::to_string(f.image_size), "must be a positive integer");
  if (f.audio_samples < 0)
    throw InputError("--audio-samples", std::to_string(f.audio_samples), "must be a positive integer");
  // The engine's limits (engine/limits.h), reported under the flag's name.
  const std::pair<const char*, std::pair<int64_t, int64_t>> caps[] = {
      {"--batch-size", {f.batch_size, kMaxBatch}},
      {"--seq-len", {f.seq_len, kMaxSeqLen}},
      {"--target-len", {f.target_len, kMaxSeqLen}},
      {"--image-size", {f.image_size, kMaxImageSize}},
      {"--audio-samples", {f.audio_samples, kMaxSeqLen}},
      {"--grad-accum-steps", {f.grad_accum_steps, kMaxGradAccumSteps}}};
  for (const auto& [flag, v] : caps)
    if (v.first > v.second)
      throw InputError(flag, std::to_string(v.first), "exceeds the limit of " + std::to_string(v.second));
  // NaN fails both comparisons; the upper bound keeps GiB -> bytes inside int64.
  if (!(f.gpu_memory_gib >= 0 && f.gpu_memory_gib <= kMaxGpuMemoryGib))
    throw InputError("--gpu-memory-gib", std::to_string(f.gpu_memory_gib), "must be a number of GiB in [0, 1048576]");
  c.distributed = dist_config_from(f, m, c);
  return c;
}

}  // namespace memplan::cli
