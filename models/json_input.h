// Parsing JSON that comes from outside (files, JSONL lines, embedded data) into nlohmann::json, with the
// limits every importer relies on.
//
// Contract: returns the document or throws InputError naming `field`; never another exception.
//   - invalid JSON (including invalid UTF-8, NaN/Infinity literals, truncation) -> "invalid JSON: ...";
//   - nesting deeper than kMaxJsonDepth -> refused while parsing. Real inputs nest a handful of levels;
//     the cap keeps recursive code downstream (dump() for error messages, destructors) off the stack limit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memplan {

constexpr int kMaxJsonDepth = 64;
// Files memplan reads whole (config.json, graphs, profiles). Real ones are kilobytes to a few MiB.
constexpr int64_t kMaxInputFileBytes = int64_t{64} << 20;

// `label` (e.g. the file path) is quoted as the offending value; empty: the first characters of `text`.
nlohmann::json parse_json_input(std::string_view text, const std::string& field, const std::string& label = "");

// Reads a regular file of at most kMaxInputFileBytes; InputError naming `field` when it cannot.
std::string read_input_file(const std::string& path, const std::string& field);

// v.dump() cut to `max` characters for an error message ("..." when cut). Invalid UTF-8 is replaced, so this
// never throws.
std::string dump_short(const nlohmann::json& v, size_t max = 60);

}  // namespace memplan
