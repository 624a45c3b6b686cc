// Inference replay: a causal LM answering a batch as the validation harness (and HF generate()) runs it,
// every allocation and free on integer time, on the same MemoryTracker and ledger as the training replay.
//
// Stages (data/validation/CASE-FORMAT.md, transformers 5.17 generation/utils.py `_sample`; with
// RunConfig::generate_first, stage 3 runs before stage 2):
//   1. weights: every parameter and buffer;
//   2. measured prefill: forward of batch x seq with use_cache=True, logits_to_keep (default 1) under
//      inference_mode: no saved tensors, each tensor freed at its last use (Python lifetime); the cuBLAS
//      workspace on the first GEMM, the cuBLASLt one on the first addmm (bias epilogue); K/V copied into the
//      DynamicCache layer by layer. kv_cache = allocated after (logits dropped) minus before. Cache freed.
//   3. generate(N): an all-ones attention_mask, then the prefill again with position_ids [B, S] from that mask
//      (rotary cos/sin and GPT-2 position embeddings become [B, S, .], a sliding mask [B, 1, S, S]), then N-1
//      decode forwards of one token each (every layer's K and V re-concatenated: old + new live during the cat).
//      After each forward: the last logits copied to fp32 [B, V], min_new_tokens processing (arange, isin mask,
//      clone, where: two more [B, V] fp32), argmax, input_ids and attention_mask grown by one column.
//      A config with use_cache false (TransformerSpec::config_use_cache; generate() copies it into its
//      GenerationConfig) makes no cache: every forward of the loop, the first included, is a whole-sequence
//      forward of the ids so far (B x (S + step)) with logits_to_keep 1 and nothing kept between forwards, for
//      the model types of no_cache_generate_modelled; the others replay the cached loop (estimate warns).
//
// Peaks: prefill_peak over stage 2, generate_peak over stage 3, peak over the whole run (the harness's
// peak_allocated_mib).
//
// Forward-only models (forward_only_inference: the encoders, the image classifiers, torchvision; the harness's
// _infer_forward): 1. weights; 2. the batch (token ids [B, S] or images), allocated once and kept; 3. the measured
// forward under inference_mode (each tensor freed at its last Python use, the output held until the forward
// returns, then dropped): prefill_peak is its peak; 4. forward_repeats more forwards (the timed ones), which the
// caching allocator replays too (the reserved peak covers them). No KV cache; generate_tokens > 0 is refused.
#pragma once
#include <cstdint>

#include "engine/arch/spec.h"
#include "engine/mem_event.h"
#include "engine/memory_tracker.h"
#include "engine/run_config.h"

namespace memplan {

struct InferenceReplayOptions {
  int64_t cublas_workspace_bytes = 32 << 20;   // per (thread, stream), compute capability 9.x (MECHANICS §3)
  int64_t cublaslt_workspace_bytes = 1 << 20;  // allocated by the first addmm (cuBLASLt bias epilogue)
  bool measured_prefill = true;                // run stage 2 (the harness's plain prefill) before generate()
  int64_t forward_repeats = 3;                 // forward-only models: forwards after the measured one (harness
                                               // FORWARD_REPEATS, timed)
};

struct InferenceResult {
  int64_t weights_bytes = 0;
  int64_t prefill_peak_bytes = 0;    // stage 2 (0 when not run)
  int64_t kv_cache_bytes = 0;        // allocated after the prefill minus before: cache + first-use workspaces
  int64_t kv_cache_entries_bytes = 0;  // the cache's own storages after the prefill (ledger row kv_cache)
  int64_t generate_peak_bytes = 0;   // stage 3 (0 when generate_tokens == 0)
  int64_t decode_peak_bytes = 0;     // over the decode forwards of stage 3 alone (0 without decode steps)
  int64_t final_kv_entries_bytes = 0;  // the cache storages after the last decode step
  bool generate_without_cache = false;  // stage 3 replayed without a KV cache (config use_cache false)
  PeakInfo peak;                     // the whole run
  PeakInfo prefill_peak, generate_peak;
  MemEventStream events;             // the whole run, for the caching-allocator model
  int64_t first_pass_event = 0;      // index in `events` of the first event after the model is built
  int64_t prefill_begin_event = 0;   // with measured_prefill: index of its first event (after generate() when
                                     // RunConfig::generate_first)
  int64_t prefill_end_event = -1;    // with measured_prefill: events up to the measured prefill's end (logits freed)
  bool forward_only = false;         // a forward-only run: prefill_peak is the measured forward's, no KV figures
  int64_t measured_end_event = -1;   // forward-only: index of the first event after the measured forward (output
                                     // freed); peak and the allocator's peak allocated are taken up to there
};

// Whether generate() without a KV cache is replayed for this model: causal LMs whose builders depend on the cache
// only through kv_update and GraphBuilder::kv_cached() (gpt2, llama / mistral / qwen2 without experts, qwen3,
// gpt_neox, phi3, opt, mpt: each read against its transformers 5.17 modeling file). Mixture-of-experts decoders
// are left out (generate()'s loop swaps grouped_mm for batched_mm, over every token when nothing is cached), and
// so are the multimodal ones (pixel inputs are forwarded at every step without a cache) and the encoder-decoders.
bool no_cache_generate_modelled(const ModelSpec& spec);

// cfg.mode must be inference; cfg.seq_len is the prompt length (forward-only transformers: the batch's length).
// Throws InputError for models without an inference builder (native graphs).
InferenceResult replay_inference(const ModelSpec& spec, const RunConfig& cfg, const InferenceReplayOptions& opt = {});

}  // namespace memplan
