// cuDNN convolution workspaces: what one conv2d pass takes from the caching allocator for its duration.
//
// With torch.backends.cudnn.benchmark off (PyTorch's default) ATen runs the first engine cuDNN's heuristics rank
// for the shape and allocates that engine's workspace from the caching allocator around the call: forward after
// the output; backward after grad_input (dgrad) and again after grad_weight (wgrad). Which engine wins is a
// property of (GPU, cuDNN version, shape, dtype) with no closed form (the ResNet-50 trace has 400 B for a 1x1,
// 2x the input for layer1's 3x3, 8x for layer2's), so the sizes are measured (calibrate/conv_workspace.py) and
// replayed from a table. They never change peak allocated much, but they set the size of the segments the
// allocator carves everything else from, and so peak reserved (ResNet-18 b128: -22 % without them).
//
// Lookup contract (MeasuredConvWorkspace):
//  - same channels / kernel / stride / pad / dtype and spatial size as a measured row set: piecewise linear in the
//    batch size between measured batches (each cuDNN engine's workspace is affine in N: it tiles N*P*Q output
//    pixels), extrapolated beyond the largest measured batch along the last segment;
//  - an unmeasured spatial size: the nearest measured spatial size at the batch giving the same N*H*W;
//  - an unmeasured shape: the table's median ratio of workspace to the larger activation (input or output) for
//    the same pass, kernel class (1x1 or not) and dtype. Never negative;
//  - the input layout is part of the key: a channels-last input runs a different cuDNN engine than a contiguous one
//    (fp32 depthwise 7x7 wgrad: ~8x the activation channels-last, none contiguous). A channels-last shape takes
//    (a) the channels-last rows of its key, as above; else (b) the median ratio of the channels-last rows of its
//    class; else (c) exactly what the contiguous shape gets. Contiguous shapes never read channels-last rows, and
//    the contiguous ratios are medians over contiguous rows only. Each pass falls through (a)-(c) on its own (a
//    key whose rows leave dgrad unmeasured takes the class ratio for it).
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>

#include "engine/dtype.h"

namespace memplan {

struct ConvShape {
  int64_t n = 1, c_in = 0, h = 0, w = 0;      // input [n, c_in, h, w]
  int64_t c_out = 0, kernel = 1, stride = 1, pad = 0;  // square kernels
  DType dtype = DType::f32;
  int64_t groups = 1, dilation = 1;
  bool channels_last = false;  // input memory format torch.channels_last (NHWC strides); cuDNN picks other engines
};

struct ConvWorkspaceBytes {
  int64_t forward = 0;
  int64_t dgrad = 0;  // grad_input
  int64_t wgrad = 0;  // grad_weight
};

class ConvWorkspaceModel {
 public:
  virtual ~ConvWorkspaceModel() = default;
  virtual ConvWorkspaceBytes workspace(const ConvShape& s) const = 0;
};

// No workspaces (a fake for tests that hand-derive a step, and the "off" switch).
class NoConvWorkspace final : public ConvWorkspaceModel {
 public:
  ConvWorkspaceBytes workspace(const ConvShape&) const override { return {}; }
};

// The measured table. Text format (data/calibration/h200-cudnn-conv-workspace.tsv): '#' comment lines, then one
// row per line "c_in c_out kernel stride pad h w n dtype forward dgrad wgrad [groups [dilation [layout]]]" (dtype
// fp32|bf16|fp16; dgrad -1 = not measured; groups and dilation default to 1; layout nhwc = the input was
// channels-last, nchw = contiguous, the default). Throws InputError naming the line on malformed text, a layout
// token other than nchw|nhwc included.
//
// Grouped convolutions (groups > 1) are looked up under their own key. An unmeasured grouped shape falls back to
// the median ratio of the measured rows of its class (grouped, or depthwise: groups == c_in) for the same pass,
// kernel class and dtype, and to none (0 B) while the table has no such rows: cuDNN's grouped engines differ from
// the dense ones, so the dense ratios (2-8x the activation for a 3x3) would overstate them.
class MeasuredConvWorkspace final : public ConvWorkspaceModel {
 public:
  explicit MeasuredConvWorkspace(std::string_view table_text);
  ~MeasuredConvWorkspace() override;
  ConvWorkspaceBytes workspace(const ConvShape& s) const override;
  size_t rows() const;

 private:
  struct Table;
  std::unique_ptr<Table> t_;
};

// The table measured on an H200 (cuDNN 9.19, torch 2.11), embedded at build time.
const ConvWorkspaceModel& shipped_conv_workspace();

}  // namespace memplan
