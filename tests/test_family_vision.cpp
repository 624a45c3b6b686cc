// torchvision 0.26 families (issue 12): the table, parameter counts derived from the built graphs against
// torchvision's published figures, and the measured H200 cases of family set 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/torchvision.h"
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
// within 5 %; the measured parameter count equals the graph's.
TEST_CASE("torchvision family set 1: predicted vs measured on the H200", "[family]") {
  const auto cases = memplan::testing::load_cases("h200-families.jsonl");
  int seen = 0;
  for (const auto& c : cases) {
    if (c.model.kind != memplan::ModelSpec::Kind::vision || !c.measured) continue;
    ++seen;
    const memplan::Estimate e = memplan::estimate(c.model, c.run, memplan::estimate_options_for(c));
    const double alloc = static_cast<double>(e.torch_peak_allocated_bytes()) / 1048576.0;
    const double reserved = static_cast<double>(e.run_peak_reserved_bytes()) / 1048576.0;
    INFO(c.id << ": allocated " << alloc << " vs " << *c.measured->peak_allocated_mib << " MiB, reserved " << reserved
              << " vs " << *c.measured->peak_reserved_mib << " MiB");
    CHECK(std::abs(alloc / *c.measured->peak_allocated_mib - 1) <= 0.01);
    CHECK(std::abs(reserved / *c.measured->peak_reserved_mib - 1) <= 0.05);
    CHECK(memplan::param_count(c.model) == *c.measured->params);
  }
  CHECK(seen == 13);
}

TEST_CASE("torchvision family inputs are validated", "[family]") {
  memplan::RunConfig cfg;
  cfg.batch_size = 1;
  cfg.image_size = 16;  // vgg's five 2x2 pools and a 3x3 after them need more than 16 pixels
  memplan::ModelSpec m;
  m.kind = memplan::ModelSpec::Kind::vision;
  m.vision = memplan::vision_spec_for("swin_t");
  m.name = "swin_t";
  CHECK_THROWS_AS(memplan::estimate(m, cfg), memplan::InputError);
  cfg.mode = memplan::Mode::inference;
  cfg.image_size = 224;
  m.vision = memplan::vision_spec_for("efficientnet_b0");
  CHECK_THROWS_AS(memplan::estimate(m, cfg), memplan::InputError);
}
