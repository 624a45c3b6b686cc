// The cat of kv_update (builders.h) over an explicit number of cached positions, for a caller whose pass's
// past_len is not its cache's length (T5Gemma's decoder: an inference pass's past_len counts the encoder prompt
// too). kv_update(b, k, v, window) is this with b.pass().past_len, after its no-cache early return.
#pragma once
#include <cstdint>
#include <utility>

#include "engine/graph_builder.h"

namespace memplan {

std::pair<TensorId, TensorId> kv_cat_update(GraphBuilder& b, TensorId k, TensorId v, int64_t past, int64_t window);

}  // namespace memplan
