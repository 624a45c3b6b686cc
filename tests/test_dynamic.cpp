// Dynamic shapes against a measured H200 run (data/validation/dynamic/, calibrate/dynamic_shapes.py): GPT-2 small,
// amp bf16, AdamW foreach, batch 8, 24 steps of varying length, run as given, bucketed to 256 and with
// expandable segments. The reserved curve step by step and the peaks must agree within 1 %.
#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/dynamic_shapes.h"
#include "models/zoo.h"
#include "data_dir.h"

using namespace memplan;

TEST_CASE("reserved memory over steps of varying length matches the H200 run", "[dynamic]") {
  std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/validation/dynamic/h200-gpt2-ampbf16-b8-dynamic.json");
  REQUIRE(in);
  const auto doc = nlohmann::json::parse(in);
  const auto lens = doc.at("seq_lens").get<std::vector<int64_t>>();
  const ModelSpec m = load_zoo_model("gpt2");
  RunConfig c;
  c.batch_size = doc.at("batch_size").get<int64_t>();
  c.precision = Precision::amp_bf16;
  struct Variant {
    const char* key;
    std::vector<int64_t> lens;
    bool expandable;
  };
  const Variant variants[] = {{"raw", lens, false},
                              {"bucketed", bucketed(lens, doc.at("bucket").get<int64_t>()), false},
                              {"expandable_segments", lens, true}};
  for (const auto& v : variants) {
    DYNAMIC_SECTION(v.key) {
      AllocatorOptions a;
      a.expandable_segments = v.expandable;
      const DynamicRun r = replay_dynamic(m, c, v.lens, a);
      const auto& steps = doc.at(v.key).at("steps");
      REQUIRE(r.steps.size() == steps.size());
      for (size_t i = 0; i < steps.size(); ++i) {
        const double meas = steps[i].at("max_reserved_mib").get<double>();
        const double pred = static_cast<double>(r.steps[i].peak_reserved_bytes) / (1 << 20);
        INFO("step " << i + 1 << " predicted " << pred << " measured " << meas);
        CHECK(std::fabs(pred - meas) / meas <= 0.01);
      }
      double meas_alloc = 0;
      for (const auto& s : steps) meas_alloc = std::max(meas_alloc, s.at("peak_allocated_mib").get<double>());
      CHECK(std::fabs(static_cast<double>(r.peak_allocated_bytes) / (1 << 20) - meas_alloc) / meas_alloc <= 0.01);
    }
  }
  // What the mechanisms buy, measured and predicted alike: bucketing and expandable segments both cut the
  // reserved peak well below the raw run's.
  const auto raw = replay_dynamic(m, c, lens, {});
  const auto bkt = replay_dynamic(m, c, bucketed(lens, 256), {});
  CHECK(bkt.peak_reserved_bytes < raw.peak_reserved_bytes * 0.9);
}
