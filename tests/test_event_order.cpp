// The replayed event stream against whole runs recorded on the H200 (GPT-2 medium amp, Llama-3.2-1B bf16, a
// Mixtral-shape MoE bf16) (tests/data/streams/*.txt, written from
// calibrate/record_case_events.py recordings): every allocation and free of a block >= 1 MiB, in order, over
// the case's 3 training steps. The allocator model is exact on real streams (test_caching_allocator.cpp), so
// an exact stream is what makes peak reserved and the capped fit verdict exact; this pins the event-order
// mechanisms (data/validation/NOTES.md, "Event order") so a change that reorders them fails here first.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/estimate.h"
#include "fidelity_cases.h"
#include "data_dir.h"

namespace memplan {
namespace {

struct Ev {
  char kind;  // 'a' alloc, 'f' free
  int64_t bytes;
  bool operator==(const Ev& o) const { return kind == o.kind && bytes == o.bytes; }
};

// As calibrate/diff_events.py: blocks >= 1 MiB, sizes rounded up to 512 B, each run of consecutive frees sorted
// by size (frees with no allocation between them leave the allocator in the same state in any order).
std::vector<Ev> canonical(const std::vector<Ev>& events) {
  std::vector<Ev> out, frees;
  auto flush = [&] {
    std::stable_sort(frees.begin(), frees.end(), [](const Ev& a, const Ev& b) { return a.bytes < b.bytes; });
    out.insert(out.end(), frees.begin(), frees.end());
    frees.clear();
  };
  for (const Ev& e : events) {
    if (e.bytes < (1 << 20)) continue;
    const Ev r{e.kind, (e.bytes + 511) / 512 * 512};
    if (r.kind == 'f') {
      frees.push_back(r);
    } else {
      flush();
      out.push_back(r);
    }
  }
  flush();
  return out;
}

struct Fixture {
  std::string file, case_id;
  std::vector<Ev> events;
};

Fixture load_fixture(const std::string& name) {
  std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/../tests/data/streams/" + name + ".txt");
  REQUIRE(in.good());
  Fixture f;
  size_t n = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string head;
    ls >> head;
    if (head == "case") {
      ls >> f.file >> f.case_id >> n;
      continue;
    }
    int64_t bytes = 0;
    ls >> bytes;
    f.events.push_back({head[0], bytes});
  }
  REQUIRE(f.events.size() == n);
  return f;
}

}  // namespace

TEST_CASE("replayed event streams match recorded whole runs event for event (>= 1 MiB, 3 steps)", "[fidelity][events]") {
  for (const char* name : {"gpt2m-ampbf16-adamw-b4s1024", "l1b-bf16-adamw-b2s1024", "mix4x8-bf16-adamw-b4s1024"}) {
    INFO(name);
    const Fixture fx = load_fixture(name);
    const ValidationCase* c = nullptr;
    const auto cases = testing::load_cases(fx.file);
    for (const auto& v : cases)
      if (v.id == fx.case_id) c = &v;
    REQUIRE(c != nullptr);
    const Estimate e = estimate(c->model, c->run, estimate_options_for(*c));
    std::vector<Ev> ours;
    for (const MemEvent& m : e.replay.events) ours.push_back({m.action == MemEvent::Action::alloc ? 'a' : 'f', m.size_bytes});
    ours = canonical(ours);
    // The recording ends with the harness's teardown, which the replay does not model: compare its prefix.
    REQUIRE(ours.size() >= fx.events.size());
    size_t first_diff = fx.events.size();
    for (size_t i = 0; i < fx.events.size() && first_diff == fx.events.size(); ++i)
      if (!(ours[i] == fx.events[i])) first_diff = i;
    INFO("first difference at event " << first_diff << " of " << fx.events.size()
         << (first_diff < fx.events.size()
                 ? ": recorded " + std::string(1, fx.events[first_diff].kind) + std::to_string(fx.events[first_diff].bytes) +
                       ", replayed " + std::string(1, ours[first_diff].kind) + std::to_string(ours[first_diff].bytes)
                 : std::string()));
    CHECK(first_diff == fx.events.size());
  }
}

}  // namespace memplan
