// Shared by the fuzz targets. The contract every target checks: on any input the code under test returns
// normally or throws memplan::InputError. Any other exception escapes LLVMFuzzerTestOneInput, which libFuzzer
// reports as a crash ("deadly signal" from std::terminate); sanitizers report memory errors and UB.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/estimate.h"

namespace memplan::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A small run of an imported model: short sequences and images keep each execution fast while still
// driving the graph builders, the replay and the allocator over the model's real layer structure. `variant`
// (e.g. the input size) alternates fp32 and amp_bf16 so the autocast paths are fuzzed too.
inline RunConfig small_run(const ModelSpec& m, size_t variant = 0) {
  RunConfig c;
  c.precision = variant % 2 ? Precision::amp_bf16 : Precision::fp32;
  c.batch_size = 1;
  c.seq_len = 16;
  c.image_size = 32;
  if (m.kind == ModelSpec::Kind::transformer && c.seq_len > m.transformer.max_position_embeddings)
    c.seq_len = m.transformer.max_position_embeddings;
  return c;
}

}  // namespace memplan::fuzz
