// Element types and their sizes.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace memplan {

enum class DType : uint8_t { f32, f16, bf16, f8, i64, i32, u8, boolean };

constexpr int64_t dtype_bytes(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::i64: return 8;
    case DType::f8: case DType::u8: case DType::boolean: return 1;
  }
  return 0;
}

constexpr bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f8;
}

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view s);

}  // namespace memplan
