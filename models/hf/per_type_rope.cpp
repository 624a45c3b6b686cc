#include "models/hf/per_type_rope.h"

#include <cmath>

#include "engine/errors.h"

namespace memplan::hf {

int64_t per_type_rotary_dim(const ConfigReader& r, const json* rope, const char* type, double absent_factor,
                            double missing_factor, int64_t head_dim, const std::string& rotary_class,
                            const std::string& model_type) {
  double factor = absent_factor;
  std::string where = "rope_parameters";
  if (rope != nullptr) {
    where += std::string(".") + type;
    auto it = rope->find(type);
    if (it == rope->end() || !it->is_object())
      throw InputError(r.name(where), it == rope->end() ? "absent" : dump_short(*it),
                       "must be a dict (" + rotary_class + " reads rope_parameters[layer_type] for each type in "
                       "layer_types)");
    auto rt = it->find("rope_type");
    if (rt == it->end()) rt = it->find("type");
    if (rt != it->end() && !rt->is_null()) {
      const std::string t = rt->is_string() ? rt->get<std::string>() : std::string();
      if (t != "default" && t != "linear" && t != "yarn" && t != "llama3")
        throw InputError(r.name(where + ".rope_type"), dump_short(*rt),
                         "not modelled for " + model_type +
                             " (default, linear, yarn and llama3 change inv_freq's values only)");
    }
    factor = missing_factor;
    auto f = it->find("partial_rotary_factor");
    if (f != it->end() && !f->is_null()) {
      if (!f->is_number()) throw InputError(r.name(where + ".partial_rotary_factor"), dump_short(*f), "must be a number");
      factor = f->get<double>();
    }
    where += ".partial_rotary_factor";
  }
  if (!(factor > 0.0 && factor <= 1.0))
    throw InputError(r.name(where), std::to_string(factor), "must be a number in (0, 1]");
  const auto rot = static_cast<int64_t>(std::floor(static_cast<double>(head_dim) * factor));
  if (rot < 2 || rot % 2 != 0)
    throw InputError(r.name(where), std::to_string(factor),
                     "gives a rotary dimension of " + std::to_string(rot) + " of head_dim " + std::to_string(head_dim) +
                         "; it must be a positive even number");
  return rot;
}

}  // namespace memplan::hf
