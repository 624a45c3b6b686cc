#include "models/lora_config.h"

#include "engine/errors.h"
#include "models/json_input.h"

namespace memplan {

namespace {
constexpr int64_t kMaxRank = 65536;

std::vector<std::string> name_list(const nlohmann::json& v, const std::string& field) {
  std::vector<std::string> out;
  if (!v.is_array()) throw InputError(field, dump_short(v), "must be a list of module names");
  for (const auto& x : v) {
    if (!x.is_string() || x.get<std::string>().empty())
      throw InputError(field, dump_short(x), "module names must be non-empty strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}
}  // namespace

void set_lora_targets(LoraConfig& c, const std::string& list, const std::string& field) {
  c.all_linear = false;
  c.target_modules.clear();
  if (list == "all-linear" || list == "ALL-LINEAR" || list == "All-Linear") {
    c.all_linear = true;
    return;
  }
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) throw InputError(field, list, "must be a comma list of module names or all-linear");
    c.target_modules.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

LoraConfig parse_lora_json(const nlohmann::json& j, const std::string& where) {
  const std::string w = where + "lora";
  if (!j.is_object()) throw InputError(w, dump_short(j), "must be an object");
  static const char* kKeys[] = {"r", "alpha", "dropout", "target_modules", "modules_to_save", "merged", "bias"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : kKeys) ok = ok || it.key() == k;
    if (!ok) throw InputError(w + "." + it.key(), dump_short(it.value()), "unknown LoRA key (r, alpha, dropout, "
                              "target_modules, modules_to_save, merged, bias)");
  }
  LoraConfig c;
  c.r = 8;
  c.alpha = 8;
  if (j.contains("r")) {
    const auto& v = j.at("r");
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > kMaxRank)
      throw InputError(w + ".r", dump_short(v), "must be a positive integer rank, at most 65536");
    c.r = v.get<int64_t>();
  }
  if (j.contains("alpha")) {
    const auto& v = j.at("alpha");
    if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() < 1e9))
      throw InputError(w + ".alpha", dump_short(v), "must be a positive number");
    c.alpha = v.get<double>();
  }
  if (j.contains("dropout") && !j.at("dropout").is_null()) {
    const auto& v = j.at("dropout");
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() < 1))
      throw InputError(w + ".dropout", dump_short(v), "must be a probability in [0, 1)");
    c.dropout = v.get<double>();
  }
  if (j.contains("bias") && !(j.at("bias").is_string() && j.at("bias").get<std::string>() == "none"))
    throw InputError(w + ".bias", dump_short(j.at("bias")), "only bias=\"none\" (peft's default) is modelled");
  c.all_linear = true;
  if (j.contains("target_modules") && !j.at("target_modules").is_null()) {
    const auto& v = j.at("target_modules");
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (s != "all-linear")
        throw InputError(w + ".target_modules", dump_short(v),
                         "a string must be \"all-linear\" (regular expressions are not modelled); else a list");
    } else {
      c.all_linear = false;
      c.target_modules = name_list(v, w + ".target_modules");
      if (c.target_modules.empty()) throw InputError(w + ".target_modules", "[]", "must name at least one module");
    }
  }
  if (j.contains("modules_to_save") && !j.at("modules_to_save").is_null())
    c.modules_to_save = name_list(j.at("modules_to_save"), w + ".modules_to_save");
  if (j.contains("merged")) {
    if (!j.at("merged").is_boolean()) throw InputError(w + ".merged", dump_short(j.at("merged")), "must be true or false");
    c.merged = j.at("merged").get<bool>();
  }
  return c;
}

bool parse_quant_base(const std::string& s, QuantBase& out) {
  if (s == "nf4") out = QuantBase::nf4;
  else if (s == "fp4") out = QuantBase::fp4;
  else if (s == "int8") out = QuantBase::int8;
  else if (s == "none") out = QuantBase::none;
  else return false;
  return true;
}

QuantConfig parse_quant_json(const nlohmann::json& j, const std::string& where) {
  const std::string w = where + "quantization";
  if (!j.is_object()) throw InputError(w, dump_short(j), "must be an object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "base" && it.key() != "double_quant" && it.key() != "compute_dtype" && it.key() != "blocksize")
      throw InputError(w + "." + it.key(), dump_short(it.value()),
                       "unknown quantization key (base, double_quant, compute_dtype, blocksize)");
  QuantConfig q;
  if (!j.contains("base") || !j.at("base").is_string() || !parse_quant_base(j.at("base").get<std::string>(), q.base))
    throw InputError(w + ".base", j.contains("base") ? dump_short(j.at("base")) : "missing",
                     "must be one of nf4, fp4, int8");
  if (j.contains("double_quant")) {
    if (!j.at("double_quant").is_boolean())
      throw InputError(w + ".double_quant", dump_short(j.at("double_quant")), "must be true or false");
    q.double_quant = j.at("double_quant").get<bool>();
  }
  if (j.contains("compute_dtype")) {
    const auto& v = j.at("compute_dtype");
    if (v == "bf16" || v == "bfloat16") q.compute_bf16 = true;
    else if (v == "fp16" || v == "float16") q.compute_bf16 = false;
    else throw InputError(w + ".compute_dtype", dump_short(v), "must be bf16 or fp16");
  }
  if (j.contains("blocksize")) {
    const auto& v = j.at("blocksize");
    static const int64_t kSizes[] = {64, 128, 256, 512, 1024, 2048, 4096};
    bool ok = v.is_number_integer();
    if (ok) {
      ok = false;
      for (int64_t s : kSizes) ok = ok || v.get<int64_t>() == s;
    }
    if (!ok) throw InputError(w + ".blocksize", dump_short(v), "must be one of 64, 128, ..., 4096 (bitsandbytes)");
    q.blocksize = v.get<int64_t>();
  }
  if (q.base == QuantBase::int8 && q.double_quant)
    throw InputError(w + ".double_quant", "true", "applies to 4-bit bases (nf4, fp4) only");
  return q;
}

namespace {
nlohmann::ordered_json number(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v))) return static_cast<int64_t>(v);
  return v;
}
}  // namespace

nlohmann::ordered_json lora_to_json(const LoraConfig& c) {
  nlohmann::ordered_json j;
  j["r"] = c.r;
  j["alpha"] = number(c.alpha);
  if (c.dropout != 0) j["dropout"] = number(c.dropout);
  if (c.all_linear) j["target_modules"] = "all-linear";
  else j["target_modules"] = c.target_modules;
  if (!c.modules_to_save.empty()) j["modules_to_save"] = c.modules_to_save;
  if (c.merged) j["merged"] = true;
  return j;
}

nlohmann::ordered_json quant_to_json(const QuantConfig& q) {
  nlohmann::ordered_json j;
  j["base"] = q.base == QuantBase::nf4 ? "nf4" : q.base == QuantBase::fp4 ? "fp4" : q.base == QuantBase::int8 ? "int8" : "none";
  if (q.double_quant) j["double_quant"] = true;
  if (!q.compute_bf16) j["compute_dtype"] = "fp16";
  if (q.blocksize != 64) j["blocksize"] = q.blocksize;
  return j;
}

}  // namespace memplan
