// What the classification heads of the encoders (bert, roberta / xlm-roberta, distilbert, modernbert; RunConfig::task
// seq_cls / token_cls) read of a config beyond their model's keys (transformers 5.17 configuration_utils.py
// PreTrainedConfig.problem_type; the head fields themselves are read by each family's importer).
#include "models/hf_config_reader.h"

namespace memplan::hf {

void read_problem_type(const ConfigReader& r, TransformerSpec& s) {
  // PreTrainedConfig accepts None or one of three names; anything else raises at construction.
  s.problem_type = r.string({"problem_type"}, "");
  if (!s.problem_type.empty() && s.problem_type != "regression" && s.problem_type != "single_label_classification" &&
      s.problem_type != "multi_label_classification")
    throw InputError(r.name("problem_type"), "\"" + s.problem_type + "\"",
                     "must be null, \"regression\", \"single_label_classification\" or \"multi_label_classification\"");
}

}  // namespace memplan::hf
