// The grouped top-k router's shape checks, shared by the importers whose routers pick the top topk_group of n_group
// expert groups, each group scored by its top 2 experts (DeepseekV3TopkRouter and its copies in DeepSeek-V3.2, GLM-4.5
// and GLM-4.7-Flash). Each failed check names its field and value (exit 2).
#pragma once
#include <string>

#include "models/hf_config_reader.h"

namespace memplan::hf {

// n_group must divide n_routed_experts into groups of at least 2, topk_group lie in [1, n_group], and
// num_experts_per_tok not exceed the experts of topk_group groups. `router`: the class named in the message.
void check_grouped_topk(const ConfigReader& r, const TransformerSpec& s, const std::string& router);

}  // namespace memplan::hf
