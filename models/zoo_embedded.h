// The bundled zoo's JSON files, compiled into the binary (definition generated at build time by
// models/embed_zoo.cmake). Only models/zoo.cpp reads this.
#pragma once
#include <string_view>
#include <vector>

namespace memplan::zoo_embedded {

struct File {
  const char* name;  // file stem: "gpt2", "resnet50", ...
  const char* json;  // file contents
};

// Sorted by name.
const std::vector<File>& files();

}  // namespace memplan::zoo_embedded

// data/*.json (GPU specs), embedded the same way.
namespace memplan::data_embedded {
using File = zoo_embedded::File;
const std::vector<File>& files();
}  // namespace memplan::data_embedded

// data/calibration/*.json (shipped calibration profiles), embedded the same way.
namespace memplan::calibration_embedded {
using File = zoo_embedded::File;
const std::vector<File>& files();
}  // namespace memplan::calibration_embedded

// models/zoo/hub_ids.tsv (zoo name -> Hugging Face repo id), embedded by engine/embed_text.cmake.
namespace memplan::hub_ids_embedded {
std::string_view text();
}  // namespace memplan::hub_ids_embedded
