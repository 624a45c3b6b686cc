#include "cli/time_tables.h"

#include <filesystem>
#include <vector>

#include "engine/errors.h"
#include "models/json_input.h"

namespace memplan::cli {

namespace {

// DIR/NAME.tsv, else the one DIR/*-NAME.tsv; "" when neither exists.
std::string find_table(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path plain = dir / (name + ".tsv");
  std::error_code ec;
  if (std::filesystem::is_regular_file(plain, ec)) return plain.string();
  std::vector<std::string> found;
  const std::string suffix = "-" + name + ".tsv";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0) found.push_back(e.path().string());
  }
  if (found.size() > 1)
    throw InputError("--time-tables", dir.string(), "holds two " + name + " tables (" + found[0] + ", " + found[1] + ")");
  return found.empty() ? std::string() : found[0];
}

}  // namespace

std::unique_ptr<timing::LoadedRates> read_time_tables(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw InputError("--time-tables", dir, "is not a directory");
  const std::string op = find_table(dir, "op-rates");
  if (op.empty())
    throw InputError("--time-tables", dir, "has no op-rates.tsv (nor *-op-rates.tsv): calibrate/time_tables.sh writes one");
  std::string texts[4];
  const std::string paths[4] = {op, find_table(dir, "conv-time"), find_table(dir, "bn-time"), find_table(dir, "gemm-align")};
  for (int i = 0; i < 4; ++i)
    if (!paths[i].empty()) texts[i] = read_input_file(paths[i], "--time-tables");
  try {
    return timing::load_rates(texts[0], texts[1], texts[2], texts[3]);
  } catch (const InputError& e) {
    throw InputError::prefixed("--time-tables " + dir + ": ", e);
  }
}

TimeOn time_on(const std::string& gpu_id, const std::string& tables_dir, const timing::LoadedRates* loaded) {
  if (loaded != nullptr) return {"tables:" + tables_dir, "the GPU whose tables are in " + tables_dir, &loaded->rates, false};
  const timing::MeasuredGpu* m = timing::measured_gpu(gpu_id);
  if (m == nullptr) m = timing::measured_gpu("h200-sxm-141gb");
  return {std::string(m->gpu_id), std::string(m->label), &m->rates(), true};
}

}  // namespace memplan::cli
