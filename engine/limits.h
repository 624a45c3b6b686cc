// Caps on model and run sizes: far above any real model, low enough that every shape product stays in int64
// and one estimate stays interactive (well under a few seconds) whatever the input.
//
// Why these numbers (largest real values for comparison):
//   kMaxDim 2^26: vocab (256k), hidden (~30k), intermediate (~100k), context (10M tokens).
//   kMaxLayers 10'000: deepest public LMs have ~130 layers; ResNet-152 50 blocks.
//   kMaxExperts 4'096: public MoEs route over <= 384 experts.
//   kMaxBatch 2^24, kMaxSeqLen 2^26, kMaxImageSize 2^16, kMaxGradAccumSteps 2^20.
//   kMaxGraphOps 500'000: llama-2-70b builds 4'016 ops, mixtral-8x7b 4'816; an op costs ~200 bytes plus its lists.
//   kMaxReplayOps 10'000'000: ops x micro-batches x replayed steps; the replay records every alloc/free, so
//     this bounds both time (~seconds) and the event stream's memory.
//
// Bounds this gives the builders (engine/arch), which therefore multiply single dimensions unchecked:
//   any product of two dims <= 2^52, of a dim and the batch <= 2^50, batch x seq <= 2^50, 3 x dim, 2 x dim,
//   4 x dim are tiny; (image / patch)^2 <= 2^32; the token count T = batch x seq times top-k <= 2^62.
//   Everything multiplied further (numel, bytes) goes through checked_mul in GraphBuilder::bytes_of.
#pragma once
#include <cstdint>

#include "engine/arch/spec.h"
#include "engine/run_config.h"

namespace memplan {

constexpr int64_t kMaxDim = int64_t{1} << 26;
constexpr int64_t kMaxLayers = 10'000;
constexpr int64_t kMaxExperts = 4'096;
constexpr int64_t kMaxBatch = int64_t{1} << 24;
constexpr int64_t kMaxSeqLen = int64_t{1} << 26;
constexpr int64_t kMaxImageSize = int64_t{1} << 16;
constexpr int64_t kMaxGradAccumSteps = int64_t{1} << 20;
constexpr int64_t kMaxGraphOps = 500'000;
constexpr int64_t kMaxReplayOps = 10'000'000;
// `memplan plan`: GPUs in the searched cluster (the largest training clusters have ~100k GPUs).
constexpr int64_t kMaxPlanGpus = int64_t{1} << 20;
// --gpu-memory-gib: 1 PiB per device; keeps GiB -> bytes inside int64.
constexpr double kMaxGpuMemoryGib = 1 << 20;
// `memplan dynamic`: steps of different shapes, each a full replay.
constexpr int64_t kMaxDynamicSteps = 4'096;

// Throws InputError naming the field ("model.num_layers", "batch_size", ...) and the limit when a size of
// the model or the run is outside (0, limit]. Zero-or-negative checks for run sizes stay in
// validate_run_config; spec sizes must be positive where the family uses them.
void check_limits(const ModelSpec& spec, const RunConfig& cfg);

}  // namespace memplan
