// torchvision classification models -> VisionSpec, with the hyperparameters torchvision's builders use
// (torchvision/models/resnet.py and vision_transformer.py).
#pragma once
#include <string>
#include <vector>

#include "engine/arch/spec.h"

namespace memplan {

// Names: resnet18, resnet34, resnet50, resnet101, resnet152, vit_b_16, vit_b_32, vit_l_16.
// Throws InputError("model", name, ...) for an unknown name and InputError("num_classes", ...) for
// num_classes < 1.
VisionSpec vision_spec_for(const std::string& name, int64_t num_classes = 1000);

// The names vision_spec_for accepts, in a fixed order.
const std::vector<std::string>& torchvision_model_names();

}  // namespace memplan
