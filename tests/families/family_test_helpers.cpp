#include "family_test_helpers.h"

#include <nlohmann/json.hpp>

namespace memplan::testing {

TransformerSpec import_config(const std::string& text) { return import_hf_config(nlohmann::json::parse(text)); }

ModelSpec model_of_config(const std::string& text) {
  ModelSpec m;
  m.kind = ModelSpec::Kind::transformer;
  m.name = "test";
  m.transformer = import_config(text);
  return m;
}

std::string input_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<FamilyCaseCheck> check_family_cases(const std::function<bool(const ValidationCase&)>& select,
                                                const std::function<FamilyBounds(const std::string&)>& bounds,
                                                const std::string& file) {
  std::vector<FamilyCaseCheck> checked;
  for (const auto& c : load_cases(file)) {
    if (!c.measured || !select(c)) continue;
    const auto& m = *c.measured;
    if (m.oom && *m.oom) continue;  // a capped run that went OOM: its verdict is test_verdict.cpp's to check
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
