// The verdict with its margin and error band (engine/verdict.h, issue 17): the logic on constructed margins
// (derivations next to each number), the band table's text format and class fallback, the embedded table, the
// verdict keys of every command's --json, and the measured capped cases: no wrong FITS / DOES NOT FIT.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/verdict.h"
#include "models/validation_case.h"
#include "data_dir.h"

using memplan::cli::CliOutput;
using memplan::cli::run_cli_captured;
using namespace memplan;

namespace {
const std::string kData = MEMPLAN_DATA_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Fractions exact in binary, so the bands below are exact byte counts.
ErrorBand band(double under, double over) { return ErrorBand{"test", 40, under, over, "u", "o"}; }
}  // namespace

TEST_CASE("judge: FITS / DOES NOT FIT / BORDERLINE on constructed margins", "[verdict]") {
  // reserved 10240 MiB; under 1/64 -> 160 MiB + 20 MiB floor = 180 MiB; over 1/16 -> 640 + 20 = 660 MiB.
  const int64_t M = kMiB, reserved = 10240 * M, budget = 20000 * M;
  struct Row {
    const char* name;
    int64_t device_total;
    bool allocator_fits;
    VerdictKind want;
    int64_t margin, band;
  };
  const std::vector<Row> rows = {
      {"far inside: margin 1000 MiB > 180", 19000 * M, true, VerdictKind::fits, 1000 * M, 180 * M},
      {"margin one byte over the under band", 19820 * M - 1, true, VerdictKind::fits, 180 * M + 1, 180 * M},
      {"margin equal to the under band (inside: <=)", 19820 * M, true, VerdictKind::borderline, 180 * M, 180 * M},
      {"margin 8 MiB", 19992 * M, true, VerdictKind::borderline, 8 * M, 180 * M},
      {"margin 0", 20000 * M, true, VerdictKind::borderline, 0, 180 * M},
      {"over by 1 MiB: the over band answers", 20001 * M, false, VerdictKind::borderline, -1 * M, 660 * M},
      {"over by exactly the over band", 20660 * M, false, VerdictKind::borderline, -660 * M, 660 * M},
      {"over by one byte more than the over band", 20660 * M + 1, false, VerdictKind::does_not_fit, -660 * M - 1, 660 * M},
      {"far over: 44430 MiB short", 64430 * M, false, VerdictKind::does_not_fit, -44430 * M, 660 * M},
      // The allocator replay OOMs although the device total is within the budget (fragmentation under the cap):
      // never FITS; inside the band as the margin is not negative.
      {"replay OOM with a positive margin", 19000 * M, false, VerdictKind::borderline, 1000 * M, 180 * M},
  };
  for (const Row& r : rows) {
    DYNAMIC_SECTION(r.name) {
      const Verdict v = judge(VerdictInput{budget, r.device_total, reserved, r.allocator_fits}, band(1.0 / 64, 1.0 / 16));
      CHECK(v.kind == r.want);
      CHECK(v.margin_bytes == r.margin);
      CHECK(v.band_bytes == r.band);
      CHECK(v.band_under_bytes == 180 * M);
      CHECK(v.band_over_bytes == 660 * M);
      CHECK(v.fits == (r.allocator_fits && r.device_total <= budget));
    }
  }
  SECTION("floors: a class that never erred still has 0.5 % + 20 MiB") {
    // 0.5 % of 10240 MiB = 51.2 MiB = 53687091.2 bytes, rounded up: 53687092; + 20 MiB = 74658612.
    const Verdict v = judge(VerdictInput{budget, 19000 * M, reserved, true}, band(0, 0));
    CHECK(v.band_under_bytes == 53687092 + 20 * M);
    CHECK(v.band_over_bytes == 53687092 + 20 * M);
  }
}

TEST_CASE("band classes: finest first, a sparse feature falls back to the feature over all precisions", "[verdict]") {
  struct Row {
    const char* name;
    VerdictFeatures f;
    std::vector<std::string> keys;
  };
  VerdictFeatures amp_ckpt;
  amp_ckpt.precision = Precision::amp_bf16;
  amp_ckpt.checkpointing = true;
  amp_ckpt.accumulation = true;  // ckpt takes priority over accumulation
  VerdictFeatures infer;
  infer.mode = Mode::inference;
  infer.precision = Precision::bf16;
  infer.generation = true;
  VerdictFeatures vision;
  vision.vision = true;
  VerdictFeatures lora;
  lora.lora = true;
  lora.checkpointing = true;
  lora.precision = Precision::fp16;
  VerdictFeatures dist = lora;  // one rank of a distributed step takes priority over LoRA
  dist.distributed = true;
  const std::vector<Row> rows = {
      // a distributed case falls back to distributed classes only (engine/verdict.cpp)
      {"distributed before LoRA", dist,
       {"training/transformer/half/dist", "training/transformer/any/dist", "training/dist", "all"}},
      {"amp + ckpt + accum", amp_ckpt,
       {"training/transformer/amp/ckpt", "training/transformer/any/ckpt", "training/transformer/amp",
        "training/transformer", "training", "all"}},
      {"inference bf16 generate", infer,
       {"inference/transformer/half/gen", "inference/transformer/any/gen", "inference/transformer/half",
        "inference/transformer", "inference", "all"}},
      {"vision fp32 plain", vision, {"training/vision/fp32/plain", "training/vision/fp32", "training/vision", "training", "all"}},
      {"LoRA before checkpointing", lora,
       {"training/transformer/half/lora", "training/transformer/any/lora", "training/transformer/half",
        "training/transformer", "training", "all"}},
  };
  for (const Row& r : rows)
    DYNAMIC_SECTION(r.name) { CHECK(band_class_keys(r.f) == r.keys); }
}

TEST_CASE("band table: text format, round trip, refusals, fallback to a class with enough cases", "[verdict]") {
  const std::string text =
      "# comment\n"
      "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\n"
      "all\t100\t50000\t20000\ta\tb\n"
      "training\t60\t30000\t10000\tc\t-\n"
      "training/transformer/fp32\t7\t900000\t0\td\t-\n"   // 7 < kMinBandCases: too few to answer
      "training/transformer/fp32/plain\t3\t1000\t0\te\t-\n";
  const ErrorBandTable t = parse_error_bands(text);
  REQUIRE(t.classes.size() == 4);
  CHECK(t.find("training")->under_fraction == Approx(0.03));
  CHECK(t.find("training")->worst_over_case.empty());
  CHECK(parse_error_bands(error_bands_text(t)).classes.size() == 4);
  CHECK(error_bands_text(parse_error_bands(error_bands_text(t))) == error_bands_text(t));
  VerdictFeatures f;  // training / transformer / fp32 / plain: the two finest classes are too small
  CHECK(band_for(t, f).key == "training");
  f.mode = Mode::inference;  // no inference class: "all"
  CHECK(band_for(t, f).key == "all");
  CHECK(band_for(parse_error_bands("class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\n"), f).key == "none");

  const std::vector<std::pair<const char*, std::string>> bad = {
      {"no header", "all\t1\t0\t0\t-\t-\n"},
      {"five columns", "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\nall\t1\t0\t0\t-\n"},
      {"negative", "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\nall\t1\t-5\t0\t-\t-\n"},
      {"not a number", "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\nall\t1\t1.5\t0\t-\t-\n"},
      {"twice", "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\nall\t1\t0\t0\t-\t-\nall\t2\t0\t0\t-\t-\n"},
      {"empty", ""},
  };
  for (const auto& [name, bad_text] : bad)
    DYNAMIC_SECTION(name) { CHECK_THROWS_AS(parse_error_bands(bad_text), InputError); }
}

TEST_CASE("the embedded band table is data/validation/error-bands.tsv and covers the corpus", "[verdict]") {
  const ErrorBandTable file = parse_error_bands(slurp(kData + "/validation/error-bands.tsv"));
  const ErrorBandTable& t = builtin_error_bands();
  CHECK(error_bands_text(t) == error_bands_text(file));
  const ErrorBand* all = t.find("all");
  REQUIRE(all != nullptr);
  CHECK(all->cases >= 400);  // 430 measured cases that ran + the earlier predictions of those measured later
  // The known misses on the dangerous side stay in their classes (data/validation/NOTES.md): M2M-100 with
  // LayerDrop checkpointed (-6.9 %; fp32 T5 checkpointing's -12.3 % left the class when the twenty-fifth session
  // released T5's held relative buckets), fp32 LoRA math-SDPA (-12.3 %), flan-T5 fp32 inference before its fix
  // (-12.1 %).
  CHECK(t.find("training/transformer/any/ckpt")->under_fraction > 0.06);
  CHECK(t.find("training/transformer/any/lora")->under_fraction > 0.10);
  CHECK(t.find("inference/transformer/fp32/gen")->under_fraction > 0.10);
}

TEST_CASE("every measured capped case: the verdict is right or BORDERLINE, never wrong", "[verdict][fidelity]") {
  // Only the capped lines are validated (a verdict needs a cap): the other ~1000 cases are the fidelity tests'
  // work, and validating them here too took 83 s of the sanitizer job's 9 minutes.
  std::string all;
  for (const char* f : {"h200-public-cases", "h200-corpus", "h200-boundary", "h200-families", "h200-odd-shapes",
                        "h200-distributed", "h100-families"}) {
    std::istringstream lines(slurp(kData + "/validation/" + f + ".jsonl"));
    for (std::string line; std::getline(lines, line);)
      if (line.find("\"memory_cap_gib\"") != std::string::npos) all += line + "\n";
  }
  const CliOutput r = run_cli_captured({"validate", "-", "--json"}, all);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::map<std::string, int> counts;
  int capped = 0;
  for (const auto& row : j["cases"]) {
    const auto& p = row["predicted"];
    if (!p.contains("verdict") || !row.contains("measured") || !row["measured"].contains("oom")) continue;
    ++capped;
    const bool oom = row["measured"]["oom"].get<bool>();
    const std::string v = p["verdict"];
    INFO(row["id"].get<std::string>() << ": measured " << (oom ? "OOM" : "fits") << ", verdict " << v << ", margin "
                                      << p["margin_bytes"] << ", band " << p["band_bytes"]);
    CHECK(v != (oom ? "fits" : "does_not_fit"));
    CHECK(p["fits"].is_boolean());
    CHECK(p["band_bytes"].get<int64_t>() > 0);
    ++counts[v == "borderline" ? "borderline" : "right"];
  }
  CHECK(capped >= 76);
  CHECK(counts["right"] > 0);
  CHECK(counts["borderline"] > 0);
  SECTION("a measured case whose margin is inside the band comes out BORDERLINE") {
    // gpt2m amp_bf16 b4 x 1024 under a 15.34 GiB cap (15708.2 MiB) measured OOM; predicted uncapped reserved
    // 15974 MiB -> margin 15708.2 - 15974 = -265.8 MiB, inside the over-prediction band of its class
    // (training/transformer/amp/plain: the worst over-prediction there x 15974 MiB + 20 MiB).
    const CliOutput one = run_cli_captured({"validate", kData + "/validation/h200-boundary.jsonl", "--only",
                                            "gpt2m-ampbf16-adamw-b4s1024-bnd-mid-15.34", "--json"});
    const auto p = nlohmann::json::parse(one.out)["cases"][0]["predicted"];
    CHECK(p["verdict"] == "borderline");
    CHECK(p["fits"] == false);
    CHECK(p["margin_bytes"].get<int64_t>() == static_cast<int64_t>(15.34 * static_cast<double>(kGiB)) - 15974 * kMiB);
    const ErrorBand* cls = builtin_error_bands().find("training/transformer/amp/plain");
    REQUIRE(cls != nullptr);
    CHECK(p["band_class"]["key"] == "training/transformer/amp/plain");
    const double f = std::max(cls->over_fraction, kMinBandFraction);
    CHECK(p["band_bytes"].get<int64_t>() == static_cast<int64_t>(std::ceil(f * 15974.0 * kMiB)) + 20 * kMiB);
    CHECK(-p["margin_bytes"].get<int64_t>() <= p["band_bytes"].get<int64_t>());
  }
}

TEST_CASE("verdict keys in every command's --json; fits stays a bool", "[verdict][cli][json]") {
  auto keys_ok = [](const nlohmann::json& j) {
    CHECK(j["fits"].is_boolean());
    CHECK(j["margin_bytes"].is_number_integer());
    CHECK(j["band_bytes"].is_number_integer());
    CHECK(j["band_bytes"].get<int64_t>() > 0);
    const std::string v = j["verdict"];
    CHECK((v == "fits" || v == "does_not_fit" || v == "borderline"));
    CHECK(j["band_class"]["key"].is_string());
  };
  SECTION("estimate, training and inference") {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"estimate", "--model", "gpt2", "--batch-size", "2", "--seq-len", "128", "--gpu", "h200", "--json"},
             {"estimate", "--model", "llama-2-7b", "--gpu", "rtx-4090", "--json"},
             {"estimate", "--model", "gpt2", "--mode", "inference", "--seq-len", "128", "--generate-tokens", "4", "--gpu",
              "h200", "--json"}}) {
      const auto j = nlohmann::json::parse(run_cli_captured(args).out);
      keys_ok(j);
    }
  }
  SECTION("fit: FITS far inside, BORDERLINE with what buys safety, DOES NOT FIT far outside") {
    // gpt2 fp32 b8 x 1024 needs 16008 MiB on the device (README's example: 15178 reserved + 830 non-PyTorch);
    // at 15.8 GiB (16179.2 MiB) the margin is +171.2 MiB, inside its class's under band (>= 0.5 % x 15178
    // + 20 = 95.9 MiB, and that class's worst under-prediction is larger: see error-bands.tsv).
    const auto far = nlohmann::json::parse(run_cli_captured({"fit", "--model", "gpt2", "--batch-size", "8", "--seq-len", "1024",
                                                             "--precision", "fp32", "--gpu", "h200", "--json"}).out);
    keys_ok(far);
    CHECK(far["verdict"] == "fits");
    const auto edge = nlohmann::json::parse(run_cli_captured({"fit", "--model", "gpt2", "--batch-size", "8", "--seq-len",
                                                              "1024", "--precision", "fp32", "--gpu-memory-gib", "15.8", "--json"}).out);
    keys_ok(edge);
    CHECK(edge["verdict"] == "borderline");
    CHECK(edge["fits"] == true);
    CHECK(edge["margin_bytes"].get<int64_t>() == static_cast<int64_t>(15.8 * static_cast<double>(kGiB)) - 16008 * kMiB);
    REQUIRE(edge.contains("safety"));
    CHECK(edge["safety"]["steps"].size() == 2);  // expandable segments, one micro-batch less
    CHECK(edge["safety"]["steps"][1]["flags"] == "--batch-size 7");
    // (16179.2 - 830) / 16179.2 = 0.9487, rounded down to 0.948
    CHECK(edge["safety"]["memory_fraction"].get<double>() == Approx(0.948));
    const auto over = nlohmann::json::parse(run_cli_captured({"fit", "--model", "llama-2-7b", "--precision", "bf16", "--gpu",
                                                              "rtx-4090", "--json"}).out);
    keys_ok(over);
    CHECK(over["verdict"] == "does_not_fit");
    CHECK(!over.contains("safety"));
    const CliOutput text = run_cli_captured({"fit", "--model", "gpt2", "--batch-size", "8", "--seq-len", "1024", "--precision",
                                             "fp32", "--gpu-memory-gib", "15.8"});
    CHECK_THAT(text.out, Catch::StartsWith("BORDERLINE on 15.8 GiB") && Catch::Contains("what buys safety") &&
                             Catch::Contains("torch.cuda.set_per_process_memory_fraction(0.948)") &&
                             Catch::Contains("Verdict: BORDERLINE (the replay: fits)"));
  }
  SECTION("plan finalists and serve") {
    const auto plan = nlohmann::json::parse(run_cli_captured({"plan", "--model", "gpt2", "--gpu", "h200", "--gpus", "2", "--top",
                                                              "2", "--seq-len", "256", "--json"}).out);
    REQUIRE(!plan["top"].empty());
    for (const auto& c : plan["top"]) keys_ok(c);
    keys_ok(nlohmann::json::parse(run_cli_captured({"serve", "--model", "llama-3.1-8b", "--gpu", "h200", "--json"}).out));
  }
}

TEST_CASE("a run GradScaler never let step before its last step counts in no band", "[verdict]") {
  // measured_steady_state over the harness's 3 steps: optimizer state is alive in a forward / backward from the step
  // after the first one that stepped, so some step among 1 .. 2 must have stepped.
  struct Row {
    std::vector<int> skipped;
    bool steady;
  };
  const Row rows[] = {{{}, true}, {{1}, true}, {{2}, true}, {{3}, true}, {{2, 3}, true},
                      {{1, 2}, false}, {{1, 2, 3}, false}};
  for (const Row& r : rows) {
    Measured m;
    m.scaler_skipped_steps = r.skipped;
    INFO("skipped " << r.skipped.size() << " steps, first " << (r.skipped.empty() ? 0 : r.skipped[0]));
    CHECK(measured_steady_state(m, 3) == r.steady);
  }

  // The parser: a list of 1-based step numbers, anything else refused naming the field.
  nlohmann::json base;
  {
    std::istringstream lines(slurp(kData + "/validation/h200-corpus.jsonl"));
    for (std::string line; std::getline(lines, line);)
      if (line.find("\"id\": \"resnet50-ampfp16-sgdmom-b24\"") != std::string::npos) base = nlohmann::json::parse(line);
  }
  REQUIRE(base.is_object());
  for (const nlohmann::json& bad : {nlohmann::json("1"), nlohmann::json::array({0}), nlohmann::json::array({1.5}),
                                    nlohmann::json::array({"2"})}) {
    nlohmann::json c = base;
    c["measured"]["scaler_skipped_steps"] = bad;
    INFO(bad.dump());
    CHECK_THROWS_WITH(parse_validation_case(c), Catch::Contains("measured.scaler_skipped_steps"));
  }

  // End to end: the same measured case, once marked as never stepped before step 3 and once not, each with a
  // reserved figure far below the prediction. Only the unmarked copy enters the table.
  auto line = [&](const char* id, const nlohmann::json& skipped) {
    nlohmann::json c = base;
    c["id"] = id;
    c["measured"]["peak_reserved_mib"] = 100.0;
    c["measured"]["scaler_skipped_steps"] = skipped;
    return c.dump() + "\n";
  };
  const CliOutput r = run_cli_captured({"validate", "-", "--error-bands"},
                                       line("stepped-at-2", nlohmann::json::array({1})) +
                                           line("never-stepped", nlohmann::json::array({1, 2, 3})));
  REQUIRE(r.exit_code == 0);
  const ErrorBandTable t = parse_error_bands(r.out);
  REQUIRE(t.find("all") != nullptr);
  CHECK(t.find("all")->cases == 1);
  CHECK(t.find("all")->worst_over_case == "stepped-at-2");

  // validate says so: the text row gets a note, the JSON row measured.steady_state false (absent when it stepped).
  const std::string both = line("stepped-at-2", nlohmann::json::array({1})) +
                           line("never-stepped", nlohmann::json::array({1, 2, 3}));
  const CliOutput text = run_cli_captured({"validate", "-"}, both);
  CHECK(text.out.find("GradScaler skipped every optimizer step before the last") != std::string::npos);
  const CliOutput js = run_cli_captured({"validate", "-", "--json"}, both);
  const nlohmann::json out_rows = nlohmann::json::parse(js.out)["cases"];
  REQUIRE(out_rows.size() == 2);
  CHECK_FALSE(out_rows[0]["measured"].contains("steady_state"));
  CHECK(out_rows[1]["measured"]["steady_state"] == false);
  CHECK(out_rows[1]["measured"]["scaler_skipped_steps"] == nlohmann::json::array({1, 2, 3}));
}

TEST_CASE("band table: the central 90 % beside the largest errors", "[verdict]") {
  // set_central90 by nearest rank over how much more each run needed than predicted (derived by hand):
  struct Row {
    const char* name;
    std::vector<double> excess;
    double under90, over90;
  };
  std::vector<double> ramp;  // 0.00, 0.01, ..., 0.99: rank 95 is 0.94, rank 5 is 0.04 (an under-side value)
  for (int i = 0; i < 100; ++i) ramp.push_back(0.01 * i);
  std::vector<double> mostly_exact(18, 0.0);  // one 2 % over, one 10 % under among 20: rank 19 is 0, rank 1 -0.02
  mostly_exact.push_back(-0.02);
  mostly_exact.push_back(0.10);
  const Row rows[] = {{"ramp", ramp, 0.94, 0.0},
                      {"one outlier each side", mostly_exact, 0.0, 0.02},
                      {"one case", {-0.05}, 0.0, 0.05},
                      {"none", {}, 0.0, 0.0}};
  for (const Row& r : rows) {
    DYNAMIC_SECTION(r.name) {
      ErrorBand b;
      set_central90(b, r.excess);
      CHECK(b.under90_fraction == Approx(r.under90).margin(1e-12));
      CHECK(b.over90_fraction == Approx(r.over90).margin(1e-12));
    }
  }
  // The 8-column table round-trips; a 6-column one reads its largest errors as the central 90 %.
  const std::string eight =
      "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\tunder90_ppm\tover90_ppm\n"
      "all\t100\t50000\t20000\ta\tb\t1500\t700\n";
  const ErrorBandTable t8 = parse_error_bands(eight);
  CHECK(t8.find("all")->under90_fraction == Approx(0.0015));
  CHECK(t8.find("all")->over90_fraction == Approx(0.0007));
  CHECK(error_bands_text(t8) == eight);
  const ErrorBandTable t6 =
      parse_error_bands("class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\nall\t100\t50000\t20000\ta\tb\n");
  CHECK(t6.find("all")->under90_fraction == Approx(0.05));
  CHECK(t6.find("all")->over90_fraction == Approx(0.02));
  CHECK_THROWS_AS(parse_error_bands("class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\tunder90_ppm\tover90_ppm\n"
                                    "all\t100\t50000\t20000\ta\tb\t1500\n"),
                  InputError);
  // The corpus's own table: most cases erred far less than the worst (half-precision plain training: the largest
  // errors near 10 % either way, 9 in 10 within 0.2 %).
  const ErrorBand* half = builtin_error_bands().find("training/transformer/half/plain");
  REQUIRE(half != nullptr);
  CHECK(half->under_fraction > 0.05);
  CHECK(half->under90_fraction < 0.01);
  CHECK(half->over90_fraction < 0.01);
}

TEST_CASE("new families: their own band classes, family rows, and the prior files' new_families", "[verdict]") {
  // The family a model's measurements speak for is its builder (engine/arch/builders.h model_family).
  struct FamilyRow {
    const char* model_type;
    const char* family;
  };
  const FamilyRow families[] = {{"llama", "llama"},     {"mistral", "llama"},       {"mixtral", "llama"},
                                {"roberta", "roberta"}, {"xlm-roberta", "roberta"}, {"camembert", "roberta"},
                                {"beit", "beit"},       {"data2vec-vision", "beit"}, {"esm", "esm"}};
  for (const FamilyRow& r : families) {
    ModelSpec m;
    m.transformer.model_type = r.model_type;
    CHECK(model_family(m) == r.family);
  }
  ModelSpec tv;
  tv.kind = ModelSpec::Kind::vision;
  tv.vision.family = VisionSpec::Family::regnet;
  CHECK(model_family(tv) == "torchvision/regnet");
  ModelSpec native;
  native.kind = ModelSpec::Kind::graph;
  CHECK(model_family(native) == "native");

  // A new family's keys skip the run's features: its errors come from the builder's first reading.
  VerdictFeatures f;
  f.precision = Precision::bf16;
  f.checkpointing = true;
  f.new_family = true;
  CHECK(band_class_keys(f) == std::vector<std::string>{"new/training/transformer/half", "new/training/transformer",
                                                       "new/training", "new", "all"});

  // family_measured: a table without family rows counts every family as measured; with them, a family is measured
  // when its row has cases.
  const std::string head = "class\tcases\tunder_ppm\tover_ppm\tworst_under\tworst_over\n";
  const ErrorBandTable no_rows = parse_error_bands(head + "all\t10\t0\t0\t-\t-\n");
  CHECK(family_measured(no_rows, "esm"));
  const ErrorBandTable rows = parse_error_bands(head + "all\t10\t0\t0\t-\t-\nfamily/llama\t9\t0\t0\t-\t-\nfamily/gptj\t0\t0\t0\t-\t-\n");
  CHECK(family_measured(rows, "llama"));
  CHECK_FALSE(family_measured(rows, "gptj"));
  CHECK_FALSE(family_measured(rows, "esm"));

  // build_error_bands: a measured family's sample lands in its feature classes and its family row; a new family's
  // first prediction in the new/ classes only (and "all"). Errors are (measured - predicted) / predicted.
  BandSample known{"known", f, 100.0, 102.0};  // 2 % under-predicted
  known.features.new_family = false;
  known.features.family = "llama";
  BandSample first{"first", f, 100.0, 50.0};   // 50 % over-predicted
  first.features.family = "esm";
  const ErrorBandTable t = build_error_bands({known, first});
  auto row = [](const ErrorBandTable& table, const char* key) {
    const ErrorBand* b = table.find(key);
    INFO(key);
    REQUIRE(b != nullptr);
    return *b;
  };
  CHECK(row(t, "family/llama").under_fraction == Approx(0.02));
  CHECK(t.find("family/esm") == nullptr);
  CHECK(row(t, "training/transformer/half/ckpt").cases == 1);
  CHECK(row(t, "training/transformer/half/ckpt").over_fraction == 0);
  CHECK(row(t, "new/training/transformer/half").over_fraction == Approx(0.5));
  CHECK(row(t, "all").cases == 2);

  // The embedded table: every family with measured cases has its row (since the thirty-second session's H100
  // call, every builder's: LLaVA-OneVision, ERNIE, BioGPT, XLM-RoBERTa-XL and MPT were the last predicted blind);
  // a native graph (the user's own description) has none, so its verdicts name a new/ class.
  const ErrorBandTable& bt = builtin_error_bands();
  for (const char* fam : {"llama", "gpt2", "t5", "esm", "segformer", "torchvision/resnet", "llava_onevision", "ernie",
                          "biogpt", "xlm-roberta-xl", "mpt"})
    CHECK(family_measured(bt, fam));
  CHECK_FALSE(family_measured(bt, "native"));

  // The generator reads each prior file's new_families; a name no measured row of the file resolves to is refused.
  std::string corpus_line;
  {
    std::istringstream lines(slurp(kData + "/validation/h200-corpus.jsonl"));
    for (std::string line; std::getline(lines, line);)
      if (line.find("\"id\": \"resnet50-ampbf16-sgdmom-b48-r192\"") != std::string::npos) corpus_line = line + "\n";
  }
  REQUIRE_FALSE(corpus_line.empty());
  const double measured = nlohmann::json::parse(corpus_line)["measured"]["peak_reserved_mib"].get<double>();
  auto prior = [&](const nlohmann::json& new_families) {
    nlohmann::json doc{{"cases", {{{"id", "resnet50-ampbf16-sgdmom-b48-r192"}, {"predicted", {{"peak_reserved_mib", 2 * measured}}}}}}};
    if (!new_families.is_null()) doc["new_families"] = new_families;
    const auto path = std::filesystem::temp_directory_path() / ("memplan_prior_" + std::to_string(::getpid()) + ".json");
    std::ofstream(path) << doc.dump();
    const CliOutput r = run_cli_captured({"validate", "-", "--error-bands", "--prior", path.string()}, corpus_line);
    std::filesystem::remove(path);
    return r;
  };
  const CliOutput as_new = prior(nlohmann::json::array({"torchvision/resnet"}));
  REQUIRE(as_new.exit_code == 0);
  const ErrorBandTable tn = parse_error_bands(as_new.out);
  CHECK(row(tn, "new/training/vision/amp").over_fraction == Approx(0.5));
  CHECK(row(tn, "family/torchvision/resnet").cases == 1);  // the current prediction only
  const CliOutput as_known = prior(nlohmann::json());
  REQUIRE(as_known.exit_code == 0);
  const ErrorBandTable tk = parse_error_bands(as_known.out);
  CHECK(tk.find("new") == nullptr);
  CHECK(row(tk, "family/torchvision/resnet").cases == 2);
  CHECK(row(tk, "training/vision/amp/plain").over_fraction == Approx(0.5));
  for (const nlohmann::json& bad : {nlohmann::json("torchvision/resnet"), nlohmann::json::array({7}),
                                    nlohmann::json::array({"torchvision/vgg"})}) {
    INFO(bad.dump());
    const CliOutput r = prior(bad);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("new_families") != std::string::npos);
  }
}
