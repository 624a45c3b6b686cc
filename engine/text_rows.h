// Line-oriented text tables embedded in the engine (data/calibration/*.tsv, data/validation/error-bands.tsv):
// one row per line; blank lines and lines starting with '#' are comments.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// Calls row(line_no, line) in order for every line that is neither empty nor a '#' comment; line_no counts from 1
// over all lines, comments included, so an error can name the line a person sees in the file. A trailing '\r' is
// removed first (a table saved with CRLF line ends reads the same).
template <typename Row>
void for_each_row(std::string_view text, Row&& row) {
  std::istringstream in{std::string(text)};
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] != '#') row(line_no, line);
  }
}

// The whitespace-separated fields of a line.
inline std::vector<std::string> split_ws(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

}  // namespace memplan
