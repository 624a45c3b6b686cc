// Per-rank fidelity against data/validation/h200-distributed.jsonl: rank 0 of world N measured on one H200 with
// PyTorch's fake process group (calibrate/dist_harness.py; independent ground truth, never produced by this
// code). Bar (issue 14): peak allocated within 2 % of measured, tuning (d1-*) and held-out (d2-*, predicted at
// 7d43c1f before they were measured) alike. Peak reserved: the tuning cases are held to 10 %; the held-out cases
// to 3 % (what they measured: every held-out case but the tensor-parallel ones within 2.01 %); tensor-parallel
// and FSDP2 x TP cases of both sets to 2 % since DTensor's functional collectives are replayed (engine/dist/tp.cpp;
// measured at most 1.51 %, held-out d2-fsdp2tp-ll6w-mp-w64-tp4-sp). Cases whose miss is understood but not
// modelled carry their own bound below (and must still miss the bar, so a fix shrinks the list).
#include <cmath>
#include <cstdio>

#include <catch2/catch.hpp>

#include "engine/checked.h"
#include "engine/estimate.h"
#include "fidelity_cases.h"

using namespace memplan;

namespace {
double mib(int64_t b) { return static_cast<double>(b) / static_cast<double>(kMiB); }
double err_pct(double pred, double meas) { return 100.0 * (pred - meas) / meas; }

// Known misses (data/validation/NOTES.md, "Distributed per rank"): none now. d1-fsdp2-ll4-fp32-w8-b1s1024 (-2.36 %)
// was the single-GPU graph's fp32 grouped-KV math SDPA in training, exact since that order was matched on a
// whole-run stream (notes-f13/classification-decoders.md).
double known_miss_bound(const std::string&) { return 0; }

constexpr double kHoldoutReservedPct = 3.0;
constexpr double kTensorParallelReservedPct = 2.0;
}  // namespace

TEST_CASE("rank 0 of measured distributed steps: peak allocated within 2 %, peak reserved within its set's bar", "[dist][fidelity]") {
  const auto cases = testing::load_cases("h200-distributed.jsonl");
  REQUIRE(cases.size() >= 52);
  int checked = 0, held_out = 0, tensor_parallel = 0;
  for (const auto& c : cases) {
    if (!c.measured || !c.measured->peak_allocated_mib) continue;
    if (c.run.distributed.strategy == DistStrategy::zero2 || c.run.distributed.strategy == DistStrategy::zero3) continue;
    const Estimate e = estimate(c.model, c.run, estimate_options_for(c));
    const double err = err_pct(mib(e.torch_peak_allocated_bytes()), *c.measured->peak_allocated_mib);
    const double rerr = c.measured->peak_reserved_mib ? err_pct(mib(e.run_peak_reserved_bytes()), *c.measured->peak_reserved_mib) : 0;
    std::printf("  %-44s %s allocated %+6.2f %%  reserved %+6.2f %%\n", c.id.c_str(), c.holdout ? "held-out" : "tuning  ",
                err, rerr);
    INFO(c.id << ": predicted " << mib(e.torch_peak_allocated_bytes()) << " MiB, measured " << *c.measured->peak_allocated_mib);
    const double known = known_miss_bound(c.id);
    if (known > 0) {
      CHECK(std::fabs(err) <= known);
      CHECK(std::fabs(err) > 2.0);
    } else {
      CHECK(std::fabs(err) <= 2.0);
    }
    if (c.run.distributed.tp > 1) {
      REQUIRE(c.measured->peak_reserved_mib);
      CHECK(std::fabs(rerr) <= kTensorParallelReservedPct);
      ++tensor_parallel;
    } else if (!c.holdout) {
      CHECK(std::fabs(rerr) <= 10.0);
    } else {
      REQUIRE(c.measured->peak_reserved_mib);
      CHECK(std::fabs(rerr) <= kHoldoutReservedPct);
    }
    if (c.holdout) ++held_out;
    CHECK(e.replay.peak.ledger.total() == e.replay.peak.bytes);
    ++checked;
  }
  CHECK(checked >= 50);
  CHECK(held_out >= 22);
  CHECK(tensor_parallel >= 14);
}
