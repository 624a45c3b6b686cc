// `memplan models [--json]`: lists the bundled zoo with the figures that size a model.
#include <algorithm>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "models/param_count.h"
#include "models/zoo.h"

namespace memplan::cli {
namespace {

struct Row {
  std::string name, family;
  int64_t params = 0, layers = 0, hidden = 0, heads = 0, kv_heads = 0, vocab = 0;  // 0: not applicable
  std::string description;
};

Row row_for(const ZooEntry& e) {
  const ModelSpec m = load_zoo_model(e.name);
  Row r;
  r.name = e.name;
  r.family = e.family;
  r.params = param_count(m);
  r.description = e.description;
  if (m.kind == ModelSpec::Kind::transformer) {
    const TransformerSpec& t = m.transformer;
    r.layers = t.num_layers;
    r.hidden = t.hidden_size;
    r.heads = t.num_heads;
    r.kv_heads = t.num_kv_heads;
    r.vocab = t.vocab_size;
  } else {
    const VisionSpec& v = m.vision;
    if (v.family == VisionSpec::Family::vit) {
      r.layers = v.num_layers;
      r.hidden = v.hidden_dim;
      r.heads = r.kv_heads = v.num_heads;
    } else if (v.family == VisionSpec::Family::resnet) {
      for (int64_t b : v.blocks_per_stage) r.layers += b;  // residual blocks
      r.hidden = 512 * (v.bottleneck ? 4 : 1);             // final feature width
    } else {
      for (int64_t b : v.blocks_per_stage) r.layers += b;  // blocks of the staged families (0: vgg, mobilenet)
    }
  }
  return r;
}

std::string with_commas(int64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string or_dash(int64_t v) { return v ? std::to_string(v) : "-"; }

void print_json(const std::vector<Row>& rows, std::ostream& out) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j = {{"name", r.name}, {"family", r.family}, {"params", r.params}, {"layers", r.layers},
                        {"hidden", r.hidden}, {"description", r.description}};
    j["heads"] = r.heads ? nlohmann::json(r.heads) : nlohmann::json(nullptr);
    j["kv_heads"] = r.kv_heads ? nlohmann::json(r.kv_heads) : nlohmann::json(nullptr);
    j["vocab"] = r.vocab ? nlohmann::json(r.vocab) : nlohmann::json(nullptr);
    list.push_back(std::move(j));
  }
  out << list.dump(2) << "\n";
}

// Columns as wide as their longest cell (names and families grow with the zoo), two spaces apart.
void print_table(const std::vector<Row>& rows, std::ostream& out) {
  std::vector<std::vector<std::string>> cells = {{"name", "family", "params", "layers", "hidden", "heads/kv", "vocab"}};
  for (const auto& r : rows)
    cells.push_back({r.name, r.family, with_commas(r.params), std::to_string(r.layers), std::to_string(r.hidden),
                     r.heads ? std::to_string(r.heads) + "/" + std::to_string(r.kv_heads) : "-", or_dash(r.vocab)});
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& row : cells)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream os;
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      // name and family left-aligned, the numbers right-aligned
      if (c < 2) os << row[c] << (c + 1 < row.size() ? pad + "  " : "");
      else os << pad << row[c] << (c + 1 < row.size() ? "  " : "");
    }
    os << "\n";
  }
  out << os.str();
}

}  // namespace

void register_models(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("models", "List the bundled model zoo");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print the list as JSON");
  cmd->callback([json, &ctx] {
    std::ostream& out = ctx.out;
    std::vector<Row> rows;
    for (const auto& e : zoo_entries()) rows.push_back(row_for(e));
    if (*json)
      print_json(rows, out);
    else
      print_table(rows, out);
  });
}

}  // namespace memplan::cli
