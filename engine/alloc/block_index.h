// BlockIndex: an ordered set of cached blocks, the caching allocator's equivalent of PyTorch's
// std::set<Block*, BlockComparatorSize> (key: size, then address) and BlockComparatorAddress (key: address).
//
// Two layouts, the first while it serves:
// Size classes: while at most kMaxClasses distinct majors are held at once (a training replay caches few sizes:
// in a Llama-2-70B replay at most 17 in the large pool, up to 484 blocks of one size), the entries live in one
// run per major, its entries by minor descending, the least at the back. The classes' majors sit in a fixed
// array searched by two rounds of independent compares; a best fit is that search and the back of a run. Most inserts and erases
// land within a few entries of the back (a block taken at the lowest address and freed again), so they scan
// a few entries and move fewer. A split remainder is often a class of its own for a few events: making and
// dropping a class shifts two small arrays, and the runs keep their capacity. An insert that would make one
// class too many moves every entry to the leaves, for good (random sizes pay that once).
// Leaves: a short vector of leaves, each a sorted vector of at most kLeafMaxEntries entries; the leaves are in
// key order, so a lookup is a binary search over the leaves' last keys and one inside a leaf, and an insert or
// erase moves at most a leaf's tail. A full leaf splits in two; a leaf that empties is dropped, and one that
// shrinks to a quarter takes in its successor when both fit in half a leaf.
// In front of the leaves, the kRecentEntries most recently inserted entries wait in a small buffer:
// most cached blocks leave the set again within a few inserts (a split remainder merged back when its block is
// freed, a workspace's block taken again: in a Llama-2-70B replay 61 % of erased entries were erased within 8
// inserts, 70 % within 16), and those never touch the leaves. A full buffer moves its oldest entry to the
// leaves. first_at_least / erase_found / insert / erase(key) answer over the buffer and the leaves; the
// iterators walk the leaves alone, so begin(), end() and lower_bound() first move the buffer into the leaves.
// The buffer's entries stay in fixed slots; their key order is a list of slot numbers, one byte per position,
// held in one 128-bit word, so an insert or erase shifts that word (two shifts and masks) instead of moving
// entries (memmove's size dispatch mispredicted on most calls), and a search is four fixed halvings.
//
// Why not std::set: a replay inserts or erases a key on nearly every event (the best fit, the split
// remainder, the merges on free), and with hundreds of cached blocks a red-black tree spent its time chasing
// node pointers and allocating nodes: the tree was about 60 % of a Llama-2-70B estimate's allocator replay
// (bench/README.md). Here the entries are contiguous and nothing is allocated once the leaves exist.
//
// Contract: keys (major, minor) are unique. An insert invalidates iterators and found entries; erasing an entry
// keeps iterators to the entries before it valid (only the leaves after an erased entry's leaf move, and only
// the successor's entries move into it; a size class's iterator counts from the back of its run, which the
// entries below an erased one keep, and an emptied class only moves the classes after it), which the
// allocator's release loop relies on.
#pragma once
#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace memplan {

class BlockIndex {
 public:
  struct Entry {
    int64_t major = 0;  // size (free blocks) or address (unmapped ranges)
    int64_t minor = 0;  // address (free blocks) or 0
    int32_t block = -1;
    uint32_t age = 0;   // the buffer's insertion clock (in the padding: one move shifts an entry with its age)
  };

  class iterator {
   public:
    const Entry& operator*() const { return ix_->run_entry(leaf_, at_); }
    const Entry* operator->() const { return &**this; }
    iterator& operator++() {
      if (++at_ == ix_->run_size(leaf_)) {
        ++leaf_;
        at_ = 0;
      }
      return *this;
    }
    iterator& operator--() {  // not on begin()
      if (at_ == 0) at_ = ix_->run_size(--leaf_);
      --at_;
      return *this;
    }
    bool operator==(const iterator& o) const { return leaf_ == o.leaf_ && at_ == o.at_; }

   private:
    friend class BlockIndex;
    iterator(const BlockIndex* ix, size_t leaf, size_t at) : ix_(ix), leaf_(leaf), at_(at) {}
    const BlockIndex* ix_;
    // A leaf and the position in it, or a size class and the entry's rank in it (0: its least minor).
    // end(): leaf_ == number of leaves (classes), at_ == 0.
    size_t leaf_, at_;
  };

  // Iteration in key order (the buffer is moved into the leaves first: the contents do not change).
  iterator begin() const {
    settle();
    return {this, 0, 0};
  }
  iterator end() const {
    settle();
    return {this, classes_ ? n_classes_ : leaves_.size(), 0};
  }
  size_t size() const { return size_ + n_recent_ + n_class_entries_; }
  bool empty() const { return size() == 0; }

  // First entry with key >= (major, minor).
  iterator lower_bound(int64_t major, int64_t minor) const {
    if (classes_) {
      size_t c = class_at_least(major), rank = 0;
      if (c < n_classes_ && class_major_[c] == major && (rank = rank_below(run_of(c), minor)) == run_of(c).size())
        ++c, rank = 0;
      return {this, c, c < n_classes_ ? rank : 0};
    }
    settle();
    const Entry key{major, minor, -1};
    const size_t leaf = leaf_for(key);
    if (leaf == leaves_.size()) return end();
    return {this, leaf, lower_bound_in(leaves_[leaf], key)};
  }

  // The best fit's query without moving the buffer: the first entry with key >= (major, minor), nullptr when
  // none. Valid until the next change; erase_found() erases it.
  const Entry* first_at_least(int64_t major, int64_t minor) const {
    if (classes_) {  // lower_bound() without the iterator
      size_t c = class_at_least(major), rank = 0;
      if (c == n_classes_) return nullptr;
      if (class_major_[c] == major && (rank = rank_below(run_of(c), minor)) == run_of(c).size()) {
        if (++c == n_classes_) return nullptr;
        rank = 0;
      }
      found_ = {false, c, rank};
      const std::vector<Entry>& run = run_of(c);
      return &run[run.size() - 1 - rank];
    }
    const Entry key{major, minor, -1};
    const size_t r = lower_bound_recent(key);
    const Entry* in_recent = r < n_recent_ ? &recent_at(r) : nullptr;
    const size_t leaf = leaf_for(key);
    const Entry* in_leaves = nullptr;
    size_t at = 0;
    if (leaf < leaves_.size()) {
      at = lower_bound_in(leaves_[leaf], key);
      in_leaves = &leaves_[leaf][at];
    }
    if (in_recent && (!in_leaves || less(*in_recent, *in_leaves))) {
      found_ = {true, r, 0};
      return in_recent;
    }
    found_ = {false, leaf, at};
    return in_leaves;
  }
  // Erases the entry the last first_at_least() returned (nothing changed since).
  void erase_found() {
    if (classes_) {
      erase_class(found_.pos, run_of(found_.pos).size() - 1 - found_.at);
    } else if (found_.recent) {
      erase_recent(found_.pos);
      ++recent_hits_;
    } else {
      erase_leaves({this, found_.pos, found_.at});
    }
  }

  // The size classes' paths stay small and inline; the leaves' are calls (kept out of line so that the
  // common path does not save the registers the buffer's code needs).
  void insert(const Entry& e) {
    if (!classes_ || !insert_class(e)) [[unlikely]] insert_buffered(e);
  }
  void erase(iterator it) {
    if (classes_) {
      assert(it.ix_ == this && it.leaf_ < n_classes_);
      erase_class(it.leaf_, run_of(it.leaf_).size() - 1 - it.at_);
      return;
    }
    erase_leaves(it);
  }
  // Erases the entry with this key; false when there is none. Iterators to the leaves stay valid as for
  // erase(iterator) (an entry still in the buffer is not in the leaves).
  bool erase(int64_t major, int64_t minor) {
    if (classes_) {
      const size_t c = class_at_least(major);
      if (c == n_classes_ || class_major_[c] != major) return false;
      const std::vector<Entry>& run = run_of(c);
      const size_t rank = rank_below(run, minor);
      if (rank == run.size() || run[run.size() - 1 - rank].minor != minor) return false;
      erase_class(c, run.size() - 1 - rank);
      return true;
    }
    return erase_buffered(major, minor);
  }

 private:
  [[gnu::noinline]] void insert_buffered(const Entry& e) {
    if (bypass_ > 0) {  // the buffer has not been paying off lately
      --bypass_;
      insert_leaves(e);
      return;
    }
    if (n_recent_ == kRecentEntries) evict_oldest();
    const size_t pos = lower_bound_recent(e);
    assert(pos == n_recent_ || less(e, recent_at(pos)));  // unique keys
    const auto slot = static_cast<uint8_t>(std::countr_zero(free_slots_));
    free_slots_ &= free_slots_ - 1;
    slots_[slot] = e;
    slots_[slot].age = ++clock_;
    const Order low = (Order{1} << (8 * pos)) - 1;  // the positions below pos keep their slots
    const Order order = load_order();
    store_order((order & low) | ((order & ~low) << 8) | (Order{slot} << (8 * pos)));
    ++n_recent_;
  }

  [[gnu::noinline]] void erase_leaves(iterator it) {
    assert(it.ix_ == this && it.leaf_ < leaves_.size());
    --size_;
    const size_t leaf = it.leaf_;
    auto& l = leaves_[leaf];
    l.erase(l.begin() + static_cast<std::ptrdiff_t>(it.at_));
    if (l.empty()) {
      leaves_.erase(leaves_.begin() + static_cast<std::ptrdiff_t>(leaf));
      last_.erase(last_.begin() + static_cast<std::ptrdiff_t>(leaf));
      return;
    }
    if (leaf + 1 < leaves_.size() && l.size() <= kLeafMaxEntries / 4 &&
        l.size() + leaves_[leaf + 1].size() <= kLeafMaxEntries / 2) {
      const auto& next = leaves_[leaf + 1];
      l.insert(l.end(), next.begin(), next.end());
      leaves_.erase(leaves_.begin() + static_cast<std::ptrdiff_t>(leaf) + 1);
      last_.erase(last_.begin() + static_cast<std::ptrdiff_t>(leaf) + 1);
    }
    last_[leaf] = l.back();
  }

  [[gnu::noinline]] bool erase_buffered(int64_t major, int64_t minor) {
    const Entry key{major, minor, -1};
    const size_t r = lower_bound_recent(key);
    if (r < n_recent_ && recent_at(r).major == major && recent_at(r).minor == minor) {
      erase_recent(r);
      ++recent_hits_;
      return true;
    }
    const size_t leaf = leaf_for(key);
    if (leaf == leaves_.size()) return false;
    const size_t at = lower_bound_in(leaves_[leaf], key);
    const Entry& e = leaves_[leaf][at];
    if (e.major != major || e.minor != minor) return false;
    erase_leaves({this, leaf, at});
    return true;
  }

  static constexpr size_t kLeafMaxEntries = 32;
  static constexpr size_t kRecentEntries = 16;
  static constexpr size_t kMaxClasses = 32;
  static constexpr int64_t kNoClass = INT64_MAX;  // class_major_ past n_classes_ (no real major reaches it)

  // A run of the iterators: a leaf, or a size class (its entries by minor descending, rank 0 at the back).
  size_t run_size(size_t run) const { return classes_ ? run_of(run).size() : leaves_[run].size(); }
  const Entry& run_entry(size_t run, size_t at) const {
    return classes_ ? run_of(run)[run_of(run).size() - 1 - at] : leaves_[run][at];
  }
  const std::vector<Entry>& run_of(size_t c) const { return runs_[class_run_[c]]; }
  std::vector<Entry>& run_of(size_t c) { return runs_[class_run_[c]]; }
  // The first class whose major is >= major (n_classes_ when none): how many majors are below it, counted in
  // two rounds of independent compares (which block of 8 of the padded array, then inside that block). Five
  // halvings were a chain of dependent loads and compares, each waiting for the previous one, the longest
  // latency of every insert, erase and best fit (about half of the allocator replay's time, sampled).
  size_t class_at_least(int64_t major) const {
    static_assert(kMaxClasses == 32);
    const int64_t* m = class_major_;
    const size_t block = size_t{m[7] < major} + size_t{m[15] < major} + size_t{m[23] < major} + size_t{m[31] < major};
    const int64_t* b = m + 8 * block;  // block 4 is the padding: all kNoClass
    const size_t in_block = (size_t{b[0] < major} + size_t{b[1] < major}) + (size_t{b[2] < major} + size_t{b[3] < major}) +
                            (size_t{b[4] < major} + size_t{b[5] < major}) + (size_t{b[6] < major} + size_t{b[7] < major});
    return std::min(8 * block + in_block, n_classes_);
  }
  // How many entries of a run (minor descending) have a minor below `minor`: counted from the back, where
  // nearly every operation of a replay lands, then by halving when that is not close.
  static size_t rank_below(const std::vector<Entry>& run, int64_t minor) {
    const size_t n = run.size();
    size_t r = 0;
    for (; r < n && r < 8; ++r)
      if (run[n - 1 - r].minor >= minor) return r;
    if (r == n) return n;
    // run[0, n - 8) holds the rest, descending: the entries below `minor` are a suffix of it.
    const auto first_below = std::partition_point(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(n - 8),
                                                  [&](const Entry& e) { return e.minor >= minor; });
    return n - static_cast<size_t>(first_below - run.begin());
  }
  // In the body of a loop shifting a few array entries: GCC turns such a loop into memmove calls (two per
  // class made or dropped, one per array), whose call and size dispatch cost more than the few moves.
  static void keep_loop() { asm volatile("" ::: "memory"); }
  // Inserts into the class of e.major (made when missing); false when that would be one class too many, after
  // moving every entry to the leaves. Most classes made hold one split remainder that is erased again soon:
  // making and dropping a class moves bytes of two small arrays, the runs stay where they are.
  bool insert_class(const Entry& e) {
    const size_t c = class_at_least(e.major);
    if (c == n_classes_ || class_major_[c] != e.major) {
      if (n_classes_ == kMaxClasses) {
        classes_to_leaves();
        return false;
      }
      const uint8_t run = class_run_[n_classes_];  // the first spare run
      for (size_t i = n_classes_; i > c; --i) {
        class_major_[i] = class_major_[i - 1];
        class_run_[i] = class_run_[i - 1];
        keep_loop();
      }
      class_major_[c] = e.major;
      class_run_[c] = run;
      ++n_classes_;
    }
    std::vector<Entry>& run = run_of(c);
    const size_t rank = rank_below(run, e.minor);
    assert(rank == 0 || run[run.size() - rank].minor < e.minor);
    assert(rank == run.size() || run[run.size() - 1 - rank].minor > e.minor);  // unique keys
    run.push_back(e);  // then moved down past the `rank` entries below it
    for (size_t i = run.size() - 1, j = 0; j < rank; --i, ++j) run[i] = run[i - 1];
    if (rank > 0) run[run.size() - 1 - rank] = e;
    ++n_class_entries_;
    return true;
  }
  void erase_class(size_t c, size_t pos) {
    std::vector<Entry>& run = run_of(c);
    for (size_t i = pos; i + 1 < run.size(); ++i) run[i] = run[i + 1];
    run.pop_back();
    --n_class_entries_;
    if (!run.empty()) return;
    // The emptied run becomes the first spare; the classes after it move down one.
    const uint8_t spare = class_run_[c];
    for (size_t i = c; i + 1 < n_classes_; ++i) {
      class_major_[i] = class_major_[i + 1];
      class_run_[i] = class_run_[i + 1];
      keep_loop();
    }
    --n_classes_;
    class_major_[n_classes_] = kNoClass;
    class_run_[n_classes_] = spare;
  }
  // Every entry to the leaves, in key order; the classes stay off from here on.
  void classes_to_leaves() {
    classes_ = false;
    for (size_t c = 0; c < n_classes_; ++c)
      for (size_t i = run_of(c).size(); i-- > 0;) insert_leaves(run_of(c)[i]);
    for (std::vector<Entry>& run : runs_) std::vector<Entry>().swap(run);
    n_classes_ = n_class_entries_ = 0;
  }

  // The key as one signed 128-bit number (minor's sign bit flipped, so that it orders as the low half), so that
  // a comparison is a compare and a subtract-with-borrow and the searches below compile to conditional moves:
  // which way a comparison goes is as good as random, and mispredicted branches were most of a search's time
  // (two compares joined by & and | still compiled to branches).
  __extension__ using Key = __int128;
  __extension__ using Order = unsigned __int128;  // the buffer's order_, 16 bytes
  static Key key_of(const Entry& e) {
    constexpr uint64_t kSign = uint64_t{1} << 63;
    return (Key{e.major} << 64) | Key{static_cast<uint64_t>(e.minor) ^ kSign};
  }
  static bool less(const Entry& a, const Entry& b) { return key_of(a) < key_of(b); }
  // Index of the first entry >= key in a sorted run of n entries (n when none).
  static size_t lower_bound_in(const Entry* v, size_t n, const Entry& key) {
    if (n == 0) return 0;
    const Key k = key_of(key);
    const Entry* base = v;
    for (; n > 1;) {
      const size_t half = n / 2;
      base += key_of(base[half - 1]) < k ? half : 0;
      n -= half;
    }
    return static_cast<size_t>(base - v) + (key_of(*base) < k ? 1 : 0);
  }
  // The same over the buffer, whose positions from n_recent_ on name the sentinel slot (above every key): a
  // fixed four halvings of its 16 positions and a last step, with no loop to mispredict.
  size_t lower_bound_recent(const Entry& key) const {
    static_assert(kRecentEntries == 16);
    const Key k = key_of(key);
    size_t i = 0;
    i += key_of(recent_at(i + 7)) < k ? 8 : 0;
    i += key_of(recent_at(i + 3)) < k ? 4 : 0;
    i += key_of(recent_at(i + 1)) < k ? 2 : 0;
    i += key_of(recent_at(i)) < k ? 1 : 0;
    return i + (key_of(recent_at(i)) < k ? 1 : 0);
  }
  const Entry& recent_at(size_t pos) const { return slots_[order_[pos]]; }
  Order load_order() const {
    Order v;
    std::memcpy(&v, order_, sizeof v);
    return v;
  }
  void store_order(Order v) const { std::memcpy(order_, &v, sizeof v); }
  static size_t lower_bound_in(const std::vector<Entry>& v, const Entry& key) {
    return lower_bound_in(v.data(), v.size(), key);
  }
  // The first leaf whose last key is >= key (leaves_.size() when none).
  size_t leaf_for(const Entry& key) const { return lower_bound_in(last_, key); }

  // Frees position pos's slot; the positions above it move down one, the last one names the sentinel.
  void erase_recent(size_t pos) {
    --n_recent_;
    free_slots_ |= 1u << order_[pos];
    const Order low = (Order{1} << (8 * pos)) - 1;
    const Order order = load_order();
    store_order((order & low) | ((order >> 8) & ~low) | (Order{kSentinelSlot} << 8 * (kRecentEntries - 1)));
  }
  // Moves the oldest entry to the leaves. Where entries outlive the buffer (random lifetimes), most entries
  // would pay the buffer on top of the leaves: when evictions outnumber the entries erased from the buffer
  // over a round of kRound evictions (fewer than half the entries die young: a random stream's 2 M events
  // keep about 30 %, a 70B replay about 90 %), inserts go straight to the leaves for a while, twice as long after
  // each such round in a row (kMinBypass to kMaxBypass inserts): a phase of long-lived blocks in a replay
  // (the optimizer's temporaries, zero_grad) costs little, a random stream soon stops trying.
  void evict_oldest() {
    size_t oldest = 0;  // the position whose age is furthest from the clock (which may wrap)
    for (size_t i = 1; i < n_recent_; ++i)
      oldest = clock_ - recent_at(i).age > clock_ - recent_at(oldest).age ? i : oldest;
    insert_leaves(recent_at(oldest));
    erase_recent(oldest);
    if (++evictions_ == kRound) {
      if (recent_hits_ < evictions_) {
        settle();
        bypass_ = next_bypass_;
        next_bypass_ = std::min(next_bypass_ * 2, kMaxBypass);
      } else {
        next_bypass_ = kMinBypass;
      }
      evictions_ = recent_hits_ = 0;
    }
  }
  // Moves the buffer into the leaves (what the iterators walk). Logically const: the set does not change.
  void settle() const {
    for (size_t i = 0; i < n_recent_; ++i) insert_leaves(recent_at(i));
    n_recent_ = 0;
    free_slots_ = kAllSlotsFree;
    std::memset(order_, kSentinelSlot, sizeof order_);
  }

  void insert_leaves(const Entry& e) const {
    ++size_;
    if (leaves_.empty()) {
      leaves_.emplace_back().reserve(kLeafMaxEntries + 1);
      leaves_.back().push_back(e);
      last_.push_back(e);
      return;
    }
    const size_t leaf = std::min(leaf_for(e), leaves_.size() - 1);  // past every key: the last leaf's end
    auto& l = leaves_[leaf];
    const size_t pos = lower_bound_in(l, e);
    assert(pos == l.size() || less(e, l[pos]));  // unique keys
    l.insert(l.begin() + static_cast<std::ptrdiff_t>(pos), e);
    if (l.size() <= kLeafMaxEntries) {
      last_[leaf] = l.back();
      return;
    }
    std::vector<Entry> upper;
    upper.reserve(kLeafMaxEntries + 1);
    upper.assign(l.begin() + kLeafMaxEntries / 2, l.end());
    l.resize(kLeafMaxEntries / 2);
    last_[leaf] = l.back();
    last_.insert(last_.begin() + static_cast<std::ptrdiff_t>(leaf) + 1, upper.back());
    leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(leaf) + 1, std::move(upper));
  }

  // `mutable` for settle(), which moves the buffer into the leaves without changing the set.
  mutable std::vector<std::vector<Entry>> leaves_;  // in key order, none empty
  mutable std::vector<Entry> last_;                 // each leaf's last entry, contiguous for the leaf search
  mutable size_t size_ = 0;                         // entries in the leaves
  // The buffer: entries in slots 0..15, slot 16 the sentinel (a key above every other); order_[p] the slot at
  // position p in key order, the sentinel's from n_recent_ on; free_slots_ has bit s set when slot s is free.
  static constexpr uint8_t kSentinelSlot = kRecentEntries;
  static constexpr uint32_t kAllSlotsFree = (1u << kRecentEntries) - 1;
  Entry slots_[kRecentEntries + 1] = {{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                                      {INT64_MAX, INT64_MAX, -1, 0}};
  mutable uint8_t order_[kRecentEntries] = {kSentinelSlot, kSentinelSlot, kSentinelSlot, kSentinelSlot,
                                            kSentinelSlot, kSentinelSlot, kSentinelSlot, kSentinelSlot,
                                            kSentinelSlot, kSentinelSlot, kSentinelSlot, kSentinelSlot,
                                            kSentinelSlot, kSentinelSlot, kSentinelSlot, kSentinelSlot};
  mutable uint32_t free_slots_ = kAllSlotsFree;
  mutable size_t n_recent_ = 0;
  uint32_t clock_ = 0;
  static constexpr uint32_t kRound = 256, kMinBypass = 1024, kMaxBypass = 65536;
  uint32_t evictions_ = 0, recent_hits_ = 0, bypass_ = 0, next_bypass_ = kMinBypass;
  struct Found {
    bool recent;
    size_t pos, at;  // the buffer's position pos, or leaves_[pos][at]
  };
  mutable Found found_{false, 0, 0};  // classes: the class and the rank

  // The size classes (while classes_): class c holds the entries of major class_major_[c], ascending in c.
  bool classes_ = true;
  size_t n_classes_ = 0, n_class_entries_ = 0;
  // 8 entries of padding past kMaxClasses, always kNoClass (class_at_least reads them as a fifth block).
  int64_t class_major_[kMaxClasses + 8] = {kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass,
                                           kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass,
                                           kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass,
                                           kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass,
                                           kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass, kNoClass};
  // The classes' runs: class c's entries are runs_[class_run_[c]]; class_run_ past n_classes_ lists the spare
  // (empty) runs, whose capacity is kept.
  uint8_t class_run_[kMaxClasses] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                     16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  std::vector<Entry> runs_[kMaxClasses];
};

}  // namespace memplan
