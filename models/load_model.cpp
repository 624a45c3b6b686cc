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

ModelSpec load_model(const std::string& name_or_path) {
  if (is_zoo_model(name_or_path)) return load_zoo_model(name_or_path);

  std::error_code ec;
  if (!std::filesystem::is_regular_file(name_or_path, ec)) {
    std::string why = "neither a bundled model nor a readable file";
    auto close = zoo_close_matches(name_or_path);
    if (!close.empty()) {
      why += "; did you mean";
      for (size_t i = 0; i < close.size(); ++i) why += (i ? ", " : " ") + close[i];
    }
    throw InputError("model", name_or_path, why + " (see `memplan models`)");
  }
  const nlohmann::json doc = parse_json_input(read_input_file(name_or_path, "model"), "model", name_or_path);
  return model_from_json(doc, name_or_path);
}

}  // namespace memplan
