// explain-oom: parsing PyTorch OOM messages to exact bytes, classifying them, and the CLI's exit codes.
//
// Expected byte values are derived by hand in comments: a printed "a.bc XiB" is a*X + round(bc/100 * X),
// X = 2^10 (KiB), 2^20 (MiB) or 2^30 (GiB), rounding half up.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/oom_explain.h"
#include "data_dir.h"

using namespace memplan;

namespace {

constexpr int64_t MiB = int64_t{1} << 20;
constexpr int64_t GiB = int64_t{1} << 30;

// The measured OOM of the validation case; stored cut off after "If reserved but unallocated memory".
std::string validation_oom_message() {
  std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/validation/h200-public-cases.jsonl");
  REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.value("id", "") == "tinyllama-ampbf16-adamw-b16s2048-cap24")
      return j.at("measured").at("oom_message").get<std::string>();
  }
  FAIL("case tinyllama-ampbf16-adamw-b16s2048-cap24 not found");
  return "";
}

const char* kLegacy =
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB "
    "already allocated; 3.19 MiB free; 14.76 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
    "memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
    "PYTORCH_CUDA_ALLOC_CONF";

// Three other processes, this process listed after them (NVML order), GPU 1.
const char* kOthers =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 1 has a total capacity of "
    "80.00 GiB of which 12.00 MiB is free. Process 111 has 30.00 GiB memory in use. Process 222 has 512.00 MiB "
    "memory in use. Process 333 has 1.50 GiB memory in use. Including non-PyTorch memory, this process has "
    "47.90 GiB memory in use. Of the allocated memory 46.00 GiB is allocated by PyTorch, and 20.00 MiB is "
    "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

std::string current(const std::string& procs, const std::string& tail) {
  return "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which "
         "1.06 GiB is free. " + procs + tail;
}

}  // namespace

TEST_CASE("validation case: truncated current-format message with a cap parses byte-exactly", "[oom]") {
  const std::string msg = validation_oom_message();
  REQUIRE(msg.find("If reserved but unallocated memory") != std::string::npos);  // cut off mid-sentence
  const OomReport r = parse_oom_message(msg);
  CHECK(r.format == OomFormat::current);
  CHECK(r.device == 0);
  CHECK(r.requested_bytes == 369098752);          // 352 * 2^20
  CHECK(r.total_bytes == 150109106995);           // 139*2^30 = 149250113536, + round(0.80*2^30 = 858993459.2)
  CHECK(r.free_bytes == 123168924631);            // 114*2^30 = 122406567936, + round(0.71*2^30 = 762356695.04)
  CHECK(r.process_in_use_bytes == 26381836616);   // 24*2^30 = 25769803776, + round(0.57*2^30 = 612032839.68)
  CHECK(r.process_in_use_reported);
  CHECK(r.other_processes_bytes == 543162368);    // 518 * 2^20
  CHECK(r.other_process_count == 1);
  CHECK(r.cap_bytes == 25769803776);              // 24 * 2^30
  CHECK(r.allocated_bytes == 25640954757);        // 23*2^30 = 24696061952, + round(0.88*2^30 = 944892805.12)
  CHECK(r.reserved_unallocated_bytes == 21894267);  // 20*2^20 = 20971520, + round(0.88*2^20 = 922746.88)

  // The cap left 24 GiB - 23.90 GiB reserved = 102 MiB < 352 MiB while 114.71 GiB was free on the device.
  const OomDiagnosis d = classify(r);
  CHECK(d.kind == OomKind::fraction_cap);
  REQUIRE(!d.recommendations.empty());
  // (23.88 GiB + 20.88 MiB + 352 MiB) / 139.80 GiB = 0.1734 -> 0.18, the smallest fraction that admits it.
  CHECK_THAT(d.recommendations[0], Catch::Contains("set_per_process_memory_fraction(0.18)"));
  CHECK_THAT(d.verdict, Catch::StartsWith("fraction_cap:"));
}

TEST_CASE("legacy format (torch < 2.1) parses byte-exactly", "[oom]") {
  const OomReport r = parse_oom_message(kLegacy);
  CHECK(r.format == OomFormat::legacy);
  CHECK(r.device == 0);
  CHECK(r.requested_bytes == 20 * MiB);         // 20971520
  CHECK(r.total_bytes == 16943645983);          // 15*2^30 = 16106127360, + round(0.78*2^30 = 837518622.72)
  CHECK(r.allocated_bytes == 15633680957);      // 14*2^30 = 15032385536, + round(0.56*2^30 = 601295421.44)
  CHECK(r.free_bytes == 3344957);               // 3*2^20 = 3145728, + round(0.19*2^20 = 199229.44)
  // reserved 14.76 GiB = 15032385536 + round(0.76*2^30 = 816043786.24) = 15848429322; minus allocated:
  CHECK(r.reserved_unallocated_bytes == 214748365);
  CHECK(r.cap_bytes == 0);
  CHECK(r.process_in_use_bytes == 0);
  CHECK_FALSE(r.process_in_use_reported);
  CHECK(r.other_processes_bytes == 0);
  // 204.80 MiB cached but unusable, ten times the 20 MiB request: the allocator could not find one block.
  const OomDiagnosis d = classify(r);
  CHECK(d.kind == OomKind::fragmentation);
  CHECK_THAT(d.recommendations[0], Catch::Contains("max_split_size_mb"));  // legacy torch: no expandable segments
}

TEST_CASE("legacy variants: 'allowed' cap and torch <= 1.3 'cached'", "[oom]") {
  const OomReport a = parse_oom_message(
      "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 3; 10.00 GiB total capacity; 4.00 GiB already "
      "allocated; 5.00 GiB free; 4.50 GiB allowed; 4.25 GiB reserved in total by PyTorch)");
  CHECK(a.device == 3);
  CHECK(a.cap_bytes == 4 * GiB + GiB / 2);
  CHECK(a.reserved_unallocated_bytes == GiB / 4);
  const OomReport b = parse_oom_message(
      "CUDA out of memory. Tried to allocate 1024 bytes (GPU 0; 1.00 GiB total capacity; 512.00 MiB already "
      "allocated; 0 bytes free; 300.00 KiB cached)");
  CHECK(b.requested_bytes == 1024);
  CHECK(b.free_bytes == 0);
  CHECK(b.reserved_unallocated_bytes == 300 * 1024);
}

TEST_CASE("several other processes are summed wherever NVML lists this process", "[oom]") {
  const OomReport r = parse_oom_message(kOthers);
  CHECK(r.device == 1);
  CHECK(r.other_process_count == 3);
  CHECK(r.other_processes_bytes == 30 * GiB + 512 * MiB + GiB + GiB / 2);  // 34359738368 = 32 GiB
  CHECK(r.process_in_use_bytes == 51432233370);  // 47*2^30 = 50465865728, + round(0.90*2^30 = 966367641.6)
  CHECK(r.allocated_bytes == 46 * GiB);
  CHECK(r.reserved_unallocated_bytes == 20 * MiB);
  CHECK(classify(r).kind == OomKind::other_processes);

  // Same numbers with this process first and a missing GPU index ("GPU  has", seen from some builds).
  std::string moved = kOthers;
  const std::string self = "Including non-PyTorch memory, this process has 47.90 GiB memory in use. ";
  moved.erase(moved.find(self), self.size());
  moved.insert(moved.find("Process 111"), self);
  moved.replace(moved.find("GPU 1"), 5, "GPU ");
  const OomReport m = parse_oom_message(moved);
  CHECK(m.device == -1);
  CHECK(m.other_processes_bytes == r.other_processes_bytes);
  CHECK(m.process_in_use_bytes == r.process_in_use_bytes);
}

TEST_CASE("wrapped, hard-wrapped, indented and rank-prefixed pastes parse like the one-line message", "[oom]") {
  const OomReport want = parse_oom_message(kOthers);
  const std::string one_line = kOthers;
  auto same = [&](const std::string& text) {
    const OomReport r = parse_oom_message(text);
    CHECK(r.requested_bytes == want.requested_bytes);
    CHECK(r.total_bytes == want.total_bytes);
    CHECK(r.free_bytes == want.free_bytes);
    CHECK(r.other_processes_bytes == want.other_processes_bytes);
    CHECK(r.process_in_use_bytes == want.process_in_use_bytes);
    CHECK(r.allocated_bytes == want.allocated_bytes);
    CHECK(r.reserved_unallocated_bytes == want.reserved_unallocated_bytes);
  };
  SECTION("soft wrap at spaces, with indentation") {
    std::string t;
    size_t col = 0;
    for (char c : one_line) {
      if (c == ' ' && col > 60) { t += "\n    "; col = 0; continue; }
      t.push_back(c);
      ++col;
    }
    same(t);
  }
  SECTION("hard wrap every 37 columns, inside words and numbers") {
    std::string t;
    for (size_t i = 0; i < one_line.size(); i += 37) t += one_line.substr(i, 37) + "\r\n";
    same(t);
  }
  SECTION("torchrun [rankN]: prefix on every wrapped line") {
    std::string t = "[rank3]: ";
    for (size_t i = 0; i < one_line.size(); i += 50) t += one_line.substr(i, 50) + "\n[rank3]: ";
    same(t);
  }
}

TEST_CASE("a message inside a traceback, with text after it", "[oom]") {
  const std::string text =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 88, in <module>\n"
      "    loss.backward()\n"
      "  File \"/usr/lib/python3/site-packages/torch/_tensor.py\", line 521, in backward\n"
      "    torch.autograd.backward(\n"
      "torch.OutOfMemoryError: " + current("Including non-PyTorch memory, this process has 22.58 GiB memory in use. ",
                                           "Of the allocated memory 21.90 GiB is allocated by PyTorch, and "
                                           "180.00 MiB is reserved by PyTorch but unallocated. If reserved but "
                                           "unallocated memory is large try setting ...\n") +
      "[2024-05-01 10:00:00] wandb: Waiting for W&B process to finish... (failed 1).\n";
  const OomReport r = parse_oom_message(text);
  CHECK(r.requested_bytes == 2 * GiB);
  CHECK(r.free_bytes == 1138166333);          // 1*2^30 = 1073741824, + round(0.06*2^30 = 64424509.44)
  CHECK(r.process_in_use_bytes == 24245090386);  // 22*2^30 = 23622320128, + round(0.58*2^30 = 622770257.92)
  CHECK(r.allocated_bytes == 23514945946);    // 21*2^30 = 22548578304, + round(0.90*2^30 = 966367641.6)
  CHECK(r.reserved_unallocated_bytes == 180 * MiB);
  CHECK(r.other_processes_bytes == 0);
  // Tensors fill 93% of 23.65 GiB; 180 MiB cached + 1.06 GiB free cannot cover 2 GiB; others hold ~10 MiB.
  const OomDiagnosis d = classify(r);
  CHECK(d.kind == OomKind::capacity);
  CHECK_THAT(d.recommendations[0], Catch::Contains("micro-batch"));
  // short by 2 GiB - 1138166333 = 1009317315 bytes = 962.56 MiB
  CHECK_THAT(d.recommendations[0], Catch::Contains("962.56 MiB"));
}

TEST_CASE("optional parts: private pools, bytes without unit, TiB, HIP, no NVML process list", "[oom]") {
  const OomReport r = parse_oom_message(
      "HIP out of memory. Tried to allocate 4096. GPU 0 has a total capacity of 1.50 TiB of which 0 bytes is "
      "free. 100.00 GiB allowed; Of the allocated memory 99.00 GiB is allocated by PyTorch, with 1.25 GiB "
      "allocated in private pools (e.g., CUDA Graphs), and 512.00 KiB is reserved by PyTorch but unallocated.");
  CHECK(r.requested_bytes == 4096);
  CHECK(r.total_bytes == (int64_t{3} << 39));  // 1.5 * 2^40
  CHECK(r.free_bytes == 0);
  CHECK(r.cap_bytes == 100 * GiB);
  CHECK(r.allocated_bytes == 99 * GiB);
  CHECK(r.private_pool_bytes == GiB + GiB / 4);
  CHECK(r.reserved_unallocated_bytes == 512 * 1024);
  CHECK_FALSE(r.process_in_use_reported);
  CHECK(r.process_in_use_bytes == 0);
}

TEST_CASE("the first complete message wins when the text holds several", "[oom]") {
  const std::string cut = "CUDA out of memory. Tried to allocate 8.00 MiB. GPU 0 has a total capacity of";
  const OomReport r = parse_oom_message(cut + "\n...retrying...\n" + kLegacy);
  CHECK(r.format == OomFormat::legacy);
  CHECK(r.requested_bytes == 20 * MiB);
}

// Classification rules on constructed reports, bracketing each threshold by one byte where it has one.
TEST_CASE("classification: each kind and its boundaries", "[oom]") {
  OomReport base;  // 80 GiB device, 40 GiB allocated, request 1 GiB, nothing free
  base.requested_bytes = GiB;
  base.total_bytes = 80 * GiB;
  base.allocated_bytes = 78 * GiB;
  base.reserved_unallocated_bytes = 100 * MiB;
  base.free_bytes = 0;
  base.process_in_use_reported = true;
  base.process_in_use_bytes = 80 * GiB;

  SECTION("capacity: tensors fill the device") {
    CHECK(classify(base).kind == OomKind::capacity);
  }
  SECTION("fragmentation: cached-but-unallocated covers the request exactly, not one byte less") {
    OomReport r = base;
    r.reserved_unallocated_bytes = GiB;
    CHECK(classify(r).kind == OomKind::fragmentation);
    r.reserved_unallocated_bytes = GiB - 1;  // < R, and 1 GiB is far below 10% of 79 GiB reserved
    CHECK(classify(r).kind == OomKind::capacity);
  }
  SECTION("fragmentation by share: U < R, but U >= 10% of reserved and free + U covers R") {
    OomReport r;
    r.requested_bytes = 4 * GiB;
    r.total_bytes = 24 * GiB;
    r.free_bytes = GiB;
    r.allocated_bytes = 18 * GiB;
    r.reserved_unallocated_bytes = 3 * GiB;  // 14% of 21 GiB; free + U = 4 GiB = R
    CHECK(classify(r).kind == OomKind::fragmentation);
    r.free_bytes = GiB - 1;  // one byte short even without fragmentation
    CHECK(classify(r).kind == OomKind::capacity);
  }
  SECTION("other_processes: without them it fits; a few stray MiB do not count") {
    OomReport r = base;
    r.allocated_bytes = 40 * GiB;
    r.process_in_use_bytes = 41 * GiB;
    r.other_processes_bytes = 39 * GiB;
    r.other_process_count = 2;
    CHECK(classify(r).kind == OomKind::other_processes);
    r.allocated_bytes = 78 * GiB;
    r.process_in_use_bytes = 79 * GiB;
    r.other_processes_bytes = 8 * MiB;  // below 10% of this process's 78.1 GiB reserved
    CHECK(classify(r).kind == OomKind::capacity);
  }
  SECTION("legacy format: memory outside the allocator beyond a 1 GiB context allowance counts as others") {
    OomReport r;
    r.format = OomFormat::legacy;
    r.requested_bytes = 36 * MiB;
    r.total_bytes = 8 * GiB;
    r.free_bytes = 20 * MiB;
    r.allocated_bytes = 150 * MiB;
    r.reserved_unallocated_bytes = 30 * MiB;
    CHECK(classify(r).kind == OomKind::other_processes);  // ~6.8 GiB held elsewhere
    r.allocated_bytes = 6 * GiB + 900 * MiB;  // now this process holds nearly all of it
    CHECK(classify(r).kind == OomKind::capacity);
  }
  SECTION("fraction_cap: the device has room, the cap does not; bracketed on free memory") {
    OomReport r;
    r.requested_bytes = GiB;
    r.total_bytes = 80 * GiB;
    r.cap_bytes = 20 * GiB;
    r.allocated_bytes = 19 * GiB + 512 * MiB;
    r.reserved_unallocated_bytes = 0;
    r.free_bytes = GiB;
    const OomDiagnosis d = classify(r);
    CHECK(d.kind == OomKind::fraction_cap);
    // needs 20.5 GiB reserved: 20.5 / 80 = 0.25625 -> 0.26
    CHECK_THAT(d.recommendations[0], Catch::Contains("set_per_process_memory_fraction(0.26)"));
    CHECK_THAT(d.recommendations[0], Catch::Contains("512.00 MiB above the cap"));
    r.free_bytes = GiB - 1;  // the device itself is full too: not the cap's doing
    CHECK(classify(r).kind != OomKind::fraction_cap);
  }
  SECTION("recommendations are ordered and carry numbers") {
    const OomDiagnosis d = classify(base);
    REQUIRE(d.recommendations.size() >= 4);
    CHECK_THAT(d.recommendations[0], Catch::Contains("1024.00 MiB"));  // shortfall: R - 0 free (PyTorch layout)
    CHECK_THAT(d.recommendations[1], Catch::Contains("checkpointing"));
    CHECK_THAT(d.recommendations[2], Catch::Contains("bf16"));
    CHECK_THAT(d.recommendations[3], Catch::Contains("8-bit"));
    CHECK_THAT(d.recommendations[4], Catch::Contains("expandable_segments:True"));
  }
}

TEST_CASE("malformed input is an InputError naming the field, on one line", "[oom]") {
  struct Bad {
    const char* name;
    std::string text;
    const char* field;
  };
  const std::string tail = " GPU 0 has a total capacity of 15.00 GiB of which 1.00 MiB is free. Of the allocated "
                           "memory 14.00 GiB is allocated by PyTorch, and 2.00 MiB is reserved by PyTorch but "
                           "unallocated.";
  const std::vector<Bad> cases = {
      {"empty", "", "oom_message"},
      {"no message", "Traceback (most recent call last):\nValueError: shapes do not match", "oom_message"},
      {"cuda error without allocator report", "RuntimeError: CUDA error: out of memory", "oom_message"},
      {"garbage number", "CUDA out of memory. Tried to allocate abc MiB." + tail, "requested_bytes"},
      {"two decimal points", "CUDA out of memory. Tried to allocate 12.3.4 MiB." + tail, "requested_bytes"},
      {"overflowing digits", "CUDA out of memory. Tried to allocate 99999999999999999999 GiB." + tail,
       "requested_bytes"},
      {"overflow after unit", "CUDA out of memory. Tried to allocate 9999999999 GiB." + tail, "requested_bytes"},
      {"decimal unit", "CUDA out of memory. Tried to allocate 20.00 MB." + tail, "requested_bytes"},
      {"too many decimals", "CUDA out of memory. Tried to allocate 1.1234567 GiB." + tail, "requested_bytes"},
      {"cut before allocated", "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
                               "15.00 GiB of which 1.00 MiB is free. Of the alloc",
       "allocated_bytes"},
      {"cut inside a number", "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 15",
       "total_bytes"},
      {"legacy missing reserved", "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
                                  "capacity; 14.56 GiB already allocated; 3.19 MiB free; 14.76 GiB in use)",
       "reserved_bytes"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      try {
        parse_oom_message(c.text);
        FAIL("no InputError for: " << c.text);
      } catch (const InputError& e) {
        CHECK(e.field() == c.field);
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
      }
    }
  }
}

TEST_CASE("format_size matches PyTorch's layout", "[oom]") {
  CHECK(format_size(0) == "0 bytes");
  CHECK(format_size(1024) == "1024 bytes");
  CHECK(format_size(1025) == "1.00 KiB");
  CHECK(format_size(352 * MiB) == "352.00 MiB");
  CHECK(format_size(GiB) == "1024.00 MiB");  // PyTorch switches unit only above the boundary
  CHECK(format_size(150109106995) == "139.80 GiB");
}

namespace {

// Runs the built binary through the shell; returns its exit status and stdout.
int run_memplan(const std::string& args, std::string* out = nullptr) {
  const std::string cmd = std::string("'") + MEMPLAN_BIN + "' " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int status = pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("end to end: memplan explain-oom exit codes and JSON contract", "[oom][e2e]") {
  CHECK(run_memplan("explain-oom 'this is not an OOM message'") == 2);
  CHECK(run_memplan("explain-oom 'CUDA out of memory. Tried to allocate 99999999999999999999 GiB.'") == 2);
  CHECK(run_memplan("explain-oom - < /dev/null") == 2);

  std::string out;
  REQUIRE(run_memplan("explain-oom --json - <<'EOF'\n" + std::string(kOthers) + "\nEOF", &out) == 0);
  const auto j = nlohmann::json::parse(out);
  const std::vector<std::string> keys = {"kind", "verdict", "consistent", "inconsistencies", "requested_bytes",
                                         "total_bytes", "free_bytes", "process_in_use_bytes", "allocated_bytes",
                                         "reserved_unallocated_bytes", "other_processes_bytes", "cap_bytes",
                                         "reasons", "recommendations"};
  CHECK(j.size() == keys.size());
  for (const auto& k : keys) CHECK(j.contains(k));
  CHECK(j["kind"] == "other_processes");
  CHECK(j["consistent"] == true);
  CHECK(j["inconsistencies"].empty());
  CHECK(j["other_processes_bytes"] == 34359738368);
  CHECK(j["recommendations"].is_array());
  CHECK(!j["recommendations"].empty());

  REQUIRE(run_memplan("explain-oom \"$(printf '%s' '" + std::string(kLegacy) + "')\"", &out) == 0);
  CHECK(out.rfind("fragmentation:", 0) == 0);  // first line is the verdict
}

// ---- consistency of a message's numbers -------------------------------------------------------------------

namespace {

// The message from the article our users read: allocated above reserved, and more free than requested.
const char* kArticle =
    "Tried to allocate 512.00 MiB (GPU 0; 23.69 GiB total capacity; 19.82 GiB already allocated; 3.30 GiB free; "
    "18.42 GiB reserved in total by PyTorch)";

bool mentions(const OomDiagnosis& d, const std::string& text) {
  if (d.verdict.find(text) != std::string::npos) return true;
  for (const auto* list : {&d.reasons, &d.recommendations, &d.inconsistencies})
    for (const auto& s : *list)
      if (s.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the article's message: parsed without 'CUDA out of memory.', flagged inconsistent twice", "[oom]") {
  const OomReport r = parse_oom_message(kArticle);
  CHECK(r.format == OomFormat::legacy);
  CHECK(r.requested_bytes == 512 * MiB);
  CHECK(r.total_bytes == 25436943811);            // 23*2^30 = 24696061952, + round(0.69*2^30 = 740881858.56)
  CHECK(r.allocated_bytes == 21281562952);        // 19*2^30 = 20401094656, + round(0.82*2^30 = 880468295.68)
  CHECK(r.free_bytes == 3543348019);              // 3*2^30 = 3221225472, + round(0.30*2^30 = 322122547.2)
  CHECK(r.reserved_printed_bytes == 19778324398);  // 18*2^30 = 19327352832, + round(0.42*2^30 = 450971566.08)
  CHECK(r.tolerance.allocated == GiB / 200);       // two decimals of GiB: +-0.005 GiB = 5368709 bytes
  CHECK(r.tolerance.requested == MiB / 200);       // +-0.005 MiB = 5242 bytes
  const OomDiagnosis d = classify(r);
  CHECK(d.kind == OomKind::inconsistent);
  CHECK_FALSE(d.consistent);
  REQUIRE(d.inconsistencies.size() == 2);
  // 19.82 - 18.42 = 1.40 GiB, far beyond the 2 x 0.005 GiB the rounding allows
  CHECK_THAT(d.inconsistencies[0], Catch::StartsWith("allocated 19.82 GiB is more than reserved 18.42 GiB"));
  // 3.30 GiB free against a 512 MiB request, no "allowed" cap: nothing in the message refused it
  CHECK_THAT(d.inconsistencies[1], Catch::StartsWith("3.30 GiB was free, more than the 512.00 MiB requested"));
  CHECK_THAT(d.inconsistencies[1], Catch::Contains("set_per_process_memory_fraction"));
  CHECK_THAT(d.inconsistencies[1], Catch::Contains("other processes"));
  CHECK_THAT(d.inconsistencies[1], Catch::Contains("edited by hand"));
  CHECK_THAT(d.verdict, Catch::StartsWith("inconsistent:"));
  CHECK_FALSE(mentions(d, "0 bytes short"));
  CHECK_FALSE(mentions(d, "at least 0 bytes"));
}

// Constructed reports with hand-set tolerances, each check bracketed: agreeing within the printed rounding is
// consistent, one byte beyond it is not.
TEST_CASE("consistency checks and their tolerance boundaries", "[oom]") {
  OomReport base;  // 80 GiB device, 70 GiB reserved, 10 GiB free, request 20 GiB: consistent
  base.format = OomFormat::current;
  base.requested_bytes = 20 * GiB;
  base.total_bytes = 80 * GiB;
  base.free_bytes = 10 * GiB;
  base.allocated_bytes = 69 * GiB;
  base.reserved_unallocated_bytes = GiB;
  REQUIRE(check_consistency(base).empty());
  const int64_t T = 5 * MiB;  // a tolerance for the sizes that carry one below

  struct Row {
    const char* name;
    std::function<void(OomReport&)> edit;
    const char* starts;  // "" = consistent
  };
  const std::vector<Row> rows = {
      {"legacy allocated = reserved + both tolerances",
       [&](OomReport& r) { r.format = OomFormat::legacy; r.tolerance.allocated = T; r.tolerance.reserved_printed = T;
                           r.reserved_printed_bytes = 70 * GiB; r.allocated_bytes = 70 * GiB + 2 * T;
                           r.reserved_unallocated_bytes = 0; r.free_bytes = 10 * GiB - 2 * T; }, ""},
      {"legacy allocated one byte beyond",
       [&](OomReport& r) { r.format = OomFormat::legacy; r.tolerance.allocated = T; r.tolerance.reserved_printed = T;
                           r.reserved_printed_bytes = 70 * GiB; r.allocated_bytes = 70 * GiB + 2 * T + 1;
                           r.reserved_unallocated_bytes = 0; r.free_bytes = 10 * GiB - 2 * T - 1; },
       "allocated 70.01 GiB is more than reserved 70.00 GiB"},
      {"reserved = in use (capacity - free)", [](OomReport& r) { (void)r; }, ""},
      {"reserved one byte above in use", [](OomReport& r) { r.reserved_unallocated_bytes += 1; },
       "PyTorch reserves 70.00 GiB but only 70.00 GiB of the device is in use"},
      {"free above capacity",
       [](OomReport& r) { r.free_bytes = 80 * GiB + 1; r.requested_bytes = 81 * GiB; },
       "free 80.00 GiB is more than the capacity"},
      {"cap above capacity",
       [](OomReport& r) { r.cap_bytes = 80 * GiB + 1; r.free_bytes = 0; r.requested_bytes = 2 * MiB;
                          r.allocated_bytes = 80 * GiB; r.reserved_unallocated_bytes = 0; },
       "the cap 80.00 GiB is more than the capacity"},
      {"free = request: the request took what was left", [](OomReport& r) { r.free_bytes = 10 * GiB; r.requested_bytes = 10 * GiB; }, ""},
      {"free one byte above the request, no cap",
       [](OomReport& r) { r.requested_bytes = 10 * GiB - 1; }, "10.00 GiB was free, more than the 10.00 GiB requested"},
      {"free above the request, the cap refused it (fraction_cap)",
       [](OomReport& r) { r.requested_bytes = 2 * GiB; r.cap_bytes = 71 * GiB; }, ""},
      {"free above the request, cap room = request",
       [](OomReport& r) { r.requested_bytes = GiB; r.cap_bytes = 71 * GiB; }, ""},
      {"free above the request, cap room one byte more",
       [](OomReport& r) { r.requested_bytes = GiB; r.cap_bytes = 71 * GiB + 1; }, "10.00 GiB was free"},
      {"NVML process = reserved - 2 MiB (the driver's page)",
       [](OomReport& r) { r.process_in_use_reported = true; r.process_in_use_bytes = 70 * GiB - 2 * MiB; }, ""},
      {"NVML process one byte lower",
       [](OomReport& r) { r.process_in_use_reported = true; r.process_in_use_bytes = 70 * GiB - 2 * MiB - 1; },
       "NVML says this process uses 70.00 GiB, less than the 70.00 GiB PyTorch reserves"},
  };
  for (const auto& row : rows) {
    DYNAMIC_SECTION(row.name) {
      OomReport r = base;
      row.edit(r);
      const auto found = check_consistency(r);
      const OomDiagnosis d = classify(r);
      if (std::string(row.starts).empty()) {
        CHECK(found.empty());
        CHECK(d.consistent);
        CHECK(d.kind != OomKind::inconsistent);
      } else {
        REQUIRE(found.size() == 1);
        CHECK_THAT(found[0], Catch::StartsWith(row.starts));
        CHECK(d.kind == OomKind::inconsistent);
      }
      CHECK_FALSE(mentions(d, "0 bytes short"));
    }
  }
}

// Ground truth: every OOM message PyTorch printed in the measured runs (data/validation/, torch 2.11) that the
// parser reads is consistent; the checks must never flag a real message.
TEST_CASE("every measured OOM message is consistent", "[oom]") {
  int parsed = 0;
  for (const char* file : {"h200-public-cases.jsonl", "h200-corpus.jsonl", "h200-boundary.jsonl"}) {
    std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/validation/" + file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line);
      std::vector<std::string> messages;
      if (j.contains("measured") && j["measured"].is_object() && j["measured"].contains("oom_message"))
        messages.push_back(j["measured"]["oom_message"].get<std::string>());
      if (j.contains("observed") && j["observed"].is_object() && j["observed"].contains("oom_message_full"))
        messages.push_back(j["observed"]["oom_message_full"].get<std::string>());
      for (const auto& m : messages) {
        OomReport r;
        try {
          r = parse_oom_message(m);
        } catch (const InputError&) {
          continue;  // stored cut off inside a size: nothing to check
        }
        ++parsed;
        INFO(j.value("id", "") << ": " << m);
        CHECK(check_consistency(r).empty());
      }
    }
  }
  CHECK(parsed >= 40);  // 51 when written
}
