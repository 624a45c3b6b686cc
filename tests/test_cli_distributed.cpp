// The distributed surface (issue 14): the CLI flags and the case key `distributed` into RunConfig::distributed,
// every bad value refused naming the flag / key and the value, the canonical case object read back, the
// per-rank output of estimate / validate, plan's and fit's replayed finalists. Commands run in process
// (cli::run_cli_captured, the binary's code path). Expected values are derived in comments: sizes of zoo configs
// (models/zoo/*.json) and torch's own rules (cited), never the output of the code under test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "cli/report_dist.h"
#include "cli/run_flags.h"
#include "engine/errors.h"
#include "models/dist_config.h"
#include "models/load_model.h"
#include "models/validation_case.h"

using memplan::cli::CliOutput;
using memplan::cli::run_cli_captured;

namespace {

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t j = s.find(' ', i);
    const size_t end = j == std::string::npos ? s.size() : j;
    if (end > i) out.push_back(s.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

CliOutput run(const std::string& args) { return run_cli_captured(words(args)); }

// A small llama-shaped case (heads 8, kv heads 4, intermediate 1024, vocab 1000: tp 2 and 4 divide all four,
// tp 8 divides the heads only) in the validation case format, with `distributed` set to `dist` (JSON text).
std::string dist_case(const std::string& id, const std::string& dist) {
  nlohmann::json j = {
      {"id", id},
      {"model",
       {{"source", "huggingface"},
        {"model_type", "llama"},
        {"config",
         {{"hidden_size", 256}, {"intermediate_size", 1024}, {"num_hidden_layers", 2}, {"num_attention_heads", 8},
          {"num_key_value_heads", 4}, {"vocab_size", 1000}}}}},
      {"batch_size", 2},
      {"seq_len", 128},
      {"precision", "bf16"},
      {"optimizer", "adamw"}};
  if (!dist.empty()) j["distributed"] = nlohmann::json::parse(dist);
  return j.dump();
}

memplan::ValidationCase parse_case(const std::string& line) {
  return memplan::parse_validation_case(nlohmann::json::parse(line));
}

}  // namespace

TEST_CASE("distributed flags: every bad value exits 2 with one line naming the flag and the value",
          "[cli][distributed][errors]") {
  struct Row {
    std::string args, flag, value;  // the message must name the flag and quote the value
  };
  // llama-2-7b: 32 heads, 32 kv heads, intermediate 11008, vocab 32000. llama-3.1-8b: 32 heads, 8 kv heads,
  // intermediate 14336, vocab 128256. gpt2: 12 heads, vocab 50257.
  const std::string l7 = "estimate --model llama-2-7b --seq-len 512 ";
  const Row table[] = {
      {l7 + "--gpus 8 --strategy fsdp", "--strategy", "fsdp"},                  // unknown: the valid ones listed
      {l7 + "--gpus 8 --strategy FSDP2", "--strategy", "FSDP2"},
      {l7 + "--gpus 8", "--gpus", "8"},                                          // a world without a strategy
      {l7 + "--gpus -2 --strategy ddp", "--gpus", "-2"},
      {l7 + "--gpus 2097152 --strategy ddp", "--gpus", "2097152"},               // past kMaxPlanGpus (2^20)
      {l7 + "--strategy fsdp2", "--strategy", "fsdp2"},                          // a strategy without a world
      {l7 + "--gpus 6 --strategy fsdp2 --tp 4", "--gpus", "6"},                  // 6 % (4 x 1 x 1) != 0
      {l7 + "--gpus 2 --strategy fsdp2 --tp 4", "--gpus", "2"},                  // tp above the world
      {l7 + "--gpus 8 --tp 0 --strategy ddp", "--tp", "0"},
      {l7 + "--gpus 8 --strategy fsdp2 --rank 8", "--rank", "8"},                // ranks are 0..7
      {l7 + "--gpus 8 --strategy fsdp2 --rank -1", "--rank", "-1"},
      {l7 + "--rank 3", "--rank", "set"},                                        // no distributed run
      {l7 + "--gpus 8 --strategy none", "--strategy", "none"},                   // dp 8 needs a wrapper
      {l7 + "--gpus 8 --strategy fsdp2 --pp 2", "--pp", "2"},                    // not replayed yet
      {l7 + "--gpus 8 --strategy fsdp2 --cp 2", "--cp", "2"},
      {l7 + "--gpus 8 --strategy fsdp2 --reshard-after-forward 3", "--reshard-after-forward", "3"},  // 8 % 3
      {l7 + "--gpus 8 --strategy fsdp2 --reshard-after-forward 16", "--reshard-after-forward", "16"},  // > dp
      {l7 + "--gpus 8 --strategy fsdp2 --reshard-after-forward maybe", "--reshard-after-forward", "maybe"},
      {l7 + "--gpus 8 --strategy fsdp2 --reshard-after-forward 0", "--reshard-after-forward", "0"},
      {l7 + "--gpus 8 --strategy ddp --reshard-after-forward false", "--reshard-after-forward", "false"},
      {l7 + "--gpus 8 --strategy fsdp2 --mp-param-dtype bf17", "--mp-param-dtype", "bf17"},
      {l7 + "--gpus 8 --strategy fsdp2 --mp-reduce-dtype int8", "--mp-reduce-dtype", "int8"},
      {l7 + "--gpus 8 --strategy ddp --mp-param-dtype bf16", "--mp-param-dtype", "bf16"},  // FSDP2's policy
      {l7 + "--gpus 8 --strategy ddp --offload optimizer", "--offload", "optimizer"},
      {l7 + "--gpus 8 --strategy zero2 --offload params", "--offload", "params"},  // stage 3 only
      {l7 + "--gpus 8 --strategy fsdp2 --offload optimizer", "--offload", "optimizer"},  // CPUOffloadPolicy: all
      {l7 + "--gpus 8 --strategy zero3 --offload disk", "--offload", "disk"},
      {l7 + "--gpus 8 --strategy fsdp2 --bucket-cap-mb 5", "--bucket-cap-mb", "5"},  // a DDP option
      {l7 + "--gpus 8 --strategy ddp --bucket-cap-mb -5", "--bucket-cap-mb", "-5"},
      {l7 + "--gpus 8 --strategy zero3 --static-graph", "--static-graph", "true"},
      {l7 + "--gpus 8 --strategy fsdp2 --gradient-as-bucket-view", "--gradient-as-bucket-view", "true"},
      {l7 + "--gpus 8 --strategy ddp --sequence-parallel", "--sequence-parallel", "true"},  // needs tp
      {"estimate --model llama-2-7b --gpus 8 --strategy ddp --tp 2 --sequence-parallel --seq-len 511",
       "--sequence-parallel", "true"},  // 511 tokens do not split in 2
      {l7 + "--mp-param-dtype bf16", "--mp-param-dtype", "set"},
      {l7 + "--gpus 8 --strategy fsdp2 --mode inference", "--gpus", "8"},        // training steps only
      {"estimate --model llama-3.1-8b --seq-len 512 --gpus 16 --tp 16 --strategy none", "--tp", "16"},  // kv 8
      {"estimate --model gpt2 --seq-len 512 --gpus 8 --tp 8 --strategy none", "--tp", "8"},     // Conv1D
      {"estimate --model resnet50 --gpus 4 --tp 2 --strategy ddp", "--tp", "2"},  // transformers only
      {"fit --model llama-2-7b --seq-len 512 --gpu h200 --gpus 8 --strategy fsdp", "--strategy", "fsdp"},
      {"fit --model llama-2-7b --seq-len 512 --gpu h200 --gpus 8 --strategy fsdp2 --rank 9", "--rank", "9"},
  };
  for (const auto& row : table) {
    DYNAMIC_SECTION(row.args) {
      const CliOutput r = run(row.args);
      INFO("stderr: " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_THAT(r.err, Catch::Contains(row.flag) && Catch::Contains("(got " + row.value + ")"));
    }
  }
  SECTION("an unknown strategy lists the valid ones") {
    CHECK_THAT(run(l7 + "--gpus 8 --strategy fsdp").err, Catch::Contains("ddp, fsdp2, zero1, zero2, zero3"));
  }
  SECTION("a tp not dividing a dimension names it and says what torch would do") {
    // llama-3.1-8b: 8 kv heads over tp 16 is half a head per rank.
    CHECK_THAT(run("estimate --model llama-3.1-8b --gpus 16 --tp 16 --strategy none").err,
               Catch::Contains("num_key_value_heads 8") && Catch::Contains("view(..., head_dim)"));
    // GPT-2 (heads 12 divide by 2): torch's ColwiseParallel raises NotImplementedError on its Conv1D layers.
    CHECK_THAT(run("estimate --model gpt2 --seq-len 512 --gpus 2 --tp 2 --strategy none").err,
               Catch::Contains("Conv1D"));
    // A vocabulary of 1001 over tp 2 (heads 8, kv 4, intermediate 1024 divide): DTensor's torch.chunk gives
    // ceil(1001 / 2) = 501 rows to rank 0 and 500 to rank 1.
    nlohmann::json j = nlohmann::json::parse(dist_case("v", R"({"strategy": "none", "world_size": 2, "tp": 2})"));
    j["model"]["config"]["vocab_size"] = 1001;
    CHECK_THROWS_WITH(parse_case(j.dump()), Catch::Contains("distributed.tp") && Catch::Contains("vocab_size 1001") &&
                                                Catch::Contains("501 or 500"));
  }
  SECTION("pipeline parallel is refused, not answered in closed form") {
    CHECK_THAT(run(l7 + "--gpus 8 --strategy fsdp2 --pp 2").err, Catch::Contains("not replayed yet"));
  }
}

TEST_CASE("distributed flags: what each sets in RunConfig::distributed", "[cli][distributed]") {
  const memplan::ModelSpec m = memplan::load_model("llama-2-7b");
  memplan::cli::RunFlags f;
  f.seq_len = 512;
  SECTION("none given: the single-GPU step") {
    CHECK(memplan::cli::run_config_from(f, m).distributed == memplan::DistributedConfig{});
  }
  SECTION("fsdp2 on 8 with mixed precision and reshard K") {
    f.gpus = 8;
    f.strategy = "fsdp2";
    f.rank = 3;
    f.reshard_after_forward = "4";
    f.mp_param_dtype = "bfloat16";  // torch's name, canonical bf16
    f.mp_reduce_dtype = "fp32";
    const auto d = memplan::cli::run_config_from(f, m).distributed;
    CHECK(d.strategy == memplan::DistStrategy::fsdp2);
    CHECK(d.world_size == 8);
    CHECK(d.dp() == 8);
    CHECK(d.rank == 3);
    CHECK(d.reshard_after_forward == 4);
    CHECK(d.param_dtype == "bf16");
    CHECK(d.reduce_dtype == "fp32");
  }
  SECTION("reshard K normalised as torch's _get_post_forward_mesh_info: 1 is False, the shard group is True") {
    f.gpus = 8;
    f.strategy = "fsdp2";
    for (const auto& [text, want] : std::vector<std::pair<std::string, int64_t>>{
             {"1", 0}, {"2", 2}, {"8", -1}, {"true", -1}, {"false", 0}}) {
      f.reshard_after_forward = text;
      INFO(text);
      CHECK(memplan::cli::run_config_from(f, m).distributed.reshard_after_forward == want);
    }
    // With tp 2 the shard group is dp = 8 / 2 = 4: K 4 is True, K 8 does not divide it.
    f.tp = 2;
    f.reshard_after_forward = "4";
    CHECK(memplan::cli::run_config_from(f, m).distributed.reshard_after_forward == -1);
    f.reshard_after_forward = "8";
    CHECK_THROWS_AS(memplan::cli::run_config_from(f, m), memplan::InputError);
  }
  SECTION("--tp alone: the world is tp, no data parallel") {
    f.tp = 4;
    f.sequence_parallel = true;
    const auto d = memplan::cli::run_config_from(f, m).distributed;
    CHECK(d.world_size == 4);
    CHECK(d.dp() == 1);
    CHECK(d.strategy == memplan::DistStrategy::none);
    CHECK(d.sequence_parallel);
  }
  SECTION("ddp buckets") {
    f.gpus = 2;
    f.strategy = "ddp";
    f.bucket_cap_mb = 1;
    f.gradient_as_bucket_view = true;
    f.static_graph = true;
    const auto d = memplan::cli::run_config_from(f, m).distributed;
    CHECK(d.bucket_cap_mb == 1);
    CHECK(d.gradient_as_bucket_view);
    CHECK(d.static_graph);
  }
  SECTION("fit: --gpus alone counts GPUs for the remedies, the run stays on one") {
    f.gpus = 8;
    f.gpus_for_remedies = true;
    CHECK(memplan::cli::run_config_from(f, m).distributed == memplan::DistributedConfig{});
  }
}

TEST_CASE("case key distributed: parsed, refused by name, read back canonically", "[distributed][validate]") {
  SECTION("the issue's example") {
    const auto c = parse_case(dist_case("ex", R"({"strategy": "fsdp2", "world_size": 8, "reshard_after_forward": true,
                                                  "param_dtype": "bf16", "reduce_dtype": "fp32"})"));
    const auto& d = c.run.distributed;
    CHECK(d.strategy == memplan::DistStrategy::fsdp2);
    CHECK(d.world_size == 8);
    CHECK(d.reshard_after_forward == -1);
    CHECK(d.param_dtype == "bf16");
    CHECK(d.reduce_dtype == "fp32");
    CHECK(d.rank == 0);
  }
  SECTION("round trip: the canonical object parses back to the same configuration") {
    const char* objects[] = {
        R"({"strategy": "fsdp2", "world_size": 8})",
        R"({"strategy": "fsdp2", "world_size": 8, "reshard_after_forward": false, "param_dtype": "bf16"})",
        R"({"strategy": "fsdp2", "world_size": 16, "reshard_after_forward": 4, "reduce_dtype": "fp32", "rank": 15})",
        R"({"strategy": "fsdp2", "world_size": 8, "tp": 2, "sequence_parallel": true})",
        R"({"strategy": "ddp", "world_size": 2, "bucket_cap_mb": 1, "gradient_as_bucket_view": true, "static_graph": true})",
        R"({"strategy": "zero1", "world_size": 4})",
        R"({"strategy": "zero3", "world_size": 64, "offload": "params"})",
        R"({"strategy": "zero2", "world_size": 8, "offload": "optimizer"})",
        R"({"strategy": "none", "world_size": 4, "tp": 4})",
    };
    for (const char* o : objects) {
      INFO(o);
      const auto first = parse_case(dist_case("rt", o)).run.distributed;
      const std::string canonical = memplan::distributed_to_json(first).dump();
      const auto again = parse_case(dist_case("rt", canonical)).run.distributed;
      CHECK(again == first);
      CHECK(memplan::distributed_to_json(again).dump() == canonical);
    }
  }
  SECTION("bad sub-keys and values are refused naming distributed.<key>") {
    struct Row {
      std::string dist, field;
    };
    const Row rows[] = {
        {R"({"strategy": "fsdp2", "world_size": 8, "dp": 8})", "distributed.dp"},  // unknown sub-key
        {R"({"world_size": 8})", "distributed.strategy"},                            // required
        {R"({"strategy": "fsdp", "world_size": 8})", "distributed.strategy"},
        {R"({"strategy": 2, "world_size": 8})", "distributed.strategy"},
        {R"({"strategy": "fsdp2", "world_size": 0})", "distributed.world_size"},
        {R"({"strategy": "fsdp2", "world_size": 8.5})", "distributed.world_size"},
        {R"({"strategy": "fsdp2", "world_size": 18446744073709551615})", "distributed.world_size"},
        {R"({"strategy": "fsdp2", "world_size": 6, "tp": 4})", "distributed.world_size"},
        {R"({"strategy": "fsdp2", "world_size": 8, "tp": 8})", "distributed.tp"},  // kv heads 4
        {R"({"strategy": "fsdp2", "world_size": 8, "rank": 8})", "distributed.rank"},
        {R"({"strategy": "fsdp2", "world_size": 8, "reshard_after_forward": 3})", "distributed.reshard_after_forward"},
        {R"({"strategy": "fsdp2", "world_size": 8, "reshard_after_forward": "yes"})", "distributed.reshard_after_forward"},
        {R"({"strategy": "ddp", "world_size": 8, "reshard_after_forward": false})", "distributed.reshard_after_forward"},
        {R"({"strategy": "fsdp2", "world_size": 8, "param_dtype": "int4"})", "distributed.param_dtype"},
        {R"({"strategy": "zero3", "world_size": 8, "reduce_dtype": "fp32"})", "distributed.reduce_dtype"},
        {R"({"strategy": "fsdp2", "world_size": 8, "pp": 2})", "distributed.pp"},
        {R"({"strategy": "ddp", "world_size": 8, "offload": "optimizer"})", "distributed.offload"},
        {R"({"strategy": "ddp", "world_size": 8, "static_graph": 1})", "distributed.static_graph"},
        {R"({"strategy": "fsdp2", "world_size": 8, "bucket_cap_mb": 1})", "distributed.bucket_cap_mb"},
        {R"([8])", "distributed"},
    };
    for (const auto& row : rows) {
      INFO(row.dist);
      try {
        (void)parse_case(dist_case("bad", row.dist));
        FAIL("accepted");
      } catch (const memplan::InputError& e) {
        CHECK_THAT(std::string(e.what()), Catch::StartsWith("bad: " + row.field + ":"));
      }
    }
  }
  SECTION("inference cases are refused: a distributed case is one rank's training step") {
    nlohmann::json j = nlohmann::json::parse(dist_case("inf", R"({"strategy": "fsdp2", "world_size": 8})"));
    j["mode"] = "inference";
    j.erase("optimizer");
    CHECK_THROWS_WITH(parse_case(j.dump()), Catch::Contains("distributed.world_size"));
  }
  SECTION("null is the single-GPU step") {
    CHECK(parse_case(dist_case("null", "null")).run.distributed == memplan::DistributedConfig{});
  }
}

TEST_CASE("estimate of a distributed rank: the heading, NCCL in the device total, one JSON document",
          "[cli][distributed][json]") {
  const std::string base = "estimate --model tinyllama-1.1b --seq-len 256 --gpu h200 ";
  SECTION("text: the ledger is headed by its rank, world and wrapper; the last rank is replayed too") {
    const CliOutput r = run(base + "--gpus 8 --strategy fsdp2 --mp-param-dtype bf16 --mp-reduce-dtype fp32 --precision fp32");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("rank 0 of 8 (fsdp2, reshard after forward, bf16 params / fp32 reduce)\n"));
    CHECK_THAT(r.out, Catch::Contains("non-PyTorch includes NCCL's") && Catch::Contains("rank 7 (the last, replayed too)"));
    const CliOutput k = run(base + "--gpus 16 --tp 2 --strategy fsdp2 --reshard-after-forward 4 --rank 3");
    REQUIRE(k.exit_code == 0);
    CHECK_THAT(k.out, Catch::StartsWith("rank 3 of 16 (fsdp2 dp 8 x tp 2, reshard to groups of 4 after forward)\n"));
    const CliOutput d = run(base + "--gpus 2 --strategy ddp --bucket-cap-mb 1 --static-graph");
    CHECK_THAT(d.out, Catch::StartsWith("rank 0 of 2 (ddp, 1 MB buckets, static graph)\n"));
  }
  SECTION("JSON: the config echoed as the case key writes it, the rank's figures, NCCL counted once") {
    const CliOutput r = run(base + "--gpus 8 --strategy fsdp2 --reshard-after-forward false --json");
    REQUIRE(r.exit_code == 0);
    nlohmann::json j;
    REQUIRE_NOTHROW(j = nlohmann::json::parse(r.out));  // one document
    const auto& dj = j.at("distributed");
    CHECK(dj.at("config") == nlohmann::json::parse(R"({"strategy": "fsdp2", "world_size": 8, "reshard_after_forward": false})"));
    CHECK(dj.at("rank") == 0);
    CHECK(dj.at("dp") == 8);
    CHECK(dj.at("nccl").at("derived") == true);
    REQUIRE(dj.at("ranks").size() == 2);  // the printed rank 0 and the last, 7
    CHECK(dj.at("ranks")[0].at("rank") == 0);
    CHECK(dj.at("ranks")[1].at("rank") == 7);
    CHECK(dj.at("ranks")[0].at("torch_peak_allocated_bytes") == j.at("torch_peak_allocated_bytes"));
    // Device total = the run's reserved peak + non-PyTorch memory, which includes NCCL: the configuration's
    // NCCL figure (dist_nccl_bytes, before the replay) is the replayed rank's.
    const int64_t nccl = dj.at("nccl").at("total_bytes").get<int64_t>();
    CHECK(nccl > 0);
    memplan::DistributedConfig cfg;
    cfg.strategy = memplan::DistStrategy::fsdp2;
    cfg.world_size = 8;
    CHECK(memplan::cli::dist_nccl_bytes(cfg) == nccl);
    CHECK(j.at("device_total_bytes").get<int64_t>() ==
          j.at("run_peak_reserved_bytes").get<int64_t>() + j.at("non_pytorch_bytes").get<int64_t>());
    const CliOutput single = run(base + "--json");
    CHECK(j.at("non_pytorch_bytes").get<int64_t>() ==
          nlohmann::json::parse(single.out).at("non_pytorch_bytes").get<int64_t>() + nccl);
    CHECK_FALSE(nlohmann::json::parse(single.out).contains("distributed"));
  }
  SECTION("dist_nccl_bytes names the groups the replay opens (dp, tp, the world when it is neither)") {
    for (const char* flags : {"--gpus 4 --strategy ddp", "--gpus 8 --tp 2 --strategy fsdp2", "--gpus 4 --tp 4 --strategy none",
                              "--gpus 16 --tp 4 --sequence-parallel --strategy fsdp2"}) {
      INFO(flags);
      const CliOutput r = run(base + flags + " --json");
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      memplan::cli::RunFlags f;
      const auto w = words(flags);
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        if (w[i] == "--gpus") f.gpus = std::stoll(w[i + 1]);
        if (w[i] == "--tp") f.tp = std::stoll(w[i + 1]);
        if (w[i] == "--strategy") f.strategy = w[i + 1];
      }
      f.seq_len = 256;
      f.sequence_parallel = r.out.find("sequence_parallel") != std::string::npos;
      const auto cfg = memplan::cli::run_config_from(f, memplan::load_model("tinyllama-1.1b")).distributed;
      CHECK(memplan::cli::dist_nccl_bytes(cfg) == j.at("distributed").at("nccl").at("total_bytes").get<int64_t>());
    }
  }
}

TEST_CASE("validate: a distributed case is predicted for its rank and marked", "[cli][distributed][validate]") {
  const std::string text = dist_case("fsdp2-w8", R"({"strategy": "fsdp2", "world_size": 8})") + "\n" +
                           dist_case("single", "") + "\n";
  const CliOutput r = run_cli_captured({"validate", "-", "--json"}, text);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("summary").at("distributed") == 1);
  const auto& p = j.at("cases")[0].at("predicted");
  CHECK(p.at("distributed").at("rank") == 0);
  CHECK(p.at("distributed").at("config").at("world_size") == 8);
  CHECK_FALSE(j.at("cases")[1].at("predicted").contains("distributed"));
  // The rank's figures: the same as estimate's for that rank (both are estimate(spec, cfg) of the case).
  const CliOutput t = run_cli_captured({"validate", "-"}, text);
  CHECK_THAT(t.out, Catch::Contains("\n    rank 0 of 8 (fsdp2, reshard after forward)\n") &&
                        Catch::Contains("distributed:    1 cases"));
}

TEST_CASE("plan and fit: finalists and sharding remedies are rank 0 replayed, or say why not", "[cli][distributed][plan]") {
  SECTION("plan: every listed plan has rank_replay; the closed form stands only with a reason") {
    const CliOutput r = run("plan --model llama-3.1-8b --gpu h100-sxm --gpus 8 --seq-len 4096 --top 6 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE_FALSE(j.at("top").empty());
    size_t replayed = 0;
    for (const auto& c : j.at("top")) {
      const auto& x = c.at("rank_replay");
      INFO(c.dump());
      if (x.at("replayed")) {
        ++replayed;
        CHECK(x.at("config").at("world_size") == c.at("tp").get<int64_t>() * c.at("pp").get<int64_t>() * c.at("dp").get<int64_t>());
        CHECK(x.at("config").at("strategy") == c.at("data_parallel"));
        // device = reserved + NCCL + the H100's non-PyTorch memory (> 0): the parts add up below the total
        CHECK(x.at("device_bytes").get<int64_t>() > x.at("peak_reserved_bytes").get<int64_t>() + x.at("nccl_bytes").get<int64_t>());
        CHECK_THAT(x.at("flags").get<std::string>(), Catch::StartsWith("--gpus 8 --strategy "));
      } else {
        CHECK_FALSE(x.at("closed_form_because").get<std::string>().empty());
        // pp > 1, Megatron and DeepSpeed's zero1 are the configurations the replay leaves to the closed form
        CHECK((c.at("pp") != 1 || c.at("data_parallel") == "megatron" || c.at("data_parallel") == "zero1"));
      }
    }
    CHECK(replayed > 0);  // FSDP2 on 8 x 1 x 1 is among the fastest plans of an 8B model on 8 GPUs
    const size_t best = j.at("best").get<size_t>();
    REQUIRE(best < j.at("top").size());
    const auto& b = j.at("top")[best].at("rank_replay");
    CHECK((!b.at("replayed") || b.at("fits")));
  }
  SECTION("fit: the FSDP2 / ZeRO-3 remedies carry their figures' kind and replayable flags") {
    // Llama-2-70B in bf16 on a 20 GiB budget: nothing on one GPU fits before the sharding remedies.
    const CliOutput r = run("fit --model llama-2-70b --gpu h100-sxm --gpu-memory-gib 20 --precision bf16 --seq-len 512 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    size_t multi = 0;
    for (const auto& x : j.at("remedies")) {
      if (!x.contains("figures")) continue;
      ++multi;
      INFO(x.dump());
      if (x.at("figures") == "replay") CHECK_THAT(x.at("flags").get<std::string>(), Catch::StartsWith("--gpus "));
      else CHECK_FALSE(x.at("closed_form_because").get<std::string>().empty());
    }
    CHECK(multi > 0);
  }
  SECTION("fit of a distributed run is that rank's, and skips the sharding remedies (the strategy is given)") {
    const CliOutput r =
        run("fit --model tinyllama-1.1b --seq-len 256 --gpu h200 --gpus 8 --strategy fsdp2 --advise --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("distributed").at("config").at("world_size") == 8);
    for (const auto& x : j.at("remedies")) CHECK_FALSE(x.contains("figures"));
    const CliOutput t = run("fit --model tinyllama-1.1b --seq-len 256 --gpu h200 --gpus 8 --strategy fsdp2");
    CHECK_THAT(t.out, Catch::StartsWith("rank 0 of 8 (fsdp2, reshard after forward)\n"));
  }
}

TEST_CASE("validate --events-out labels a tensor-parallel rank's events by the graph that rank runs", "[cli][distributed][validate]") {
  // The rank's graph holds DTensor's collectives as ops (engine/dist/tp.cpp): after the embedding and each
  // row-parallel linear an all_reduce allocates a fresh [B, S, H]; the model's own graph has no such op, so
  // labels taken from it named other ops (a different op count shifts every later index).
  const std::string text = dist_case("tp2", R"({"strategy": "none", "world_size": 2, "tp": 2})") + "\n";
  const std::string path = (std::filesystem::temp_directory_path() / "memplan-tp2-events.txt").string();
  const CliOutput r = run_cli_captured({"validate", "-", "--only", "tp2", "--events-out", path}, text);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(path);
  std::string line;
  int all_reduce_allocs = 0, lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    // "a <bytes> <block> forward:all_reduce@<layer>": [B, S, H] = 2 x 128 x 256 bf16 = 131072 bytes
    if (line.rfind("a 131072 ", 0) == 0 && line.find(" forward:all_reduce@") != std::string::npos) ++all_reduce_allocs;
  }
  std::filesystem::remove(path);
  CHECK(lines > 0);
  // per training step: the embedding's and each layer's o_proj and down_proj outputs, 1 + 2 x 2 = 5, over 3 steps
  CHECK(all_reduce_allocs == 15);
}
