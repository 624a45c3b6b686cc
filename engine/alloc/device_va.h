// Where cudaMalloc puts a new allocation in the device's virtual address space.
//
// The caching allocator's best fit breaks ties between equal-sized free blocks by the lowest address, so the
// order of segment addresses decides which of two equal blocks a request reuses, and with it which segments
// stay whole. Observed on the H200 (CUDA 13 driver; allocator traces recorded from process start,
// data/validation/traces/*-from-start.json.gz):
//  - an allocation that fits a hole left in the address space goes to the lowest-addressed such hole;
//  - otherwise it goes below everything placed so far, its start aligned down to 32 MiB, and the padding left
//    above it becomes a hole (a 198 MiB segment lands 224 MiB below the previous one, 100 MiB -> 128, 392 -> 416);
//  - cudaFree returns the range as a hole.
// So newer segments mostly sit below older ones and win ties, while small segments fill the gaps.
#pragma once
#include <cstdint>
#include <map>
#include <set>

namespace memplan {

class DeviceVaSpace {
 public:
  static constexpr int64_t kTopDownAlignBytes = int64_t{32} << 20;

  // Address for `bytes` (a multiple of the 2 MiB mapping granularity).
  int64_t place(int64_t bytes);
  // cudaFree of [addr, addr + bytes).
  void release(int64_t addr, int64_t bytes);
  // A range known to be taken (segments seeded from a recorded layout); placement continues below it.
  void reserve(int64_t addr, int64_t bytes);

  bool operator==(const DeviceVaSpace&) const = default;  // the same placements from here on

 private:
  void add_hole(int64_t addr, int64_t bytes);
  std::map<int64_t, int64_t>::iterator erase_hole(std::map<int64_t, int64_t>::iterator it);
  void insert_hole(int64_t addr, int64_t bytes);
  int64_t lowest_ = int64_t{1} << 62;  // start of the lowest range placed
  std::map<int64_t, int64_t> holes_;   // address -> bytes, coalesced
  std::multiset<int64_t> hole_bytes_;  // the same holes by size: a request no hole fits skips the address scan
};

}  // namespace memplan
