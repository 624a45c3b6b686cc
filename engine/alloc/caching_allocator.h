// A model of PyTorch's CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp, torch 2.11), one device.
//
// Stages of an allocation, as in PyTorch's DeviceCachingAllocator::malloc:
//   1. round the request (512 B multiples, or power-of-2 divisions when configured);
//   2. pick the pool (small: rounded size <= 1 MiB; large otherwise) and best-fit a cached free block of the
//      same stream (smallest size, then lowest address), refusing oversize blocks around max_split_size;
//   3. if none fits, get a new segment: cudaMalloc of 2 MiB (small), 20 MiB (large < 10 MiB) or the size
//      rounded up to 2 MiB; with expandable segments, map 2 MiB / 20 MiB pages at the lowest free address of
//      the pool's growing segment instead;
//   4. if the device (or cap) refuses: release oversize cached blocks (max_split_size set), retry; release
//      every cached unsplit segment (empty_cache), retry counting num_alloc_retries; else OOM;
//   5. split the block when the remainder is worth keeping (small / expandable: >= 512 B; large: > 1 MiB and
//      request < max_split_size); an unsplit tail stays inside the allocated block and counts as allocated.
// A free returns the block to its pool and merges it with free neighbours of the same segment.
//
// Addresses are virtual: segments are laid out at increasing addresses (PyTorch only uses addresses to break
// best-fit ties, and the real driver's order is not predictable). seed_segment() installs segments at given
// addresses, e.g. to replay a recorded trace from its real starting layout.
//
// Left out: CUDA graph private pools, cross-stream record_stream events (frees complete immediately),
// garbage_collection_threshold, per-interval roundup_power2_divisions, free-memory callbacks.
//
// Complexity: O(log n) per event in the number of cached blocks (ordered indexes keyed by size and address per
// (pool, stream), block_index.h), plus moving at most one index leaf.
#pragma once
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "engine/alloc/allocator_model.h"
#include "engine/alloc/block_index.h"
#include "engine/alloc/device_va.h"

namespace memplan {

constexpr int64_t kAllocMinBlockBytes = 512;             // kMinBlockSize
constexpr int64_t kAllocSmallSizeBytes = 1 << 20;        // kSmallSize: largest small-pool request
constexpr int64_t kAllocSmallBufferBytes = 2 << 20;      // kSmallBuffer: small-pool segment
constexpr int64_t kAllocMinLargeAllocBytes = 10 << 20;   // kMinLargeAlloc
constexpr int64_t kAllocLargeBufferBytes = 20 << 20;     // kLargeBuffer: segment for 1-10 MiB requests
constexpr int64_t kAllocRoundLargeBytes = 2 << 20;       // kRoundLarge

struct AllocatorOptions {
  // Bytes the allocator may reserve: the device's free memory, or the set_per_process_memory_fraction cap.
  // 0 = unlimited.
  int64_t capacity_bytes = 0;
  // true: capacity_bytes comes from set_per_process_memory_fraction, which PyTorch checks before cudaMalloc
  // against reserved + the segment size it would ask for (also with expandable segments, where that is
  // 20 MiB for a 1-10 MiB request even if fewer pages would be mapped).
  bool capacity_is_memory_fraction = false;
  // max_split_size_mb: cached blocks >= this are never split and serve only requests within 20 MiB of their
  // size. 0 = unlimited (PyTorch's default).
  int64_t max_split_size_bytes = 0;
  // roundup_power2_divisions: N > 1 rounds requests up to the next of N steps between powers of two.
  // 0 or 1 = off (PyTorch's default). One value for all sizes.
  int32_t roundup_power2_divisions = 0;
  // expandable_segments:True: one growing segment per (pool, stream), mapped in 2 MiB (small) or
  // 20 MiB (large) pages; blocks split whenever >= 512 B remain.
  bool expandable_segments = false;
  // Device bytes one cudaMalloc takes are its size rounded to this (2 MiB on H200).
  int64_t cuda_malloc_granularity_bytes = 2 << 20;
};

// Hidden visibility: the engine is compiled position-independent for the Python module, and there a
// default-visibility member function may be interposed at load time, so the compiler inlines none of these
// members into each other (the replay's small helpers were each a call: about a tenth of its instructions).
class [[gnu::visibility("hidden")]] CachingAllocator final : public AllocatorModel {
 public:
  explicit CachingAllocator(const AllocatorOptions& options = {});
  // `lent_live`: capacity for the user-id map (one int per block id the replay allocates; its contents are
  // dropped), handed back by take_live() for the next allocator (EstimateWorkspace).
  CachingAllocator(const AllocatorOptions& options, std::vector<int32_t> lent_live) : CachingAllocator(options) {
    live_ = std::move(lent_live);
    live_.clear();
  }
  std::vector<int32_t> take_live() { return std::move(live_); }

  // PyTorch's round_size(): requests below 512 B take 512 B; otherwise the next multiple of 512 B or, with
  // divisions > 1 and size > 512 * divisions, the next power-of-2 division. Throws InputError if negative.
  // Inline for the common case (a 512 B multiple, no divisions): a replay rounds every request.
  static int64_t round_size(int64_t requested_bytes, int32_t roundup_power2_divisions) {
    constexpr int64_t kFastMax = std::numeric_limits<int64_t>::max() - kAllocMinBlockBytes;
    if (roundup_power2_divisions <= 1 && requested_bytes >= kAllocMinBlockBytes && requested_bytes <= kFastMax)
      return (requested_bytes + (kAllocMinBlockBytes - 1)) & ~(kAllocMinBlockBytes - 1);
    return round_size_slow(requested_bytes, roundup_power2_divisions);
  }
  // PyTorch's get_allocation_size(): the cudaMalloc size for a rounded request that found no cached block.
  static int64_t allocation_size(int64_t rounded_bytes);

  bool alloc(int32_t block, int64_t size_bytes, int32_t stream) override;
  void free(int32_t block) override;
  int64_t allocated_bytes() const override { return allocated_bytes_; }
  int64_t reserved_bytes() const override { return reserved_bytes_; }
  int64_t num_alloc_retries() const override { return num_alloc_retries_; }
  int64_t num_segments() const override { return num_live_segments_; }
  int64_t num_device_allocs() const override { return num_device_allocs_; }

  // torch.cuda.empty_cache(): returns every cached unsplit segment (and, for expandable segments, every
  // fully free page) to the device.
  void empty_cache() { release_cached_blocks(); }

  // --- Introspection (tests, reports, timelines) ---
  struct BlockView {
    int64_t address = 0;
    int64_t size_bytes = 0;
    bool allocated = false;
    bool mapped = true;  // false only for the unmapped address space of an expandable segment
    int32_t block = -1;  // user id when allocated
  };
  struct SegmentView {
    int64_t address = 0;
    int64_t address_space_bytes = 0;  // == mapped bytes unless expandable
    int64_t mapped_bytes = 0;         // what the segment contributes to memory_reserved
    int64_t allocated_bytes = 0;
    bool small = false;
    bool expandable = false;
    int32_t stream = 0;
    std::vector<BlockView> blocks;  // in address order, tiling [address, address + address_space_bytes)
  };
  std::vector<SegmentView> segments() const;  // live segments by address
  int64_t address_of(int32_t block) const;    // address of a live block; InputError otherwise
  int64_t num_cached_free_blocks() const;     // mapped free blocks held in the pools

  // --- Warm start (trace replay) ---
  struct SeedBlock {
    int32_t block = -1;       // user id, live from now on
    int64_t address = 0;      // inside the segment
    int64_t size_bytes = 0;   // block size, unsplit tail included
  };
  // Installs a cudaMalloc'd segment at `address` (must not overlap another) holding `live` blocks; the gaps
  // between them become cached free blocks. Counts towards reserved / allocated but not device allocs.
  void seed_segment(int64_t address, int64_t size_bytes, bool small, int32_t stream,
                    const std::vector<SeedBlock>& live);

  // --- Repeated steps (step_repeat.h: a training step whose figures are derived from the previous one's) ---
  // Everything the allocator's future behaviour depends on, with the user ids of the live blocks: the live
  // segments in arena (creation) order, each segment's blocks in address order, the device address space and
  // the counters. Arena indices are left out: they only name blocks, they decide nothing.
  struct Layout {
    struct Seg {
      int64_t addr = 0, va_size = 0, mapped = 0;
      int32_t stream = 0;
      bool small = false, expandable = false;
      int32_t num_blocks = 0;
      bool operator==(const Seg&) const = default;
    };
    struct Blk {
      int64_t addr = 0, size = 0;
      int32_t stream = 0;
      int32_t user = -1;  // allocated blocks only; compared apart (ids differ between steps)
      bool allocated = false, mapped = true;
    };
    std::vector<Seg> segments;
    std::vector<Blk> blocks;  // segments' chains, in the order of `segments`
    DeviceVaSpace va;
    int64_t next_va = 0, reserved_bytes = 0, allocated_bytes = 0;
  };
  Layout layout() const;
  // Gives the live blocks, in Layout::blocks order, the user ids `users` (one per allocated block): the layout
  // a replay would have reached with other ids.
  void rename_live_blocks(const std::vector<int32_t>& users);
  // Adds what derived (not replayed) steps would have counted.
  void count_derived(int64_t retries, int64_t device_allocs) {
    num_alloc_retries_ += retries;
    num_device_allocs_ += device_allocs;
  }
  // How the last alloc() was served. `cache`: the best fit (size, address) = cand_*; `new_segment`: a
  // cudaMalloc'd segment at seg_* handed out whole, the pool's lower bound then being cand_* (a refused
  // oversize block) or none (cand_size == INT64_MAX); `other`: released cached memory, expandable mapping, OOM.
  struct AllocTrace {
    enum class Path : uint8_t { cache, new_segment, other };
    Path path = Path::other;
    bool small = false;
    int32_t stream = 0;
    int64_t size = 0;  // rounded request
    int64_t cand_size = 0, cand_addr = 0;
    int64_t seg_size = 0, seg_addr = 0;
  };
  const AllocTrace& last_alloc() const { return last_alloc_; }
  const AllocatorOptions& options() const { return opt_; }

 private:
  struct Block {
    int64_t addr = 0;
    int64_t size = 0;
    int32_t prev = -1, next = -1;  // neighbours inside the segment
    int32_t segment = -1;
    int32_t stream = 0;
    int32_t user = -1;  // user block id while allocated
    bool allocated = false;
    bool mapped = true;
    bool small = false;       // its segment's pool and kind, copied here: every pool operation needs them
    bool expandable = false;
  };
  struct Segment {
    int64_t addr = 0;
    int64_t va_size = 0;      // address space (== size unless expandable)
    int64_t mapped = 0;       // bytes counted in reserved
    int64_t page = 0;         // expandable: mapping granularity
    int32_t head = -1;        // lowest-address block; never changes (merges keep the lower block)
    int32_t stream = 0;
    bool small = false;
    bool expandable = false;
    bool live = false;
  };
  // The cached blocks of one (pool, stream). PyTorch's comparators order by stream first, so a request only
  // ever looks at its own stream's blocks: one index per stream, kept in ascending stream order.
  struct StreamPool {
    int32_t stream = 0;
    BlockIndex free;      // mapped free blocks by (size, address): BlockComparatorSize
    BlockIndex unmapped;  // unmapped expandable address space by (address, 0): BlockComparatorAddress
  };

  int32_t new_block(const Block& b);
  void drop_block(int32_t idx);
  StreamPool* find_pool(bool small, int32_t stream) {  // nullptr: nothing of that stream was ever cached
    for (StreamPool& p : pools_[small])
      if (p.stream == stream) return &p;
    return nullptr;
  }
  StreamPool& pool_of(bool small, int32_t stream);    // created when missing
  void insert_free(int32_t idx);
  void erase_free(int32_t idx);
  bool pool_small(int32_t idx) const { return blocks_[idx].small; }
  int64_t max_split() const { return max_split_; }  // max_split_size_bytes, or unlimited
  bool can_merge(int32_t a, int32_t b) const;
  int32_t split_at(int32_t idx, int64_t offset);  // idx keeps [0, offset); returns the new upper block
  int32_t merge(int32_t lower, int32_t upper);  // returns the survivor (lower)
  int32_t merge_neighbours(int32_t idx);         // merges idx with free prev/next of equal mapping
  bool get_free_block(bool small, int32_t stream, int64_t size, int32_t* out);
  bool get_expandable_free_block(BlockIndex& pool, int64_t size, int32_t* out);
  bool alloc_block(bool small, int32_t stream, int64_t size, int64_t alloc_size, bool is_retry, int32_t* out);
  bool fits_capacity(int64_t extra_bytes) const;
  int32_t new_segment(int64_t addr, int64_t va_size, bool small, int32_t stream, bool expandable);
  bool try_allocate_expandable(bool small, int32_t stream, int64_t size, int32_t* out);
  int32_t find_expandable_block(bool small, int32_t stream, int64_t size);
  bool map_block(int32_t idx, int64_t size, int32_t* survivor);
  void unmap_block(int32_t idx);
  bool release_available_cached_blocks(bool small, int32_t stream, int64_t size);
  void release_cached_blocks();
  void release_block(int32_t idx);
  void release_pool(bool small);
  void check_user_block(int32_t block) const {  // InputError unless `block` is live
    if (block < 0 || static_cast<size_t>(block) >= live_.size() || live_[block] < 0) [[unlikely]]
      throw_not_live(block);
  }
  [[noreturn]] static void throw_not_live(int32_t block);
  static int64_t round_size_slow(int64_t requested_bytes, int32_t roundup_power2_divisions);

  AllocatorOptions opt_;
  int64_t max_split_;
  std::vector<Block> blocks_;
  std::vector<int32_t> free_slots_;
  std::vector<Segment> segments_;
  std::vector<StreamPool> pools_[2];  // [0] large, [1] small; by ascending stream
  std::vector<int32_t> live_;  // user block id -> block index, -1 when not live
  DeviceVaSpace va_;                   // where cudaMalloc puts segments (their order breaks best-fit ties)
  int64_t next_va_ = int64_t{1} << 40;  // expandable segments' address reservations (order irrelevant)
  int64_t allocated_bytes_ = 0;
  int64_t reserved_bytes_ = 0;
  int64_t num_alloc_retries_ = 0;
  int64_t num_device_allocs_ = 0;
  int64_t num_live_segments_ = 0;
  AllocTrace last_alloc_;
};

}  // namespace memplan
