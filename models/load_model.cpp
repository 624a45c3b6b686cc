#include "models/load_model.h"

#include <filesystem>

#include "engine/errors.h"
#include "models/hf_config.h"
#include "models/json_input.h"
#include "models/native_graph.h"
#include "models/torchvision.h"
#include "models/zoo.h"

namespace memplan {

ModelSpec model_from_json(const nlohmann::json& doc, const std::string& name) {
  if (!doc.is_object()) throw InputError("model", name, "must be a JSON object");
  ModelSpec m;
  m.name = name;
  if (doc.contains("memplan_graph")) {
    auto g = std::make_shared<NativeGraph>(parse_native_graph(doc));
    if (!g->name.empty()) m.name = g->name;
    m.kind = ModelSpec::Kind::graph;
    m.graph = std::move(g);
    return m;
  }
  if (auto src = doc.find("source"); src != doc.end()) {
    if (*src != "torchvision")
      throw InputError("model.source", dump_short(*src), "unsupported source; expected \"torchvision\"");
    auto n = doc.find("name");
    if (n == doc.end() || !n->is_string())
      throw InputError("model.name", n == doc.end() ? "absent" : dump_short(*n), "must name a torchvision model");
    int64_t num_classes = 1000;
    if (auto nc = doc.find("num_classes"); nc != doc.end()) {
      if (!nc->is_number_integer() || (nc->is_number_unsigned() && nc->get<uint64_t>() > uint64_t{1} << 62))
        throw InputError("model.num_classes", dump_short(*nc), "must be a positive integer");
      num_classes = nc->get<int64_t>();
    }
    m.kind = ModelSpec::Kind::vision;
    m.vision = vision_spec_for(n->get<std::string>(), num_classes);
    return m;
  }
  if (doc.contains("model_type")) {
    m.kind = ModelSpec::Kind::transformer;
    m.transformer = import_hf_config(doc);
    return m;
  }
  throw InputError("model", name,
                   "not an HF config.json (no model_type), a torchvision entry (source) or a memplan graph");
}

namespace {

bool regular_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

// A user's multimodal config of which only part is modelled (gemma3: the text decoder) says so in its name
// (zoo entries keep their names; their README rows say it).
ModelSpec named_by_part(ModelSpec m) {
  if (m.kind == ModelSpec::Kind::transformer && !m.transformer.modelled_part.empty())
    m.name += " (" + m.transformer.modelled_part + ")";
  return m;
}

ModelSpec load_file(const std::string& path, const std::string& name) {
  const nlohmann::json doc = parse_json_input(read_input_file(path, "model"), "model", path);
  return named_by_part(model_from_json(doc, name));
}

[[noreturn]] void unknown_model(const std::string& name) {
  // A hub id is compared by its repository part ("Qwen/Qwen3-8B" -> "qwen3-8b"), the way zoo names are made.
  const size_t slash = name.rfind('/');
  const bool hub_like = slash != std::string::npos && slash > 0 && slash + 1 < name.size();
  std::string why = "not a zoo name, a Hugging Face id of a zoo entry, a file or a directory holding a config.json";
  const std::vector<std::string> near = zoo_nearest(hub_like ? name.substr(slash + 1) : name, 3);
  if (!near.empty()) {
    why += "; nearest zoo names:";
    for (size_t i = 0; i < near.size(); ++i) why += (i ? ", " : " ") + near[i];
  }
  if (hub_like)
    why += "; for a hub model outside the zoo, download its config.json (huggingface-cli download " + name +
           " config.json) and pass that file";
  throw InputError("model", name,
                   why + ". `memplan models` lists the zoo; models/NATIVE-FORMAT.md describes any other model");
}

}  // namespace

ModelSpec load_model_text(std::string_view json_text, const std::string& label) {
  const nlohmann::json doc = parse_json_input(json_text, "model", label);
  std::string name = label;
  if (doc.is_object())
    if (auto n = doc.find("_name_or_path"); n != doc.end() && n->is_string() && !n->get<std::string>().empty())
      name = n->get<std::string>();
  return named_by_part(model_from_json(doc, name));
}

ModelSpec load_model(const std::string& name_or_path) {
  if (is_zoo_model(name_or_path)) return load_zoo_model(name_or_path);
  if (name_or_path.empty()) throw InputError("model", "", "is empty: give a zoo name (`memplan models`) or a path");
  if (regular_file(name_or_path)) return load_file(name_or_path, name_or_path);
  std::error_code ec;
  if (std::filesystem::is_directory(name_or_path, ec)) {
    const std::filesystem::path config = std::filesystem::path(name_or_path) / "config.json";
    if (!regular_file(config))
      throw InputError("model", name_or_path, "is a directory without a config.json");
    return load_file(config.string(), name_or_path);
  }
  if (const auto entry = zoo_entry_for_id(name_or_path)) {
    ModelSpec m = load_zoo_model(*entry);
    m.name = *entry;
    return m;
  }
  unknown_model(name_or_path);
}

}  // namespace memplan
