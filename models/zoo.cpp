// Zoo: parses the embedded JSON once, on first use, into specs; listing and lookup read that cache.
#include "models/zoo.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/arch/builders.h"
#include "engine/errors.h"
#include "models/load_model.h"
#include "models/param_count.h"
#include "models/torchvision.h"
#include "models/zoo_embedded.h"

namespace memplan {
namespace {

struct Loaded {
  ZooEntry entry;
  ModelSpec spec;
};

std::string human_count(int64_t n) {
  char buf[32];
  if (n >= 1'000'000'000)
    std::snprintf(buf, sizeof buf, "%.2fB", double(n) / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.1fM", double(n) / 1e6);
  return buf;
}

std::string describe(const ModelSpec& m) {
  const std::string params = human_count(param_count(m)) + " params";
  if (m.kind == ModelSpec::Kind::vision) {
    const VisionSpec& v = m.vision;
    if (v.family == VisionSpec::Family::resnet)
      return "torchvision " + v.name + (v.bottleneck ? ", bottleneck blocks" : ", basic blocks") + ", " + params;
    if (v.family != VisionSpec::Family::vit) return "torchvision " + v.name + ", " + params;
    return "torchvision " + v.name + ", " + std::to_string(v.num_layers) + " layers, hidden " +
           std::to_string(v.hidden_dim) + ", patch " + std::to_string(v.patch_size) + ", " + params;
  }
  const TransformerSpec& t = m.transformer;
  std::string d = "HF " + t.model_type + ", " + std::to_string(t.num_layers) + " layers, hidden " +
                  std::to_string(t.hidden_size);
  if (t.num_experts > 0)
    d += ", " + std::to_string(t.num_experts) + " experts (top-" + std::to_string(t.num_experts_per_tok) + ")";
  return d + ", " + params;
}

// A malformed bundled file is a build defect, but it surfaces as InputError naming the entry.
const std::map<std::string, Loaded>& cache() {
  static const std::map<std::string, Loaded> kCache = [] {
    std::map<std::string, Loaded> out;
    for (const auto& f : zoo_embedded::files()) {
      nlohmann::json doc;
      try {
        doc = nlohmann::json::parse(f.json);
      } catch (const nlohmann::json::parse_error& e) {
        throw InputError("zoo." + std::string(f.name), "file", std::string("invalid bundled JSON: ") + e.what());
      }
      Loaded l;
      l.spec = model_from_json(doc, f.name);
      l.entry.name = f.name;
      if (l.spec.kind == ModelSpec::Kind::vision) {
        l.entry.source = ZooEntry::Source::torchvision;
        l.entry.family = vision_family_name(l.spec.vision.family);
      } else {
        l.entry.source = ZooEntry::Source::hf_config;
        l.entry.family = l.spec.transformer.model_type;
      }
      out.emplace(f.name, std::move(l));
    }
    return out;
  }();
  return kCache;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

// The description counts parameters by building the model's graph, so it is made here, for a listing, not in
// cache(): every command reads the cache, and describing all entries there cost each CLI run ~0.15 s of CPU.
std::vector<ZooEntry> zoo_entries() {
  std::vector<ZooEntry> out;
  for (const auto& [name, l] : cache()) {
    out.push_back(l.entry);
    out.back().description = describe(l.spec);
  }
  return out;
}

bool is_zoo_model(const std::string& name) { return cache().count(name) != 0; }

namespace {

// Zoo names by distance to `name`, nearest first; `close_only` keeps those within max(2, a third of the name).
std::vector<std::string> ranked(const std::string& name, size_t limit, bool close_only) {
  const std::string q = lower(name);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& [entry, l] : cache()) {
    size_t d = edit_distance(q, entry);
    bool substring = !q.empty() && (entry.find(q) != std::string::npos || q.find(entry) != std::string::npos);
    if (substring) d = std::min<size_t>(d, 1);
    if (!close_only || d <= std::max<size_t>(2, entry.size() / 3)) scored.emplace_back(d, entry);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace

std::vector<std::string> zoo_close_matches(const std::string& name, size_t limit) { return ranked(name, limit, true); }

std::vector<std::string> zoo_nearest(const std::string& name, size_t limit) { return ranked(name, limit, false); }

const std::vector<HubId>& zoo_hub_ids() {
  static const std::vector<HubId> kIds = [] {
    std::vector<HubId> out;
    std::istringstream in{std::string(hub_ids_embedded::text())};
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      const size_t tab = line.find('\t');
      if (tab == std::string::npos || tab == 0 || tab + 1 == line.size() || line.find('\t', tab + 1) != std::string::npos)
        throw InputError("zoo.hub_ids", "line " + std::to_string(lineno) + ": " + line,
                         "expects `<zoo name><TAB><hub repo id>`");
      out.push_back({line.substr(0, tab), line.substr(tab + 1)});
    }
    return out;
  }();
  return kIds;
}

std::optional<std::string> zoo_entry_for_id(const std::string& name) {
  const std::string q = lower(name);
  for (const auto& [entry, l] : cache())
    if (lower(entry) == q) return entry;
  for (const HubId& h : zoo_hub_ids())
    if (lower(h.hub_id) == q) return h.zoo_name;
  return std::nullopt;
}

ModelSpec load_zoo_model(const std::string& name) {
  auto it = cache().find(name);
  if (it != cache().end()) return it->second.spec;
  std::string why = "not in the bundled zoo";
  auto close = zoo_close_matches(name);
  if (!close.empty()) {
    why += "; did you mean";
    for (size_t i = 0; i < close.size(); ++i) why += (i ? ", " : " ") + close[i];
  }
  throw InputError("model", name, why + " (see `memplan models`)");
}

}  // namespace memplan
