// Helpers the family tests (tests/families/test_family_*.cpp) share: import a config.json text, the error an importer
// raises (or "no error"), bytes as MiB, and the check of a family's measured H200 cases.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/param_count.h"

namespace memplan::testing {

inline TransformerSpec import_config(const std::string& text) {
  return import_hf_config(nlohmann::json::parse(text));
}

inline std::string input_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

inline double to_mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

inline bool has_any_prefix(const std::string& id, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes)
    if (id.rfind(p, 0) == 0) return true;
  return false;
}

// Relative error bounds (|predicted / measured - 1|) of one measured case.
struct FamilyBounds {
  double allocated, reserved;
  double kv = 0.01;  // the inference KV cache (kv_cache_mib: what the prefill leaves allocated)
};
// What check_family_cases checked of one case: signed relative errors of peak allocated and peak reserved.
struct FamilyCaseCheck {
  std::string id;
  bool holdout;
  double allocated_err, reserved_err;
};

// Every measured case of data/validation/h200-families.jsonl that `select` picks, estimated as `memplan validate`
// runs it: peak allocated and peak reserved within bounds(id), the inference KV cache within 1 %, and the
// measured `params` (sum of p.numel()) exactly, both as the estimate counts them (with LoRA: the peft model's,
// base + adapters; with a task head: the classification model's) and, without LoRA or a task, as param_count()
// does. Returns what it checked (counts, listed misses).
inline std::vector<FamilyCaseCheck> check_family_cases(const std::function<bool(const ValidationCase&)>& select,
                                                       const std::function<FamilyBounds(const std::string&)>& bounds) {
  std::vector<FamilyCaseCheck> checked;
  for (const auto& c : load_cases("h200-families.jsonl")) {
    if (!c.measured || !select(c)) continue;
    const auto& m = *c.measured;
    const Estimate e = estimate(c.model, c.run, estimate_options_for(c));
    const double alloc = to_mib(e.torch_peak_allocated_bytes()), reserved = to_mib(e.run_peak_reserved_bytes());
    INFO(c.id << ": allocated " << alloc << " vs " << *m.peak_allocated_mib << " MiB, reserved " << reserved << " vs "
              << *m.peak_reserved_mib << " MiB");
    const FamilyCaseCheck r{c.id, c.holdout, alloc / *m.peak_allocated_mib - 1.0, reserved / *m.peak_reserved_mib - 1.0};
    const FamilyBounds b = bounds(c.id);
    CHECK(std::abs(r.allocated_err) <= b.allocated);
    CHECK(std::abs(r.reserved_err) <= b.reserved);
    if (m.kv_cache_mib) CHECK(std::abs(to_mib(e.torch_kv_cache_bytes()) / *m.kv_cache_mib - 1.0) <= b.kv);
    if (m.params) {
      CHECK(e.params == *m.params);
      // param_count() counts the language-model head; a task head's (classifier, pooler) is in e.params alone.
      if (c.run.lora.r == 0 && c.run.task == Task::lm) CHECK(param_count(c.model) == *m.params);
    }
    checked.push_back(r);
  }
  return checked;
}

}  // namespace memplan::testing
