// The cuDNN workspace table (engine/conv_workspace.h): lookups against rows measured on the H200 and against the
// ResNet-50 allocator trace, the interpolation contract, and malformed tables.
#include <catch2/catch.hpp>

#include <string>

#include "engine/conv_workspace.h"
#include "engine/errors.h"

using namespace memplan;

namespace {
ConvShape shape(int64_t n, int64_t c_in, int64_t hw, int64_t c_out, int64_t k, int64_t stride, int64_t pad,
                DType dt) {
  return {n, c_in, hw, hw, c_out, k, stride, pad, dt};
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
