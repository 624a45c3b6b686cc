#include "cli/report_dist.h"

#include <cstdio>
#include <sstream>

#include "cli/report.h"
#include "engine/checked.h"
#include "models/dist_config.h"

namespace memplan::cli {

std::string dist_summary(const DistributedConfig& d) {
  std::ostringstream o;
  if (d.strategy == DistStrategy::none) o << "tensor parallel tp " << d.tp;  // no data-parallel wrapper
  else o << dist_strategy_name(d.strategy);
  if (d.tp > 1 && d.strategy != DistStrategy::none) o << " dp " << d.dp() << " x tp " << d.tp;
  if (d.sequence_parallel) o << " + sequence parallel";
  if (d.strategy == DistStrategy::fsdp2) {
    if (d.reshard_after_forward < 0) o << ", reshard after forward";
    else if (d.reshard_after_forward == 0) o << ", no reshard after forward";
    else o << ", reshard to groups of " << d.reshard_after_forward << " after forward";
    if (!d.param_dtype.empty() || !d.reduce_dtype.empty()) {
      o << ", ";
      if (!d.param_dtype.empty()) o << d.param_dtype << " params";
      if (!d.param_dtype.empty() && !d.reduce_dtype.empty()) o << " / ";
      if (!d.reduce_dtype.empty()) o << d.reduce_dtype << " reduce";
    }
  }
  if (d.strategy == DistStrategy::ddp || d.strategy == DistStrategy::zero1) {
    o << ", " << d.bucket_cap_mb << " MB buckets";
    if (d.gradient_as_bucket_view) o << ", gradient as bucket view";
    if (d.static_graph) o << ", static graph";
  }
  if (d.offload != DistOffload::none) o << ", " << dist_offload_name(d.offload) << " offloaded to the CPU";
  return o.str();
}

std::string dist_heading(const DistributedConfig& d) {
  if (!d.enabled()) return "";
  return "rank " + std::to_string(d.rank) + " of " + std::to_string(d.world_size) + " (" + dist_summary(d) + ")";
}

int64_t nccl_bytes(const Estimate& e) { return e.distributed ? e.distributed->nccl.total_bytes : 0; }

int64_t dist_nccl_bytes(const DistributedConfig& d) {
  if (!d.enabled()) return 0;
  std::vector<int64_t> groups;
  if (d.dp() > 1) groups.push_back(d.dp());
  if (d.tp > 1) groups.push_back(d.tp);
  if (d.world_size > 1 && d.world_size != d.dp() && d.world_size != d.tp) groups.push_back(d.world_size);
  return dist::nccl_memory(groups).total_bytes;
}

std::string nccl_note(const Estimate& e) {
  if (nccl_bytes(e) == 0) return "";
  const auto& n = e.distributed->nccl;
  return "  (non-PyTorch includes NCCL's " + mib(n.total_bytes) + " MiB outside the allocator: " +
         std::to_string(n.communicators) + " communicator" + (n.communicators == 1 ? "" : "s") + ", " +
         std::to_string(n.channels) + " channels; derived from NCCL's defaults, not measured)\n";
}

nlohmann::json dist_json(const RunConfig& c, const Estimate& e) {
  if (!c.distributed.enabled()) return nullptr;
  nlohmann::json j;
  j["config"] = nlohmann::json::parse(distributed_to_json(c.distributed).dump());
  j["summary"] = dist_summary(c.distributed);
  j["rank"] = c.distributed.rank;
  j["dp"] = c.distributed.dp();
  j["comm_buffers_at_peak_bytes"] = e.replay.peak.ledger[Row::comm_buffers];
  if (e.distributed) {
    const auto& r = *e.distributed;
    j["dp_rank"] = r.dp_rank;
    j["units"] = r.units;
    j["full_param_bytes"] = r.full_param_bytes;
    j["sharded_param_bytes"] = r.sharded_param_bytes;
    j["largest_unit_unsharded_bytes"] = r.largest_unit_unsharded_bytes;
    j["bucket_bytes"] = r.bucket_bytes;
    j["optimizer_param_numel"] = r.optimizer_param_numel;
    j["host_bytes"] = r.host_bytes;
    j["nccl"] = {{"communicators", r.nccl.communicators}, {"channels", r.nccl.channels},
                 {"init_bytes", r.nccl.init_bytes},       {"buffer_bytes", r.nccl.buffer_bytes},
                 {"total_bytes", r.nccl.total_bytes},     {"derived", true}};
  }
  return j;
}

std::vector<OtherRank> other_ranks(const ModelSpec& m, const RunConfig& c, const EstimateOptions& opt) {
  std::vector<OtherRank> out;
  const DistributedConfig& d = c.distributed;
  if (!d.enabled() || d.world_size <= 1 || d.rank == d.world_size - 1) return out;
  RunConfig last = c;
  last.distributed.rank = d.world_size - 1;
  out.push_back({last.distributed.rank, estimate(m, last, opt)});
  return out;
}

bool rank_differs(const Estimate& a, const Estimate& b) {
  return a.torch_peak_allocated_bytes() != b.torch_peak_allocated_bytes() || a.replay.peak.bytes != b.replay.peak.bytes ||
         !(a.replay.peak.ledger.bytes == b.replay.peak.ledger.bytes) ||
         a.allocator.peak_reserved_bytes != b.allocator.peak_reserved_bytes || nccl_bytes(a) != nccl_bytes(b);
}

std::string other_ranks_text(const Estimate& printed, const std::vector<OtherRank>& others) {
  std::ostringstream o;
  char line[256];
  for (const OtherRank& r : others) {
    if (!rank_differs(printed, r.e)) {
      o << "rank " << r.rank << " (the last, replayed too): the same ledger, peak and reserved memory\n";
      continue;
    }
    o << "rank " << r.rank << " (the last, replayed too) differs: peak allocated " << mib(r.e.torch_peak_allocated_bytes())
      << " MiB, reserved " << mib(r.e.allocator.peak_reserved_bytes) << " MiB; ledger rows at its peak:\n";
    for (size_t i = 0; i < kRowCount; ++i) {
      const int64_t a = printed.replay.peak.ledger.bytes[i], b = r.e.replay.peak.ledger.bytes[i];
      if (a == b) continue;
      std::snprintf(line, sizeof line, "  %-20s %12s MiB  (printed rank: %s)\n", std::string(row_name(static_cast<Row>(i))).c_str(),
                    mib(b).c_str(), mib(a).c_str());
      o << line;
    }
  }
  return o.str();
}

nlohmann::json other_ranks_json(const Estimate& printed, int64_t printed_rank, const std::vector<OtherRank>& others) {
  auto row = [](int64_t rank, const Estimate& e) {
    return nlohmann::json{{"rank", rank},
                          {"peak_allocated_mib", mib1(e.torch_peak_allocated_bytes())},
                          {"torch_peak_allocated_bytes", e.torch_peak_allocated_bytes()},
                          {"tensor_peak_bytes", e.replay.peak.bytes},
                          {"peak_reserved_bytes", e.allocator.peak_reserved_bytes},
                          {"nccl_bytes", nccl_bytes(e)}};
  };
  nlohmann::json a = nlohmann::json::array();
  nlohmann::json first = row(printed_rank, printed);
  first["printed"] = true;
  a.push_back(first);
  for (const OtherRank& r : others) {
    nlohmann::json x = row(r.rank, r.e);
    x["printed"] = false;
    x["differs"] = rank_differs(printed, r.e);
    a.push_back(x);
  }
  return a;
}

}  // namespace memplan::cli
