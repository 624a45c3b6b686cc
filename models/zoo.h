// The bundled model zoo: real HF config.json dicts and torchvision entries, embedded in the binary.
//
// A zoo file is either an HF config.json (has "model_type") or {"source": "torchvision", "name": <torchvision
// name>, "num_classes"?: N}. Entry names are the file stems in models/zoo/.
#pragma once
#include <cstdint>
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

}  // namespace memplan
