// The bundled model zoo: real HF config.json dicts and torchvision entries, embedded in the binary.
//
// A zoo file is either an HF config.json (has "model_type") or {"source": "torchvision", "name": <torchvision
// name>, "num_classes"?: N}. Entry names are the file stems in models/zoo/.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/spec.h"

namespace memplan {

struct ZooEntry {
  enum class Source : uint8_t { hf_config, torchvision };
  std::string name;         // "llama-2-7b"
  Source source = Source::hf_config;
  std::string family;       // model_type for HF ("llama", "qwen2", ...), "resnet" / "vit" for torchvision
  std::string description;  // one line, includes the parameter count
};

// Every entry, sorted by name.
std::vector<ZooEntry> zoo_entries();

bool is_zoo_model(const std::string& name);

// Throws InputError("model", name, ...) listing close matches for an unknown name.
ModelSpec load_zoo_model(const std::string& name);

// Close matches for `name` among zoo entries (edit distance or substring), best first, at most `limit`.
std::vector<std::string> zoo_close_matches(const std::string& name, size_t limit = 5);

// The `limit` zoo names nearest to `name` (case-insensitive edit distance; a substring counts as distance 1),
// however far: what an error message offers when nothing is close.
std::vector<std::string> zoo_nearest(const std::string& name, size_t limit);

// models/zoo/hub_ids.tsv, embedded: one line per id, `<zoo name>\t<Hugging Face repo id>` ('#' comments and
// blank lines skipped), in file order. A malformed line is an InputError naming "zoo.hub_ids" (a build defect).
struct HubId {
  std::string zoo_name, hub_id;
};
const std::vector<HubId>& zoo_hub_ids();

// The zoo entry `name` denotes when compared case-insensitively with the zoo names and the hub ids; nullopt
// when none.
std::optional<std::string> zoo_entry_for_id(const std::string& name);

}  // namespace memplan
