#include "engine/quantized_weights.h"

#include "engine/checked.h"

namespace memplan {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

QuantizedWeight quantized_weight(const QuantConfig& q, int64_t out_features, int64_t in_features) {
  QuantizedWeight w;
  const int64_t n = checked_mul(out_features, in_features, "quantised weight elements");
  if (q.base == QuantBase::int8) {
    w.packed_bytes = n;                  // Int8Params: int8 [out, in]
    w.absmax_bytes = out_features * 4;   // SCB: fp32 row scales [out]
    return w;
  }
  if (q.base == QuantBase::none) {
    w.packed_bytes = checked_mul(n, 2);  // not quantised: the 16-bit weight
    return w;
  }
  w.blocks = ceil_div(n, q.blocksize);
  w.packed_bytes = (n + 1) / 2;          // quantize_4bit: uint8 [(n + 1) // 2, 1]
  w.code_bytes = 16 * 4;                 // get_4bit_type: 16 fp32 values
  if (!q.double_quant) {
    w.absmax_bytes = w.blocks * 4;       // fp32 [blocks]
  } else {
    w.absmax_bytes = w.blocks;           // quantize_blockwise out: uint8 [blocks]
    w.absmax2_bytes = ceil_div(w.blocks, 256) * 4;  // its fp32 absmax, blocksize 256
    w.code2_bytes = 256 * 4;             // create_dynamic_map(): 256 fp32
    w.offset_bytes = 4;                  // absmax.mean(): a 0-d fp32 tensor
  }
  return w;
}

int64_t adam8bit_state_bytes(int64_t n) {
  if (n < 4096) return checked_mul(n, 8);      // min_8bit_size: two fp32 states
  return checked_add(checked_mul(n, 2), ceil_div(n, 256) * 8);
}

}  // namespace memplan
