#include "engine/ledger.h"

namespace memplan {

std::string_view row_name(Row r) {
  switch (r) {
    case Row::weights: return "weights";
    case Row::gradients: return "gradients";
    case Row::optimizer_state: return "optimizer_state";
    case Row::activations: return "saved_activations";
    case Row::autocast_cache: return "autocast_cache";
    case Row::activation_grads: return "activation_grads";
    case Row::transient: return "transient";
    case Row::inputs: return "inputs";
    case Row::library_workspace: return "library_workspace";
    case Row::kv_cache: return "kv_cache";
    case Row::comm_buffers: return "comm_buffers";
    case Row::kCount: break;
  }
  return "?";
}

}  // namespace memplan
