// Measured kernel times per shape for the ops whose speed no single rate describes (issue 17 part 3):
// convolutions (cuDNN's heuristic engine per shape, ATen's native depthwise kernels, channels-last layouts) and
// training-mode batch norm (ATen's NCHW kernels: a grid over channels, so few channels over many pixels leave
// SMs idle). Measured on the H200 by calibrate/conv_time.py and calibrate/bn_time.py (GPU time of back-to-back
// calls, not Python's launch rate), embedded from data/calibration/h200-conv-time.tsv and h200-bn-time.tsv.
//
// Lookup contract (both tables):
//  - the same shape key and dtype as measured rows: piecewise linear in the batch size between measured batches
//    (a kernel's time is close to affine in N once N fills the GPU), along the last segment beyond the largest,
//    proportional to N below the smallest;
//  - another spatial size of the same key: the nearest measured one in pixel count at the batch giving the same
//    N*H*W (time follows the pixels a kernel tiles);
//  - fp16 without rows of its own: the bf16 rows (the same tensor-core and memory rates);
//  - nothing measured for the key: no answer (the caller costs the op by its class rate, ConvTimeTable::class_rate).
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>

#include "engine/dtype.h"

namespace memplan::timing {

struct ConvKernelShape {
  int64_t n = 1, c_in = 0, h = 0, w = 0;  // input [n, c_in, h, w]
  int64_t c_out = 0, kernel = 1, stride = 1, pad = 0, groups = 1, dilation = 1;
  bool channels_last = false;
  DType dtype = DType::f32;
};

// Seconds of one pass; forward and backward (grad_input unless the input is the image, c_in == 3, plus
// grad_weight).
struct KernelSeconds {
  double forward_s = 0, backward_s = 0;
};

// 2 x output elements x c_in / groups x kernel^2 (the forward's multiply-adds, counted twice).
double conv_flops(const ConvKernelShape& s);

// Text format: '#' comments, then "c_in c_out kernel stride pad h w groups dilation channels_last n dtype
// forward_us backward_us" per line. Throws InputError naming the line on malformed text or a batch listed twice.
class ConvTimeTable {
 public:
  explicit ConvTimeTable(std::string_view text);
  ~ConvTimeTable();
  ConvTimeTable(ConvTimeTable&&) noexcept;
  bool lookup(const ConvKernelShape& s, KernelSeconds& out) const;  // false: not measured (see the contract)
  // For a shape the table lacks: the median FLOP/s (forward, backward = 2x the forward FLOPs) of the measured
  // rows of its class (stem: c_in <= 4; dense 1x1; dense k x k; grouped; depthwise) and dtype (fp16: bf16's).
  // False when the table has no row of that class and dtype.
  bool class_rate(const ConvKernelShape& s, double& fwd_flops_per_s, double& bwd_flops_per_s) const;
  size_t rows() const;

 private:
  struct Table;
  std::unique_ptr<Table> t_;
};

// Text format: "c h w channels_last n dtype forward_us forward_backward_us"; dtype is the input's (weights fp32
// under autocast). KernelSeconds::backward_s = forward_backward - forward.
class BnTimeTable {
 public:
  explicit BnTimeTable(std::string_view text);
  ~BnTimeTable();
  BnTimeTable(BnTimeTable&&) noexcept;
  bool lookup(int64_t n, int64_t c, int64_t h, int64_t w, bool channels_last, DType dtype, KernelSeconds& out) const;
  size_t rows() const;

 private:
  struct Table;
  std::unique_ptr<Table> t_;
};

const ConvTimeTable& h200_conv_time();  // data/calibration/h200-conv-time.tsv, parsed once
const BnTimeTable& h200_bn_time();      // data/calibration/h200-bn-time.tsv

}  // namespace memplan::timing
