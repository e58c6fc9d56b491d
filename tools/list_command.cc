// `lowbit list formats|profiles|recipes`: what exists, with the properties a
// user picks by (bits, bias, max; a profile's source; a recipe's scale rule,
// geometry and source). Every list comes from the one format list, the
// profile list and the recipe catalog, so nothing here is typed twice.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/profile_id.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/user_word.h"

namespace lowbit::tools {
namespace {

// The family column: the family table's name and what its scales are.
std::string FamilyColumn(recipe::Family f) {
  return std::string(recipe::FamilyName(f)) + " (" + recipe::FamilyDescription(f) + ")";
}

void ListFormats() {
  std::printf("%-10s %4s %4s %4s %6s %-14s %s\n", "format", "bits", "exp", "man", "bias", "max", "also spelled");
  for (FormatId id : kAllFormats) {
    const FormatSpec& f = Spec(id);
    std::printf("%-10s %4d %4d %4d %6d %-14.10g %s\n", f.name, f.total_bits, f.exponent_bits, f.mantissa_bits, f.bias,
                f.IsFloat() ? DecodeToF64(f, f.MaxFiniteCode()) : static_cast<double>(f.IntMax()),
                f.ml_dtypes_name != nullptr ? f.ml_dtypes_name : "");
  }
}

void ListProfiles() {
  for (ProfileId id : kAllProfiles) std::printf("%-16s %s\n", ProfileName(id), ProfileSource(id));
}

void ListRecipes() {
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    std::printf("%-22s %-62s %-8s %s\n", recipe::RecipeName(r).c_str(), FamilyColumn(r.family()).c_str(),
                recipe::LayoutName(r.layout).c_str(), r.source);
  }
  std::printf("\nRecipe names take a layout after '/': tensor, row (channel, token), gN (group:N), tile:RxG;\n"
              "e.g. int4:ao-sym/g128. MX and NVFP4 keep their block of 32 / 16.\n");
}

}  // namespace

void AddListCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the formats, profiles or recipes lowbit knows");
  // Owned by the callback (the app keeps it), so nothing leaks at exit.
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what, "formats, profiles or recipes")
      ->required()
      ->check(CLI::Validator(
          [](std::string& word) -> std::string {
            if (word == "formats" || word == "profiles" || word == "recipes") return "";
            return "cannot list " + QuoteUserWord(word) + " (formats, profiles or recipes)";
          },
          "WHAT in {formats,profiles,recipes}"));
  cmd->callback([what] {
    if (*what == "formats") ListFormats();
    if (*what == "profiles") ListProfiles();
    if (*what == "recipes") ListRecipes();
  });
}

}  // namespace lowbit::tools
