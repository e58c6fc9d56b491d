// Targets of user_outputs.h: the one name grammar (formats/.../recipe/names.h
// ParseTarget) plus the element options a name cannot spell.
#include <string>
#include <string_view>

#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/profiles/profiles.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/user_word.h"
#include "user_outputs_internal.h"

namespace lowbit::check {
namespace internal {

// The names and aliases of rounding_mode_list.h (as the CLI's --round).
const char* RoundingName(RoundingMode mode) { return RoundingModeName(mode); }

bool ParseRounding(std::string_view text, RoundingMode* out) { return FindRoundingMode(text, out); }

bool ProfileConverts(ProfileId profile, const FormatSpec& from, const FormatSpec& dst, RoundingMode mode) {
  EncodeResult ignored;  // a zero input is defined wherever the conversion is
  return ProfileEncode(profile, from, 0, dst, mode, &ignored);
}

bool ProfileConvertsTo(ProfileId profile, const FormatSpec& dst, RoundingMode mode) {
  for (FormatId from : {FormatId::kFp32, FormatId::kBf16, FormatId::kFp16, FormatId::kFp64}) {
    if (ProfileConverts(profile, Spec(from), dst, mode)) return true;
  }
  return false;
}

std::string FormatTargetName(FormatId format, const std::optional<ProfileId>& profile, const EncodeOptions& o) {
  std::string name = Spec(format).name;
  if (profile) {
    name += std::string(":") + ProfileName(*profile);
    if (o.rounding != RoundingMode::kNearestEven) name += std::string(" ") + RoundingName(o.rounding);
    return name;
  }
  const bool sat = o.overflow == Overflow::kSaturate;
  if (o.rounding != RoundingMode::kNearestEven || sat) {
    name += std::string(" ") + RoundingName(o.rounding) + (sat ? "+sat" : "");
  }
  return name;
}

}  // namespace internal

Target FormatTarget(FormatId format, const EncodeOptions& options) {
  Target t;
  t.kind = Target::Kind::kFormat;
  t.format = format;
  t.options = options;
  t.name = internal::FormatTargetName(format, std::nullopt, options);
  return t;
}

Target ProfileTarget(FormatId format, ProfileId profile, RoundingMode rounding) {
  Target t;
  t.kind = Target::Kind::kFormat;
  t.format = format;
  t.profile = profile;
  t.options.rounding = rounding;
  t.name = internal::FormatTargetName(format, profile, t.options);
  return t;
}

Target RecipeTarget(const recipe::Recipe& r, const recipe::Layout& layout) {
  Target t;
  t.kind = Target::Kind::kRecipe;
  t.recipe = r;
  t.layout = layout;
  recipe::Target named;
  named.kind = recipe::Target::Kind::kRecipe;
  named.recipe = &r;
  named.layout = layout;
  t.name = recipe::CanonicalName(named);
  return t;
}

Target RecipeTarget(const recipe::Recipe& r) { return RecipeTarget(r, r.layout); }

bool ParseTarget(std::string_view name, const TargetOptions& options, Target* out, std::string* error) {
  recipe::Target parsed;
  if (!recipe::ParseTarget(name, &parsed, error)) return false;
  if (parsed.kind == recipe::Target::Kind::kRecipe) {
    if (!options.profile.empty()) {
      *error = "a profile option applies to element formats; " + QuoteUserWord(name) +
               " is a recipe (its profile is part of the name)";
      return false;
    }
    if (!options.rounding.empty() || options.saturate) {
      *error = "rounding and saturation options apply to element formats; the recipe " + QuoteUserWord(name) +
               " fixes its own element policy";
      return false;
    }
    recipe::Layout layout = parsed.layout;
    if (!options.layout.empty()) {
      if (name.find('/') != std::string_view::npos) {
        *error = "two layouts: " + QuoteUserWord(name.substr(name.find('/') + 1)) + " in the name and " +
                 QuoteUserWord(options.layout) + " (give one)";
        return false;
      }
      if (!recipe::ParseLayout(options.layout, &layout, error)) return false;
    }
    if (!recipe::LayoutApplies(*parsed.recipe, layout)) {
      *error = "layout '" + recipe::LayoutName(layout) + "' does not apply to " + recipe::RecipeName(*parsed.recipe) +
               (parsed.recipe->family() == recipe::Family::kScaled
                    ? " (scaled recipes take tensor, row, gN or tile:RxG)"
                    : " (its blocks are fixed at " + std::to_string(parsed.recipe->layout.size) + " elements)");
      return false;
    }
    *out = RecipeTarget(*parsed.recipe, layout);
    return true;
  }
  if (!options.layout.empty()) {
    *error = "a layout applies to recipes, not to the format '" + std::string(Spec(parsed.format).name) + "'";
    return false;
  }
  std::optional<ProfileId> profile = parsed.profile;
  if (!options.profile.empty()) {
    if (profile) {
      *error = "two profiles: '" + std::string(ProfileName(*profile)) + "' in the name and " +
               QuoteUserWord(options.profile) + " (give one)";
      return false;
    }
    ProfileId id;
    if (!recipe::ParseProfileName(options.profile, &id, error)) return false;
    profile = id;
  }
  RoundingMode mode = RoundingMode::kNearestEven;
  if (!options.rounding.empty() && !internal::ParseRounding(options.rounding, &mode)) {
    *error = "unknown rounding mode " + QuoteUserWord(options.rounding) + " (rne, rna, rtz, up, down, odd, rnu, rnd, rnz)";
    return false;
  }
  if (mode == RoundingMode::kStochastic) {
    *error = "stochastic rounding cannot be checked from outputs alone (the random bits of each element are "
             "not known)";
    return false;
  }
  if (profile) {
    if (options.saturate) {
      *error = "saturation with a profile: the profile fixes the overflow policy";
      return false;
    }
    // A rounding mode the profile lacks would leave every output undefined
    // and the check comparing nothing: refused here, as `lowbit encode`
    // refuses the same pair.
    if (!internal::ProfileConvertsTo(*profile, Spec(parsed.format), mode)) {
      *error = std::string("profile ") + ProfileName(*profile) + " has no conversion to " + Spec(parsed.format).name +
               " with rounding " + internal::RoundingName(mode) + " (from any of fp32, bf16, fp16, fp64)";
      return false;
    }
    *out = ProfileTarget(parsed.format, *profile, mode);
    return true;
  }
  EncodeOptions o;
  o.rounding = mode;
  o.overflow = options.saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
  *out = FormatTarget(parsed.format, o);
  return true;
}

}  // namespace lowbit::check
