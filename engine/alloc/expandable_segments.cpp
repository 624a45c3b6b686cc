// Expandable segments (PYTORCH_ALLOC_CONF=expandable_segments:True), part of CachingAllocator.
//
// Model (PyTorch's ExpandableSegment + find_expandable_block / map_block / unmap_block):
//   - a segment is a large reserved address range (9/8 of the device) per (pool, stream); only mapped pages
//     count in memory_reserved. Pages are 2 MiB in the small pool and 20 MiB in the large pool.
//   - a request that no cached block fits maps pages at the LOWEST address where free + unmapped space
//     adds up to the request (usually the segment's tail), merging with the free block before it;
//   - releasing cached memory unmaps every whole free page; a segment with nothing mapped is dropped.
// Mapping is all-or-nothing per call: a page that does not fit under the capacity fails the whole range.
#include <algorithm>
#include <cassert>
#include <limits>

#include "engine/alloc/caching_allocator.h"
#include "engine/checked.h"

namespace memplan {

namespace {
constexpr int64_t kUnlimitedVaBytes = int64_t{1} << 46;
}  // namespace

int32_t CachingAllocator::find_expandable_block(bool small, int32_t stream, int64_t size) {
  if (const StreamPool* pool = find_pool(small, stream)) {
    for (const BlockIndex::Entry& u : pool->unmapped) {  // by address
      int32_t c = u.block;
      // The free block right before the unmapped range can take the start of the request.
      const int32_t p = blocks_[c].prev;
      if (p >= 0 && !blocks_[p].allocated) c = p;
      int64_t bytes = 0;
      for (int32_t b = c; bytes < size && b >= 0 && !blocks_[b].allocated; b = blocks_[b].next) bytes += blocks_[b].size;
      if (bytes >= size) return c;
    }
  }
  // PyTorch reserves 9/8 of the device's total memory of address space per segment, whatever the
  // set_per_process_memory_fraction cap; mappings never exceed the device, so the range never runs out and is
  // modelled as unbounded. (Sizing it from a cap made a capped ResNet-50 run map one 20 MiB page less than
  // the recorded run, 5814 against 5834 MiB.)
  const int32_t seg = new_segment(next_va_, kUnlimitedVaBytes, small, stream, /*expandable=*/true);
  next_va_ = checked_add(next_va_, kUnlimitedVaBytes, "address");
  const int32_t head = segments_[seg].head;
  insert_free(head);  // unmapped: goes to unmapped_
  return head;
}

// Maps the pages covering the first `size` bytes of unmapped block `idx`; the mapped part joins its free
// neighbours and the pool. Returns false (nothing changed) when the pages do not fit under the capacity.
bool CachingAllocator::map_block(int32_t idx, int64_t size, int32_t* survivor) {
  Segment& seg = segments_[blocks_[idx].segment];
  assert(!blocks_[idx].mapped && size <= blocks_[idx].size && (blocks_[idx].addr - seg.addr) % seg.page == 0);
  const int64_t mapped = std::min(round_up(size, seg.page), blocks_[idx].size);
  if (!opt_.capacity_is_memory_fraction && !fits_capacity(mapped)) return false;
  erase_free(idx);
  if (mapped < blocks_[idx].size) insert_free(split_at(idx, mapped));  // the rest stays unmapped
  blocks_[idx].mapped = true;
  const int32_t s = merge_neighbours(idx);
  insert_free(s);
  segments_[blocks_[s].segment].mapped += mapped;
  reserved_bytes_ += mapped;
  ++num_device_allocs_;
  *survivor = s;
  return true;
}

bool CachingAllocator::try_allocate_expandable(bool small, int32_t stream, int64_t size, int32_t* out) {
  int32_t c = find_expandable_block(small, stream, size);
  // c is one of: unmapped -> ...; or free -> unmapped -> ...
  if (!blocks_[c].mapped && !map_block(c, std::min(blocks_[c].size, size), &c)) return false;
  while (blocks_[c].size < size) {
    const int32_t n = blocks_[c].next;
    assert(n >= 0 && !blocks_[n].mapped);
    if (!map_block(n, std::min(size - blocks_[c].size, blocks_[n].size), &c)) return false;
  }
  erase_free(c);
  *out = c;
  return true;
}

// Unmaps the whole pages inside free block `idx`; partial pages at either end stay mapped as free blocks.
void CachingAllocator::unmap_block(int32_t idx) {
  Segment& seg = segments_[blocks_[idx].segment];
  const int64_t off = blocks_[idx].addr - seg.addr;
  const int64_t first_page = (off + seg.page - 1) / seg.page;
  const int64_t end_page = (off + blocks_[idx].size) / seg.page;
  if (first_page >= end_page) return;
  erase_free(idx);
  const int64_t u_addr = seg.addr + first_page * seg.page;
  const int64_t u_size = (end_page - first_page) * seg.page;
  const int64_t before = u_addr - blocks_[idx].addr;
  const int64_t after = blocks_[idx].addr + blocks_[idx].size - (u_addr + u_size);
  // Partial pages at either end stay mapped, free, in the pool; the lower piece keeps index `idx`.
  int32_t u = idx;
  if (before > 0) {
    u = split_at(idx, before);
    insert_free(idx);
  }
  if (after > 0) insert_free(split_at(u, u_size));
  blocks_[u].mapped = false;
  const int32_t s = merge_neighbours(u);
  Segment& sg = segments_[blocks_[s].segment];
  sg.mapped -= u_size;
  reserved_bytes_ -= u_size;
  if (blocks_[s].prev < 0 && blocks_[s].next < 0) {  // nothing mapped any more: give the address space back
    sg.live = false;
    sg.head = -1;
    --num_live_segments_;
    drop_block(s);
    return;
  }
  insert_free(s);
}

}  // namespace memplan
