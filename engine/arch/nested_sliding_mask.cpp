#include "engine/arch/nested_sliding_mask.h"

#include <string_view>
#include <utility>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan {

TensorId nested_sliding_sdpa_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv) {
  if (rows <= 1) return sliding_sdpa_mask(b, rows, q, kv);
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::boolean}}, {}, {}, {}, {}})[0];
  };
  TensorId r = op("and", {op("gt", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  r = op("and", {r, op("le", {}, {1, 1, q, kv})}, {1, 1, q, kv});
  r = op("and", {r}, {1, 1, q, kv});
  return op("and", {r, op("index", {}, {rows, 1, 1, kv})}, {rows, 1, q, kv});
}

}  // namespace memplan
