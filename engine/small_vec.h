// SmallVec: a vector with N elements stored inline, for the short per-op lists of the IR (an op reads, writes and
// saves a handful of tensors). It keeps graph building free of a heap allocation per list, which dominated the
// time to build an 80-layer graph. Trivially copyable element types only.
//
// Layout: the heap pointer shares the inline storage (a list is on the heap exactly when its capacity exceeds
// N) and size and capacity are 32-bit, so a list costs N elements (at least one pointer) plus 8 bytes: an Op's
// seven lists, at the same inline capacities, went from 440 to 328 bytes (an Op from 456 to 344). The graph's op
// table is one of the largest an estimate writes, and every page of it written for the first time is a page
// fault.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace memplan {

template <typename T, size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVec holds trivially copyable elements");
  static_assert(N >= 1 && N < UINT32_MAX);

 public:
  SmallVec() = default;
  SmallVec(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  SmallVec(const std::vector<T>& v) { assign(v.data(), v.data() + v.size()); }  // NOLINT: implicit by design
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) { clear(); assign(o.begin(), o.end()); }
    return *this;
  }
  SmallVec& operator=(std::initializer_list<T> il) { clear(); assign(il.begin(), il.end()); return *this; }
  SmallVec& operator=(const std::vector<T>& v) { clear(); assign(v.data(), v.data() + v.size()); return *this; }
  SmallVec(SmallVec&& o) noexcept { steal(o); }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) { release(); steal(o); }
    return *this;
  }
  ~SmallVec() { release(); }

  void push_back(const T& v) {
    const T copy = v;  // v may be an element of this list, which grow() moves (and whose inline bytes it reuses)
    if (size_ == cap_) grow(size_t{cap_} * 2);
    data()[size_++] = copy;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return on_heap() ? heap_ : inline_; }
  const T* data() const { return on_heap() ? heap_ : inline_; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  bool operator==(const SmallVec& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  bool on_heap() const { return cap_ > N; }
  void assign(const T* b, const T* e) {
    const size_t n = static_cast<size_t>(e - b);
    if (n > cap_) grow(n);
    std::copy(b, e, data());
    size_ = static_cast<uint32_t>(n);
  }
  // Moves the elements to a heap buffer of `cap` (> N) elements.
  void grow(size_t cap) {
    if (cap > UINT32_MAX) throw std::length_error("SmallVec: more than 2^32 elements");
    T* p = new T[cap];
    std::copy(begin(), end(), p);
    release();
    heap_ = p;
    cap_ = static_cast<uint32_t>(cap);
  }
  void release() {
    if (on_heap()) delete[] heap_;
    cap_ = N;
  }
  void steal(SmallVec& o) {
    size_ = o.size_;
    if (o.on_heap()) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.cap_ = N;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
  }

  union {
    T inline_[N] = {};  // while cap_ == N
    T* heap_;           // while cap_ > N
  };
  uint32_t size_ = 0;
  uint32_t cap_ = N;
};

}  // namespace memplan
