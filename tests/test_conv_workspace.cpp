// The cuDNN workspace table (engine/conv_workspace.h): lookups against rows measured on the H200 and against the
// ResNet-50 allocator trace, the interpolation contract, the input-layout (nchw/nhwc) contract, and malformed
// tables.
#include <catch2/catch.hpp>

#include <string>

#include "engine/conv_workspace.h"
#include "engine/errors.h"
#include "engine/reduce_workspace.h"

using namespace memplan;

namespace {
ConvShape shape(int64_t n, int64_t c_in, int64_t hw, int64_t c_out, int64_t k, int64_t stride, int64_t pad,
                DType dt) {
  return {n, c_in, hw, hw, c_out, k, stride, pad, dt};
}
ConvShape channels_last(ConvShape s) {
  s.channels_last = true;
  return s;
}
}  // namespace

TEST_CASE("shipped table reproduces the workspaces of the ResNet-50 fp32 b64 trace", "[conv]") {
  // data/validation/traces/trace-resnet50-fp32-sgd-b64.json.gz (recorded by the shared harness, independent of
  // calibrate/conv_workspace.py): layer1's 3x3 conv forward 102908051 B, dgrad 102908051 B, wgrad 104972967 B;
  // the 7x7 stem forward 244093712 B; layer1's 1x1 forward 400 B.
  const ConvWorkspaceModel& t = shipped_conv_workspace();
  const ConvWorkspaceBytes l1 = t.workspace(shape(64, 64, 56, 64, 3, 1, 1, DType::f32));
  CHECK(l1.forward == 102908051);
  CHECK(l1.dgrad == 102908051);
  CHECK(l1.wgrad == 104972967);
  CHECK(t.workspace(shape(64, 3, 224, 64, 7, 2, 3, DType::f32)).forward == 244093712);
  CHECK(t.workspace(shape(64, 64, 56, 64, 1, 1, 0, DType::f32)).forward == 400);
}

TEST_CASE("lookup: exact rows, linear between batches, rescaled spatial sizes, generic fallback", "[conv]") {
  const MeasuredConvWorkspace t(
      "# test table\n"
      "64 64 3 1 1 56 56 32 fp32 1000 2000 3000\n"
      "64 64 3 1 1 56 56 64 fp32 3000 4000 5000\n"
      "64 64 1 1 0 56 56 64 fp32 0 0 800\n");
  REQUIRE(t.rows() == 3);
  const ConvWorkspaceBytes exact = t.workspace(shape(64, 64, 56, 64, 3, 1, 1, DType::f32));
  CHECK((exact.forward == 3000 && exact.dgrad == 4000 && exact.wgrad == 5000));
  const ConvWorkspaceBytes mid = t.workspace(shape(48, 64, 56, 64, 3, 1, 1, DType::f32));
  CHECK((mid.forward == 2000 && mid.dgrad == 3000 && mid.wgrad == 4000));
  CHECK(t.workspace(shape(96, 64, 56, 64, 3, 1, 1, DType::f32)).forward == 5000);  // along the last segment
  CHECK(t.workspace(shape(16, 64, 56, 64, 3, 1, 1, DType::f32)).forward == 500);   // proportional below
  // 112x112 has 4x the pixels of 56x56: batch 16 there reads the 56x56 rows at batch 64.
  CHECK(t.workspace(shape(16, 64, 112, 64, 3, 1, 1, DType::f32)).forward == 3000);
  // An unmeasured shape takes the median ratio to the larger activation of its pass / kernel class / dtype: the
  // 1x1 rows give wgrad 800 B per 64*64*56*56*4 B, so the same activation size gives 800 B.
  CHECK(t.workspace(shape(64, 64, 56, 64, 1, 2, 0, DType::f32)).wgrad == 800);
  CHECK(t.workspace(shape(64, 64, 56, 64, 1, 1, 0, DType::bf16)).wgrad == 0);  // no bf16 rows at all
  NoConvWorkspace none;
  CHECK(none.workspace(shape(64, 64, 56, 64, 3, 1, 1, DType::f32)).forward == 0);
}

TEST_CASE("malformed workspace tables are refused naming the line", "[conv]") {
  for (const char* bad : {"64 64 3 1 1 56 56 32 fp32 1 2\n", "64 64 3 1 1 56 56 32 fp64 1 2 3\n",
                          "64 64 3 1 1 56 56 0 fp32 1 2 3\n", "64 64 3 1 1 56 56 32 fp32 -5 2 3\n",
                          "64 64 3 1 1 56 56 32 fp32 1 2 3 extra\n",
                          "64 64 3 1 1 56 56 32 fp32 1 2 3\n64 64 3 1 1 56 56 32 fp32 1 2 3\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(MeasuredConvWorkspace(bad), InputError);
  }
  try {
    MeasuredConvWorkspace("# ok\n64 64 3 1 1 56 56 32 fp32 1 2\n");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("line 2") != std::string::npos);
  }
}

// Below, A = 32 x 64 x 56 x 56 x 4 B = 25690112 B: the larger activation of the 64->64 3x3 s1 p1 conv at batch 32
// on 56x56 fp32 (input and output are the same size).

TEST_CASE("layout: nhwc rows answer channels-last shapes only", "[conv]") {
  const MeasuredConvWorkspace t(
      "64 64 3 1 1 56 56 32 fp32 1000 2000 3000\n"
      "64 64 3 1 1 56 56 64 fp32 3000 4000 5000\n"
      "64 64 3 1 1 56 56 128 fp32 7000 8000 9000 1 1 nchw\n"  // an explicit nchw: the same key as no token
      "64 64 3 1 1 56 56 32 fp32 100 200 300 1 1 nhwc\n"
      "64 64 3 1 1 56 56 64 fp32 500 600 700 1 1 nhwc\n");
  REQUIRE(t.rows() == 5);
  // Contiguous: the nchw rows, as if the nhwc ones were absent (48 is midway 32..64; 128 the explicit-nchw row).
  const ConvWorkspaceBytes c48 = t.workspace(shape(48, 64, 56, 64, 3, 1, 1, DType::f32));
  CHECK((c48.forward == 2000 && c48.dgrad == 3000 && c48.wgrad == 4000));
  CHECK(t.workspace(shape(128, 64, 56, 64, 3, 1, 1, DType::f32)).forward == 7000);
  // Channels-last: the nhwc rows; batch 48 midway between (100, 200, 300) and (500, 600, 700).
  const ConvWorkspaceBytes l64 = t.workspace(channels_last(shape(64, 64, 56, 64, 3, 1, 1, DType::f32)));
  CHECK((l64.forward == 500 && l64.dgrad == 600 && l64.wgrad == 700));
  const ConvWorkspaceBytes l48 = t.workspace(channels_last(shape(48, 64, 56, 64, 3, 1, 1, DType::f32)));
  CHECK((l48.forward == 300 && l48.dgrad == 400 && l48.wgrad == 500));
  // Beyond the last nhwc batch along the nhwc segment (500 + (500 - 100) = 900), not the nchw row at 128.
  CHECK(t.workspace(channels_last(shape(96, 64, 56, 64, 3, 1, 1, DType::f32))).forward == 900);
  // Contiguous class ratios are medians of nchw rows only. A 32->64 conv at batch 32 has the larger activation A
  // (its output). nchw forward ratios: 1000/A, 3000/(2A) = 1500/A, 7000/(4A) = 1750/A -> median 1500/A -> 1500 B.
  // (Mixing in the nhwc rows' 100/A and 500/(2A) = 250/A would give the median 1000 B.)
  CHECK(t.workspace(shape(32, 32, 56, 64, 3, 1, 1, DType::f32)).forward == 1500);
}

TEST_CASE("layout: a channels-last shape without nhwc rows of its key takes the nhwc class ratio", "[conv]") {
  const MeasuredConvWorkspace t(
      "64 64 3 1 1 56 56 32 fp32 1000 2000 3000\n"
      "64 128 3 1 1 56 56 32 fp32 400 800 1200 1 1 nhwc\n"
      "64 128 3 1 1 56 56 64 fp32 1000 2000 3000 1 1 nhwc\n");
  // The nhwc rows are dense 3x3 fp32, the class of a 64->64 3x3 conv. Their larger activation is the output,
  // 128 channels: 2A at batch 32, 4A at batch 64. Ratios:
  //   forward 400/(2A) = 200/A and 1000/(4A) = 250/A -> median 225/A
  //   dgrad   800/(2A) = 400/A and 2000/(4A) = 500/A -> median 450/A
  //   wgrad  1200/(2A) = 600/A and 3000/(4A) = 750/A -> median 675/A
  // so the channels-last 64->64 conv at batch 32 (activation A) gets 225 / 450 / 675 B, at batch 64 (2A) twice
  // that, although its key has contiguous rows (1000 / 2000 / 3000).
  const ConvWorkspaceBytes l32 = t.workspace(channels_last(shape(32, 64, 56, 64, 3, 1, 1, DType::f32)));
  CHECK((l32.forward == 225 && l32.dgrad == 450 && l32.wgrad == 675));
  const ConvWorkspaceBytes l64 = t.workspace(channels_last(shape(64, 64, 56, 64, 3, 1, 1, DType::f32)));
  CHECK((l64.forward == 450 && l64.dgrad == 900 && l64.wgrad == 1350));
  // The contiguous shape keeps its own rows.
  const ConvWorkspaceBytes c32 = t.workspace(shape(32, 64, 56, 64, 3, 1, 1, DType::f32));
  CHECK((c32.forward == 1000 && c32.dgrad == 2000 && c32.wgrad == 3000));
}

TEST_CASE("layout: a channels-last shape with no nhwc rows of its class reads the contiguous table", "[conv]") {
  const char* contiguous_rows =
      "64 64 3 1 1 56 56 32 fp32 1000 2000 3000\n"
      "64 64 3 1 1 56 56 64 fp32 3000 4000 5000\n"
      "64 64 1 1 0 56 56 64 fp32 0 0 800\n";
  // No nhwc rows at all, and nhwc rows of another class only (1x1): the same answers as the contiguous shape.
  for (const std::string& text : {std::string(contiguous_rows),
                                  std::string(contiguous_rows) + "64 64 1 1 0 56 56 64 fp32 9 9 9 1 1 nhwc\n"}) {
    INFO(text);
    const MeasuredConvWorkspace t(text);
    // Rows of the key: midway between batches 32 and 64.
    const ConvWorkspaceBytes l48 = t.workspace(channels_last(shape(48, 64, 56, 64, 3, 1, 1, DType::f32)));
    CHECK((l48.forward == 2000 && l48.dgrad == 3000 && l48.wgrad == 4000));
    // An unmeasured 3x3 shape: the contiguous class ratio. 32->64 at batch 32 has activation A; forward ratios
    // 1000/A and 3000/(2A) = 1500/A -> median 1250/A -> 1250 B.
    CHECK(t.workspace(channels_last(shape(32, 32, 56, 64, 3, 1, 1, DType::f32))).forward == 1250);
    // No bf16 rows of any layout: none.
    CHECK(t.workspace(channels_last(shape(64, 64, 56, 64, 3, 1, 1, DType::bf16))).forward == 0);
  }
}

TEST_CASE("layout: a layout token other than nchw|nhwc is refused naming the line", "[conv]") {
  for (const char* bad : {"64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 nhcw\n", "64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 NHWC\n",
                          "64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 1\n", "64 64 3 1 1 56 56 32 fp32 1 2 3 1 nhwc\n",
                          "64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 nhwc extra\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(MeasuredConvWorkspace(bad), InputError);
  }
  CHECK_NOTHROW(MeasuredConvWorkspace("64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 nchw\n"));
  CHECK_NOTHROW(MeasuredConvWorkspace("64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 nhwc\n"));
  bool thrown = false;
  try {
    MeasuredConvWorkspace("# ok\n64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 chw\n");
  } catch (const InputError& e) {
    thrown = true;
    CHECK(std::string(e.what()).find("line 2") != std::string::npos);
  }
  CHECK(thrown);
}

// Golden bytes from the whole-run recording of HF ConvNeXt-T fp32 b48 (data/validation/recordings/families23/
// f23-cnx-t-fp32-b48.json.gz: the allocations inside the depthwise convs' backward), a measurement independent of
// the standalone conv runs the table was reduced from (calibrate/conv_workspace.py --channels-last-only).
TEST_CASE("shipped table: channels-last depthwise wgrad workspaces as the ConvNeXt-T fp32 run allocates them",
          "[conv]") {
  const ConvWorkspaceModel& t = shipped_conv_workspace();
  const ConvShape stage0{48, 96, 56, 56, 96, 7, 1, 3, DType::f32, 96, 1, true};
  const ConvShape stage1{48, 192, 28, 28, 192, 7, 1, 3, DType::f32, 192, 1, true};
  CHECK(t.workspace(stage0).wgrad == 472'360'567);  // 450.48 MiB
  CHECK(t.workspace(stage1).wgrad == 241'451'791);  // 230.27 MiB
  CHECK(t.workspace(stage0).forward == 0);
  CHECK(t.workspace(stage0).dgrad == 0);
  // The same conv with contiguous input runs ATen's native depthwise kernels: no cuDNN workspace (measured 0).
  ConvShape contiguous = stage0;
  contiguous.channels_last = false;
  CHECK(t.workspace(contiguous).wgrad == 0);
  // Its bias gradient's staging right after (the recording's 25,952,256 B = 24.75 MiB): a column sum of
  // [48 * 56 * 56, 96] on the H200 (132 SMs, 2048 threads each).
  CHECK(column_sum_workspace(48 * 56 * 56, 96, 132, 2048).buffer_bytes == 25'952'256);
}

TEST_CASE("exact rows answer their own key and stay out of the class medians", "[conv]") {
  // One contiguous 3x3 fp32 row gives the class median: 1000 / 2000 / 3000 B at activation A (64 -> 64 at 56 x 56,
  // batch 32). An `exact` row of another 3x3 fp32 key with ten times the ratio answers its own shape (with the
  // usual interpolation) and leaves the median where the first row put it.
  const std::string base = "64 64 3 1 1 56 56 32 fp32 1000 2000 3000\n";
  const std::string exact = "32 64 3 1 1 56 56 32 fp32 10000 20000 30000 1 1 nchw exact\n";
  const MeasuredConvWorkspace t(base + exact);
  const ConvWorkspaceBytes own = t.workspace(shape(32, 32, 56, 64, 3, 1, 1, DType::f32));
  CHECK((own.forward == 10000 && own.dgrad == 20000 && own.wgrad == 30000));
  const ConvWorkspaceBytes own16 = t.workspace(shape(16, 32, 56, 64, 3, 1, 1, DType::f32));  // proportional below
  CHECK((own16.forward == 5000 && own16.wgrad == 15000));
  // An unmeasured 3x3 fp32 shape (128 -> 128 at 28 x 28, batch 64: 64 * 128 * 784 = 32 * 64 * 3136 elements,
  // activation A) reads the median of the
  // contiguous rows alone; without the `exact` marker the two rows' median would be (1 + 10) / 2 = 5.5x.
  const ConvWorkspaceBytes other = t.workspace(shape(64, 128, 28, 128, 3, 1, 1, DType::f32));
  CHECK((other.forward == 1000 && other.dgrad == 2000 && other.wgrad == 3000));
  const MeasuredConvWorkspace pooled(base + "32 64 3 1 1 56 56 32 fp32 10000 20000 30000 1 1 nchw\n");
  CHECK(pooled.workspace(shape(64, 128, 28, 128, 3, 1, 1, DType::f32)).forward == 5500);
  // The marker needs the layout column before it, and nothing else is taken in its place.
  for (const char* bad : {"64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 exact\n", "64 64 3 1 1 56 56 32 fp32 1 2 3 exact\n",
                          "64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 nchw Exact\n",
                          "64 64 3 1 1 56 56 32 fp32 1 2 3 1 1 nchw exact exact\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(MeasuredConvWorkspace(bad), InputError);
  }
}
