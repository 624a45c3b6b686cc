#include "models/dist_config.h"

#include <limits>
#include <string_view>

#include "engine/errors.h"
#include "engine/limits.h"
#include "models/json_input.h"

namespace memplan {

const DistFieldNames kDistCaseFields = {
    "distributed.strategy",      "distributed.world_size",     "distributed.tp",
    "distributed.pp",            "distributed.cp",             "distributed.sequence_parallel",
    "distributed.rank",          "distributed.reshard_after_forward", "distributed.param_dtype",
    "distributed.reduce_dtype",  "distributed.bucket_cap_mb",  "distributed.gradient_as_bucket_view",
    "distributed.static_graph",  "distributed.offload"};
const DistFieldNames kDistFlagFields = {
    "--strategy", "--gpus", "--tp", "--pp", "--cp", "--sequence-parallel", "--rank", "--reshard-after-forward",
    "--mp-param-dtype", "--mp-reduce-dtype", "--bucket-cap-mb", "--gradient-as-bucket-view", "--static-graph",
    "--offload"};

namespace {

constexpr const char* kStrategies = "ddp, fsdp2, zero1, zero2, zero3 (or none)";
// DDP's bucket_cap_mb above 1 TiB is no real setting; the cap keeps MiB -> bytes inside int64.
constexpr int64_t kMaxBucketCapMb = int64_t{1} << 20;

bool is_int64(const nlohmann::json& v) {
  return v.is_number_integer() &&
         !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
}

constexpr std::string_view kKeys[] = {"strategy", "world_size", "tp", "pp", "cp", "sequence_parallel", "rank",
                                      "reshard_after_forward", "param_dtype", "reduce_dtype", "bucket_cap_mb",
                                      "gradient_as_bucket_view", "static_graph", "offload"};

int64_t positive(const nlohmann::json& j, const char* key, const std::string& w, int64_t max) {
  const auto& v = j.at(key);
  if (!is_int64(v) || v.get<int64_t>() <= 0 || v.get<int64_t>() > max)
    throw InputError(w + key, dump_short(v), "must be a positive integer, at most " + std::to_string(max));
  return v.get<int64_t>();
}

bool boolean(const nlohmann::json& j, const char* key, const std::string& w) {
  const auto& v = j.at(key);
  if (!v.is_boolean()) throw InputError(w + key, dump_short(v), "must be true or false");
  return v.get<bool>();
}

std::string n(int64_t v) { return std::to_string(v); }

std::string reshard_text(int64_t r) { return r < 0 ? "true" : r == 0 ? "false" : n(r); }

}  // namespace

bool parse_mp_dtype(const std::string& s, std::string& canonical) {
  if (s == "bf16" || s == "bfloat16" || s == "torch.bfloat16") canonical = "bf16";
  else if (s == "fp16" || s == "float16" || s == "half" || s == "torch.float16") canonical = "fp16";
  else if (s == "fp32" || s == "float32" || s == "float" || s == "torch.float32") canonical = "fp32";
  else return false;
  return true;
}

bool parse_reshard_text(const std::string& s, int64_t& out) {
  if (s == "true" || s == "True") { out = -1; return true; }
  if (s == "false" || s == "False") { out = 0; return true; }
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoll(s);
  return out > 0;
}

DistributedConfig parse_distributed_json(const nlohmann::json& j, const std::string& where) {
  const std::string w = where + "distributed.";
  if (!j.is_object()) throw InputError(where + "distributed", dump_short(j), "must be an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (std::string_view k : kKeys) ok = ok || it.key() == k;
    if (!ok)
      throw InputError(w + it.key(), dump_short(it.value()),
                       "unknown distributed key (strategy, world_size, tp, pp, cp, sequence_parallel, rank, "
                       "reshard_after_forward, param_dtype, reduce_dtype, bucket_cap_mb, gradient_as_bucket_view, "
                       "static_graph, offload)");
  }
  DistributedConfig d;
  if (!j.contains("strategy")) throw InputError(w + "strategy", "missing", std::string("required: ") + kStrategies);
  const auto& s = j.at("strategy");
  if (!s.is_string() || !parse_dist_strategy(s.get<std::string>(), d.strategy))
    throw InputError(w + "strategy", dump_short(s), std::string("must be one of ") + kStrategies);
  if (j.contains("world_size")) d.world_size = positive(j, "world_size", w, kMaxPlanGpus);
  if (j.contains("tp")) d.tp = positive(j, "tp", w, kMaxPlanGpus);
  if (j.contains("pp")) d.pp = positive(j, "pp", w, kMaxPlanGpus);
  if (j.contains("cp")) d.cp = positive(j, "cp", w, kMaxPlanGpus);
  if (j.contains("sequence_parallel")) d.sequence_parallel = boolean(j, "sequence_parallel", w);
  if (j.contains("rank")) {
    const auto& v = j.at("rank");
    if (!is_int64(v) || v.get<int64_t>() < 0) throw InputError(w + "rank", dump_short(v), "must be a non-negative integer");
    d.rank = v.get<int64_t>();
  }
  if (j.contains("reshard_after_forward")) {
    const auto& v = j.at("reshard_after_forward");
    if (v.is_boolean()) d.reshard_after_forward = v.get<bool>() ? -1 : 0;
    else if (is_int64(v) && v.get<int64_t>() > 0 && v.get<int64_t>() <= kMaxPlanGpus) d.reshard_after_forward = v.get<int64_t>();
    else throw InputError(w + "reshard_after_forward", dump_short(v), "must be true, false or a positive integer group size");
  }
  for (const char* key : {"param_dtype", "reduce_dtype"}) {
    if (!j.contains(key) || j.at(key).is_null()) continue;
    const auto& v = j.at(key);
    std::string& dst = std::string_view(key) == "param_dtype" ? d.param_dtype : d.reduce_dtype;
    if (!v.is_string() || !parse_mp_dtype(v.get<std::string>(), dst))
      throw InputError(w + key, dump_short(v), "must be bf16, fp16 or fp32");
  }
  if (j.contains("bucket_cap_mb")) d.bucket_cap_mb = positive(j, "bucket_cap_mb", w, kMaxBucketCapMb);
  if (j.contains("gradient_as_bucket_view")) d.gradient_as_bucket_view = boolean(j, "gradient_as_bucket_view", w);
  if (j.contains("static_graph")) d.static_graph = boolean(j, "static_graph", w);
  if (j.contains("offload") && !j.at("offload").is_null()) {
    const auto& v = j.at("offload");
    if (!v.is_string() || !parse_dist_offload(v.get<std::string>(), d.offload))
      throw InputError(w + "offload", dump_short(v), "must be none, optimizer or params");
  }
  return d;
}

void finish_distributed(DistributedConfig& d, const ModelSpec& m, const RunConfig& run, const DistFieldNames& f) {
  if (d == DistributedConfig{}) return;  // the single-GPU step
  const std::string strategy(dist_strategy_name(d.strategy));
  for (const auto& [field, v] : {std::pair{f.world_size, d.world_size}, {f.tp, d.tp}, {f.pp, d.pp}, {f.cp, d.cp}})
    if (v <= 0 || v > kMaxPlanGpus)
      throw InputError(field, n(v), "must be a positive integer, at most " + n(kMaxPlanGpus));
  if (run.mode != Mode::training)
    throw InputError(f.world_size, n(d.world_size), "distributed runs are modelled for training (one rank's step), not inference");
  // tp pp cp <= 2^60 each: the product cannot overflow before it is compared.
  const int64_t model_parallel = d.tp * d.pp * d.cp;
  if (model_parallel > d.world_size || d.world_size % model_parallel != 0)
    throw InputError(f.world_size, n(d.world_size),
                     "must be a multiple of tp x pp x cp = " + n(d.tp) + " x " + n(d.pp) + " x " + n(d.cp) + " = " +
                         n(model_parallel));
  const int64_t dp = d.dp();
  if (d.rank < 0 || d.rank >= d.world_size)
    throw InputError(f.rank, n(d.rank), "must be a rank in [0, " + n(d.world_size) + ")");
  if (dp > 1 && d.strategy == DistStrategy::none)
    throw InputError(f.strategy, "none", n(dp) + " data-parallel replicas need a strategy: " + kStrategies);
  if (d.pp > 1)
    throw InputError(f.pp, n(d.pp), "pipeline parallel is not replayed yet (memplan plan models it in closed form)");
  if (d.cp > 1) throw InputError(f.cp, n(d.cp), "context parallel is not replayed yet");
  if (d.tp > 1) {
    if (m.kind != ModelSpec::Kind::transformer)
      throw InputError(f.tp, n(d.tp), "tensor parallel is modelled for transformer models, not " + m.name);
    const TransformerSpec& t = m.transformer;
    // torch's ColwiseParallel / RowwiseParallel._apply accept nn.Linear and nn.Embedding only
    // (NotImplementedError otherwise): GPT-2's c_attn / c_proj / c_fc are transformers Conv1D modules.
    if (t.family == TransformerSpec::Family::gpt2)
      throw InputError(f.tp, n(d.tp),
                       "GPT-2's layers are transformers Conv1D modules, which ColwiseParallel / RowwiseParallel "
                       "refuse (nn.Linear and nn.Embedding only)");
    const std::pair<const char*, int64_t> dims[] = {{"num_attention_heads", t.num_heads},
                                                    {"num_key_value_heads", t.num_kv_heads},
                                                    {"intermediate_size", t.intermediate_size},
                                                    {"vocab_size", t.vocab_size}};
    for (const auto& [name, size] : dims) {
      if (size <= 0 || size % d.tp == 0) continue;
      const std::string why =
          std::string(name) == "vocab_size"
              ? "DTensor would shard the vocabulary unevenly (ranks hold " + n((size + d.tp - 1) / d.tp) + " or " +
                    n(size / d.tp) + " rows), which is not replayed; pad the vocabulary to a multiple of tp"
          : std::string(name) == "intermediate_size"
              ? "ColwiseParallel would split the MLP unevenly across ranks, which is not replayed"
              : "ColwiseParallel would cut a head across ranks and the attention's view(..., head_dim) fails";
      throw InputError(f.tp, n(d.tp), "does not divide " + std::string(name) + " " + n(size) + ": " + why);
    }
  }
  if (d.sequence_parallel) {
    if (d.tp == 1) throw InputError(f.sequence_parallel, "true", "needs tensor parallel (tp > 1)");
    if (run.seq_len % d.tp != 0)
      throw InputError(f.sequence_parallel, "true",
                       "shards the sequence across tp = " + n(d.tp) + " ranks; seq_len " + n(run.seq_len) +
                           " is not a multiple of it");
  }
  // FSDP2 options.
  if (d.reshard_after_forward != -1 && d.strategy != DistStrategy::fsdp2)
    throw InputError(f.reshard_after_forward, reshard_text(d.reshard_after_forward),
                     "is an FSDP2 option (fully_shard), not " + strategy);
  if (d.reshard_after_forward > 0) {
    const int64_t k = d.reshard_after_forward;
    if (k > dp || dp % k != 0)
      throw InputError(f.reshard_after_forward, n(k),
                       "must be a factor of the shard group size " + n(dp) + " (torch: fully_shard raises ValueError)");
    if (k == 1) d.reshard_after_forward = 0;        // torch: reshard to world size 1 == False
    else if (k == dp) d.reshard_after_forward = -1;  // the whole shard group == True
  }
  if ((!d.param_dtype.empty() || !d.reduce_dtype.empty()) && d.strategy != DistStrategy::fsdp2)
    throw InputError(!d.param_dtype.empty() ? f.param_dtype : f.reduce_dtype,
                     !d.param_dtype.empty() ? d.param_dtype : d.reduce_dtype,
                     "is FSDP2's MixedPrecisionPolicy, not an option of " + strategy);
  // DDP reducer options (zero1: torch's ZeroRedundancyOptimizer runs over DDP).
  const bool reducer = d.strategy == DistStrategy::ddp || d.strategy == DistStrategy::zero1;
  if (!reducer) {
    if (d.bucket_cap_mb != DistributedConfig{}.bucket_cap_mb)
      throw InputError(f.bucket_cap_mb, n(d.bucket_cap_mb), "is a DDP option, not one of " + strategy);
    if (d.gradient_as_bucket_view) throw InputError(f.gradient_as_bucket_view, "true", "is a DDP option, not one of " + strategy);
    if (d.static_graph) throw InputError(f.static_graph, "true", "is a DDP option, not one of " + strategy);
  }
  if (d.bucket_cap_mb <= 0 || d.bucket_cap_mb > kMaxBucketCapMb)
    throw InputError(f.bucket_cap_mb, n(d.bucket_cap_mb), "must be a positive number of MB, at most " + n(kMaxBucketCapMb));
  if (d.offload != DistOffload::none) {
    const std::string off(dist_offload_name(d.offload));
    if (d.strategy == DistStrategy::ddp || d.strategy == DistStrategy::none)
      throw InputError(f.offload, off, "needs a sharded strategy (zero1, zero2, zero3, fsdp2), not " + strategy);
    if (d.offload == DistOffload::params && (d.strategy == DistStrategy::zero1 || d.strategy == DistStrategy::zero2))
      throw InputError(f.offload, off, "parameter offload needs zero3 or fsdp2 (ZeRO-Offload moves parameters at stage 3 only)");
    if (d.offload == DistOffload::optimizer && d.strategy == DistStrategy::fsdp2)
      throw InputError(f.offload, off,
                       "FSDP2's CPUOffloadPolicy moves parameters, gradients and the optimizer step together: "
                       "use params");
  }
}

nlohmann::ordered_json distributed_to_json(const DistributedConfig& d) {
  const DistributedConfig def;
  nlohmann::ordered_json j;
  j["strategy"] = dist_strategy_name(d.strategy);
  j["world_size"] = d.world_size;
  if (d.tp != 1) j["tp"] = d.tp;
  if (d.pp != 1) j["pp"] = d.pp;
  if (d.cp != 1) j["cp"] = d.cp;
  if (d.sequence_parallel) j["sequence_parallel"] = true;
  if (d.rank != 0) j["rank"] = d.rank;
  if (d.strategy == DistStrategy::fsdp2 || d.reshard_after_forward != def.reshard_after_forward) {
    if (d.reshard_after_forward < 0) j["reshard_after_forward"] = true;
    else if (d.reshard_after_forward == 0) j["reshard_after_forward"] = false;
    else j["reshard_after_forward"] = d.reshard_after_forward;
  }
  if (!d.param_dtype.empty()) j["param_dtype"] = d.param_dtype;
  if (!d.reduce_dtype.empty()) j["reduce_dtype"] = d.reduce_dtype;
  if (d.bucket_cap_mb != def.bucket_cap_mb) j["bucket_cap_mb"] = d.bucket_cap_mb;
  if (d.gradient_as_bucket_view) j["gradient_as_bucket_view"] = true;
  if (d.static_graph) j["static_graph"] = true;
  if (d.offload != DistOffload::none) j["offload"] = dist_offload_name(d.offload);
  return j;
}

}  // namespace memplan
