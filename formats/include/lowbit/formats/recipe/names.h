// The one name grammar, parsed here and nowhere else (the CLI, the registry
// and the Python package all call ParseTarget):
//
//   TARGET  := FORMAT [ ":" PROFILE ] [ "/" LAYOUT ]
//   FORMAT  := an element format (e4m3, float8_e4m3fn, fp8_e4m3, ...) or a
//              block format (mxfp4, mxfp8_e4m3, mxfp8, nvfp4, ...)
//   PROFILE := an element profile (ocp, nvidia, ml_dtypes, pytorch-cpu, and
//              the aliases cuda, torch, ...) or a recipe profile (ocp, te,
//              ao-floor, ao-sym, gptq-sym, ... and torchao / ao for MX)
//   LAYOUT  := tensor | row | channel | token | gN | group:N | tile:RxG |
//              block:RxG
//
// A block format always names a recipe (the default profile is ocp for MX,
// te for NVFP4); an element format with a recipe profile (int4:ao-sym,
// e4m3:te) names a scaled recipe (default layout: per tensor); an element
// format alone or with an element profile names a format. Host only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/profile_id.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/user_word.h"

namespace lowbit::recipe {

struct Target {
  enum class Kind { kFormat, kRecipe };
  Kind kind = Kind::kFormat;
  // kFormat
  FormatId format = FormatId::kFp32;
  std::optional<ProfileId> profile;
  // kRecipe: the catalog entry and the layout (its default unless given)
  const Recipe* recipe = nullptr;
  Layout layout;
};

namespace names_detail {

struct Alias {
  std::string_view alias;
  std::string_view name;
};

// Block-format spellings users type: `mxfp8` is MXFP8 with E4M3 elements,
// the element TE's MXFP8 recipe uses by default (TE MXFP8BlockScaling
// fp8_format E4M3).
inline constexpr Alias kBlockFormatAliases[] = {
    {"mxfp8", "mxfp8_e4m3"}, {"mxfp6", "mxfp6_e2m3"}, {"mx4", "mxfp4"}, {"mxint", "mxint8"},
};

// Recipe-profile spellings: torchao's default MX rule is FLOOR (to_mx
// scaling_mode=ScaleCalculationMode.FLOOR, docs/formats-reference.md §5.3).
struct ProfileAlias {
  bool mx;  // true: applies to MX formats; false: to NVFP4
  std::string_view alias;
  std::string_view name;
};
inline constexpr ProfileAlias kRecipeProfileAliases[] = {
    {true, "ao", "ao-floor"},   {true, "torchao", "ao-floor"}, {true, "nvidia", "te"},
    {true, "microxcaling", "msx"}, {false, "torchao", "ao"},    {false, "nvidia", "te"},
    {false, "ocp", "te"},
};

// Element-profile spellings users type for ProfileId (profile_id.h has the
// canonical names).
inline constexpr struct {
  std::string_view alias;
  ProfileId id;
} kElementProfileAliases[] = {
    {"cuda", ProfileId::kNvidia}, {"torch", ProfileId::kPytorchCpu}, {"pytorch", ProfileId::kPytorchCpu},
};

inline bool IsBlockFormatName(std::string_view name) {
  for (const Recipe& r : kAllRecipes) {
    if (r.family() != Family::kScaled && name == r.name) return true;
  }
  return false;
}

inline std::string_view ResolveBlockFormat(std::string_view name) {
  for (const Alias& a : kBlockFormatAliases) {
    if (name == a.alias) return a.name;
  }
  return name;
}

// The largest group or tile size a layout names: the one limit every
// message states (sizes stay far below int's range, so nothing wraps).
inline constexpr int kMaxLayoutSize = 9999999;

inline bool ParseCount(std::string_view text, int* out) {
  if (text.empty() || text.size() > 7) return false;  // at most kMaxLayoutSize elements per group
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1) return false;
  *out = v;
  return true;
}

// Levenshtein distance, for "did you mean".
inline std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace names_detail

// The closest candidate within a small edit distance, or "".
inline std::string DidYouMean(std::string_view text, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = text.size() / 3 + 2;
  for (const std::string& c : candidates) {  // a prefix typed whole: "ao" -> "ao-floor"
    if (text.size() >= 2 && c.size() > text.size() && c.compare(0, text.size(), text) == 0) return c;
  }
  for (const std::string& c : candidates) {
    const std::size_t d = names_detail::EditDistance(text, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

inline std::string RecipeName(const Recipe& r) { return std::string(r.name) + ":" + r.profile; }

inline std::string LayoutName(const Layout& layout) {
  switch (layout.geometry) {
    case Geometry::kPerTensor: return "tensor";
    case Geometry::kPerRow: return "row";
    case Geometry::kBlock1d: return "b" + std::to_string(layout.size);
    case Geometry::kGroup: return "g" + std::to_string(layout.size);
    case Geometry::kTile2d: return "tile:" + std::to_string(layout.tile_rows) + "x" + std::to_string(layout.size);
  }
  return "?";
}

// "tensor", "row" / "channel" / "token", "g128" / "group:128", "tile:32x128" /
// "block:32x128". False with a message naming the problem.
inline bool ParseLayout(std::string_view text, Layout* out, std::string* error) {
  Layout l;
  if (text == "tensor") {
    l.geometry = Geometry::kPerTensor;
  } else if (text == "row" || text == "channel" || text == "token") {
    l.geometry = Geometry::kPerRow;
  } else if (text.substr(0, 6) == "group:" || (text.size() > 1 && text[0] == 'g' && text[1] >= '0' && text[1] <= '9')) {
    l.geometry = Geometry::kGroup;
    const std::string_view n = text[0] == 'g' && text[1] != 'r' ? text.substr(1) : text.substr(6);
    if (!names_detail::ParseCount(n, &l.size)) {
      *error = "group size " + QuoteUserWord(n) + " is not a whole number from 1 to " +
               std::to_string(names_detail::kMaxLayoutSize);
      return false;
    }
  } else if (text.substr(0, 5) == "tile:" || text.substr(0, 6) == "block:") {
    l.geometry = Geometry::kTile2d;
    const std::string_view dims = text.substr(text.find(':') + 1);
    const std::size_t x = dims.find('x');
    if (x == std::string_view::npos || !names_detail::ParseCount(dims.substr(0, x), &l.tile_rows) ||
        !names_detail::ParseCount(dims.substr(x + 1), &l.size)) {
      *error = "tile " + QuoteUserWord(dims) + " is not ROWSxCOLS with whole numbers from 1 to " +
               std::to_string(names_detail::kMaxLayoutSize);
      return false;
    }
  } else {
    *error = "unknown layout " + QuoteUserWord(text) + " (tensor, row, channel, token, gN, group:N, tile:RxG)";
    return false;
  }
  *out = l;
  return true;
}

// Every recipe name with its default layout ("mxfp4:ocp", "int4:ao-sym").
inline std::vector<std::string> AllRecipeNames() {
  std::vector<std::string> names;
  for (const Recipe& r : kAllRecipes) names.push_back(RecipeName(r));
  return names;
}

inline std::vector<std::string> AllFormatNames() {
  std::vector<std::string> names;
  for (FormatId id : kAllFormats) names.push_back(Spec(id).name);
  return names;
}

inline std::vector<std::string> AllProfileNames() {
  std::vector<std::string> names;
  for (ProfileId id : kAllProfiles) names.push_back(ProfileName(id));
  return names;
}

inline const Recipe* FindRecipe(std::string_view format, std::string_view profile) {
  for (const Recipe& r : kAllRecipes) {
    if (format == r.name && profile == r.profile) return &r;
  }
  return nullptr;
}

// An element format alone (canonical, ml_dtypes / PyTorch / CUDA spelling).
inline bool ParseFormatName(std::string_view text, FormatId* out, std::string* error) {
  if (FindFormat(text, out)) return true;
  std::vector<std::string> candidates = AllFormatNames();
  *error = "unknown format " + QuoteUserWord(text);
  const std::string guess = DidYouMean(text, candidates);
  if (!guess.empty()) *error += "; did you mean '" + guess + "'?";
  *error += " (lowbit list formats)";
  return false;
}

// An element profile alone, with the spellings users type (cuda, torch).
inline bool ParseProfileName(std::string_view text, ProfileId* out, std::string* error) {
  if (FindProfile(text, out)) return true;
  for (const auto& a : names_detail::kElementProfileAliases) {
    if (text == a.alias) {
      *out = a.id;
      return true;
    }
  }
  std::string list;
  for (const std::string& s : AllProfileNames()) list += (list.empty() ? "" : ", ") + s;
  *error = "unknown profile " + QuoteUserWord(text) + " (" + list + ")";
  const std::string guess = DidYouMean(text, AllProfileNames());
  if (!guess.empty()) *error += "; did you mean '" + guess + "'?";
  return false;
}

// Parses TARGET. On failure returns false and a message that names the
// problem and, on a near miss, what the user probably meant.
inline bool ParseTarget(std::string_view text, Target* out, std::string* error) {
  const std::size_t slash = text.find('/');
  const std::string_view head = text.substr(0, slash);
  const std::size_t colon = head.find(':');
  std::string_view format = head.substr(0, colon);
  std::string_view profile = colon == std::string_view::npos ? std::string_view{} : head.substr(colon + 1);
  const bool has_layout = slash != std::string_view::npos;
  Layout layout;
  if (has_layout && !ParseLayout(text.substr(slash + 1), &layout, error)) return false;
  if (colon != std::string_view::npos && profile.empty()) {
    *error = "empty profile after ':' in " + QuoteUserWord(text);
    return false;
  }

  Target t;
  // Block formats: always a recipe.
  format = names_detail::ResolveBlockFormat(format);
  if (names_detail::IsBlockFormatName(format)) {
    const bool nvfp4 = format == "nvfp4";
    std::string_view p = profile.empty() ? (nvfp4 ? "te" : "ocp") : profile;
    if (FindRecipe(format, p) == nullptr) {
      for (const auto& a : names_detail::kRecipeProfileAliases) {
        if (a.mx == !nvfp4 && p == a.alias) p = a.name;
      }
    }
    t.recipe = FindRecipe(format, p);
    if (t.recipe == nullptr) {
      std::vector<std::string> profiles;
      for (const Recipe& r : kAllRecipes) {
        if (format == r.name) profiles.push_back(r.profile);
      }
      std::string list;
      for (const std::string& s : profiles) list += (list.empty() ? "" : ", ") + s;
      *error = "unknown profile " + QuoteUserWord(profile) + " for " + std::string(format) + " (" + list + ")";
      const std::string guess = DidYouMean(profile, profiles);
      if (!guess.empty()) *error += "; did you mean '" + guess + "'?";
      return false;
    }
    t.kind = Target::Kind::kRecipe;
    t.layout = has_layout ? layout : t.recipe->layout;
    if (has_layout && !(layout.geometry == Geometry::kGroup && layout.size == t.recipe->layout.size)) {
      *error = std::string(format) + " has a fixed block of " + std::to_string(t.recipe->layout.size) +
               " elements; layout '" + LayoutName(layout) + "' does not apply";
      return false;
    }
    *out = t;
    return true;
  }

  FormatId id;
  if (!FindFormat(format, &id)) {
    std::vector<std::string> candidates = AllFormatNames();
    for (const Recipe& r : kAllRecipes) {
      if (r.family() != Family::kScaled) candidates.push_back(r.name);
    }
    *error = "unknown format " + QuoteUserWord(format);
    const std::string guess = DidYouMean(format, candidates);
    if (!guess.empty()) *error += "; did you mean '" + guess + "'?";
    return false;
  }
  const std::string_view canonical = Spec(id).name;
  if (!profile.empty()) {
    if (const Recipe* r = FindRecipe(canonical, profile)) {
      t.kind = Target::Kind::kRecipe;
      t.recipe = r;
      t.layout = has_layout ? layout : r->layout;
      *out = t;
      return true;
    }
    ProfileId pid;
    std::string unused;
    if (!ParseProfileName(profile, &pid, &unused)) {
      std::vector<std::string> candidates = AllProfileNames();
      for (const Recipe& r : kAllRecipes) {
        if (canonical == r.name) candidates.push_back(r.profile);
      }
      std::string list;
      for (const std::string& s : candidates) list += (list.empty() ? "" : ", ") + s;
      *error = "unknown profile " + QuoteUserWord(profile) + " for " + std::string(canonical) + " (" + list + ")";
      const std::string guess = DidYouMean(profile, candidates);
      if (!guess.empty()) *error += "; did you mean '" + guess + "'?";
      return false;
    }
    t.profile = pid;
  }
  if (has_layout) {
    *error = "a layout applies to recipes, not to the format '" + std::string(canonical) +
             "' (give a recipe profile, e.g. int4:ao-sym/g128)";
    return false;
  }
  t.kind = Target::Kind::kFormat;
  t.format = id;
  *out = t;
  return true;
}

// The canonical spelling of a target: ParseTarget(CanonicalName(t)) gives t
// back (a recipe's default layout is left out).
inline std::string CanonicalName(const Target& t) {
  if (t.kind == Target::Kind::kFormat) {
    std::string s = Spec(t.format).name;
    if (t.profile) s += std::string(":") + ProfileName(*t.profile);
    return s;
  }
  std::string s = RecipeName(*t.recipe);
  const Layout& d = t.recipe->layout;
  if (t.layout.geometry != d.geometry || t.layout.size != d.size || t.layout.tile_rows != d.tile_rows) {
    s += "/" + LayoutName(t.layout);
  }
  return s;
}

}  // namespace lowbit::recipe
