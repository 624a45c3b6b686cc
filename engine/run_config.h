// What the user runs: precision, optimizer, batch geometry and the knobs that change memory.
// Defaults are PyTorch's / transformers' defaults.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

enum class Precision : uint8_t { fp32, amp_bf16, amp_fp16, bf16, fp16 };
enum class OptimizerKind : uint8_t { sgd, sgd_momentum, adam, adamw, adafactor, adam8bit };
enum class OptimizerImpl : uint8_t { foreach, fused, forloop };
enum class AttnImpl : uint8_t { sdpa, eager };
enum class Mode : uint8_t { training, inference };
// The model's head (transformers' AutoModelFor... class): lm, the family's language-modelling head (CausalLM,
// MaskedLM, Seq2SeqLM); seq_cls, ...ForSequenceClassification (one label per sequence); token_cls,
// ...ForTokenClassification (one label per token); feature, AutoModel (the bare encoder with its pooler where the
// family has one, as sentence-embedding servers load it): inference only; semantic_seg,
// ...ForSemanticSegmentation (a label per pixel: segformer's all-MLP decode head, its logits upsampled to the
// image for the loss). For the image classifiers lm is their ...ForImageClassification. Which families model
// which task: engine/arch task_modelled.
enum class Task : uint8_t { lm, seq_cls, token_cls, feature, semantic_seg };

// LoRA as peft 0.21 builds it (peft/tuners/lora: config.py LoraConfig, layer.py Linear / update_layer). Off while
// r == 0. Every base parameter is frozen; each targeted nn.Linear / Conv1D gains lora_A [r, in] and lora_B [out, r]
// (fp32 when the base is 16-bit: peft's default autocast_adapter_dtype=True). See engine/lora.h.
struct LoraConfig {
  int64_t r = 0;                              // LoraConfig.r (peft default 8; 0 here: LoRA off)
  double alpha = 8;                           // lora_alpha (peft default 8); scaling = alpha / r
  double dropout = 0.0;                       // lora_dropout (peft default 0.0: nn.Identity)
  bool all_linear = false;                    // target_modules="all-linear": every Linear / Conv1D but the output head
  std::vector<std::string> target_modules;    // module names matched as peft does (key == t or key ends with "." + t)
  std::vector<std::string> modules_to_save;   // fully trained copies of these modules (ModulesToSaveWrapper)
  bool merged = false;                        // inference: merge_and_unload() (the base model alone)
  bool enabled() const { return r > 0; }
  bool operator==(const LoraConfig&) const = default;
};

// Base weights quantised by bitsandbytes (QLoRA: Linear4bit / Params4bit, or LLM.int8 Linear8bitLt) for the
// linears LoRA targets or all linears but the head (transformers' BitsAndBytesConfig skips lm_head). See
// engine/quantized_weights.h for the sizes, each derived from bitsandbytes' source.
enum class QuantBase : uint8_t { none, nf4, fp4, int8 };
struct QuantConfig {
  QuantBase base = QuantBase::none;
  bool double_quant = false;        // bnb_4bit_use_double_quant (default False)
  bool compute_bf16 = true;         // bnb_4bit_compute_dtype bf16 (true) or fp16 (false)
  int64_t blocksize = 64;           // bnb 4-bit quant blocksize (functional.quantize_4bit default 64)
  bool enabled() const { return base != QuantBase::none; }
  bool operator==(const QuantConfig&) const = default;
};

// One rank of a distributed training step (engine/dist/): which wrapper shards what across `world_size`
// ranks, and the framework knobs that change per-rank memory. Defaults are the frameworks' defaults; the default
// value (strategy none, world 1, tp 1) is the single-GPU step. Contract shared by the replay (engine/dist/), the
// CLI (--gpus --strategy ...) and the case format ("distributed": {...}, CASE-FORMAT.md).
enum class DistStrategy : uint8_t { none, ddp, fsdp2, zero1, zero2, zero3 };
enum class DistOffload : uint8_t { none, optimizer, params };
struct DistributedConfig {
  DistStrategy strategy = DistStrategy::none;
  int64_t world_size = 1;            // all ranks (dp x tp x pp x cp)
  int64_t tp = 1, pp = 1, cp = 1;    // tensor / pipeline / context parallel degrees; dp = world / (tp pp cp)
  bool sequence_parallel = false;    // with tp > 1: norms / dropout on sequence shards (torch SequenceParallel)
  int64_t rank = 0;                  // the rank whose ledger is replayed
  // FSDP2 fully_shard(reshard_after_forward=...): -1 true (default for non-root), 0 false, K > 1 reshard to a
  // group of K ranks after forward.
  int64_t reshard_after_forward = -1;
  std::string param_dtype;           // FSDP2 MixedPrecisionPolicy.param_dtype ("" = none: the params' dtype)
  std::string reduce_dtype;          // MixedPrecisionPolicy.reduce_dtype ("" = none: param_dtype)
  // DDP
  int64_t bucket_cap_mb = 25;
  bool gradient_as_bucket_view = false;
  bool static_graph = false;
  DistOffload offload = DistOffload::none;
  bool enabled() const { return strategy != DistStrategy::none || world_size > 1 || tp > 1; }
  int64_t dp() const { return world_size / (tp * pp * cp); }
  bool operator==(const DistributedConfig&) const = default;
};
std::string_view dist_strategy_name(DistStrategy s);
bool parse_dist_strategy(std::string_view s, DistStrategy& out);
std::string_view dist_offload_name(DistOffload o);
bool parse_dist_offload(std::string_view s, DistOffload& out);

// How the weights reach the GPU, which decides the caching allocator's first segments (data/validation/NOTES.md,
// "How the run is driven"): `on_device` builds the model under torch.device("cuda") (each parameter allocated at
// construction, plus construction's own tensors: transformers' default-dtype scalar, a tied head's own weight
// until tie_weights()); `to_device` builds it on the CPU and calls model.to("cuda") (Module._apply: each
// parameter and buffer allocated once, nothing else). The default is a user script's (and the validation harness's
// since 2026-12-01): to_device.
enum class WeightsLoad : uint8_t { on_device, to_device };
std::string_view weights_load_name(WeightsLoad w);
bool parse_weights_load(std::string_view s, WeightsLoad& out);

struct RunConfig {
  Mode mode = Mode::training;
  int64_t batch_size = 1;
  int64_t seq_len = 0;           // language models (encoder-decoders: the encoder's input length)
  int64_t target_len = 0;        // encoder-decoders (T5): labels' length, the decoder's input; 0 = seq_len
  int64_t image_size = 224;      // vision models
  // Vision-language models: each image's grid [t, h, w] in patches (before any spatial merge), the same for every
  // image, and how many images each sample carries; images_per_sample 0 (or an empty grid): text only.
  std::vector<int64_t> image_grid;
  int64_t images_per_sample = 0;
  int64_t audio_samples = 0;     // speech encoders (raw waveform in): samples per example (16000 a second)
  // qwen2_audio: 30 s clips in every sample (input_features of 2 x max_source_positions mel frames each, their
  // audio tokens in the sample's input_ids); 0: text only.
  int64_t audio_clips = 0;
  // SigLIP 2 (NaFlex patch input): patches per image after the processor's padding (image_grid [1, h, w] gives the
  // real h * w of them); 0 = h * w (no padding).
  int64_t max_num_patches = 0;
  // Idefics3 / SmolVLM: the image processor's split of every image into image_splits [rows, cols] tiles plus the
  // global image ([0, 0]: the global image alone); read with images_per_sample; empty when absent.
  std::vector<int64_t> image_splits;
  // LLaVA-NeXT: every image's original [height, width] in pixels (the processor's image_sizes), from which anyres
  // picks the tile grid and the unpadded feature count; empty: a square of the vision config's image_size.
  std::vector<int64_t> image_hw;
  // InternVL: the image processor's tiles per image (crop_to_patches: the grid's 448 x 448 crops plus the thumbnail
  // when there is more than one), each a tower input of image_seq_length tokens; 0 = absent (one tile).
  int64_t image_tiles = 0;
  Precision precision = Precision::fp32;
  OptimizerKind optimizer = OptimizerKind::adamw;
  OptimizerImpl optimizer_impl = OptimizerImpl::foreach;
  AttnImpl attn = AttnImpl::sdpa;
  Task task = Task::lm;
  int64_t num_labels = 2;                       // seq_cls / token_cls: config.num_labels (the classifier's width)
  int64_t grad_accum_steps = 1;
  bool grad_checkpointing = false;              // every decoder/encoder layer (HF, non-reentrant)
  std::vector<int64_t> checkpoint_layers;       // when non-empty: only these layers
  std::vector<int64_t> frozen_layers;           // layers whose params have requires_grad=False
  bool freeze_embeddings = false;
  // Speech encoders (wav2vec2 / hubert / wavlm): the model's freeze_feature_encoder() before training (the conv
  // feature encoder's parameters frozen and its input left without requires_grad).
  bool freeze_feature_encoder = false;
  bool dropout = true;                          // dropout modules active (model.train())
  int64_t generate_tokens = 0;                  // inference: greedy decode steps after prefill
  int64_t logits_to_keep = 1;                   // inference: 0 = all positions
  // inference: generate() runs on the fresh process first and the measured prefill after it (a serving script's
  // order, the default); false: the measured prefill, its cache freed, then generate() (the corpus before
  // 2026-12-01).
  bool generate_first = true;
  WeightsLoad weights_load = WeightsLoad::to_device;
  LoraConfig lora;                              // peft LoRA adapters (off while lora.r == 0)
  QuantConfig quant;                            // bitsandbytes-quantised base weights (QLoRA)
  DistributedConfig distributed;                // one rank of a multi-GPU step (off by default)
  // Device properties some kernels size their workspaces by (CUDA reductions): the H200 measured here.
  int32_t gpu_sm_count = 132;
  int32_t gpu_max_threads_per_sm = 2048;
  // cuDNN convolution workspaces (engine/conv_workspace.h); null: the table measured on the H200. Not owned.
  const class ConvWorkspaceModel* conv_workspace = nullptr;
};

std::string_view precision_name(Precision p);
std::string_view optimizer_name(OptimizerKind o);
std::string_view optimizer_impl_name(OptimizerImpl o);
std::string_view attn_name(AttnImpl a);
std::string_view task_name(Task t);

// Parsers return false on an unknown name; callers raise InputError naming their field.
bool parse_precision(std::string_view s, Precision& out);
bool parse_optimizer(std::string_view s, OptimizerKind& out);
bool parse_optimizer_impl(std::string_view s, OptimizerImpl& out);
bool parse_attn(std::string_view s, AttnImpl& out);
bool parse_task(std::string_view s, Task& out);

inline bool is_amp(Precision p) { return p == Precision::amp_bf16 || p == Precision::amp_fp16; }

}  // namespace memplan
