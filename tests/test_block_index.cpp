// BlockIndex (engine/alloc/block_index.h) against std::set as the reference ordered set: the same random
// inserts, erases and lower_bound queries, over few sizes (the size classes, up to the move to the leaves) and
// many (leaves that split, empty and merge, and their buffer).
#include <catch2/catch.hpp>

#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/alloc/block_index.h"

using memplan::BlockIndex;

namespace {

using Key = std::pair<int64_t, int64_t>;

std::vector<Key> contents(const BlockIndex& ix) {
  std::vector<Key> out;
  for (const BlockIndex::Entry& e : ix) out.emplace_back(e.major, e.minor);
  return out;
}

std::vector<Key> contents_backwards(const BlockIndex& ix) {
  std::vector<Key> out;
  if (ix.empty()) return out;
  auto it = ix.end();
  do {
    --it;
    out.emplace_back(it->major, it->minor);
  } while (!(it == ix.begin()));
  return out;
}

}  // namespace

TEST_CASE("BlockIndex keeps the order and contents of std::set", "[alloc][block_index]") {
  struct Scenario {
    const char* name;
    int64_t distinct_majors;  // few: long runs of one size (a real replay); many: every key its own size
    int max_live;             // entries kept around: from a fraction of a leaf to many leaves
  };
  const Scenario scenarios[] = {{"few sizes, one leaf", 3, 10},
                                {"few sizes, many leaves", 4, 600},
                                {"many sizes, many leaves", 1 << 20, 2000},
                                {"grow then drain", 16, 300},
                                {"size classes until a 33rd size", 33, 400}};
  for (const Scenario& sc : scenarios) {
    SECTION(sc.name) {
      std::mt19937_64 rng(11);
      BlockIndex ix;
      std::set<Key> ref;
      for (int step = 0; step < 20000; ++step) {
        const bool drain = std::string(sc.name) == "grow then drain" && step > 10000;
        const bool add = !drain && (ref.empty() || (static_cast<int>(ref.size()) < sc.max_live && rng() % 2 == 0));
        if (add) {
          const Key k{static_cast<int64_t>(rng() % static_cast<uint64_t>(sc.distinct_majors)) * 512,
                      static_cast<int64_t>(rng() % (int64_t{1} << 40))};
          if (ref.insert(k).second) ix.insert({k.first, k.second, static_cast<int32_t>(step)});
        } else if (!ref.empty()) {
          // Erase either by key or through lower_bound's iterator (what the best fit does).
          auto r = std::next(ref.begin(), static_cast<std::ptrdiff_t>(rng() % ref.size()));
          if (rng() % 2 == 0) {
            REQUIRE(ix.erase(r->first, r->second));
          } else {
            const auto it = ix.lower_bound(r->first, r->second);
            REQUIRE(it != ix.end());
            REQUIRE(it->major == r->first);
            REQUIRE(it->minor == r->second);
            ix.erase(it);
          }
          ref.erase(r);
        }
        const Key q{static_cast<int64_t>(rng() % static_cast<uint64_t>(sc.distinct_majors + 1)) * 512 - 256,
                    static_cast<int64_t>(rng() % (int64_t{1} << 40))};
        const auto want = ref.lower_bound(q);
        const auto got = ix.lower_bound(q.first, q.second);
        REQUIRE((want == ref.end()) == (got == ix.end()));
        if (want != ref.end()) REQUIRE(Key{got->major, got->minor} == *want);
        REQUIRE(ix.size() == ref.size());
        if (step % 1000 == 0) {
          const std::vector<Key> all(ref.begin(), ref.end());
          REQUIRE(contents(ix) == all);
          REQUIRE(contents_backwards(ix) == std::vector<Key>(all.rbegin(), all.rend()));
        }
      }
      REQUIRE_FALSE(ix.erase(-1, -1));  // absent keys are reported, not erased
      REQUIRE(contents(ix) == std::vector<Key>(ref.begin(), ref.end()));
    }
  }
}

TEST_CASE("BlockIndex: erasing an entry keeps iterators to the entries before it", "[alloc][block_index]") {
  // The allocator's release loop walks down from the largest block, stepping the iterator back before it
  // erases the block it stood on. Seven majors: size classes; a major per entry: leaves.
  const int64_t majors = GENERATE(7, 1000);
  BlockIndex ix;
  for (int64_t i = 0; i < 500; ++i) ix.insert({i % majors, i, static_cast<int32_t>(i)});
  auto it = ix.end();
  --it;
  int erased = 0;
  while (true) {
    const auto cur = it;
    const bool last = it == ix.begin();
    if (!last) --it;
    if (cur->minor % 3 != 0) {  // erase two of three, walking down
      ix.erase(cur);
      ++erased;
    }
    if (last) break;
  }
  REQUIRE(erased == 500 - 167);
  REQUIRE(ix.size() == 167);
  int64_t prev_major = -1, prev_minor = -1;
  for (const BlockIndex::Entry& e : ix) {
    REQUIRE(e.minor % 3 == 0);
    REQUIRE((e.major > prev_major || (e.major == prev_major && e.minor > prev_minor)));
    prev_major = e.major;
    prev_minor = e.minor;
  }
}

TEST_CASE("BlockIndex: the best-fit path and the recent-entries buffer answer as std::set", "[alloc][block_index]") {
  // first_at_least / erase_found (the best fit), erase by key and insert go through the buffer of recent
  // entries; iteration and lower_bound() see everything. Short lifetimes keep entries in the buffer, random ones
  // switch it off for a while (bypass), so both regimes and their switches are crossed.
  // Few majors keep the index in its size classes; many move it to the leaves and their buffer.
  struct Scenario {
    const char* name;
    int lifo_percent;  // erases that take the newest entry (short lifetimes) rather than a random one
    int64_t majors;
  };
  const Scenario scenarios[] = {{"short lifetimes, size classes", 90, 24}, {"random lifetimes, size classes", 0, 24},
                                {"mixed, size classes", 50, 24},           {"short lifetimes, leaves", 90, 4096},
                                {"random lifetimes, leaves", 0, 4096},     {"mixed, leaves", 50, 4096}};
  for (const Scenario& sc : scenarios) {
    SECTION(sc.name) {
      std::mt19937_64 rng(5);
      BlockIndex ix;
      std::set<Key> ref;
      std::vector<Key> order;  // insertion order, for the LIFO erases
      for (int step = 0; step < 300000; ++step) {
        const int r = static_cast<int>(rng() % 100);
        if (ref.empty() || (ref.size() < 400 && r < 50)) {
          const Key k{static_cast<int64_t>(rng() % static_cast<uint64_t>(sc.majors)) * 512,
                      static_cast<int64_t>(rng() % (int64_t{1} << 40))};
          if (ref.insert(k).second) {
            ix.insert({k.first, k.second, static_cast<int32_t>(step)});
            order.push_back(k);
          }
        } else if (r < 75) {  // the best fit: first entry >= (size, min)
          const int64_t size = static_cast<int64_t>(rng() % static_cast<uint64_t>(sc.majors + 2)) * 512 - 256;
          const auto want = ref.lower_bound({size, std::numeric_limits<int64_t>::min()});
          const BlockIndex::Entry* got = ix.first_at_least(size, std::numeric_limits<int64_t>::min());
          REQUIRE((want == ref.end()) == (got == nullptr));
          if (got) {
            REQUIRE(Key{got->major, got->minor} == *want);
            ix.erase_found();
            ref.erase(want);
          }
        } else {
          Key k;
          if (static_cast<int>(rng() % 100) < sc.lifo_percent) {
            while (!ref.count(order.back())) order.pop_back();
            k = order.back();
          } else {
            k = *std::next(ref.begin(), static_cast<std::ptrdiff_t>(rng() % ref.size()));
          }
          REQUIRE(ix.erase(k.first, k.second));
          ref.erase(k);
        }
        REQUIRE(ix.size() == ref.size());
        if (step % 5000 == 0) REQUIRE(contents(ix) == std::vector<Key>(ref.begin(), ref.end()));
      }
    }
  }
}
