// Access to TransformerSpec::family_fields: the values only one family's builder reads (see FamilyFields in spec.h).
#pragma once
#include "engine/arch/spec.h"
#include "engine/errors.h"

namespace memplan {

// The family's own values as its importer set them. An InputError naming model_type when the spec carries none or
// another family's (a spec built by hand or by another importer): a builder never falls back to defaults.
template <class T>
const T& family_fields(const TransformerSpec& s) {
  const auto* f = dynamic_cast<const T*>(s.family_fields.get());
  if (f == nullptr) {
    throw InputError("model_type", s.model_type,
                     s.family_fields ? "its spec carries another family's values" : "its spec lacks the family's values");
  }
  return *f;
}

}  // namespace memplan
