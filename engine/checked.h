// Overflow-checked integer arithmetic for byte and FLOP counts.
//
// Every byte count in memplan is an int64_t. Products of user-supplied sizes (batch x seq x hidden x bytes)
// can exceed 2^63; these helpers throw InputError naming `what` instead of wrapping silently.
#pragma once
#include <cstdint>
#include <string>

#include "engine/errors.h"

namespace memplan {

inline int64_t checked_add(int64_t a, int64_t b, const char* what = "size") {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw InputError(what, std::to_string(a) + " + " + std::to_string(b), "byte count overflows 64 bits");
  return r;
}

inline int64_t checked_mul(int64_t a, int64_t b, const char* what = "size") {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw InputError(what, std::to_string(a) + " x " + std::to_string(b), "byte count overflows 64 bits");
  return r;
}

inline int64_t checked_sub(int64_t a, int64_t b, const char* what = "size") {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    throw InputError(what, std::to_string(a) + " - " + std::to_string(b), "byte count overflows 64 bits");
  return r;
}

// Rounds `bytes` up to a multiple of `align` (align > 0).
inline int64_t round_up(int64_t bytes, int64_t align, const char* what = "size") {
  int64_t rem = bytes % align;
  return rem == 0 ? bytes : checked_add(bytes, align - rem, what);
}

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

inline double to_mib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(kMiB); }

}  // namespace memplan
