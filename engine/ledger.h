// The ledger: every live byte sits in exactly one named row; rows always add up to the total.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace memplan {

enum class Row : uint8_t {
  weights,            // parameters and buffers
  gradients,          // parameter .grad tensors
  optimizer_state,    // exp_avg, exp_avg_sq, momentum buffers, factored moments, quantization scales
  activations,        // tensors saved for backward (and checkpoint inputs)
  autocast_cache,     // low-precision copies of parameters made by autocast
  activation_grads,   // gradients flowing through the graph during backward
  transient,          // op outputs not (yet) saved, kernel workspaces, optimizer temporaries
  inputs,             // the batch
  library_workspace,  // cuBLAS / cuBLASLt workspaces allocated through the caching allocator
  kv_cache,           // inference: past keys and values
  comm_buffers,       // distributed: all-gather / reduce-scatter staging buffers, DDP gradient buckets
  kCount
};
constexpr size_t kRowCount = static_cast<size_t>(Row::kCount);

std::string_view row_name(Row r);

struct Ledger {
  std::array<int64_t, kRowCount> bytes{};
  int64_t& operator[](Row r) { return bytes[static_cast<size_t>(r)]; }
  int64_t operator[](Row r) const { return bytes[static_cast<size_t>(r)]; }
  int64_t total() const {
    int64_t t = 0;
    for (int64_t b : bytes) t += b;
    return t;
  }
};

}  // namespace memplan
