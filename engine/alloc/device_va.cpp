#include "engine/alloc/device_va.h"

#include <algorithm>

namespace memplan {

int64_t DeviceVaSpace::place(int64_t bytes) {
  if (!hole_bytes_.empty() && *hole_bytes_.rbegin() >= bytes) {
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      if (it->second < bytes) continue;
      const int64_t addr = it->first, rest = it->second - bytes;
      erase_hole(it);
      if (rest > 0) insert_hole(addr + bytes, rest);
      return addr;
    }
  }
  const int64_t addr = (lowest_ - bytes) / kTopDownAlignBytes * kTopDownAlignBytes;
  if (addr + bytes < lowest_) add_hole(addr + bytes, lowest_ - (addr + bytes));
  lowest_ = addr;
  return addr;
}

std::map<int64_t, int64_t>::iterator DeviceVaSpace::erase_hole(std::map<int64_t, int64_t>::iterator it) {
  hole_bytes_.erase(hole_bytes_.find(it->second));
  return holes_.erase(it);
}

void DeviceVaSpace::insert_hole(int64_t addr, int64_t bytes) {
  holes_[addr] = bytes;
  hole_bytes_.insert(bytes);
}

void DeviceVaSpace::add_hole(int64_t addr, int64_t bytes) {
  auto next = holes_.lower_bound(addr);
  if (next != holes_.end() && next->first == addr + bytes) {
    bytes += next->second;
    next = erase_hole(next);
  }
  if (next != holes_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == addr) {
      const int64_t merged = prev->second + bytes, at = prev->first;
      erase_hole(prev);
      insert_hole(at, merged);
      return;
    }
  }
  insert_hole(addr, bytes);
}

void DeviceVaSpace::release(int64_t addr, int64_t bytes) { add_hole(addr, bytes); }

void DeviceVaSpace::reserve(int64_t addr, int64_t bytes) {
  // Seeded ranges come from real addresses; nothing is known about the gaps between them, so none are holes.
  lowest_ = std::min(lowest_, addr);
  (void)bytes;
}

}  // namespace memplan
