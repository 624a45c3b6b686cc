#include "engine/estimate.h"

#include <algorithm>
#include <string>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/limits.h"
#include "engine/plan/shard_fit.h"

namespace memplan {

void validate_run_config(const RunConfig& cfg, const ModelSpec& spec) {
  if (cfg.batch_size <= 0) throw InputError("batch_size", std::to_string(cfg.batch_size), "must be a positive integer");
  if (cfg.grad_accum_steps <= 0)
    throw InputError("grad_accum_steps", std::to_string(cfg.grad_accum_steps), "must be a positive integer");
  if (spec.kind == ModelSpec::Kind::transformer && cfg.seq_len <= 0)
    throw InputError("seq_len", std::to_string(cfg.seq_len), "must be a positive integer for language models");
  if (spec.kind == ModelSpec::Kind::vision && cfg.image_size <= 0)
    throw InputError("image_size", std::to_string(cfg.image_size), "must be a positive integer for vision models");
  // Learned absolute positions (GPT-2, BERT) end at max_position_embeddings: the prompt and every fed-back
  // generated token need one (generate() feeds back all but the last; torch asserts on the device otherwise).
  const bool learned_positions = spec.kind == ModelSpec::Kind::transformer &&
                                 (spec.transformer.family == TransformerSpec::Family::gpt2 ||
                                  spec.transformer.family == TransformerSpec::Family::bert ||
                                  spec.transformer.learned_positions);
  const int64_t limit = learned_positions ? position_limit(spec.transformer) : 0;
  if (limit > 0 && cfg.seq_len > 0 && spec.transformer.max_position_embeddings > 0) {
    const std::string why = "exceeds the model's position embeddings (" + std::to_string(limit) + ")";
    if (cfg.seq_len > limit) throw InputError("seq_len", std::to_string(cfg.seq_len), why);
    // (forward-only models refuse generate_tokens themselves, naming why: no generate() at all)
    const int64_t fed_back = cfg.mode == Mode::inference && !forward_only_inference(spec)
                                 ? std::max<int64_t>(0, cfg.generate_tokens - 1)
                                 : 0;
    if (fed_back > limit - cfg.seq_len)
      throw InputError("generate_tokens", std::to_string(cfg.generate_tokens),
                       "seq_len " + std::to_string(cfg.seq_len) + " plus " + std::to_string(fed_back) +
                           " fed-back tokens " + why);
  }
  for (int64_t l : cfg.checkpoint_layers)
    if (l < 0) throw InputError("checkpoint_layers", std::to_string(l), "layer indices must be non-negative");
  for (int64_t l : cfg.frozen_layers)
    if (l < 0) throw InputError("frozen_layers", std::to_string(l), "layer indices must be non-negative");
  check_limits(spec, cfg);
  if (cfg.distributed.enabled()) validate_distributed(cfg, spec);
}

void validate_distributed(const RunConfig& cfg, const ModelSpec& spec) {
  const DistributedConfig& d = cfg.distributed;
  auto positive = [](const char* field, int64_t v) {
    if (v < 1) throw InputError(field, std::to_string(v), "must be a positive integer");
  };
  positive("distributed.world_size", d.world_size);
  positive("distributed.tp", d.tp);
  positive("distributed.pp", d.pp);
  positive("distributed.cp", d.cp);
  if (d.world_size > 1'000'000) throw InputError("distributed.world_size", std::to_string(d.world_size), "exceeds 1000000 ranks");
  if (d.tp > 4096 || d.pp > 4096 || d.cp > 4096)
    throw InputError("distributed.tp", std::to_string(d.tp), "tp, pp and cp are limited to 4096");
  const int64_t model_parallel = d.tp * d.pp * d.cp;
  if (d.world_size % model_parallel != 0)
    throw InputError("distributed.world_size", std::to_string(d.world_size),
                     "must be a multiple of tp x pp x cp (" + std::to_string(model_parallel) + ")");
  if (d.rank < 0 || d.rank >= d.world_size)
    throw InputError("distributed.rank", std::to_string(d.rank), "must lie in [0, world_size)");
  if (d.pp > 1) throw InputError("distributed.pp", std::to_string(d.pp), "the per-rank replay does not model pipeline parallel");
  if (d.cp > 1) throw InputError("distributed.cp", std::to_string(d.cp), "the per-rank replay does not model context parallel");
  if (d.sequence_parallel && d.tp == 1)
    throw InputError("distributed.sequence_parallel", "true", "needs tensor parallel (tp > 1)");
  if (d.tp > 1 && !plan::tp_supported(spec, d.tp))
    throw InputError("distributed.tp", std::to_string(d.tp), "does not divide the model's heads / kv heads / intermediate size");
  if (cfg.mode != Mode::training)
    throw InputError("distributed.strategy", std::string(dist_strategy_name(d.strategy)), "the per-rank replay covers training only");
  DType dt;
  if (!d.param_dtype.empty() && !dist::parse_mp_dtype(d.param_dtype, dt))
    throw InputError("distributed.param_dtype", d.param_dtype, "expected bf16, fp16 or fp32");
  if (!d.reduce_dtype.empty() && !dist::parse_mp_dtype(d.reduce_dtype, dt))
    throw InputError("distributed.reduce_dtype", d.reduce_dtype, "expected bf16, fp16 or fp32");
  if ((!d.param_dtype.empty() || !d.reduce_dtype.empty()) && d.strategy != DistStrategy::fsdp2)
    throw InputError("distributed.param_dtype", d.param_dtype.empty() ? d.reduce_dtype : d.param_dtype,
                     "MixedPrecisionPolicy is FSDP2's (strategy fsdp2)");
  if (d.reshard_after_forward < -1)
    throw InputError("distributed.reshard_after_forward", std::to_string(d.reshard_after_forward),
                     "expected true (-1), false (0) or a group size > 1");
  if (d.bucket_cap_mb < 1 || d.bucket_cap_mb > (int64_t{1} << 30))
    throw InputError("distributed.bucket_cap_mb", std::to_string(d.bucket_cap_mb), "must be a positive number of MiB");
  if (d.offload == DistOffload::params && d.strategy != DistStrategy::fsdp2 && d.strategy != DistStrategy::zero3)
    throw InputError("distributed.offload", "params", "parameter offload needs fsdp2 or zero3 (sharded parameters)");
  if (d.offload != DistOffload::none && d.strategy == DistStrategy::ddp)
    throw InputError("distributed.offload", std::string(dist_offload_name(d.offload)), "DDP has no offload");
}

namespace {
// The caching allocator over the run: without a cap (what the run needs) and, when a capacity is set, under it
// (whether and where it would OOM).
// `window_begin`: the first event after the model is built (what torch.cuda.max_memory_allocated is compared
// over: the training steps, or the inference passes).
// `samples`: event counts to read allocated bytes at (the measured prefill's start and end, for the KV figure).
// `step_begins`: the training steps' first events (a step repeating the previous one is derived, not replayed:
// engine/alloc/step_repeat.h).
// `lent`: storage both replays reuse (EstimateWorkspace), or null.
void simulate_allocators(Estimate& e, const MemEventStream& events, const EstimateOptions& opt, int64_t window_begin,
                         std::vector<int64_t> samples = {}, std::vector<int64_t> step_begins = {},
                         AllocatorReplayStorage* lent = nullptr, int64_t window_end = -1) {
  if (!opt.simulate_allocator) return;
  AllocatorOptions unlimited = opt.allocator;
  unlimited.capacity_bytes = 0;
  CachingAllocator alloc(unlimited, lent ? std::move(lent->live) : std::vector<int32_t>{});
  e.allocator = replay_allocator(alloc, events,
                                 AllocatorReplayOptions{.record_reserved_curve = opt.replay.record_timeline,
                                                        .window_begin_event = window_begin,
                                                        .window_end_event = window_end,
                                                        .allocated_after_events = std::move(samples),
                                                        .step_begin_events = step_begins,
                                                        .lent = lent});
  if (lent) lent->live = alloc.take_live();
  if (opt.allocator.capacity_bytes > 0) {
    e.capacity_bytes = opt.allocator.capacity_bytes;
    e.expandable_segments = opt.allocator.expandable_segments;
    // A run that never reaches the cap behaves as if there were none, so the unlimited replay answers for it.
    // Not with expandable segments: set_per_process_memory_fraction checks reserved + the whole request
    // before mapping, while only the pages beyond the free tail get mapped, so a run whose reserved peak
    // stays below the cap can still be refused and release its cache (BERT-base under a 7.49 GiB cap: 2
    // retries, 7150 MiB against 7590 uncapped; replaying the recorded stream gives both figures exactly).
    if (!opt.allocator.expandable_segments && e.allocator.peak_reserved_bytes <= opt.allocator.capacity_bytes) {
      e.capped = e.allocator;
      e.capped->reserved_curve_bytes.clear();
    } else {
      CachingAllocator capped(opt.allocator, lent ? std::move(lent->live) : std::vector<int32_t>{});
      e.capped = replay_allocator(capped, events,
                                  AllocatorReplayOptions{.step_begin_events = std::move(step_begins), .lent = lent});
      if (lent) lent->live = capped.take_live();
    }
  }
}
}  // namespace

namespace {
// `rank`: a distributed strategy whose side-stream blocks are tagged on the events before the allocator runs.
Estimate estimate_graph_impl(const Graph& g, const RunConfig& cfg, const EstimateOptions& opt, const dist::Strategy* rank,
                             EstimateWorkspace* ws) {
  const int64_t replay_ops = checked_mul(checked_mul(static_cast<int64_t>(g.ops.size()), cfg.grad_accum_steps,
                                                   "grad_accum_steps"), opt.replay.steps, "grad_accum_steps");
  if (replay_ops > kMaxReplayOps)
    throw InputError("grad_accum_steps", std::to_string(cfg.grad_accum_steps),
                     "replaying " + std::to_string(g.ops.size()) + " ops x " + std::to_string(cfg.grad_accum_steps) +
                         " micro-batches x " + std::to_string(opt.replay.steps) + " steps exceeds the limit of " +
                         std::to_string(kMaxReplayOps) + " op replays");
  Estimate e;
  for (const auto& t : g.tensors) {
    if (t.kind != TensorKind::param) continue;
    const int64_t n = t.bytes / dtype_bytes(t.dtype);
    e.params = checked_add(e.params, n, "parameter count");
    if (t.trainable) e.trainable_params += n;
  }
  e.replay = replay_training(g, cfg, opt.replay, ws ? &ws->tracker : nullptr);
  e.weights_bytes = e.replay.weights_bytes;
  if (rank) {
    rank->tag_streams(e.replay.events);
    e.distributed = rank->report();
  }
  std::vector<int64_t> step_begins;
  for (const StepStats& st : e.replay.steps) step_begins.push_back(st.event_begin);
  simulate_allocators(e, e.replay.events, opt, e.replay.steps.empty() ? 0 : e.replay.steps.front().event_begin, {},
                      std::move(step_begins), ws ? &ws->allocator : nullptr);
  return e;
}

DType built_param_dtype(Precision p) {
  return p == Precision::bf16 ? DType::bf16 : p == Precision::fp16 ? DType::f16 : DType::f32;
}

// One rank: the graph that rank runs (rank_graph), replayed with the strategy's hooks (engine/dist/dist.h).
Estimate estimate_rank(const ModelSpec& spec, const RunConfig& cfg, const EstimateOptions& opt, EstimateWorkspace* ws) {
  const RankGraph r = rank_graph(spec, cfg);
  std::unique_ptr<dist::Strategy> rank = dist::make_rank_hooks(r.compute, r.graph, r.built_dtype);
  EstimateOptions o = opt;
  o.replay.rank_hooks = rank.get();
  return estimate_graph_impl(r.graph, r.compute, o, rank.get(), ws);
}
}  // namespace

RankGraph rank_graph(const ModelSpec& spec, const RunConfig& cfg) {
  const DistributedConfig& d = cfg.distributed;
  ModelSpec local = d.tp > 1 ? plan::local_shard(spec, d.tp, 0) : spec;
  if (d.tp > 1) local.transformer.vocab_size = spec.transformer.vocab_size;  // logits whole (engine/dist/tp.cpp)
  RankGraph r{Graph{}, cfg, built_param_dtype(cfg.precision)};
  DType param_dtype = r.built_dtype;
  if (!d.param_dtype.empty()) dist::parse_mp_dtype(d.param_dtype, param_dtype);
  if (param_dtype != r.built_dtype) {
    // MixedPrecisionPolicy(param_dtype): the unsharded parameters are param_dtype tensors and the module runs on
    // them as a model of that dtype would (no autocast); sharded parameters, .grad and optimizer state keep the
    // built dtype (the strategy's orig dtype).
    r.compute.precision = param_dtype == DType::bf16 ? Precision::bf16
                          : param_dtype == DType::f16 ? Precision::fp16
                                                      : Precision::fp32;
  }
  r.graph = build_graph(local, r.compute);
  if (d.tp > 1) dist::tensor_parallel_rewrite(r.graph, spec.transformer.vocab_size, d.tp);
  if (d.sequence_parallel) dist::shard_sequence(r.graph, cfg.seq_len, spec.transformer.hidden_size, d.tp);
  return r;
}

Estimate estimate_graph(const Graph& g, const RunConfig& cfg, const EstimateOptions& opt) {
  return estimate_graph_impl(g, cfg, opt, nullptr, nullptr);
}

namespace {
Estimate estimate_impl(const ModelSpec& spec, const RunConfig& cfg, const EstimateOptions& opt, EstimateWorkspace* ws) {
  validate_run_config(cfg, spec);
  if (cfg.mode == Mode::inference) {
    Estimate e;
    Graph g = build_inference_graph(spec, cfg, InferencePass{0, cfg.seq_len, false});
    for (const auto& t : g.tensors)
      if (t.kind == TensorKind::param) e.params = checked_add(e.params, t.bytes / dtype_bytes(t.dtype), "parameter count");
    e.inference = replay_inference(spec, cfg, opt.inference);
    e.weights_bytes = e.inference.weights_bytes;
    e.replay.weights_bytes = e.weights_bytes;
    e.replay.peak = e.inference.peak;
    std::vector<int64_t> samples;
    if (e.inference.prefill_end_event >= 0) samples = {e.inference.prefill_begin_event, e.inference.prefill_end_event};
    // A forward-only run's peak allocated is the measured forward's (the harness reads it before the timed ones).
    simulate_allocators(e, e.inference.events, opt, e.inference.first_pass_event, std::move(samples), {}, nullptr,
                        e.inference.forward_only ? e.inference.measured_end_event : -1);
    e.replay.events = std::move(e.inference.events);
    return e;
  }
  if (cfg.distributed.enabled()) return estimate_rank(spec, cfg, opt, ws);
  Graph g = build_graph(spec, cfg);
  return estimate_graph_impl(g, cfg, opt, nullptr, ws);
}
}  // namespace

Estimate estimate(const ModelSpec& spec, const RunConfig& cfg, const EstimateOptions& opt) {
  return estimate_impl(spec, cfg, opt, nullptr);
}

Estimate estimate(const ModelSpec& spec, const RunConfig& cfg, const EstimateOptions& opt, EstimateWorkspace& ws) {
  return estimate_impl(spec, cfg, opt, &ws);
}

}  // namespace memplan
