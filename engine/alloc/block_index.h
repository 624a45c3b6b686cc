// BlockIndex: an ordered set of cached blocks, the caching allocator's equivalent of PyTorch's
// std::set<Block*, BlockComparatorSize> (key: size, then address) and BlockComparatorAddress (key: address).
//
// Layout: a short vector of leaves, each a sorted vector of at most kLeafMaxEntries entries; the leaves are in
// key order, so a lookup is a binary search over the leaves' last keys and one inside a leaf, and an insert or
// erase moves at most a leaf's tail. A full leaf splits in two; a leaf that empties is dropped, and one that
// shrinks to a quarter takes in its successor when both fit in half a leaf.
//
// Why not std::set: a replay inserts or erases a key on nearly every event (the best fit, the split
// remainder, the merges on free), and with hundreds of cached blocks a red-black tree spent its time chasing
// node pointers and allocating nodes: the tree was about 60 % of a Llama-2-70B estimate's allocator replay
// (bench/README.md). Here the entries are contiguous and nothing is allocated once the leaves exist.
//
// Contract: keys (major, minor) are unique. An insert invalidates iterators; erasing an entry keeps iterators to the entries before it valid (only the leaves after an
// erased entry's leaf move, and only the successor's entries move into it), which the allocator's release
// loop relies on.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace memplan {

class BlockIndex {
 public:
  struct Entry {
    int64_t major = 0;  // size (free blocks) or address (unmapped ranges)
    int64_t minor = 0;  // address (free blocks) or 0
    int32_t block = -1;
  };

  class iterator {
   public:
    const Entry& operator*() const { return ix_->leaves_[leaf_][at_]; }
    const Entry* operator->() const { return &**this; }
    iterator& operator++() {
      if (++at_ == ix_->leaves_[leaf_].size()) {
        ++leaf_;
        at_ = 0;
      }
      return *this;
    }
    iterator& operator--() {  // not on begin()
      if (at_ == 0) at_ = ix_->leaves_[--leaf_].size();
      --at_;
      return *this;
    }
    bool operator==(const iterator& o) const { return leaf_ == o.leaf_ && at_ == o.at_; }

   private:
    friend class BlockIndex;
    iterator(const BlockIndex* ix, size_t leaf, size_t at) : ix_(ix), leaf_(leaf), at_(at) {}
    const BlockIndex* ix_;
    size_t leaf_, at_;  // end(): leaf_ == number of leaves, at_ == 0
  };

  iterator begin() const { return {this, 0, 0}; }
  iterator end() const { return {this, leaves_.size(), 0}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // First entry with key >= (major, minor).
  iterator lower_bound(int64_t major, int64_t minor) const {
    const Entry key{major, minor, -1};
    const size_t leaf = leaf_for(key);
    if (leaf == leaves_.size()) return end();
    return {this, leaf, lower_bound_in(leaves_[leaf], key)};
  }

  void insert(const Entry& e) {
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

  void erase(iterator it) {
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

  // Erases the entry with this key; false when there is none.
  bool erase(int64_t major, int64_t minor) {
    const iterator it = lower_bound(major, minor);
    if (it == end() || it->major != major || it->minor != minor) return false;
    erase(it);
    return true;
  }

 private:
  static constexpr size_t kLeafMaxEntries = 32;
  // Without short-circuits, so the searches below compile to conditional moves: which way a comparison goes is
  // as good as random, and mispredicted branches were most of a search's time.
  static bool less(const Entry& a, const Entry& b) {
    return (a.major < b.major) | ((a.major == b.major) & (a.minor < b.minor));
  }
  // Index of the first entry >= key in a sorted run (v.size() when none).
  static size_t lower_bound_in(const std::vector<Entry>& v, const Entry& key) {
    if (v.empty()) return 0;
    const Entry* base = v.data();
    for (size_t n = v.size(); n > 1;) {
      const size_t half = n / 2;
      base += less(base[half - 1], key) ? half : 0;
      n -= half;
    }
    return static_cast<size_t>(base - v.data()) + (less(*base, key) ? 1 : 0);
  }
  // The first leaf whose last key is >= key (leaves_.size() when none).
  size_t leaf_for(const Entry& key) const { return lower_bound_in(last_, key); }

  std::vector<std::vector<Entry>> leaves_;  // in key order, none empty
  std::vector<Entry> last_;                 // each leaf's last entry, contiguous for the leaf search
  size_t size_ = 0;
};

}  // namespace memplan
