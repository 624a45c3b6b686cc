// torchvision classification models -> VisionSpec, with the hyperparameters torchvision's builders use
// (torchvision 0.26: models/resnet.py, vision_transformer.py, convnext.py, efficientnet.py, mobilenetv2.py,
// mobilenetv3.py, swin_transformer.py, densenet.py, vgg.py, regnet.py).
#pragma once
#include <string>
#include <vector>

#include "engine/arch/spec.h"

namespace memplan {

// Names: resnet18..152, resnext*, wide_resnet*, vit_*, convnext_*, efficientnet_b0..b7, efficientnet_v2_s/m/l,
// mobilenet_v2, mobilenet_v3_small/large, swin_t/s/b, swin_v2_t/s/b, densenet121/161/169/201, vgg11..19 (+_bn),
// regnet_x_* / regnet_y_* (torchvision_model_names() lists them).
// Throws InputError("model", name, ...) for an unknown name and InputError("num_classes", ...) for
// num_classes < 1.
VisionSpec vision_spec_for(const std::string& name, int64_t num_classes = 1000);

// The names vision_spec_for accepts, in a fixed order.
const std::vector<std::string>& torchvision_model_names();

}  // namespace memplan
