#include "engine/serve.h"

#include <algorithm>
#include <cmath>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/inference_replay.h"

namespace memplan {

namespace {

TransformerSpec shard(const TransformerSpec& s, int64_t tp) {
  if (s.num_heads % tp != 0)
    throw InputError("--tensor-parallel", std::to_string(tp),
                     "must divide num_attention_heads (" + std::to_string(s.num_heads) + ")");
  TransformerSpec r = s;
  r.num_heads = s.num_heads / tp;
  r.num_kv_heads = s.num_kv_heads >= tp ? s.num_kv_heads / tp : 1;
  r.intermediate_size = (s.intermediate_size + tp - 1) / tp;
  r.moe_intermediate_size = (s.moe_intermediate_size + tp - 1) / tp;
  r.vocab_size = (s.vocab_size + tp - 1) / tp;  // vocab-parallel embedding and lm_head
  return r;
}

// Every decoder-only family replays its inference pass (MLA included: deepseek_v2 / v3 builders).
bool has_builder(const TransformerSpec& s) { return s.family != TransformerSpec::Family::bert; }

// Analytic bound for models without an inference builder: T tokens each holding, at the MLP peak of one
// layer, the layer input, residual and normed hidden (3 H), gate/up/product (3 I, routed experts: k x moe I),
// the fp32 norm upcast (2 H in fp32 = 4 H of 2 B), and the last position's logits.
int64_t analytic_activation(const TransformerSpec& s, int64_t tokens, DType dt) {
  const int64_t inter = s.num_experts > 0 && s.moe_intermediate_size > 0
                            ? checked_mul(s.moe_intermediate_size, s.num_experts_per_tok + s.num_shared_experts)
                            : s.intermediate_size;
  const int64_t per_token = checked_add(checked_mul(7, s.hidden_size), checked_mul(3, inter));
  return checked_add(checked_mul(checked_mul(tokens, per_token), dtype_bytes(dt)), checked_mul(s.vocab_size, 4));
}

}  // namespace

ServeResult plan_serving(const ModelSpec& model, const ServeOptions& opt) {
  if (model.kind != ModelSpec::Kind::transformer || model.transformer.family == TransformerSpec::Family::bert)
    throw InputError("--model", model.name, "serving capacity needs a decoder-only language model");
  if (model.transformer.family == TransformerSpec::Family::t5)
    throw InputError("--model", model.name, "serving an encoder-decoder (t5) is not modelled");
  if (opt.capacity_bytes <= 0) throw InputError("--gpu", "none", "a GPU (or its memory) is required");
  if (opt.tensor_parallel <= 0 || opt.gpus <= 0 || opt.gpus % opt.tensor_parallel != 0)
    throw InputError("--gpus", std::to_string(opt.gpus), "must be a positive multiple of --tensor-parallel");
  if (!(opt.gpu_memory_utilization > 0 && opt.gpu_memory_utilization <= 1))
    throw InputError("--gpu-memory-utilization", std::to_string(opt.gpu_memory_utilization), "must be in (0, 1]");
  if (opt.block_size <= 0) throw InputError("--block-size", std::to_string(opt.block_size), "must be positive");
  const TransformerSpec& s = model.transformer;
  ServeResult r;
  r.replicas = opt.gpus / opt.tensor_parallel;
  r.shard = shard(s, opt.tensor_parallel);
  r.max_model_len = opt.max_model_len > 0 ? opt.max_model_len : s.max_position_embeddings;
  if (r.max_model_len <= 0) throw InputError("--max-model-len", "0", "the model has no max_position_embeddings");
  r.max_num_batched_tokens = opt.max_num_batched_tokens > 0 ? opt.max_num_batched_tokens
                                                            : std::min<int64_t>(r.max_model_len, 8192);
  const DType act = opt.weights.format == WeightFormat::fp32   ? DType::f32
                    : opt.weights.format == WeightFormat::fp16 ? DType::f16
                                                               : opt.weights.base_dtype;
  RunConfig cfg;
  cfg.mode = Mode::inference;
  cfg.batch_size = 1;
  cfg.seq_len = r.max_num_batched_tokens;
  cfg.precision = act == DType::f32 ? Precision::fp32 : act == DType::f16 ? Precision::fp16 : Precision::bf16;
  ModelSpec sharded = model;
  sharded.transformer = r.shard;
  if (has_builder(s)) {
    const Graph g = build_inference_graph(sharded, cfg, InferencePass{0, cfg.seq_len, false});
    r.weights = weight_bytes(g, opt.weights);
    InferenceReplayOptions ro;
    const InferenceResult inf = replay_inference(sharded, cfg, ro);
    const Ledger& l = inf.prefill_peak.ledger;
    r.activation_peak_bytes = inf.prefill_peak.bytes - l[Row::weights] - l[Row::kv_cache];
  } else {
    // No inference builder: weights from the importer's parameter count in the base dtype, split evenly
    // over the ranks (norms are replicated in truth: a few MiB), and the analytic activation bound.
    if (opt.params_without_builder <= 0)
      throw InputError("--model", model.name, "no inference builder for this architecture and no parameter count");
    const int64_t per_rank = (opt.params_without_builder + opt.tensor_parallel - 1) / opt.tensor_parallel;
    r.weights.unquantized_params = per_rank;
    r.weights.unquantized_bytes = checked_mul(per_rank, dtype_bytes(act), "weight bytes");
    r.activation_peak_bytes = analytic_activation(r.shard, r.max_num_batched_tokens, act);
    r.activation_analytic = true;
  }
  r.non_torch_bytes = opt.non_torch_bytes + (opt.tensor_parallel > 1 ? opt.nccl_bytes : 0);
  const double usable = opt.gpu_memory_utilization * static_cast<double>(opt.capacity_bytes);
  r.kv_budget_bytes = static_cast<int64_t>(std::floor(usable)) - r.weights.total() - r.activation_peak_bytes - r.non_torch_bytes;
  const KvModel kv = kv_model(s, act, opt.kv_dtype, opt.tensor_parallel);
  r.kv_bytes_per_token = kv.bytes_per_token_all_layers();
  r.block_bytes = checked_mul(r.kv_bytes_per_token, opt.block_size, "kv block bytes");
  r.num_blocks = r.kv_budget_bytes > 0 ? r.kv_budget_bytes / r.block_bytes : 0;
  r.context_tokens = opt.context_tokens > 0 ? opt.context_tokens : r.max_model_len;
  if (r.kv_budget_bytes > 0) {
    // vLLM's block pool: every layer draws the same number of blocks, so capacity is whole blocks per layer.
    const int64_t per_seq = kv.sequence_bytes_paged(r.context_tokens, opt.block_size, SlidingKeep::ring);
    r.max_sequences_at_context = per_seq > 0 ? r.kv_budget_bytes / per_seq : 0;
    const int64_t n = std::max<int64_t>(1, opt.concurrency);
    int64_t lo = 0, hi = r.max_model_len;  // largest C with n * bytes(C) <= budget
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      const int64_t need = checked_mul(n, kv.sequence_bytes_paged(mid, opt.block_size, SlidingKeep::ring));
      if (need <= r.kv_budget_bytes) lo = mid;
      else hi = mid - 1;
    }
    r.max_context_at_concurrency = lo;
  }
  r.fits = r.kv_budget_bytes > 0 &&
           kv.sequence_bytes_paged(r.max_model_len, opt.block_size, SlidingKeep::ring) <= r.kv_budget_bytes;
  return r;
}

}  // namespace memplan
