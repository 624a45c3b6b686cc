// The repository's data/ directory as the tests read it (measured cases, calibration tables, recorded streams).
// In every test source through the tests' precompiled header (tests/CMakeLists.txt); only tests/data_dir.cpp is
// compiled with the absolute path, so a checkout elsewhere (a worktree, CI) recompiles that one file and shares
// every other object through ccache.
#pragma once

namespace memplan_tests {
const char* data_dir();
}  // namespace memplan_tests

#define MEMPLAN_DATA_DIR (::memplan_tests::data_dir())
