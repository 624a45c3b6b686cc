// A minimal ordered JSON object writer, so that calibrate/ depends on nothing but the CUDA toolkit
// (the device machines have no nlohmann_json). Keys keep insertion order; non-finite numbers become null.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace memplan::cal {

class JsonObject {
 public:
  JsonObject& set_int(const std::string& key, long long v) { return raw(key, std::to_string(v)); }
  JsonObject& set_num(const std::string& key, double v) {
    if (!std::isfinite(v)) return set_null(key);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return raw(key, buf);
  }
  JsonObject& set_str(const std::string& key, const std::string& v) { return raw(key, quote(v)); }
  JsonObject& set_bool(const std::string& key, bool v) { return raw(key, v ? "true" : "false"); }
  JsonObject& set_null(const std::string& key) { return raw(key, "null"); }
  JsonObject& set_obj(const std::string& key, JsonObject v) {
    fields_.push_back({key, Value{{}, std::make_shared<JsonObject>(std::move(v)), {}}});
    return *this;
  }
  JsonObject& set_arr(const std::string& key, std::vector<JsonObject> v) {
    fields_.push_back({key, Value{{}, nullptr, std::make_shared<std::vector<JsonObject>>(std::move(v))}});
    return *this;
  }

  std::string dump(int indent = 0) const {
    if (fields_.empty()) return "{}";
    const std::string pad(indent + 2, ' ');
    std::string out = "{\n";
    for (size_t i = 0; i < fields_.size(); ++i) {
      const auto& [key, v] = fields_[i];
      out += pad + quote(key) + ": ";
      if (v.obj) {
        out += v.obj->dump(indent + 2);
      } else if (v.arr) {
        out += "[";
        for (size_t j = 0; j < v.arr->size(); ++j) {
          out += (j ? ", " : "") + (*v.arr)[j].dump(indent + 2);
        }
        out += "]";
      } else {
        out += v.scalar;
      }
      out += (i + 1 < fields_.size()) ? ",\n" : "\n";
    }
    return out + std::string(indent, ' ') + "}";
  }

 private:
  struct Value {
    std::string scalar;
    std::shared_ptr<JsonObject> obj;
    std::shared_ptr<std::vector<JsonObject>> arr;
  };

  JsonObject& raw(const std::string& key, std::string token) {
    fields_.push_back({key, Value{std::move(token), nullptr, nullptr}});
    return *this;
  }

  static std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  }

  std::vector<std::pair<std::string, Value>> fields_;
};

}  // namespace memplan::cal
