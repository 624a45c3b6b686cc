#include "models/json_input.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/errors.h"

namespace memplan {

namespace {
struct TooDeep {};
}  // namespace

nlohmann::json parse_json_input(std::string_view text, const std::string& field, const std::string& label) {
  auto depth_guard = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      throw TooDeep{};
    return true;
  };
  const std::string got = label.empty() ? std::string(text.substr(0, 40)) : label;
  try {
    return nlohmann::json::parse(text.begin(), text.end(), depth_guard);
  } catch (const TooDeep&) {
    throw InputError(field, got, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  } catch (const nlohmann::json::exception& e) {
    throw InputError(field, got, std::string("invalid JSON: ") + e.what());
  }
}

std::string read_input_file(const std::string& path, const std::string& field) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(field, path, "not a readable regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(field, path, "cannot read the file size");
  if (size > static_cast<uintmax_t>(kMaxInputFileBytes))
    throw InputError(field, path, "file larger than " + std::to_string(kMaxInputFileBytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, path, "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string dump_short(const nlohmann::json& v, size_t max) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

}  // namespace memplan
