// build_vision: the torchvision builder of a VisionSpec's family (one file per torchvision model file).
#include "engine/arch/builders.h"
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

void build_vision(GraphBuilder& b, const VisionSpec& s) {
  using F = VisionSpec::Family;
  switch (s.family) {
    case F::resnet: return build_resnet(b, s);
    case F::vit: return build_vit(b, s);
    case F::convnext: return build_convnext(b, s);
    case F::efficientnet: return build_efficientnet(b, s);
    case F::mobilenet_v2: return build_mobilenet_v2(b, s);
    case F::mobilenet_v3: return build_mobilenet_v3(b, s);
    case F::swin: return build_swin(b, s);
    case F::densenet: return build_densenet(b, s);
    case F::vgg: return build_vgg(b, s);
    case F::regnet: return build_regnet(b, s);
  }
}

}  // namespace memplan
