// engine/arch/family_fields.h: a builder reads its family's own values, and a spec without them (or with another
// family's) is an InputError naming model_type, never a silent default.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "engine/arch/family_fields.h"

namespace {
struct AFields : memplan::FamilyFields {
  int64_t width = 0;
};
struct BFields : memplan::FamilyFields {};
}  // namespace

TEST_CASE("family_fields: the importer's values reach the builder; absent or foreign ones are refused", "[spec]") {
  memplan::TransformerSpec s;
  s.model_type = "a_family";
  auto a = std::make_shared<AFields>();
  a->width = 7;
  s.family_fields = a;
  CHECK(memplan::family_fields<AFields>(s).width == 7);

  const memplan::TransformerSpec copy = s;  // specs are copied freely; the values are shared, immutable
  CHECK(memplan::family_fields<AFields>(copy).width == 7);

  auto message = [](const memplan::TransformerSpec& spec) {
    try {
      (void)memplan::family_fields<AFields>(spec);
    } catch (const memplan::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  s.family_fields = std::make_shared<BFields>();
  CHECK(message(s) == "model_type: its spec carries another family's values (got a_family)");
  s.family_fields.reset();
  CHECK(message(s) == "model_type: its spec lacks the family's values (got a_family)");
}
