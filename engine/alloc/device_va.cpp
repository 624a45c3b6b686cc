#include "engine/alloc/device_va.h"

#include <algorithm>

namespace memplan {

int64_t DeviceVaSpace::place(int64_t bytes) {
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {
    if (it->second < bytes) continue;
    const int64_t addr = it->first, rest = it->second - bytes;
    holes_.erase(it);
    if (rest > 0) holes_[addr + bytes] = rest;
    return addr;
  }
  const int64_t addr = (lowest_ - bytes) / kTopDownAlignBytes * kTopDownAlignBytes;
  if (addr + bytes < lowest_) add_hole(addr + bytes, lowest_ - (addr + bytes));
  lowest_ = addr;
  return addr;
}

void DeviceVaSpace::add_hole(int64_t addr, int64_t bytes) {
  auto next = holes_.lower_bound(addr);
  if (next != holes_.end() && next->first == addr + bytes) {
    bytes += next->second;
    next = holes_.erase(next);
  }
  if (next != holes_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == addr) {
      prev->second += bytes;
      return;
    }
  }
  holes_[addr] = bytes;
}

void DeviceVaSpace::release(int64_t addr, int64_t bytes) { add_hole(addr, bytes); }

void DeviceVaSpace::reserve(int64_t addr, int64_t bytes) {
  // Seeded ranges come from real addresses; nothing is known about the gaps between them, so none are holes.
  lowest_ = std::min(lowest_, addr);
  (void)bytes;
}

}  // namespace memplan
