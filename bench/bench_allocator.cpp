// Caching-allocator replay speed: 2 M events, ~2000 live blocks of mixed sizes. Checks its answer (no OOM, reserved
// covers allocated, the stream replays identically twice) so a fast wrong replay cannot pass.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <random>

#include "engine/alloc/caching_allocator.h"

namespace {

memplan::MemEventStream random_stream() {
  constexpr int64_t kMiB = int64_t{1} << 20;
  std::mt19937_64 rng(7);
  memplan::MemEventStream ev;
  std::vector<int32_t> live;
  int32_t next_id = 0;
  while (ev.size() < 2000000) {
    if (live.size() < 2000 && (live.empty() || rng() % 2 == 0)) {
      const int64_t bytes = rng() % 4 == 0 ? kMiB + static_cast<int64_t>(rng() % (30 * kMiB))
                                           : 1 + static_cast<int64_t>(rng() % kMiB);
      ev.push_back({memplan::MemEvent::Action::alloc, next_id, bytes, 0});
      live.push_back(next_id++);
    } else {
      const size_t k = rng() % live.size();
      ev.push_back({memplan::MemEvent::Action::free, live[k], 0, 0});
      live[k] = live.back();
      live.pop_back();
    }
  }
  return ev;
}

void BM_AllocatorReplay(benchmark::State& state) {
  const memplan::MemEventStream ev = random_stream();
  int64_t reference = -1;
  for (auto _ : state) {
    memplan::CachingAllocator a;
    const memplan::AllocatorStats s = memplan::replay_allocator(a, ev);
    state.PauseTiming();
    if (s.oom || s.peak_reserved_bytes < s.peak_allocated_bytes || (reference >= 0 && reference != s.peak_reserved_bytes)) {
      std::cerr << "BM_AllocatorReplay: wrong answer\n";
      std::abort();
    }
    reference = s.peak_reserved_bytes;
    state.ResumeTiming();
  }
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(ev.size()) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AllocatorReplay)->Unit(benchmark::kMillisecond);

}  // namespace
