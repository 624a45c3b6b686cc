// The cuDNN convolution workspace table (engine/conv_workspace.h, with its layout column) and the step-time model's tables (engine/time/): per-shape conv and batch-norm times, the op-rate table, host costs
// per op class (and the norm rows' interpolation), checkpointing's host rows, fitted coefficients, the step-time bands and the fit's profile-class table (cli/time_fit.h
// class_anchors), each parsed from the same bytes, then looked up at a few shapes (the
// interpolation and the spatial / dtype fallbacks run on whatever the parser accepted).
#include <cmath>

#include "cli/time_fit.h"
#include "engine/conv_workspace.h"
#include "engine/errors.h"
#include "engine/time/kernel_tables.h"
#include "engine/time/step_time.h"
#include "engine/time/time_band.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memplan;
  using namespace memplan::timing;
  const std::string_view text = fuzz::as_text(data, size);
  const ConvKernelShape shapes[] = {
      {1, 3, 224, 224, 64, 7, 2, 3, 1, 1, false, DType::bf16},
      {24, 64, 56, 56, 64, 3, 1, 1, 1, 1, false, DType::f16},
      {7, 96, 30, 30, 96, 7, 1, 3, 96, 1, true, DType::f32},
  };
  try {
    const ConvTimeTable t(text);
    KernelSeconds k;
    double f = 0, b = 0;
    for (const auto& s : shapes) (void)t.lookup(s, k), (void)t.class_rate(s, f, b);
  } catch (const InputError&) {
  }
  try {
    const BnTimeTable t(text);
    KernelSeconds k;
    (void)t.lookup(5, 64, 56, 56, false, DType::f16, k);
    (void)t.lookup(300, 2048, 7, 9, true, DType::f32, k);
  } catch (const InputError&) {
  }
  try {
    const OpRates r = parse_op_rates(text);
    // the norm rows' interpolation on whatever rows parsed: on the grid, between, below and past it
    for (const char* op : {"ln_fwd", "ln_bwd_all", "colsum"})
      for (const DType d : {DType::f32, DType::bf16})
        for (const double n : {1.0, 96.0, 1600.0, 1e6})
          for (const double numel : {1.0, 4194304.0, 3e7, 1e12}) (void)norm_time_s(r, op, d, n, numel);
    // the grouped_mm rows' inverse-distance weighting on whatever rows parsed: a measured shape, between, far off
    for (const DType d : {DType::bf16, DType::f32})
      for (const double rows : {1.0, 8192.0, 1e9})
        for (const bool bwd : {false, true}) (void)grouped_mm_flops_per_s(r, d, 8, 1024, 2048, rows, bwd);
  } catch (const InputError&) {
  }
  try {
    OpRates r = OpRates();  // clang 14 crashes on `OpRates r;` (engine/time/step_time.cpp)
    parse_host_overhead(text, r);
    parse_gemm_align(text, r);
    (void)parse_coefficients(text);
  } catch (const InputError&) {
  }
  try {
    // checkpointing's host rows: the two-parameter fits on whatever rows parsed (one row, equal saved counts,
    // negative or huge slopes) must come out finite and >= 0
    OpRates r = OpRates();
    parse_ckpt_host(text, r);
    const OpRates::CkptHost& h = r.ckpt_host;
    for (const double v : {h.fwd_layer_s, h.fwd_saved_s, h.bwd_layer_s, h.bwd_saved_s})
      if (!(v >= 0) || !std::isfinite(v)) __builtin_trap();
  } catch (const InputError&) {
  }
  try {
    (void)cli::class_anchors({}, text);
  } catch (const InputError&) {
  }
  try {
    const MeasuredConvWorkspace t(text);
    const ConvShape shapes[] = {
        {24, 96, 56, 56, 96, 7, 1, 3, DType::f32, 96, 1, true},
        {24, 96, 56, 56, 96, 7, 1, 3, DType::f32, 96, 1, false},
        {7, 64, 30, 30, 128, 3, 2, 1, DType::bf16, 1, 1, false},
        {3, 128, 24, 24, 256, 2, 2, 0, DType::f16, 1, 1, true},
    };
    for (const auto& s : shapes) {
      const ConvWorkspaceBytes w = t.workspace(s);
      if (w.forward < 0 || w.dgrad < 0 || w.wgrad < 0) __builtin_trap();
    }
  } catch (const InputError&) {
  }
  try {
    const TimeBandTable t = parse_time_bands(text);
    (void)time_band_for(t, "step", true, true);
    (void)error_bands_text(t);
  } catch (const InputError&) {
  }
  return 0;
}
