// Helpers the family tests (tests/families/test_family_*.cpp) share: import a config.json text, the error an importer
// raises (or "no error"), bytes as MiB, and the check of a family's measured H200 cases. The functions that parse
// JSON or expand Catch2 checks are defined once, in family_test_helpers.cpp: 72 sources include this header, and an
// inline copy in each was a third of their compile time (CI has 2 cores).
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "fidelity_cases.h"
#include "models/hf_config.h"
#include "models/param_count.h"

namespace memplan::testing {

// The spec import_hf_config makes of a config.json text.
TransformerSpec import_config(const std::string& text);

// A transformer ModelSpec named "test" around import_config(text).
ModelSpec model_of_config(const std::string& text);

// A training run of a classification (or LM) head: mode training, batch x seq, the task and its labels.
inline RunConfig task_training(Task task, int64_t num_labels, int64_t batch, int64_t seq) {
  RunConfig c;
  c.mode = Mode::training;
  c.batch_size = batch;
  c.seq_len = seq;
  c.task = task;
  c.num_labels = num_labels;
  return c;
}

// A training run of a vision-language model: batch x seq with `images` images a sample, each of original size
// `hw` ([height, width]; empty: the tower's square), the causal-LM loss.
inline RunConfig image_training(int64_t batch, int64_t seq, int64_t images, std::vector<int64_t> hw = {}) {
  RunConfig c;
  c.mode = Mode::training;
  c.batch_size = batch;
  c.seq_len = seq;
  c.images_per_sample = images;
  c.image_hw = std::move(hw);
  return c;
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The message of the InputError fn throws, or "no error".
std::string input_error_of(const std::function<void()>& fn);

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

// Every measured case of data/validation/FILE (h200-families.jsonl unless named) that `select` picks, estimated as `memplan validate`
// runs it: peak allocated and peak reserved within bounds(id), the inference KV cache within 1 %, and the
// measured `params` (sum of p.numel()) exactly, both as the estimate counts them (with LoRA: the peft model's,
// base + adapters; with a task head: the classification model's) and, without LoRA or a task, as param_count()
// does. Measured OOM rows (capped runs) are skipped: their verdicts are test_verdict.cpp's. Returns what it checked
// (counts, listed misses).
std::vector<FamilyCaseCheck> check_family_cases(const std::function<bool(const ValidationCase&)>& select,
                                                const std::function<FamilyBounds(const std::string&)>& bounds,
                                                const std::string& file = "h200-families.jsonl");

}  // namespace memplan::testing
