// The catalog recipe FORMAT:PROFILE (recipe::FindRecipe, recipe/names.h), for
// tests whose expectations are about a named recipe. A name missing from the
// catalog throws with the name: a test fails naming it, and a namespace-scope
// constant initialized with it stops the test binary with it, instead of a
// test dereferencing a null recipe.
#pragma once

#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"

namespace lowbit::testing {

inline const recipe::Recipe& CatalogRecipe(std::string_view format, std::string_view profile) {
  const recipe::Recipe* r = recipe::FindRecipe(format, profile);
  if (r == nullptr) {
    throw std::logic_error("no recipe " + std::string(format) + ":" + std::string(profile) + " in the catalog");
  }
  return *r;
}

// The gtest name of a parameter that indexes recipe::kAllRecipes:
// "12_mxfp8_e4m3_ao_floor" (the index keeps names of one suite distinct).
inline std::string CatalogIndexTestName(const ::testing::TestParamInfo<int>& info) {
  std::string name = std::to_string(info.param) + "_" + recipe::RecipeName(recipe::kAllRecipes[info.param]);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace lowbit::testing
