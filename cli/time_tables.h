// Where a run's step time is priced (engine/time/step_time.h): the measured rates of --gpu where the engine embeds
// some (an H200, an H100 SXM), or tables read from a directory with --time-tables (any GPU measured with
// calibrate/time_tables.sh), else the H200's, which the output then names.
#pragma once
#include <memory>
#include <string>

#include "engine/time/step_time.h"

namespace memplan::cli {

// The rates a run is priced at, and how the output names them.
struct TimeOn {
  std::string id;     // JSON step_time_on: a data/gpus.json id, or "tables:DIR"
  std::string label;  // text: "an H100 SXM", "the GPU whose tables are in DIR"
  const timing::OpRates* rates = nullptr;
  bool embedded = true;  // false: read from --time-tables
};

// Reads DIR's tables: NAME.tsv, else the one file named *-NAME.tsv (data/calibration/h100/ names them h100-NAME.tsv),
// for op-rates (required), conv-time, bn-time and gemm-align (optional). InputError naming --time-tables and the
// directory or file when one is missing, unreadable, matched twice or malformed.
std::unique_ptr<timing::LoadedRates> read_time_tables(const std::string& dir);

// --time-tables' rates when `loaded` holds them, else --gpu's embedded ones, else the H200's.
TimeOn time_on(const std::string& gpu_id, const std::string& tables_dir, const timing::LoadedRates* loaded);

}  // namespace memplan::cli
