// The step-time band (engine/time/time_band.h): classes and fractions built from timed rows, the fallback to a
// coarser class below kMinTimeBandRows, the text format (the memory bands': engine/verdict.h), the embedded table's reproducibility from the committed
// fit inputs, and its keys in `estimate --json`. Expected values are derived by hand next to each check.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/time_fit.h"
#include "engine/errors.h"
#include "engine/time/time_band.h"
#include "run_cli.h"
#include "data_dir.h"

using namespace memplan;
using namespace memplan::timing;

TEST_CASE("time bands: class keys run from the finest to all", "[time][band]") {
  CHECK(time_band_keys("step", true, true) ==
        std::vector<std::string>{"step/vision/host", "step/vision", "step", "all"});
  CHECK(time_band_keys("decode_token", false, false) ==
        std::vector<std::string>{"decode_token/transformer/gpu", "decode_token/transformer", "decode_token", "all"});
}

TEST_CASE("time bands: the largest under- and over-prediction per class, as fractions of the predicted time", "[time][band]") {
  // a: predicted 100 ms, took 120: under 0.20; b: predicted 50, took 40: over 0.20; c: predicted 200, took 210:
  // under 0.05; a non-positive time is skipped.
  const std::vector<TimeBandSample> s = {{"a", "step", true, true, 0.100, 0.120},
                                         {"b", "step", true, false, 0.050, 0.040},
                                         {"c", "step", false, false, 0.200, 0.210},
                                         {"z", "step", false, false, 0.0, 0.1}};
  const TimeBandTable t = build_time_bands(s);
  struct Row {
    const char* key;
    int64_t rows;
    double under, over;
    const char *worst_under, *worst_over;
  };
  const Row want[] = {{"all", 3, 0.20, 0.20, "a", "b"},
                      {"step", 3, 0.20, 0.20, "a", "b"},
                      {"step/vision", 2, 0.20, 0.20, "a", "b"},
                      {"step/vision/host", 1, 0.20, 0.0, "a", ""},
                      {"step/vision/gpu", 1, 0.0, 0.20, "", "b"},
                      {"step/transformer", 1, 0.05, 0.0, "c", ""},
                      {"step/transformer/gpu", 1, 0.05, 0.0, "c", ""}};
  CHECK(t.classes.size() == std::size(want));
  for (const Row& w : want) {
    INFO(w.key);
    const TimeBand* b = t.find(w.key);
    REQUIRE(b != nullptr);
    CHECK(b->cases == w.rows);
    CHECK(b->under_fraction == Approx(w.under));
    CHECK(b->over_fraction == Approx(w.over));
    CHECK(b->worst_under_case == w.worst_under);
    CHECK(b->worst_over_case == w.worst_over);
  }
}

TEST_CASE("time bands: a class below kMinTimeBandRows rows gives way to the next coarser one", "[time][band]") {
  // 8 vision host-bound rows (each 10 % under), 1 transformer row: step/vision/host answers for vision host-bound,
  // step/vision for vision GPU-bound (8 rows), the transformer row's own classes hold 1 row, so "step" (9) answers.
  std::vector<TimeBandSample> s;
  for (int i = 0; i < 8; ++i) s.push_back({"v" + std::to_string(i), "step", true, true, 0.1, 0.11});
  s.push_back({"t", "step", false, false, 0.1, 0.05});
  const TimeBandTable t = build_time_bands(s);
  CHECK(time_band_for(t, "step", true, true).key == "step/vision/host");
  CHECK(time_band_for(t, "step", true, false).key == "step/vision");
  CHECK(time_band_for(t, "step", false, false).key == "step");
  CHECK(time_band_for(t, "step", false, false).over_fraction == Approx(0.5));
  CHECK(time_band_for(TimeBandTable{}, "step", false, false).key == "none");
}

TEST_CASE("time bands: the text format round-trips; anything else is an input error", "[time][band]") {
  const TimeBandTable t = build_time_bands({{"a", "step", true, true, 0.1, 0.125}, {"b", "prefill", false, false, 0.2, 0.1}});
  const std::string text = error_bands_text(t);
  CHECK(error_bands_text(parse_time_bands("# a comment\n" + text)) == text);
  CHECK(parse_time_bands(text).find("step/vision/host")->under_fraction == Approx(0.25));
  const std::string header = "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\n";
  // no header; five columns; a class without a row; a negative and a non-numeric ppm
  for (const std::string bad : {std::string("all\t1\t0\t0\t-\t-\n"), header + "all\t1\t0\t0\t-\n",
                                header + "all\t0\t0\t0\t-\t-\n", header + "all\t1\t-5\t0\t-\t-\n",
                                header + "all\t1\tx\t0\t-\t-\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_time_bands(bad), InputError);
  }
}

TEST_CASE("time bands: the embedded table is the committed fit inputs' cross-validated errors", "[time][band][fit]") {
  const std::string dir = std::string(MEMPLAN_DATA_DIR) + "/calibration/";
  std::ifstream in(dir + "time-fit-inputs.json");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json inputs = nlohmann::json::parse(ss.str());
  const auto rows = cli::rows_from_json(inputs);
  const std::string again = cli::time_bands_tsv(
      rows, h200_coefficients(), cli::cross_validated_s(rows, cli::anchors_from_json(inputs)), "h200-timing.jsonl");
  CHECK(error_bands_text(parse_time_bands(again)) == error_bands_text(h200_time_bands()));
  // every timed row is in the "all" class; the step classes split by family and bound
  REQUIRE(h200_time_bands().find("all") != nullptr);
  CHECK(h200_time_bands().find("all")->cases == static_cast<int64_t>(rows.size()));
}

TEST_CASE("time bands: estimate --json carries the step's band", "[time][band][cli]") {
  const auto r = memplan::testing::run_cli("estimate --model gpt2 --batch-size 2 --seq-len 128 --json --quiet");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.contains("step_time_band"));
  const auto& b = j.at("step_time_band");
  const std::string cls = b.at("class").get<std::string>();
  const int64_t rows = b.at("rows").get<int64_t>();
  const double under = b.at("under_pct").get<double>(), over = b.at("over_pct").get<double>();
  CHECK(cls.rfind("step/transformer", 0) == 0);
  CHECK(rows >= kMinTimeBandRows);
  CHECK(under >= 0);
  CHECK(over >= 0);
}
