// The `distributed` object of validation cases (data/validation/CASE-FORMAT.md) and the checks it shares with
// the CLI's --gpus / --strategy / --tp ... flags (cli/run_flags.h): one rank of a multi-GPU training step,
// memplan::DistributedConfig (engine/run_config.h).
//   "distributed": {"strategy": "fsdp2", "world_size": 8, "tp": 1, "pp": 1, "cp": 1, "sequence_parallel": false,
//                   "rank": 0, "reshard_after_forward": true | false | K, "param_dtype": "bf16",
//                   "reduce_dtype": "fp32", "bucket_cap_mb": 25, "gradient_as_bucket_view": false,
//                   "static_graph": false, "offload": "none" | "optimizer" | "params"}
// Every key but `strategy` is optional with the frameworks' defaults (DistributedConfig's); a key outside this
// list is refused naming it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "engine/arch/spec.h"
#include "engine/run_config.h"

namespace memplan {

// How errors name each field: the case key ("distributed.world_size") or the CLI flag ("--gpus").
struct DistFieldNames {
  const char *strategy, *world_size, *tp, *pp, *cp, *sequence_parallel, *rank, *reshard_after_forward, *param_dtype,
      *reduce_dtype, *bucket_cap_mb, *gradient_as_bucket_view, *static_graph, *offload;
};
extern const DistFieldNames kDistCaseFields;
extern const DistFieldNames kDistFlagFields;

// Parses the object (types and ranges of each field; `where` prefixes names, "" for a case). The checks that
// need the model and the run follow in finish_distributed.
DistributedConfig parse_distributed_json(const nlohmann::json& j, const std::string& where = "");

// Checks a parsed configuration against the model and the run and normalises it as torch does; throws
// InputError naming the field (names) and value:
//   - strategy / world: dp = world / (tp pp cp) must be whole; dp > 1 needs a data-parallel strategy;
//     rank in [0, world); pp > 1 and cp > 1 are refused (not replayed yet: `memplan plan` has pipeline
//     parallel in closed form); training only;
//   - tp > 1: a transformer (not GPT-2: torch's ColwiseParallel refuses its Conv1D layers) whose heads, kv heads, intermediate size and vocabulary tp divides (ColwiseParallel
//     / RowwiseParallel shard those dimensions; an uneven split cuts a head across ranks, where HF attention's
//     view(..., head_dim) fails, or gives ranks different shards, which is not replayed); sequence parallel
//     needs tp > 1 and a sequence length tp divides;
//   - reshard_after_forward (FSDP2 only): an int K must divide the shard group (dp); K == 1 is False and
//     K == dp is True, as torch's _get_post_forward_mesh_info normalises them (torch 2.11
//     distributed/fsdp/_fully_shard/_fsdp_init.py);
//   - param_dtype / reduce_dtype: FSDP2's MixedPrecisionPolicy only; bucket options: DDP's reducer (ddp, and
//     zero1 as torch's ZeroRedundancyOptimizer over DDP); offload: not with ddp / none, params only with
//     zero3 / fsdp2, optimizer not with fsdp2 (CPUOffloadPolicy moves parameters, gradients and the optimizer
//     step together: --offload params).
void finish_distributed(DistributedConfig& d, const ModelSpec& m, const RunConfig& run, const DistFieldNames& names);

// "bf16" | "fp16" | "fp32", also torch's names (bfloat16, float16, float32), into the short name; false otherwise.
bool parse_mp_dtype(const std::string& s, std::string& canonical);
// reshard_after_forward as text: "true" | "false" | a positive integer K (DistributedConfig's encoding: -1, 0, K).
bool parse_reshard_text(const std::string& s, int64_t& out);

// The canonical object parse_distributed_json reads back: strategy and world_size always, the rest when they
// differ from the defaults; reshard_after_forward as true / false / K.
nlohmann::ordered_json distributed_to_json(const DistributedConfig& d);

}  // namespace memplan
