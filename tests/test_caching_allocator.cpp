// Tests of engine/alloc: hand-derived scenarios, invariants under random streams, and replays of the
// recorded H200 allocator traces (tests/data/alloc/*.txt, made by calibrate/trace_to_events.py).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/alloc/allocator_model.h"
#include "engine/alloc/caching_allocator.h"
#include "engine/alloc/device_va.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "data_dir.h"

using namespace memplan;

namespace {

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = kMiB;

// Shared invariants (as ggml's test-alloc checks after each plan): blocks tile each segment exactly, segments
// do not overlap, free neighbours are merged, counters agree with the layout.
void check_invariants(const CachingAllocator& a) {
  const auto segs = a.segments();
  int64_t reserved = 0, allocated = 0, free_mapped = 0;
  int64_t prev_end = std::numeric_limits<int64_t>::min();
  for (const auto& s : segs) {
    REQUIRE(s.address >= prev_end);  // no overlap between segments
    prev_end = s.address + s.address_space_bytes;
    REQUIRE(!s.blocks.empty());
    int64_t cursor = s.address, mapped = 0, seg_alloc = 0;
    for (size_t i = 0; i < s.blocks.size(); ++i) {
      const auto& b = s.blocks[i];
      REQUIRE(b.address == cursor);  // tiles: no gap, no overlap
      REQUIRE(b.size_bytes > 0);
      cursor += b.size_bytes;
      if (b.mapped) mapped += b.size_bytes;
      if (b.allocated) {
        REQUIRE(b.mapped);
        seg_alloc += b.size_bytes;
        REQUIRE(a.address_of(b.block) == b.address);
      } else if (b.mapped) {
        ++free_mapped;
      }
      if (i > 0) {  // merged: two free neighbours never share a mapping state
        const auto& p = s.blocks[i - 1];
        REQUIRE_FALSE((!p.allocated && !b.allocated && p.mapped == b.mapped));
      }
      if (b.mapped && b.size_bytes % kAllocMinBlockBytes != 0) FAIL("block size not a multiple of 512 B");
      if (!s.small && !s.expandable) REQUIRE(b.size_bytes > kAllocSmallSizeBytes);  // large-pool blocks > 1 MiB
    }
    REQUIRE(cursor == s.address + s.address_space_bytes);
    REQUIRE(mapped == s.mapped_bytes);
    REQUIRE(seg_alloc == s.allocated_bytes);
    reserved += mapped;
    allocated += seg_alloc;
  }
  REQUIRE(reserved == a.reserved_bytes());
  REQUIRE(allocated == a.allocated_bytes());
  REQUIRE(a.allocated_bytes() <= a.reserved_bytes());
  REQUIRE(free_mapped == a.num_cached_free_blocks());
  REQUIRE(static_cast<int64_t>(segs.size()) == a.num_segments());
}

MemEvent A(int32_t id, int64_t bytes) { return {MemEvent::Action::alloc, id, bytes, 0}; }
MemEvent F(int32_t id) { return {MemEvent::Action::free, id, 0, 0}; }

}  // namespace

TEST_CASE("round_size and allocation_size follow PyTorch's constants", "[alloc]") {
  struct Row { const char* name; int64_t requested; int32_t divisions; int64_t rounded; int64_t segment; };
  const Row rows[] = {
      // name                      requested          div  rounded               cudaMalloc size
      {"zero bytes -> 512 B",       0,                 0,   512,                  2 * MiB},
      {"1 B -> 512 B",              1,                 0,   512,                  2 * MiB},
      {"513 B -> 1 KiB",            513,               0,   1024,                 2 * MiB},
      {"1 MiB stays small",         MiB,               0,   MiB,                  2 * MiB},
      {"1 MiB + 1 B -> large pool", MiB + 1,           0,   MiB + 512,            20 * MiB},
      {"9 MiB -> 20 MiB segment",   9 * MiB,           0,   9 * MiB,              20 * MiB},
      {"10 MiB - 1 B -> 20 MiB",    10 * MiB - 1,      0,   10 * MiB,             10 * MiB},  // rounds to 10 MiB
      {"21 MiB + 1 B -> 22 MiB",    21 * MiB + 1,      0,   21 * MiB + 512,       22 * MiB},
      // divisions 4: 5000 lies in [4096, 8192), steps of 1024 -> 5120
      {"power2/4: 5000 -> 5120",    5000,              4,   5120,                 2 * MiB},
      {"power2/4: 4096 stays",      4096,              4,   4096,                 2 * MiB},
      // only sizes > 512 * divisions use the divisions: 1200 <= 2048 -> plain 512 B rounding
      {"power2/4: 1200 -> 1536",    1200,              4,   1536,                 2 * MiB},
      // [8, 16) MiB in steps of 2 MiB
      {"power2/4: 9 MiB+1 -> 10",   9 * MiB + 1,       4,   10 * MiB,             10 * MiB},
  };
  for (const Row& r : rows) {
    SECTION(r.name) {
      const int64_t rounded = CachingAllocator::round_size(r.requested, r.divisions);
      CHECK(rounded == r.rounded);
      CHECK(CachingAllocator::allocation_size(rounded) == r.segment);
    }
  }
  CHECK_THROWS_AS(CachingAllocator::round_size(-1, 0), InputError);
}

TEST_CASE("caching allocator scenarios with hand-derived figures", "[alloc]") {
  struct Row {
    const char* name;
    AllocatorOptions opt;
    std::vector<MemEvent> events;
    int64_t allocated, reserved, segments, retries;
  };
  AllocatorOptions cap40;
  cap40.capacity_bytes = 40 * MiB;
  const std::vector<Row> rows = {
      // 9 MiB < 10 MiB -> 20 MiB segment, 11 MiB remainder split off; a second 9 MiB fits in it (2 MiB
      // remainder > 1 MiB, split); a third needs a new 20 MiB segment.
      {"9 MiB requests share 20 MiB segments", {}, {A(0, 9 * MiB), A(1, 9 * MiB), A(2, 9 * MiB)},
       27 * MiB, 40 * MiB, 2, 0},
      // 21 MiB + 512 in a 22 MiB segment leaves 1 MiB - 512 <= 1 MiB: kept as an unsplit tail.
      {"21 MiB + 1 B reports 22 MiB allocated", {}, {A(0, 21 * MiB + 1)}, 22 * MiB, 22 * MiB, 1, 0},
      // Four 512 KiB requests fill one 2 MiB small segment; the fifth (1 B -> 512 B) opens a second.
      {"small pool packs 2 MiB segments", {},
       {A(0, 512 * KiB), A(1, 512 * KiB), A(2, 512 * KiB), A(3, 512 * KiB), A(4, 1)}, 2 * MiB + 512, 4 * MiB, 2, 0},
      // 19 MiB -> 20 MiB segment, remainder exactly 1 MiB: not > 1 MiB, stays as tail -> 20 MiB allocated.
      {"remainder of exactly 1 MiB is not split", {}, {A(0, 19 * MiB)}, 20 * MiB, 20 * MiB, 1, 0},
      // 19 MiB - 512 -> remainder 1 MiB + 512 > 1 MiB: split.
      {"remainder of 1 MiB + 512 B is split", {}, {A(0, 19 * MiB - 512)}, 19 * MiB - 512, 20 * MiB, 1, 0},
      // Three 5 MiB blocks in one 20 MiB segment, freed A, C, B: all merge back into one 20 MiB block, which
      // then serves an 18 MiB request without a new segment.
      {"frees merge neighbours", {},
       {A(0, 5 * MiB), A(1, 5 * MiB), A(2, 5 * MiB), F(0), F(2), F(1), A(3, 18 * MiB)}, 18 * MiB, 20 * MiB, 1, 0},
      // Cap 40 MiB: cached 12 MiB segment + new 30 MiB > 40 -> release cached segments, retry (1) -> fits.
      {"cap: release cached segments then retry", cap40, {A(0, 12 * MiB), F(0), A(1, 30 * MiB)}, 30 * MiB,
       30 * MiB, 1, 1},
  };
  for (const Row& r : rows) {
    SECTION(r.name) {
      CachingAllocator a(r.opt);
      for (const MemEvent& e : r.events) {
        if (e.action == MemEvent::Action::alloc) {
          REQUIRE(a.alloc(e.block, e.size_bytes, e.stream));
        } else {
          a.free(e.block);
        }
        check_invariants(a);
      }
      CHECK(a.allocated_bytes() == r.allocated);
      CHECK(a.reserved_bytes() == r.reserved);
      CHECK(a.num_segments() == r.segments);
      CHECK(a.num_alloc_retries() == r.retries);
    }
  }
}

TEST_CASE("best fit picks the smallest block, then the lowest address", "[alloc]") {
  CachingAllocator a;
  // Segment 1 (20 MiB, first) and segment 2 (14 MiB); cudaMalloc places the second below the first (it does
  // not fit the 12 MiB of alignment padding above segment 1).
  REQUIRE(a.alloc(0, 9 * MiB, 0));
  REQUIRE(a.alloc(1, 13 * MiB, 0));  // 13 MiB -> own 14 MiB segment
  REQUIRE(a.alloc(2, 9 * MiB, 0));   // fits the 11 MiB remainder of segment 1
  const auto segs = a.segments();
  REQUIRE(segs.size() == 2);
  const int64_t seg1 = segs[0].address_space_bytes == 20 * MiB ? segs[0].address : segs[1].address;
  const int64_t seg2 = segs[0].address_space_bytes == 20 * MiB ? segs[1].address : segs[0].address;
  CHECK(seg2 < seg1);
  a.free(0);
  a.free(2);                         // segment 1 is one free 20 MiB block again
  REQUIRE(a.alloc(3, 10 * MiB, 0));  // free blocks: {20 MiB}; the 14 MiB segment is busy -> segment 1
  CHECK(a.address_of(3) == seg1);
  a.free(1);                         // now free: 14 MiB segment (unsplit) and 10 MiB rest of segment 1
  REQUIRE(a.alloc(4, 10 * MiB, 0));  // best fit: the 10 MiB remainder, not the 14 MiB segment
  CHECK(a.address_of(4) == seg1 + 10 * MiB);
  a.free(3);
  a.free(4);                         // free: 20 MiB (segment 1) and 14 MiB (segment 2)
  REQUIRE(a.alloc(5, 12 * MiB, 0));  // two candidates >= 12 MiB: the smaller wins (segment 2)
  CHECK(a.address_of(5) == seg2);
  check_invariants(a);
}

TEST_CASE("equal free blocks: the lower address, i.e. the newer cudaMalloc, wins", "[alloc]") {
  CachingAllocator a;
  // Two 30 MiB segments, both free again: a 30 MiB request takes the one cudaMalloc placed lower (the second).
  REQUIRE(a.alloc(0, 30 * MiB, 0));
  REQUIRE(a.alloc(1, 30 * MiB, 0));
  const int64_t first = a.address_of(0), second = a.address_of(1);
  CHECK(second < first);
  a.free(0);
  a.free(1);
  REQUIRE(a.alloc(2, 30 * MiB, 0));
  CHECK(a.address_of(2) == second);
  check_invariants(a);
}

TEST_CASE("retry then OOM under a cap reports PyTorch's message figures", "[alloc]") {
  AllocatorOptions opt;
  opt.capacity_bytes = 40 * MiB;
  CachingAllocator a(opt);
  // 12 MiB cached, 30 MiB needs a retry (reserved 30), then 12 MiB: 30 + 12 > 40, nothing cached to
  // release -> second retry fails -> OOM at event 3 with 30 MiB allocated and 30 MiB reserved.
  const MemEventStream ev = {A(0, 12 * MiB), F(0), A(1, 30 * MiB), A(2, 12 * MiB), F(1)};
  const AllocatorStats s = replay_allocator(a, ev);
  CHECK(s.oom);
  CHECK(s.oom_event_index == 3);
  CHECK(s.oom_requested_bytes == 12 * MiB);
  CHECK(s.oom_allocated_bytes == 30 * MiB);
  CHECK(s.oom_reserved_bytes == 30 * MiB);
  CHECK(s.num_alloc_retries == 2);
  CHECK(s.peak_reserved_bytes == 30 * MiB);  // 12 then (released) 30: the peak is 30
  // Bracket the budget: at 42 MiB the same stream fits.
  opt.capacity_bytes = 42 * MiB;
  CachingAllocator b(opt);
  CHECK_FALSE(replay_allocator(b, ev).oom);
}

TEST_CASE("max_split_size keeps oversize blocks whole and frees them first", "[alloc]") {
  AllocatorOptions opt;
  opt.max_split_size_bytes = 40 * MiB;
  {
    CachingAllocator a(opt);
    REQUIRE(a.alloc(0, 100 * MiB, 0));
    a.free(0);
    // 30 MiB < max_split: the cached 100 MiB block is oversize -> refused, new 30 MiB segment.
    REQUIRE(a.alloc(1, 30 * MiB, 0));
    CHECK(a.reserved_bytes() == 130 * MiB);
    // 90 MiB >= max_split: the 100 MiB block is within 20 MiB -> reused whole (no split) -> 100 MiB allocated.
    REQUIRE(a.alloc(2, 90 * MiB, 0));
    CHECK(a.allocated_bytes() == 130 * MiB);
    CHECK(a.reserved_bytes() == 130 * MiB);
    check_invariants(a);
  }
  {
    opt.capacity_bytes = 150 * MiB;
    CachingAllocator a(opt);
    REQUIRE(a.alloc(0, 100 * MiB, 0));
    a.free(0);
    // 60 MiB: cached 100 MiB >= 60 + 20 -> refused; 100 + 60 > 150 -> release_available_cached_blocks frees
    // the 100 MiB oversize segment (not a counted retry) -> 60 MiB fits.
    REQUIRE(a.alloc(1, 60 * MiB, 0));
    CHECK(a.reserved_bytes() == 60 * MiB);
    CHECK(a.num_alloc_retries() == 0);
    check_invariants(a);
  }
}

TEST_CASE("expandable segments grow by pages and pack across page boundaries", "[alloc]") {
  AllocatorOptions opt;
  opt.expandable_segments = true;
  SECTION("large pool: 20 MiB pages") {
    CachingAllocator a(opt);
    REQUIRE(a.alloc(0, 5 * MiB, 0));  // maps one 20 MiB page, 15 MiB free after the block
    CHECK(a.reserved_bytes() == 20 * MiB);
    REQUIRE(a.alloc(1, 16 * MiB, 0));  // 15 MiB free + one more page, contiguous
    CHECK(a.reserved_bytes() == 40 * MiB);
    CHECK(a.allocated_bytes() == 21 * MiB);
    CHECK(a.address_of(1) == a.address_of(0) + 5 * MiB);
    CHECK(a.num_segments() == 1);
    check_invariants(a);
    a.free(0);
    a.free(1);
    check_invariants(a);
    a.empty_cache();  // every page free -> unmapped -> segment gone
    CHECK(a.reserved_bytes() == 0);
    CHECK(a.num_segments() == 0);
  }
  SECTION("small pool: 2 MiB pages, blocks straddle pages") {
    CachingAllocator a(opt);
    for (int i = 0; i < 3; ++i) REQUIRE(a.alloc(i, 700 * KiB, 0));
    CHECK(a.reserved_bytes() == 4 * MiB);
    CHECK(a.address_of(2) == a.address_of(1) + 700 * KiB);  // crosses the first 2 MiB page
    check_invariants(a);
  }
  SECTION("21 MiB + 1 B splits (no tail) but maps two pages") {
    CachingAllocator a(opt);
    REQUIRE(a.alloc(0, 21 * MiB + 1, 0));
    CHECK(a.allocated_bytes() == 21 * MiB + 512);
    CHECK(a.reserved_bytes() == 40 * MiB);
  }
  SECTION("under a cap: only whole free pages are released, then OOM") {
    opt.capacity_bytes = 40 * MiB;
    CachingAllocator a(opt);
    REQUIRE(a.alloc(0, 30 * MiB, 0));   // two pages, 10 MiB free at the tail of page 2
    CHECK_FALSE(a.alloc(1, 15 * MiB, 0));  // needs a third page: 60 > 40; no whole free page to unmap
    CHECK(a.num_alloc_retries() == 1);
    CHECK(a.reserved_bytes() == 40 * MiB);
    check_invariants(a);
  }
}

TEST_CASE("NoFragmentation is a lower bound on the caching allocator", "[alloc]") {
  const MemEventStream ev = {A(0, 9 * MiB), A(1, 100), A(2, 21 * MiB + 1), F(0), A(3, 3 * MiB), F(2), F(1)};
  NoFragmentation lb;
  CachingAllocator ca;
  const AllocatorStats l = replay_allocator(lb, ev, {.record_reserved_curve = true});
  const AllocatorStats c = replay_allocator(ca, ev, {.record_reserved_curve = true});
  // lower bound: 9 MiB + 512 + (21 MiB + 512) live at once = 30 MiB + 1 KiB
  CHECK(l.peak_allocated_bytes == 30 * MiB + 1024);
  CHECK(l.peak_reserved_bytes == l.peak_allocated_bytes);
  CHECK(c.peak_reserved_bytes >= l.peak_reserved_bytes);
  CHECK(c.peak_allocated_bytes >= l.peak_allocated_bytes);
  REQUIRE(c.reserved_curve_bytes.size() == ev.size());
  CHECK(c.reserved_curve_bytes.back() == c.reserved_at_end_bytes);
  // caching: 20 MiB (9 MiB seg) + 2 MiB (small) + 22 MiB; the 3 MiB reuses the 9 MiB block's segment.
  CHECK(c.peak_reserved_bytes == 44 * MiB);
  CHECK(c.num_device_allocs == 3);
}

TEST_CASE("random streams keep the allocator's invariants", "[alloc]") {
  struct Config { const char* name; AllocatorOptions opt; };
  std::vector<Config> configs(5);
  configs[0].name = "default";
  configs[1].name = "expandable";
  configs[1].opt.expandable_segments = true;
  configs[2].name = "max_split 64 MiB";
  configs[2].opt.max_split_size_bytes = 64 * MiB;
  configs[3].name = "power2 divisions 4, two streams";
  configs[3].opt.roundup_power2_divisions = 4;
  configs[4].name = "1 GiB cap, expandable";
  configs[4].opt.capacity_bytes = kGiB;
  configs[4].opt.expandable_segments = true;
  for (size_t ci = 0; ci < configs.size(); ++ci) {
    SECTION(configs[ci].name) {
      CachingAllocator a(configs[ci].opt);
      std::mt19937_64 rng(1234 + ci);
      std::vector<int32_t> live;
      int32_t next_id = 0;
      int ooms = 0;
      for (int step = 0; step < 4000; ++step) {
        if (live.empty() || rng() % 100 < 55) {
          const int kind = static_cast<int>(rng() % 10);
          int64_t bytes = kind < 5 ? 1 + static_cast<int64_t>(rng() % MiB)                  // small pool
                          : kind < 8 ? MiB + 1 + static_cast<int64_t>(rng() % (9 * MiB))   // 20 MiB segments
                                     : 10 * MiB + static_cast<int64_t>(rng() % (150 * MiB));
          const int32_t stream = ci == 3 ? static_cast<int32_t>(rng() % 2) : 0;
          if (a.alloc(next_id, bytes, stream)) {
            live.push_back(next_id);
          } else {
            ++ooms;
          }
          ++next_id;
        } else {
          const size_t k = rng() % live.size();
          a.free(live[k]);
          live[k] = live.back();
          live.pop_back();
        }
        check_invariants(a);
        if (step % 997 == 0) {
          a.empty_cache();
          check_invariants(a);
        }
      }
      for (int32_t id : live) a.free(id);
      a.empty_cache();
      check_invariants(a);
      CHECK(a.allocated_bytes() == 0);
      CHECK(a.reserved_bytes() == 0);
      if (configs[ci].opt.capacity_bytes > 0) CHECK(ooms > 0);  // the cap was exercised
    }
  }
}

TEST_CASE("bad input is an InputError", "[alloc]") {
  CachingAllocator a;
  CHECK_THROWS_AS(a.free(3), InputError);
  REQUIRE(a.alloc(0, 10, 0));
  CHECK_THROWS_AS(a.alloc(0, 10, 0), InputError);
  CHECK_THROWS_AS(a.alloc(1, -5, 0), InputError);
  AllocatorOptions bad;
  bad.max_split_size_bytes = 4 * MiB;
  CHECK_THROWS_AS(CachingAllocator(bad), InputError);
}

// ---------------------------------------------------------------- recorded traces

namespace {

// One fixture of tests/data/alloc (format: calibrate/trace_to_events.py).
struct TraceFixture {
  struct Seg {
    int64_t offset, size;
    bool small;
    int32_t stream;
    std::vector<CachingAllocator::SeedBlock> live;
    std::vector<int64_t> live_requested;
  };
  struct Ev {
    char kind;  // 'a' alloc, 'f' free, 's' snapshot, 'm' segment alloc
    int32_t block;
    int64_t bytes;
    int32_t stream;
    int64_t offset;
  };
  struct EndSeg {
    int64_t offset, total, allocated;
    std::vector<std::pair<int64_t, bool>> blocks;  // size, allocated
  };
  std::string id;
  std::vector<Seg> segs;
  std::vector<Ev> events;
  std::vector<EndSeg> end;
  int32_t num_ids = 0;
};

TraceFixture load_fixture(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  TraceFixture fx;
  std::string line, tag;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    if (!(ls >> tag) || tag[0] == '#') continue;
    if (tag == "trace") {
      ls >> fx.id;
    } else if (tag == "seg") {
      TraceFixture::Seg s{};
      std::string pool;
      ls >> s.offset >> s.size >> pool >> s.stream;
      s.small = pool == "S";
      fx.segs.push_back(s);
    } else if (tag == "live") {
      CachingAllocator::SeedBlock b;
      int64_t requested = 0;
      ls >> b.block >> b.address >> b.size_bytes >> requested;
      fx.segs.back().live.push_back(b);
      fx.segs.back().live_requested.push_back(requested);
      fx.num_ids = std::max(fx.num_ids, b.block + 1);
    } else if (tag == "a") {
      TraceFixture::Ev e{'a', 0, 0, 0, 0};
      ls >> e.block >> e.bytes >> e.stream >> e.offset;
      fx.events.push_back(e);
      fx.num_ids = std::max(fx.num_ids, e.block + 1);
    } else if (tag == "f") {
      TraceFixture::Ev e{'f', 0, 0, 0, 0};
      ls >> e.block;
      fx.events.push_back(e);
    } else if (tag == "s") {
      TraceFixture::Ev e{'s', 0, 0, 0, 0};
      ls >> e.bytes;
      fx.events.push_back(e);
    } else if (tag == "segalloc") {
      fx.events.push_back({'m', 0, 0, 0, 0});
    } else if (tag == "endseg") {
      TraceFixture::EndSeg s{};
      std::string pool, blk;
      ls >> s.offset >> s.total >> s.allocated >> pool;
      while (ls >> blk) s.blocks.push_back({std::stoll(blk.substr(1)), blk[0] == 'a'});
      fx.end.push_back(s);
    }
  }
  return fx;
}

const char* kTraces[] = {"trace-bertbase-ampbf16-adamw-b32s512", "trace-gpt2s-ampbf16-adamw-b8s1024",
                         "trace-gpt2s-fp32-adamw-b8s1024", "trace-resnet50-fp32-sgd-b64",
                         "trace-tinyllama-ampbf16-adamw-b4s2048-ckpt"};

std::string fixture_path(const char* name) {
  return std::string(MEMPLAN_DATA_DIR) + "/../tests/data/alloc/" + name + ".txt";
}

int64_t sum_reserved(const TraceFixture& fx) {
  int64_t r = 0;
  for (const auto& s : fx.end) r += s.total;
  return r;
}

}  // namespace

// Replay from the recorded starting layout. The trace does not record the allocator's state when the step
// starts, but every step recorded here calls cudaMalloc zero times, so the segments at the start are exactly
// `segments_at_end`, and the blocks live at the start are known from the trace (see trace_to_events.py).
// From that exact state the model must make the same choices as PyTorch: same address for every alloc,
// same memory_allocated at every snapshot, no cudaMalloc, the same segment layout at the end.
TEST_CASE("trace replay from the recorded layout matches PyTorch block for block", "[alloc][trace]") {
  for (const char* name : kTraces) {
    SECTION(name) {
      const TraceFixture fx = load_fixture(fixture_path(name));
      CachingAllocator a;
      for (const auto& s : fx.segs) a.seed_segment(s.offset, s.size, s.small, s.stream, s.live);
      check_invariants(a);
      int64_t allocs = 0, addr_match = 0, snaps = 0, snap_match = 0, trace_mallocs = 0, peak_alloc = 0;
      for (const auto& e : fx.events) {
        if (e.kind == 'a') {
          REQUIRE(a.alloc(e.block, e.bytes, e.stream));
          ++allocs;
          addr_match += a.address_of(e.block) == e.offset;
          peak_alloc = std::max(peak_alloc, a.allocated_bytes());
        } else if (e.kind == 'f') {
          a.free(e.block);
        } else if (e.kind == 's') {
          ++snaps;
          snap_match += a.allocated_bytes() == e.bytes;
        } else {
          ++trace_mallocs;
        }
      }
      check_invariants(a);
      const auto segs = a.segments();
      int64_t layout_match = 0;
      for (size_t i = 0; i < std::min(segs.size(), fx.end.size()); ++i) {
        bool same = segs[i].address == fx.end[i].offset && segs[i].blocks.size() == fx.end[i].blocks.size();
        for (size_t j = 0; same && j < segs[i].blocks.size(); ++j)
          same = segs[i].blocks[j].size_bytes == fx.end[i].blocks[j].first &&
                 segs[i].blocks[j].allocated == fx.end[i].blocks[j].second;
        layout_match += same;
      }
      std::printf("[alloc][trace] %-44s exact start: %lld/%lld alloc addresses, %lld/%lld snapshots, "
                  "%lld/%zu end segments identical, cudaMalloc sim %lld trace %lld, reserved sim %.1f trace %.1f MiB, "
                  "peak allocated %.1f MiB\n",
                  fx.id.c_str(), (long long)addr_match, (long long)allocs, (long long)snap_match, (long long)snaps,
                  (long long)layout_match, fx.end.size(), (long long)a.num_device_allocs(), (long long)trace_mallocs,
                  to_mib(a.reserved_bytes()), to_mib(sum_reserved(fx)), to_mib(peak_alloc));
      CHECK(addr_match == allocs);
      CHECK(snap_match == snaps);
      CHECK(a.num_device_allocs() == trace_mallocs);
      CHECK(segs.size() == fx.end.size());
      CHECK(layout_match == static_cast<int64_t>(fx.end.size()));
      CHECK(a.reserved_bytes() == sum_reserved(fx));
    }
  }
}

// Prediction mode: start from an EMPTY allocator, as the engine must. The blocks live at the step's start
// (weights, optimizer state, ...) are allocated first in address order (the trace does not record their
// real allocation order or the warm-up steps), then the step is replayed twice; the second pass starts from
// the state the first left, which is as close to "steady state" as the trace lets us get. Its segments are
// compared with segments_at_end. This is a measurement, not an identity: the real allocator's history
// (model load, step 1's lazily created optimizer state, the first steps' different buckets) is missing.
TEST_CASE("trace replay from an empty allocator: steady-state segments vs the trace", "[alloc][trace]") {
  for (const char* name : kTraces) {
    SECTION(name) {
      const TraceFixture fx = load_fixture(fixture_path(name));
      CachingAllocator a;
      NoFragmentation lb;
      for (const auto& s : fx.segs)
        for (size_t i = 0; i < s.live.size(); ++i) {
          REQUIRE(a.alloc(s.live[i].block, s.live_requested[i], s.stream));
          REQUIRE(lb.alloc(s.live[i].block, s.live_requested[i], s.stream));
        }
      // Pass 2 frees, instead of the start-live blocks, the blocks pass 1 left live (paired in order).
      std::vector<char> allocated_in_step(fx.num_ids, 0), freed(fx.num_ids, 0);
      std::vector<int32_t> start_freed, step_kept;
      for (const auto& e : fx.events) {
        if (e.kind == 'a') allocated_in_step[e.block] = 1;
        if (e.kind == 'f') {
          freed[e.block] = 1;
          if (!allocated_in_step[e.block]) start_freed.push_back(e.block);
        }
      }
      for (const auto& e : fx.events)
        if (e.kind == 'a' && !freed[e.block]) step_kept.push_back(e.block);
      REQUIRE(start_freed.size() == step_kept.size());
      std::map<int32_t, int32_t> carry;
      for (size_t i = 0; i < start_freed.size(); ++i) carry[start_freed[i]] = step_kept[i];

      AllocatorStats pass[2];
      AllocatorStats bound;
      for (int p = 0; p < 2; ++p) {
        MemEventStream ev;
        const int32_t shift = p * fx.num_ids;
        auto rename = [&](int32_t b) { return allocated_in_step[b] ? b + shift : (p == 0 ? b : carry[b]); };
        for (const auto& e : fx.events) {
          if (e.kind == 'a') ev.push_back({MemEvent::Action::alloc, rename(e.block), e.bytes, e.stream});
          if (e.kind == 'f') ev.push_back({MemEvent::Action::free, rename(e.block), 0, e.stream});
        }
        pass[p] = replay_allocator(a, ev);
        bound = replay_allocator(lb, ev);  // keep the last pass's figures
        REQUIRE_FALSE(pass[p].oom);
      }
      check_invariants(a);
      const int64_t trace_reserved = sum_reserved(fx);
      std::printf("[alloc][trace] %-44s empty start, pass 2: reserved sim %.1f trace %.1f MiB (%+.1f%%), "
                  "segments sim %lld trace %zu, cudaMalloc in pass 1 %lld pass 2 %lld (trace 0), "
                  "peak allocated %.1f MiB, no-fragmentation bound %.1f MiB\n",
                  fx.id.c_str(), to_mib(pass[1].peak_reserved_bytes), to_mib(trace_reserved),
                  100.0 * static_cast<double>(pass[1].peak_reserved_bytes - trace_reserved) / static_cast<double>(trace_reserved),
                  (long long)a.num_segments(), fx.end.size(), (long long)pass[0].num_device_allocs,
                  (long long)pass[1].num_device_allocs, to_mib(pass[1].peak_allocated_bytes),
                  to_mib(bound.peak_reserved_bytes));
      // Steady state: the second pass needs no new segment, as in the trace.
      CHECK(pass[1].num_device_allocs == 0);
      CHECK(pass[1].peak_reserved_bytes >= bound.peak_reserved_bytes);
      // Stated tolerance, from the measured spread over the five traces (-13.7 % .. +1.2 %, README.md):
      // missing warm-up history leaves the prediction up to ~14 % below the real reserved memory.
      const double rel = static_cast<double>(pass[1].peak_reserved_bytes - trace_reserved) / static_cast<double>(trace_reserved);
      CHECK(rel > -0.15);
      CHECK(rel < 0.05);
    }
  }
}

// Replay speed is a benchmark (bench/bench_allocator.cpp), not a test: tests must not fail on a slow machine.

// ---------------------------------------------------------------- cudaMalloc placement (engine/alloc/device_va.h)

TEST_CASE("cudaMalloc placement: top-down at 32 MiB alignment, padding holes filled lowest first", "[alloc][va]") {
  DeviceVaSpace va;
  const int64_t a = va.place(198 * MiB);  // the resnet18 trace: 198 MiB segments land 224 MiB apart
  const int64_t b = va.place(198 * MiB);
  CHECK(a % (32 * MiB) == 0);
  CHECK(a - b == 224 * MiB);
  const int64_t c = va.place(100 * MiB);  // 100 -> 128 below
  CHECK(b - c == 128 * MiB);
  // Holes: 26 MiB above each 198, 28 MiB above the 100. A 20 MiB request takes the lowest hole (above c).
  CHECK(va.place(20 * MiB) == c + 100 * MiB);
  CHECK(va.place(26 * MiB) == b + 198 * MiB);  // the next hole up that fits 26
  va.release(c, 100 * MiB);                      // a freed range becomes a hole
  CHECK(va.place(102 * MiB) == c - 128 * MiB);   // too big for it (the 20 MiB above is taken): goes below,
                                                 // its 26 MiB of padding merging with the freed range
  CHECK(va.place(100 * MiB) == c - 26 * MiB);    // the lowest hole that fits: padding + freed range
}

namespace {
// tests/data/alloc/run-*.txt: every alloc / free of a whole H200 run recorded by calibrate/record_case_events.py,
// then the run's measured figures (`peak_reserved BYTES`, optionally `retries N`).
struct RecordedRun {
  MemEventStream events;
  int64_t peak_reserved = -1;
  int64_t retries = -1;
};
RecordedRun load_recorded_run(const std::string& name) {
  std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/../tests/data/alloc/" + name + ".txt");
  REQUIRE(in.good());
  RecordedRun r;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string tag;
    int64_t x = 0, y = 0;
    ls >> tag >> x;
    if (tag == "a" && (ls >> y)) r.events.push_back(A(static_cast<int32_t>(x), y));
    else if (tag == "f") r.events.push_back(F(static_cast<int32_t>(x)));
    else if (tag == "peak_reserved") r.peak_reserved = x;
    else if (tag == "retries") r.retries = x;
    else FAIL("bad fixture line: " << line);
  }
  return r;
}
}  // namespace

TEST_CASE("replaying recorded from-start runs reproduces PyTorch's peak reserved exactly", "[alloc][trace]") {
  for (const char* name : {"run-resnet18-fp32-sgdmom-b128", "run-resnet34-ampfp16-sgdmom-b128",
                           "run-q05-fp32-adam-b2s1024", "run-tinyllama-ampbf16-adamw-b4s2048-ckpt",
                           "run-gpt2m-infer-fp16-b16s512-g64"}) {
    const RecordedRun run = load_recorded_run(name);
    CachingAllocator alloc;
    const AllocatorStats s = replay_allocator(alloc, run.events);
    INFO(name << ": " << run.events.size() << " events");
    CHECK(s.peak_reserved_bytes == run.peak_reserved);
  }
}

TEST_CASE("recorded runs under a memory-fraction cap with expandable segments: retries and reserved exact",
          "[alloc][trace][expandable]") {
  // BERT-base amp b16 s512 under 7.49 GiB: the cap check counts reserved + the whole request before mapping,
  // so two optimizer-step requests were refused although fewer pages would have been mapped; each released
  // (unmapped) the free pages and retried: 7150 MiB at the highest, 7590 uncapped.
  // ResNet-50 amp b128 under 6.93 GiB: no retry, and the cap must not shrink the segment's address range
  // (PyTorch sizes it from the device): sizing it from the cap mapped one 20 MiB page less.
  const struct {
    const char* name;
    double cap_gib;
  } runs[] = {{"run-bertbase-expseg-cap7.49", 7.49}, {"run-resnet50-expseg-cap6.93", 6.93}};
  for (const auto& r : runs) {
    const RecordedRun run = load_recorded_run(r.name);
    AllocatorOptions o;
    o.expandable_segments = true;
    o.capacity_is_memory_fraction = true;
    o.capacity_bytes = static_cast<int64_t>(r.cap_gib * 1073741824.0);
    CachingAllocator capped(o);
    const AllocatorStats s = replay_allocator(capped, run.events);
    INFO(r.name);
    CHECK_FALSE(s.oom);
    CHECK(s.peak_reserved_bytes == run.peak_reserved);
    CHECK(s.num_alloc_retries == run.retries);
    if (run.retries > 0) {  // without the cap: no retry, and more reserved than the capped run
      o.capacity_bytes = 0;
      CachingAllocator free_run(o);
      const AllocatorStats u = replay_allocator(free_run, run.events);
      CHECK(u.num_alloc_retries == 0);
      CHECK(u.peak_reserved_bytes > run.peak_reserved);
    }
  }
}
