// torchvision 0.26 families (issue 12): the table, parameter counts derived from the built graphs against
// torchvision's published figures, and the measured H200 cases of family set 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "engine/conv_workspace.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/torchvision.h"
#include "family_test_helpers.h"
#include "fidelity_cases.h"

using memplan::VisionSpec;

// Published figures: the "num_params" of each architecture's weights meta in torchvision 0.26
// (torchvision/models/<file>.py, the *_Weights enums; 1000 classes), which is sum(p.numel() for p in
// model.parameters()). The measured cases' `params` (h200-families.jsonl) agree for the 13 measured models.
TEST_CASE("torchvision family parameter counts equal torchvision's published figures", "[family]") {
  struct Case {
    const char* name;
    int64_t params;
  };
  const Case cases[] = {
      {"resnext50_32x4d", 25028904},    {"resnext101_32x8d", 88791336},   {"resnext101_64x4d", 83455272},
      {"wide_resnet50_2", 68883240},    {"wide_resnet101_2", 126886696},  {"convnext_tiny", 28589128},
      {"convnext_small", 50223688},     {"convnext_base", 88591464},      {"convnext_large", 197767336},
      {"efficientnet_b0", 5288548},     {"efficientnet_b1", 7794184},     {"efficientnet_b2", 9109994},
      {"efficientnet_b3", 12233232},    {"efficientnet_b4", 19341616},    {"efficientnet_b5", 30389784},
      {"efficientnet_b6", 43040704},    {"efficientnet_b7", 66347960},    {"efficientnet_v2_s", 21458488},
      {"efficientnet_v2_m", 54139356},  {"efficientnet_v2_l", 118515272}, {"mobilenet_v2", 3504872},
      {"mobilenet_v3_small", 2542856},  {"mobilenet_v3_large", 5483032},  {"swin_t", 28288354},
      {"swin_s", 49606258},             {"swin_b", 87768224},             {"swin_v2_t", 28351570},
      {"swin_v2_s", 49737442},          {"swin_v2_b", 87930848},          {"densenet121", 7978856},
      {"densenet161", 28681000},        {"densenet169", 14149480},        {"densenet201", 20013928},
      {"vgg11", 132863336},             {"vgg11_bn", 132868840},          {"vgg13", 133047848},
      {"vgg13_bn", 133053736},          {"vgg16", 138357544},             {"vgg16_bn", 138365992},
      {"vgg19", 143667240},             {"vgg19_bn", 143678248},          {"regnet_y_400mf", 4344144},
      {"regnet_y_800mf", 6432512},      {"regnet_y_1_6gf", 11202430},     {"regnet_y_3_2gf", 19436338},
      {"regnet_y_8gf", 39381472},       {"regnet_y_16gf", 83590140},      {"regnet_y_32gf", 145046770},
      {"regnet_x_400mf", 5495976},      {"regnet_x_800mf", 7259656},      {"regnet_x_1_6gf", 9190136},
      {"regnet_x_3_2gf", 15296552},     {"regnet_x_8gf", 39572648},       {"regnet_x_16gf", 54278536},
      {"regnet_x_32gf", 107811560},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(memplan::param_count(memplan::vision_spec_for(c.name)) == c.params);
    // The zoo entry of the same name resolves to the same model.
    const memplan::ModelSpec m = memplan::load_model(c.name);
    CHECK(memplan::param_count(m) == c.params);
  }
  // num_classes changes only the head: convnext_tiny's Linear(768, 10) instead of (768, 1000).
  CHECK(memplan::param_count(memplan::vision_spec_for("convnext_tiny", 10)) == 28589128 - 990 * 769);
}

// Tolerances of tests/test_fidelity.cpp for the new families: peak allocated within 1 % per case, reserved
// within 5 %; the measured parameter count equals the graph's. Every measured torchvision case of
// h200-families.jsonl: family set 1 (13, tuning), the held-out family set 2 (12, predicted before measuring) and
// the vreq-* requests (18), all with the batch-3 conv workspace table (every conv of these models at 224 x 224).
// Batch 4 added the 6 vreq2-* requests and family set 3's torchvision cases (61 in all).
// Still open, at wider bounds with the reason: the off-224 image sizes under amp (mobilenet_v2 i160 -3.4 %,
// mobilenet_v3_large i160 -2.2 %, efficientnet_b2 i288 +1.1 %): the workspace table has these convs at 224 only
// and the lookup rescales the batch by pixel count, which the H200's engine choices at other sizes do not
// follow (whole-run streams: the 320 -> 1280 1x1 wgrad at 5 x 5 takes n x the fp32 weight; measure with
// calibrate/conv_workspace.py --family-sizes=); swin_v2_t amp_fp16 sgd_momentum +6.4 %: GradScaler skipped the
// first steps (fp16 overflow at the initial scale 2^16), so no momentum buffers existed at the measured step
// (the 110 MiB difference is the fp32 weights' size); the estimate assumes optimizer state exists (NOTES.md,
// GradScaler skips).
TEST_CASE("torchvision families: predicted vs measured on the H200", "[family]") {
  struct Pending {
    const char* id;
    double alloc, reserved;  // relative bounds of the cases still open
  };
  const Pending pending[] = {
      {"f2-mobilenet_v2-ampbf16-sgdmom-b96-i160", 0.04, 0.05},
      {"vreq2-mobilenet_v3_large-ampbf16-sgdmom-b64-i160", 0.03, 0.05},
      {"vreq2-efficientnet_b2-ampbf16-adamw-b16-i288", 0.015, 0.05},
      {"vreq2-swin_v2_t-ampfp16-sgdmom-b16", 0.07, 0.05},
  };
  const auto checked = memplan::testing::check_family_cases(
      // Training rows (the inference rows are tests/families/test_family_set19_visinf.cpp's).
      // Family sets 26 and 27's torchvision rows are tests/families/test_family_set26_holdout.cpp's and
      // test_family_set27_holdout.cpp's.
      [](const memplan::ValidationCase& c) {
        return c.model.kind == memplan::ModelSpec::Kind::vision && c.run.mode == memplan::Mode::training &&
               c.id.rfind("f26-", 0) != 0 && c.id.rfind("f27-", 0) != 0;
      },
      [&](const std::string& id) {
        for (const Pending& p : pending)
          if (id == p.id) return memplan::testing::FamilyBounds{p.alloc, p.reserved};
        return memplan::testing::FamilyBounds{0.01, 0.05};
      });
  CHECK(checked.size() == 61);
}

TEST_CASE("torchvision family inputs are validated", "[family]") {
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.image_size = 16;  // vgg's five 2x2 max pools need at least 32 pixels (16 -> 8 -> 4 -> 2 -> 1 -> 0)
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::vision;
  m.vision = memplan::vision_spec_for("vgg16");
  m.name = "vgg16";
  CHECK_THROWS_AS(memplan::estimate(m, cfg), memplan::InputError);
  cfg.image_size = 32;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  // Swin pads every stage to whole windows, so small images are valid (torchvision accepts them too).
  m.vision = memplan::vision_spec_for("swin_t");
  m.name = "swin_t";
  cfg.image_size = 64;
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  // Inference is one forward of the batch (notes-f19/visinf.md); generate() does not apply.
  cfg.mode = memplan::Mode::inference;
  cfg.image_size = 224;
  m.vision = memplan::vision_spec_for("efficientnet_b0");
  CHECK_NOTHROW(memplan::estimate(m, cfg));
  cfg.generate_tokens = 4;
  CHECK_THROWS_AS(memplan::estimate(m, cfg), memplan::InputError);
}

// Grouped rows (groups, dilation columns) are their own keys; an unmeasured grouped or depthwise shape takes its
// class's median ratio, none while the table has no row of that class.
TEST_CASE("conv workspace table: grouped and depthwise rows", "[family]") {
  const memplan::MeasuredConvWorkspace t(
      "# c_in c_out kernel stride pad h w n dtype forward dgrad wgrad [groups dilation]\n"
      "64 64 3 1 1 56 56 8 fp32 1000 2000 3000\n"
      "64 64 3 1 1 56 56 8 fp32 10 20 30 32 1\n");
  memplan::ConvShape s;
  s.n = 8, s.c_in = 64, s.h = 56, s.w = 56, s.c_out = 64, s.kernel = 3, s.stride = 1, s.pad = 1;
  CHECK(t.workspace(s).forward == 1000);  // dense row
  s.groups = 32;
  CHECK(t.workspace(s).forward == 10);  // grouped row, same channels
  CHECK(t.workspace(s).wgrad == 30);
  s.n = 16;  // proportional beyond the one measured batch
  CHECK(t.workspace(s).dgrad == 40);
  s.groups = 64;  // depthwise: no depthwise row -> none
  CHECK(t.workspace(s).forward == 0);
  s.groups = 16;  // another grouped shape -> the grouped class's ratio (10 B over 8 x 64 x 56 x 56 x 4 B)
  CHECK(t.workspace(s).forward == 20);
  CHECK_THROWS_AS(memplan::MeasuredConvWorkspace("64 64 3 1 1 56 56 8 fp32 1 2 3 0\n"), memplan::InputError);
  CHECK_THROWS_AS(memplan::MeasuredConvWorkspace("64 64 3 1 1 56 56 8 fp32 1 2 3 2 1 9\n"), memplan::InputError);
}
