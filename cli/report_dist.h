// The report of one rank of a distributed step (issue 14): the heading that says which rank of which world and
// wrapper the ledger is, NCCL's memory outside the caching allocator, and the `distributed` JSON object (the
// configuration as the case format writes it, the rank's wrapper figures from engine/dist/dist.h RankReport).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/estimate.h"
#include "engine/run_config.h"

namespace memplan::cli {

// "fsdp2, reshard after forward, bf16 params / fp32 reduce"; "ddp, 25 MB buckets"; "tensor parallel tp 4 + sequence
// parallel"; "fsdp2 dp 4 x tp 2, reshard after forward".
std::string dist_summary(const DistributedConfig& d);
// "rank 0 of 8 (fsdp2, reshard after forward, bf16 params / fp32 reduce)"; empty for a single-GPU run.
std::string dist_heading(const DistributedConfig& d);
// NCCL communicators' device memory of the replayed rank, outside the allocator (0 for a single-GPU run).
int64_t nccl_bytes(const Estimate& e);
// The same from the configuration alone, before any replay: the process groups engine/dist/dist.cpp
// make_rank_hooks opens (dp, tp, and the world when it is neither) through dist::nccl_memory. The commands add
// it to the budget's non-PyTorch memory, so the allocator's capacity, the device total and the verdict count it
// (tests/test_cli_distributed.cpp checks it equals the replayed rank's figure).
int64_t dist_nccl_bytes(const DistributedConfig& d);
// The line under the text ledger saying how much of "+ non-PyTorch" is NCCL (empty for a single-GPU run).
std::string nccl_note(const Estimate& e);
// The `distributed` object of --json: {"config": <the case key's canonical object>, "rank", "dp_rank", the
// RankReport figures in bytes, "comm_buffers_at_peak_bytes", "nccl": {... "derived": true}}. Null when single-GPU.
nlohmann::json dist_json(const RunConfig& c, const Estimate& e);

// Another rank of the same run, replayed to show whether it differs from the printed one.
struct OtherRank {
  int64_t rank = 0;
  Estimate e;
};
// The last rank (world - 1) when it is not the printed one: the rank most likely to differ (the last shard, the
// last tensor-parallel slice). Empty for a single-GPU run or world 1.
std::vector<OtherRank> other_ranks(const ModelSpec& m, const RunConfig& c, const EstimateOptions& opt);
// Whether two ranks' answers differ (peak allocated, its ledger, reserved).
bool rank_differs(const Estimate& a, const Estimate& b);
// Text after the printed ledger: "rank 7 (replayed too): the same ledger" or that rank's ledger; JSON rows.
std::string other_ranks_text(const Estimate& printed, const std::vector<OtherRank>& others);
nlohmann::json other_ranks_json(const Estimate& printed, int64_t printed_rank, const std::vector<OtherRank>& others);

}  // namespace memplan::cli
