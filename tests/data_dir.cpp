#include "data_dir.h"

namespace memplan_tests {
const char* data_dir() { return MEMPLAN_TESTS_DATA_DIR; }
}  // namespace memplan_tests
