// The catalog recipe FORMAT:PROFILE (recipe::FindRecipe, recipe/names.h), for
// tests whose expectations are about a named recipe. A name missing from the
// catalog throws with the name: a test fails naming it, and a namespace-scope
// constant initialized with it stops the test binary with it, instead of a
// test dereferencing a null recipe.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "lowbit/formats/recipe/names.h"

namespace lowbit::testing {

inline const recipe::Recipe& CatalogRecipe(std::string_view format, std::string_view profile) {
  const recipe::Recipe* r = recipe::FindRecipe(format, profile);
  if (r == nullptr) {
    throw std::logic_error("no recipe " + std::string(format) + ":" + std::string(profile) + " in the catalog");
  }
  return *r;
}

}  // namespace lowbit::testing
