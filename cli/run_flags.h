// Flags shared by estimate-like commands: the model and every run knob, parsed into RunConfig.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "engine/arch/spec.h"
#include "engine/run_config.h"

// CLI11's App, declared only: the sources that add flags include <CLI/CLI.hpp> themselves. Readers of RunFlags (the
// tests among them) do not parse CLI11's headers, the slowest part of their build.
namespace CLI {
class App;
}  // namespace CLI

namespace memplan::cli {

constexpr int64_t kPadTokenIdUnset = INT64_MIN;  // --pad-token-id not given (any given value is checked)

struct RunFlags {
  std::string model = "llama-2-7b";
  int64_t batch_size = 1;
  int64_t seq_len = 0;  // 0: 2048 for decoders, 512 for BERT
  int64_t target_len = 0;  // encoder-decoders: 0 = seq_len
  int64_t image_size = 224;
  int64_t audio_samples = 0;  // speech encoders (wav2vec2 / hubert / wavlm): waveform samples per example; 0: 16000
  // Vision-language models (takes_images): images in every sample, each one's patch grid "T,H,W" (Qwen-VL,
  // SigLIP 2) and its tiles "ROWS,COLS" (Idefics3 / SmolVLM); empty / 0: text only.
  int64_t images_per_sample = 0;
  std::string image_grid;
  std::string image_splits;
  std::string image_hw;  // llava_next: every image's original size "H,W" in pixels (anyres tiles)
  int64_t audio_clips = 0;  // qwen2_audio: 30 s audio clips in every sample (0: text only)
  int64_t image_tiles = 0;  // internvl: the processor's tiles per image (crop_to_patches; 0: one)
  bool freeze_feature_encoder = false;  // speech encoders: freeze_feature_encoder() before training
  std::string precision = "bf16";
  std::string optimizer = "adamw";
  std::string optimizer_impl = "foreach";
  std::string attn;                         // sdpa | eager; empty: what from_config picks (default_attn)
  std::string task = "lm";                  // lm | seq_cls | token_cls | feature | semantic_seg (RunConfig::task)
  int64_t num_labels = 2;
  int64_t pad_token_id = kPadTokenIdUnset;  // given: sets the config's pad_token_id (a decoder's seq_cls at batch > 1)
  std::string grad_checkpointing = "off";  // off | all | comma-separated layer indices
  std::string frozen_layers;               // comma-separated layer indices
  bool freeze_embeddings = false;
  bool no_dropout = false;
  int64_t grad_accum_steps = 1;
  std::string gpu;                          // a name from data/gpus.json
  double gpu_memory_gib = 0;                // or an explicit capacity
  bool expandable_segments = false;
  std::string calibration;                  // a profile written by `memplan calibrate`
  std::string time_tables;                  // estimate / fit: a directory of step-time tables (cli/time_tables.h)
  bool json = false;
  bool quiet = false;                       // no progress lines, no hints: the answer alone
  bool per_layer = false;                   // per-layer table
  std::string timeline;                     // write the memory timeline SVG here
  std::string mode = "training";            // training | inference
  int64_t generate_tokens = 0;              // inference: greedy generate() after the prefill
  int64_t logits_to_keep = 1;               // inference: 0 = logits of every position
  std::string load = "to_device";           // how weights reach the GPU (RunConfig::weights_load)
  bool prefill_first = false;               // inference: a measured prefill before generate() (the old harness order)
  // peft LoRA / bitsandbytes QLoRA (engine/lora.h, engine/quantized_weights.h); LoRA is off while lora_r == 0
  int64_t lora_r = 0;
  double lora_alpha = 0;                    // 0: 2 * r (the common choice; peft's own default is 8)
  double lora_dropout = 0.05;
  std::string lora_targets = "all-linear";  // comma list of module names, or all-linear
  std::string lora_modules_to_save;         // comma list
  std::string quantize_base;                // nf4 | fp4 | int8 (empty: none)
  bool double_quant = false;                // bnb_4bit_use_double_quant
  std::string quant_compute_dtype = "bf16"; // bnb_4bit_compute_dtype
  // One rank of a distributed step (engine/run_config.h DistributedConfig; add_dist_flags). Empty / 0: not given.
  int64_t gpus = 0;                         // world size; `fit` without --strategy / --tp: GPUs for its remedies
  std::string strategy;                     // ddp | fsdp2 | zero1 | zero2 | zero3 | none
  int64_t tp = 1, pp = 1, cp = 1;
  bool sequence_parallel = false;
  int64_t rank = 0;
  std::string reshard_after_forward;        // true | false | K (FSDP2; default true)
  std::string mp_param_dtype, mp_reduce_dtype;  // FSDP2 MixedPrecisionPolicy: bf16 | fp16 | fp32
  int64_t bucket_cap_mb = 0;                // DDP (0: its default, 25)
  bool gradient_as_bucket_view = false, static_graph = false;
  std::string offload;                      // optimizer | params
  bool gpus_for_remedies = false;           // fit: --gpus alone sizes the multi-GPU remedies, the run stays on one
};

// The help text of every --model option.
extern const char* const kModelHelp;

void add_run_flags(CLI::App& cmd, RunFlags& f);
// --gpus --strategy --tp --pp --cp --sequence-parallel --rank --reshard-after-forward --mp-param-dtype
// --mp-reduce-dtype --bucket-cap-mb --gradient-as-bucket-view --static-graph --offload (estimate, fit).
void add_dist_flags(CLI::App& cmd, RunFlags& f, const std::string& gpus_help);
// Loads the model (`-`: a JSON document read from `in`, see load_model_text; with f.pad_token_id applied) and
// builds the RunConfig; throws InputError naming the flag.
ModelSpec load_model_for(const std::string& model, std::istream& in);
ModelSpec load_model_for(const RunFlags& f, std::istream& in);
RunConfig run_config_from(const RunFlags& f, const ModelSpec& m);

// All of `in`, at most kMaxInputFileBytes (models/json_input.h); InputError naming `field` beyond that.
std::string read_all(std::istream& in, const std::string& field);

}  // namespace memplan::cli
