// CachingAllocator: see caching_allocator.h for the stages and what is modelled.
//
// Layout: blocks live in one arena (`blocks_`, indices reused through `free_slots_`); each segment is a
// doubly linked chain of blocks in address order starting at `Segment::head`. Merges always keep the
// lower-address block, so a segment's head never changes. Free mapped blocks sit in their (pool, stream)'s
// `StreamPool::free` ordered by (size, address) exactly like PyTorch's BlockComparatorSize; unmapped expandable
// address space sits in `StreamPool::unmapped` ordered by address.
#include "engine/alloc/caching_allocator.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {
constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int64_t pow2_floor(int64_t v) { return int64_t{1} << (63 - __builtin_clzll(static_cast<uint64_t>(v))); }
}  // namespace

CachingAllocator::CachingAllocator(const AllocatorOptions& options)
    : opt_(options), max_split_(options.max_split_size_bytes == 0 ? kUnlimited : options.max_split_size_bytes) {
  if (opt_.capacity_bytes < 0)
    throw InputError("capacity_bytes", std::to_string(opt_.capacity_bytes), "must be >= 0 (0 = unlimited)");
  if (opt_.max_split_size_bytes != 0 && opt_.max_split_size_bytes <= kAllocLargeBufferBytes)
    throw InputError("max_split_size_bytes", std::to_string(opt_.max_split_size_bytes),
                     "must be 0 (unlimited) or larger than 20 MiB, as PyTorch requires");
  if (opt_.roundup_power2_divisions > 1 && !is_pow2(opt_.roundup_power2_divisions))
    throw InputError("roundup_power2_divisions", std::to_string(opt_.roundup_power2_divisions),
                     "must be a power of 2");
  if (opt_.cuda_malloc_granularity_bytes <= 0)
    throw InputError("cuda_malloc_granularity_bytes", std::to_string(opt_.cuda_malloc_granularity_bytes),
                     "must be > 0");
}

int64_t CachingAllocator::round_size_slow(int64_t requested, int32_t divisions) {
  if (requested < 0) throw InputError("size_bytes", std::to_string(requested), "allocation size must be >= 0");
  if (requested < kAllocMinBlockBytes) return kAllocMinBlockBytes;
  if (divisions > 1 && requested > kAllocMinBlockBytes * divisions) {
    // Next of `divisions` equal steps between the surrounding powers of two (1200, 4 -> 1280).
    if (is_pow2(requested)) return requested;
    const int64_t floor = pow2_floor(requested);
    const int64_t step = floor / pow2_floor(divisions);
    const int64_t down = requested & ~(step - 1);
    return down == requested ? requested : checked_add(down, step, "size_bytes");
  }
  return round_up(requested, kAllocMinBlockBytes, "size_bytes");
}

int64_t CachingAllocator::allocation_size(int64_t rounded) {
  if (rounded <= kAllocSmallSizeBytes) return kAllocSmallBufferBytes;
  if (rounded < kAllocMinLargeAllocBytes) return kAllocLargeBufferBytes;
  return round_up(rounded, kAllocRoundLargeBytes, "size_bytes");
}

// ---------------------------------------------------------------- block arena and pools

int32_t CachingAllocator::new_block(const Block& b) {
  if (!free_slots_.empty()) {
    const int32_t idx = free_slots_.back();
    free_slots_.pop_back();
    blocks_[idx] = b;
    return idx;
  }
  blocks_.push_back(b);
  return static_cast<int32_t>(blocks_.size() - 1);
}

void CachingAllocator::drop_block(int32_t idx) {
  blocks_[idx] = Block{};
  free_slots_.push_back(idx);
}

CachingAllocator::StreamPool& CachingAllocator::pool_of(bool small, int32_t stream) {
  if (StreamPool* p = find_pool(small, stream)) return *p;
  auto& pools = pools_[small];
  const auto at = std::find_if(pools.begin(), pools.end(), [&](const StreamPool& p) { return p.stream > stream; });
  return *pools.insert(at, StreamPool{.stream = stream, .free = {}, .unmapped = {}});
}

void CachingAllocator::insert_free(int32_t idx) {
  const Block& b = blocks_[idx];
  StreamPool* found = find_pool(b.small, b.stream);
  StreamPool& p = found ? *found : pool_of(b.small, b.stream);
  if (b.mapped) {
    p.free.insert({b.size, b.addr, idx});
  } else {
    p.unmapped.insert({b.addr, 0, idx});
  }
}

void CachingAllocator::erase_free(int32_t idx) {
  const Block& b = blocks_[idx];
  StreamPool* p = find_pool(pool_small(idx), b.stream);
  assert(p);
  [[maybe_unused]] const bool erased = b.mapped ? p->free.erase(b.size, b.addr) : p->unmapped.erase(b.addr, 0);
  assert(erased);
}

// PyTorch's try_merge_blocks: only free neighbours with the same mapping state merge.
bool CachingAllocator::can_merge(int32_t a, int32_t b) const {
  return b >= 0 && !blocks_[b].allocated && blocks_[b].mapped == blocks_[a].mapped;
}

// Neither block is in a pool afterwards unless the caller puts it there; the upper part copies the mapping
// state, stream and segment of `idx` and is free.
int32_t CachingAllocator::split_at(int32_t idx, int64_t offset) {
  assert(offset > 0 && offset < blocks_[idx].size);
  Block r = blocks_[idx];
  r.addr = blocks_[idx].addr + offset;
  r.size = blocks_[idx].size - offset;
  r.prev = idx;
  r.allocated = false;
  r.user = -1;
  const int32_t ri = new_block(r);
  if (blocks_[ri].next >= 0) blocks_[blocks_[ri].next].prev = ri;
  blocks_[idx].next = ri;
  blocks_[idx].size = offset;
  return ri;
}

int32_t CachingAllocator::merge(int32_t lower, int32_t upper) {
  Block& lo = blocks_[lower];
  lo.size += blocks_[upper].size;
  lo.next = blocks_[upper].next;
  if (lo.next >= 0) blocks_[lo.next].prev = lower;
  drop_block(upper);
  return lower;
}

// `idx` must be out of the pools; its free neighbours are taken out of theirs. Returns the merged block
// (still out of the pools).
int32_t CachingAllocator::merge_neighbours(int32_t idx) {
  int32_t cur = idx;
  const int32_t p = blocks_[cur].prev;
  if (can_merge(cur, p)) {
    erase_free(p);
    cur = merge(p, cur);
  }
  const int32_t n = blocks_[cur].next;
  if (can_merge(cur, n)) {
    erase_free(n);
    cur = merge(cur, n);
  }
  return cur;
}

// ---------------------------------------------------------------- malloc / free

bool CachingAllocator::get_free_block(bool small, int32_t stream, int64_t size, int32_t* out) {
  StreamPool* p = find_pool(small, stream);
  if (!p) return false;
  BlockIndex& pool = p->free;
  const BlockIndex::Entry* found = pool.first_at_least(size, kMinI64);
  if (!found) return false;
  // Only expandable_segments:True makes expandable segments (seeded segments never are).
  if (opt_.expandable_segments && blocks_[found->block].expandable) return get_expandable_free_block(pool, size, out);
  const int64_t found_size = found->major;
  last_alloc_.cand_size = found_size;
  last_alloc_.cand_addr = found->minor;
  // Oversize blocks (>= max_split_size) serve only oversize requests, and only within 20 MiB.
  if (size < max_split() && found_size >= max_split()) return false;
  if (size >= max_split() && found_size >= size + kAllocLargeBufferBytes) return false;
  *out = found->block;
  pool.erase_found();
  return true;
}

// get_free_block among expandable blocks: best fit counts the unmapped space an expandable block could still
// grow into, so the growing tail of a segment is chosen only when no tighter block exists.
bool CachingAllocator::get_expandable_free_block(BlockIndex& pool, int64_t size, int32_t* out) {
  auto it = pool.lower_bound(size, kMinI64);
  auto grow_size = [&](int32_t i) {
    const Block& b = blocks_[i];
    return b.size + (b.next >= 0 && !blocks_[b.next].mapped ? blocks_[b.next].size : 0);
  };
  for (auto next = it; blocks_[it->block].expandable && ++next != pool.end() &&
                       grow_size(next->block) < grow_size(it->block);)
    it = next;
  const int64_t found_size = it->major;
  last_alloc_.cand_size = found_size;
  last_alloc_.cand_addr = it->minor;
  if (size < max_split() && found_size >= max_split()) return false;
  if (size >= max_split() && found_size >= size + kAllocLargeBufferBytes) return false;
  *out = it->block;
  pool.erase(it);
  return true;
}

bool CachingAllocator::fits_capacity(int64_t extra_bytes) const {
  return opt_.capacity_bytes == 0 || checked_add(reserved_bytes_, extra_bytes, "reserved bytes") <= opt_.capacity_bytes;
}

int32_t CachingAllocator::new_segment(int64_t addr, int64_t va_size, bool small, int32_t stream, bool expandable) {
  Segment s;
  s.addr = addr;
  s.va_size = va_size;
  s.stream = stream;
  s.small = small;
  s.expandable = expandable;
  s.live = true;
  s.page = small ? kAllocSmallBufferBytes : kAllocLargeBufferBytes;
  segments_.push_back(s);
  const int32_t seg = static_cast<int32_t>(segments_.size() - 1);
  Block b;
  b.addr = addr;
  b.size = va_size;
  b.segment = seg;
  b.stream = stream;
  b.mapped = !expandable;
  b.small = small;
  b.expandable = expandable;
  segments_[seg].head = new_block(b);
  ++num_live_segments_;
  return seg;
}

bool CachingAllocator::alloc_block(bool small, int32_t stream, int64_t size, int64_t alloc_size, bool is_retry,
                                   int32_t* out) {
  if (is_retry) ++num_alloc_retries_;
  // set_per_process_memory_fraction is checked against the full segment size before anything is mapped.
  if (opt_.capacity_is_memory_fraction && !fits_capacity(alloc_size)) return false;
  if (opt_.expandable_segments) return try_allocate_expandable(small, stream, size, out);
  const int64_t device_bytes = round_up(alloc_size, opt_.cuda_malloc_granularity_bytes, "size_bytes");
  if (!opt_.capacity_is_memory_fraction && !fits_capacity(device_bytes)) return false;
  const int32_t seg = new_segment(va_.place(device_bytes), alloc_size, small, stream, /*expandable=*/false);
  segments_[seg].mapped = alloc_size;
  reserved_bytes_ += alloc_size;
  ++num_device_allocs_;
  *out = segments_[seg].head;  // handed out directly, never entering the pool
  return true;
}

bool CachingAllocator::alloc(int32_t block, int64_t size_bytes, int32_t stream) {
  if (block < 0) throw InputError("block", std::to_string(block), "block id must be >= 0");
  // Ids are dense and mostly new: grow geometrically (one element at a time was a fill call per alloc).
  if (static_cast<size_t>(block) >= live_.size())
    live_.resize(std::max(static_cast<size_t>(block) + 1, 2 * live_.size()), -1);
  if (live_[block] >= 0) throw InputError("block", std::to_string(block), "allocated twice without a free");
  const int64_t size = round_size(size_bytes, opt_.roundup_power2_divisions);
  const bool small = size <= kAllocSmallSizeBytes;

  using Path = AllocTrace::Path;
  // Field by field: the aggregate assignment compiled to a memset call and a copy.
  last_alloc_.path = Path::cache;
  last_alloc_.small = small;
  last_alloc_.stream = stream;
  last_alloc_.size = size;
  last_alloc_.cand_size = last_alloc_.cand_addr = kUnlimited;
  last_alloc_.seg_size = last_alloc_.seg_addr = 0;
  int32_t idx = -1;
  bool found = get_free_block(small, stream, size, &idx);
  const int64_t alloc_size = found ? 0 : allocation_size(size);  // a cache hit needs no segment size
  if (!found && alloc_block(small, stream, size, alloc_size, false, &idx)) {
    found = true;
    last_alloc_.path = opt_.expandable_segments ? Path::other : Path::new_segment;
    last_alloc_.seg_size = blocks_[idx].size;
    last_alloc_.seg_addr = blocks_[idx].addr;
  } else if (!found) {
    last_alloc_.path = Path::other;
    found = (release_available_cached_blocks(small, stream, size) &&
             alloc_block(small, stream, size, alloc_size, false, &idx)) ||
            (release_cached_blocks(), alloc_block(small, stream, size, alloc_size, true, &idx));
  }
  if (!found) return false;

  // should_split: small pool and expandable segments keep any >= 512 B remainder; the large pool keeps
  // remainders > 1 MiB of requests below max_split_size, the rest stays in the block as an unsplit tail.
  const int64_t remaining = blocks_[idx].size - size;
  const bool split = (small || opt_.expandable_segments) ? remaining >= kAllocMinBlockBytes
                                                         : (size < max_split() && remaining > kAllocSmallSizeBytes);
  if (split) insert_free(split_at(idx, size));
  Block& b = blocks_[idx];
  b.allocated = true;
  b.user = block;
  b.stream = stream;
  live_[block] = idx;
  allocated_bytes_ += b.size;
  return true;
}

void CachingAllocator::throw_not_live(int32_t block) {
  throw InputError("block", std::to_string(block), "not a live block");
}

void CachingAllocator::free(int32_t block) {
  check_user_block(block);
  const int32_t idx = live_[block];
  live_[block] = -1;
  Block& b = blocks_[idx];
  b.allocated = false;
  b.user = -1;
  allocated_bytes_ -= b.size;
  insert_free(merge_neighbours(idx));
}

// ---------------------------------------------------------------- releasing cached memory

void CachingAllocator::release_block(int32_t idx) {
  assert(blocks_[idx].prev < 0 && blocks_[idx].next < 0 && !segments_[blocks_[idx].segment].expandable);
  erase_free(idx);
  Segment& s = segments_[blocks_[idx].segment];
  va_.release(s.addr, round_up(s.va_size, opt_.cuda_malloc_granularity_bytes, "size_bytes"));
  reserved_bytes_ -= s.mapped;
  s.mapped = 0;
  s.live = false;
  s.head = -1;
  --num_live_segments_;
  drop_block(idx);
}

// Frees oversize (>= max_split_size) cached segments, only as many as the request needs.
bool CachingAllocator::release_available_cached_blocks(bool small, int32_t stream, int64_t size) {
  if (opt_.max_split_size_bytes == 0 || opt_.expandable_segments) return false;
  StreamPool* p = find_pool(small, stream);
  if (!p) return false;
  const BlockIndex& pool = p->free;
  const int64_t key_size = std::max(size, max_split());
  auto unsplit = [&](const BlockIndex::Entry& k) { return blocks_[k.block].prev < 0 && blocks_[k.block].next < 0; };
  auto it = pool.lower_bound(key_size, kMinI64);
  if (it != pool.end()) {
    if (!unsplit(*it)) return false;
    release_block(it->block);
    return true;
  }
  // No single block is large enough: free oversize blocks from the largest down (erasing an entry keeps the
  // iterators to those below it valid, block_index.h).
  if (it == pool.begin()) return false;
  --it;
  int64_t released = 0;
  while (released < key_size && it->major >= max_split() && unsplit(*it)) {
    const auto cur = it;
    released += cur->major;
    const bool last = it == pool.begin();
    if (!last) --it;
    release_block(cur->block);
    if (last) break;
  }
  return released >= key_size;
}

void CachingAllocator::release_pool(bool small) {
  std::vector<int32_t> to_release, to_unmap;
  for (const StreamPool& p : pools_[small]) {
    for (const BlockIndex::Entry& k : p.free) {
      const int32_t idx = k.block;
      if (segments_[blocks_[idx].segment].expandable) {
        to_unmap.push_back(idx);
      } else if (blocks_[idx].prev < 0 && blocks_[idx].next < 0) {
        to_release.push_back(idx);
      }
    }
  }
  for (int32_t idx : to_release) release_block(idx);
  for (int32_t idx : to_unmap) unmap_block(idx);
}

// PyTorch's release_cached_blocks (what empty_cache() and the OOM path call).
void CachingAllocator::release_cached_blocks() {
  release_pool(/*small=*/false);
  release_pool(/*small=*/true);
}

// ---------------------------------------------------------------- introspection and seeding

std::vector<CachingAllocator::SegmentView> CachingAllocator::segments() const {
  std::vector<SegmentView> out;
  for (const Segment& s : segments_) {
    if (!s.live) continue;
    SegmentView v;
    v.address = s.addr;
    v.address_space_bytes = s.va_size;
    v.mapped_bytes = s.mapped;
    v.small = s.small;
    v.expandable = s.expandable;
    v.stream = s.stream;
    for (int32_t i = s.head; i >= 0; i = blocks_[i].next) {
      const Block& b = blocks_[i];
      v.blocks.push_back({b.addr, b.size, b.allocated, b.mapped, b.user});
      if (b.allocated) v.allocated_bytes += b.size;
    }
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const SegmentView& a, const SegmentView& b) { return a.address < b.address; });
  return out;
}

int64_t CachingAllocator::address_of(int32_t block) const {
  check_user_block(block);
  return blocks_[live_[block]].addr;
}

int64_t CachingAllocator::num_cached_free_blocks() const {
  size_t n = 0;
  for (const auto& pools : pools_)
    for (const StreamPool& p : pools) n += p.free.size();
  return static_cast<int64_t>(n);
}

void CachingAllocator::seed_segment(int64_t address, int64_t size_bytes, bool small, int32_t stream,
                                    const std::vector<SeedBlock>& live) {
  if (address < 0 || size_bytes <= 0)
    throw InputError("seed_segment", std::to_string(address) + "+" + std::to_string(size_bytes),
                     "segment needs an address >= 0 and a positive size");
  const int64_t end = checked_add(address, size_bytes, "seed_segment");
  for (const Segment& s : segments_)
    if (s.live && address < s.addr + s.va_size && s.addr < end)
      throw InputError("seed_segment", std::to_string(address), "overlaps an existing segment");
  std::vector<SeedBlock> sorted = live;
  std::sort(sorted.begin(), sorted.end(), [](const SeedBlock& a, const SeedBlock& b) { return a.address < b.address; });

  const int32_t seg = new_segment(address, size_bytes, small, stream, /*expandable=*/false);
  segments_[seg].mapped = size_bytes;
  reserved_bytes_ += size_bytes;
  va_.reserve(address, size_bytes);
  // Carve the single free block the segment starts with: [gap][live][gap][live]...[gap].
  int32_t cur = segments_[seg].head;  // covers [cursor, end), free, out of the pools
  int64_t cursor = address;
  for (const SeedBlock& sb : sorted) {
    if (cur < 0 || sb.address < cursor || sb.size_bytes <= 0 || sb.address + sb.size_bytes > end)
      throw InputError("seed block", std::to_string(sb.block), "outside its segment or overlapping another");
    if (sb.block < 0) throw InputError("seed block", std::to_string(sb.block), "block id must be >= 0");
    if (static_cast<size_t>(sb.block) >= live_.size()) live_.resize(static_cast<size_t>(sb.block) + 1, -1);
    if (live_[sb.block] >= 0) throw InputError("seed block", std::to_string(sb.block), "already live");
    if (sb.address > cursor) {  // the free gap before the live block stays in `cur`
      const int32_t rest = split_at(cur, sb.address - cursor);
      insert_free(cur);
      cur = rest;
    }
    if (blocks_[cur].size > sb.size_bytes) split_at(cur, sb.size_bytes);  // remainder after the live block
    const int32_t live_idx = cur;
    blocks_[live_idx].allocated = true;
    blocks_[live_idx].user = sb.block;
    live_[sb.block] = live_idx;
    allocated_bytes_ += sb.size_bytes;
    cursor = sb.address + sb.size_bytes;
    cur = blocks_[live_idx].next;
  }
  if (cur >= 0 && !blocks_[cur].allocated) insert_free(cur);
}

// ---------------------------------------------------------------- repeated steps

CachingAllocator::Layout CachingAllocator::layout() const {
  Layout l;
  l.blocks.reserve(blocks_.size() - free_slots_.size());
  l.segments.reserve(static_cast<size_t>(num_live_segments_));
  for (const Segment& s : segments_) {
    if (!s.live) continue;
    const size_t first = l.blocks.size();
    for (int32_t i = s.head; i >= 0; i = blocks_[i].next) {
      const Block& b = blocks_[i];
      l.blocks.push_back({.addr = b.addr, .size = b.size, .stream = b.stream, .user = b.allocated ? b.user : -1,
                          .allocated = b.allocated, .mapped = b.mapped});
    }
    l.segments.push_back({.addr = s.addr, .va_size = s.va_size, .mapped = s.mapped, .stream = s.stream,
                          .small = s.small, .expandable = s.expandable,
                          .num_blocks = static_cast<int32_t>(l.blocks.size() - first)});
  }
  l.va = va_;
  l.next_va = next_va_;
  l.reserved_bytes = reserved_bytes_;
  l.allocated_bytes = allocated_bytes_;
  return l;
}

// The caller (step_repeat.cpp) passes a renaming of the live blocks: one distinct id >= 0 per live block.
void CachingAllocator::rename_live_blocks(const std::vector<int32_t>& users) {
  std::vector<int32_t> live;  // arena indices of the allocated blocks, in layout order
  live.reserve(users.size());
  for (const Segment& s : segments_) {
    if (!s.live) continue;
    for (int32_t i = s.head; i >= 0; i = blocks_[i].next)
      if (blocks_[i].allocated) live.push_back(i);
  }
  assert(live.size() == users.size());
  for (int32_t idx : live) live_[static_cast<size_t>(blocks_[idx].user)] = -1;
  for (size_t k = 0; k < live.size(); ++k) {
    const auto u = static_cast<size_t>(users[k]);
    if (u >= live_.size()) live_.resize(u + 1, -1);
    assert(live_[u] < 0 && "two live blocks renamed alike");
    live_[u] = live[k];
    blocks_[live[k]].user = users[k];
  }
}

}  // namespace memplan
