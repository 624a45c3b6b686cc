#include "engine/dtype.h"

namespace memplan {

namespace {
struct Entry { DType t; std::string_view name; };
constexpr Entry kNames[] = {
    {DType::f32, "f32"}, {DType::f16, "f16"}, {DType::bf16, "bf16"}, {DType::f8, "f8"},
    {DType::i64, "i64"}, {DType::i32, "i32"}, {DType::u8, "u8"}, {DType::boolean, "bool"},
};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& e : kNames) if (e.t == t) return e.name;
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (const auto& e : kNames) if (e.name == s) return e.t;
  if (s == "float32" || s == "fp32") return DType::f32;
  if (s == "float16" || s == "fp16") return DType::f16;
  if (s == "bfloat16") return DType::bf16;
  if (s == "int64") return DType::i64;
  return std::nullopt;
}

}  // namespace memplan
