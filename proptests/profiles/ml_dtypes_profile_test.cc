// The "ml_dtypes" profile against ml_dtypes itself (docs/design.md
// "Profiles": each profile is tested against the implementation it
// reproduces, wherever it can run). python/ml_dtypes_dump.py, run by the ctest
// fixture ml_dtypes_dump with the venv's Python, writes what ml_dtypes 0.6
// computes for every type it has (types.txt lists them):
//   - every code decoded to FP32 bits;
//   - every FP16 and every BF16 input, and the class-complete FP32 sample of
//     docs/formats-reference.md §10.1, encoded into each type (and FP16).
// This test asks the model's profile for the same bits, for every format of
// format_list.h that names an ml_dtypes type (FormatSpec::ml_dtypes_name): a
// new format with an ml_dtypes name is compared with ml_dtypes with no edit
// here. A missing file is a failure, never a skip: CI has the venv
// (scripts/setup.sh).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/profiles.h"

#ifndef LOWBIT_ML_DTYPES_DUMP_DIR
#error "LOWBIT_ML_DTYPES_DUMP_DIR must name the folder that python/ml_dtypes_dump.py writes"
#endif

namespace lowbit {
namespace {

// Formats that ml_dtypes has and lowbit models, by lowbit's canonical name:
// every format whose format_list.h row names an ml_dtypes type.
std::vector<const char*> MlDtypesFormats() {
  std::vector<const char*> names;
  for (FormatId id : kAllFormats) {
    if (Spec(id).ml_dtypes_name != nullptr) names.push_back(Spec(id).name);
  }
  return names;
}

// Encode sources and their numpy / ml_dtypes type names (the dump's file
// names): every FP16 and BF16 code, and the FP32 sample. Destinations are the
// formats above plus FP16 (bf16 -> fp16 is an ml_dtypes cast, fp32 -> fp16
// numpy's); see EncodeCases.
struct Source {
  const char* lowbit_name;
  const char* numpy_name;
};
const Source kSources[] = {{"fp16", "float16"}, {"bf16", "bfloat16"}, {"fp32", "float32"}};

// The dump's name of a lowbit format: its ml_dtypes type, or numpy's name of
// the FP16/FP32 sources and destination.
std::string DumpName(const std::string& lowbit_name) {
  for (const Source& s : kSources) {
    if (lowbit_name == s.lowbit_name) return s.numpy_name;
  }
  FormatId id{};
  if (FindFormat(lowbit_name, &id) && Spec(id).ml_dtypes_name != nullptr) {
    return Spec(id).ml_dtypes_name;
  }
  ADD_FAILURE() << lowbit_name << " has no ml_dtypes or numpy type name";
  return lowbit_name;
}

std::string DumpDir() {
  const char* env = std::getenv("LOWBIT_ML_DTYPES_DUMP_DIR");
  return env && *env ? env : LOWBIT_ML_DTYPES_DUMP_DIR;
}

struct Dump {
  std::vector<std::uint64_t> inputs;
  std::vector<std::uint64_t> outputs;
};

std::uint64_t ReadLittle(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reads one file of ml_dtypes_dump.py; "" on success, else why not.
std::string ReadDump(const std::string& name, Dump* dump) {
  const std::string path = DumpDir() + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return "cannot open " + path +
           ": the ctest fixture ml_dtypes_dump (python/ml_dtypes_dump.py run with the .venv "
           "Python) did not run or failed. Run `bash scripts/setup.sh`, then ctest.";
  }
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (bytes.size() < 20 || std::memcmp(bytes.data(), "LBMD", 4) != 0) return path + ": not a dump";
  const std::uint64_t version = ReadLittle(&bytes[4], 4);
  const std::uint64_t count = ReadLittle(&bytes[8], 4);
  const int in_bytes = static_cast<int>(ReadLittle(&bytes[12], 4));
  const int out_bytes = static_cast<int>(ReadLittle(&bytes[16], 4));
  if (version != 1 || in_bytes < 1 || in_bytes > 8 || out_bytes < 1 || out_bytes > 8 ||
      bytes.size() != 20 + count * (in_bytes + out_bytes)) {
    return path + ": bad header or size";
  }
  dump->inputs.resize(count);
  dump->outputs.resize(count);
  const unsigned char* p = &bytes[20];
  for (std::uint64_t i = 0; i < count; ++i, p += in_bytes) dump->inputs[i] = ReadLittle(p, in_bytes);
  for (std::uint64_t i = 0; i < count; ++i, p += out_bytes) dump->outputs[i] = ReadLittle(p, out_bytes);
  return "";
}

const FormatSpec& SpecOf(const std::string& name) {
  FormatId id{};
  if (!FindFormat(name, &id)) {
    ADD_FAILURE() << "lowbit has no format named " << name;
    return kFp32;
  }
  return Spec(id);
}

ProfileId MlDtypesProfile() {
  ProfileId id{};
  EXPECT_TRUE(FindProfile("ml_dtypes", &id)) << "no profile named ml_dtypes";
  return id;
}

// The inputs the dump must hold, in order: all codes of a <= 16-bit format, or
// the FP32 sample of docs/formats-reference.md §10.1 (high half x 6 low halves).
std::vector<std::uint64_t> ExpectedInputs(const FormatSpec& src) {
  std::vector<std::uint64_t> v;
  if (src.total_bits <= 16) {
    for (std::uint64_t c = 0; c <= src.CodeMask(); ++c) v.push_back(c);
    return v;
  }
  const std::uint32_t kLow[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  for (std::uint32_t high = 0; high < 0x10000; ++high) {
    for (std::uint32_t low : kLow) v.push_back((std::uint64_t{high} << 16) | low);
  }
  return v;
}

std::string Hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(v));
  return buf;
}

// The class of an input code, to group mismatches into something a reader
// can route ("NaN-", "Inf+", "zero-", "finite+").
std::string InputClass(const FormatSpec& spec, std::uint64_t code) {
  const Unpacked u = Unpack(spec, code);
  const char* sign = u.negative ? "-" : "+";
  switch (u.value_class) {
    case ValueClass::kNan: return std::string("NaN") + sign;
    case ValueClass::kInf: return std::string("Inf") + sign;
    case ValueClass::kZero: return std::string("zero") + sign;
    case ValueClass::kFinite: break;
  }
  return std::string("finite") + sign;
}

// Collects mismatches grouped by (input class, ml_dtypes code, model code).
class Mismatches {
 public:
  void Add(const std::string& input_class, std::uint64_t input, std::uint64_t want,
           std::uint64_t got) {
    ++total_;
    Group& g = groups_[std::make_tuple(input_class, want, got)];
    if (g.count++ < 3) g.examples.push_back(input);
  }
  std::uint64_t total() const { return total_; }
  std::string Describe(std::uint64_t checked,
                       const char* what = "differ from ml_dtypes") const {
    std::vector<std::pair<std::tuple<std::string, std::uint64_t, std::uint64_t>, Group>> rows(
        groups_.begin(), groups_.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
    std::ostringstream s;
    s << total_ << " of " << checked << " " << what << ", in " << rows.size()
      << " groups (input class: ml_dtypes -> model, count, example inputs):\n";
    int shown = 0;
    for (const auto& [key, g] : rows) {
      if (++shown > 40) {
        s << "  ... " << rows.size() - 40 << " more groups\n";
        break;
      }
      s << "  " << std::get<0>(key) << ": ml_dtypes " << Hex(std::get<1>(key)) << " model "
        << Hex(std::get<2>(key)) << "  x" << g.count << "  e.g.";
      for (std::uint64_t in : g.examples) s << " " << Hex(in);
      s << "\n";
    }
    return s.str();
  }

 private:
  struct Group {
    std::uint64_t count = 0;
    std::vector<std::uint64_t> examples;
  };
  std::uint64_t total_ = 0;
  std::map<std::tuple<std::string, std::uint64_t, std::uint64_t>, Group> groups_;
};

// ---------------------------------------------------------------------------
// Decode: every code -> FP32 bits.

class MlDtypesDecode : public ::testing::TestWithParam<const char*> {};

TEST_P(MlDtypesDecode, EveryCodeToFp32) {
  const FormatSpec& spec = SpecOf(GetParam());
  const ProfileId profile = MlDtypesProfile();
  Dump dump;
  const std::string error = ReadDump("decode_" + DumpName(GetParam()) + ".bin", &dump);
  ASSERT_EQ(error, "");
  ASSERT_EQ(dump.inputs, ExpectedInputs(spec)) << "the dump does not hold every code";

  // ProfileDecodeToF32Bits is the profile's exact decode (profiles.h: it
  // applies what DecodeOptions alone cannot say, e.g. the sign ml_dtypes reads
  // off the single NaN code of FNUZ and E8M0).
  Mismatches mismatches;
  std::uint64_t unsupported = 0;
  for (std::size_t i = 0; i < dump.inputs.size(); ++i) {
    std::uint32_t got = 0;
    if (!ProfileDecodeToF32Bits(profile, spec, dump.inputs[i], &got)) {
      ++unsupported;
      continue;
    }
    if (got != dump.outputs[i]) {
      mismatches.Add(InputClass(spec, dump.inputs[i]), dump.inputs[i], dump.outputs[i], got);
    }
  }
  EXPECT_EQ(unsupported, 0u) << "the ml_dtypes profile cannot decode " << unsupported
                             << " codes of " << GetParam() << ", which ml_dtypes decodes";
  EXPECT_EQ(mismatches.total(), 0u) << mismatches.Describe(dump.inputs.size() - unsupported);
}

INSTANTIATE_TEST_SUITE_P(MlDtypes, MlDtypesDecode, ::testing::ValuesIn(MlDtypesFormats()),
                         [](const auto& info) { return std::string(info.param); });

// ---------------------------------------------------------------------------
// Encode: every FP16 / BF16 input and the FP32 sample -> code.

struct EncodeCase {
  std::string src;
  std::string dst;
};

std::vector<EncodeCase> EncodeCases() {
  std::vector<EncodeCase> cases;
  for (const Source& source : kSources) {
    const std::string src = source.lowbit_name;
    for (const char* dst : MlDtypesFormats()) {
      if (src != dst) cases.push_back({src, dst});
    }
    if (src != "fp16") cases.push_back({src, "fp16"});
  }
  return cases;
}

// Readable ctest names ("... GetParam() = fp32 -> e4m3").
void PrintTo(const EncodeCase& c, std::ostream* os) { *os << c.src << " -> " << c.dst; }

class MlDtypesEncode : public ::testing::TestWithParam<EncodeCase> {};

TEST_P(MlDtypesEncode, MatchesAstype) {
  const EncodeCase& c = GetParam();
  const FormatSpec& src = SpecOf(c.src);
  const FormatSpec& dst = SpecOf(c.dst);
  const ProfileId profile = MlDtypesProfile();
  Dump dump;
  const std::string error =
      ReadDump("encode_" + DumpName(c.src) + "_to_" + DumpName(c.dst) + ".bin", &dump);
  ASSERT_EQ(error, "");
  ASSERT_EQ(dump.inputs, ExpectedInputs(src)) << "the dump does not hold the expected inputs";

  // numpy/ml_dtypes astype rounds floats to nearest even and truncates toward
  // zero into integers (docs/formats-reference.md §8.1).
  const RoundingMode mode = dst.IsFloat() ? RoundingMode::kNearestEven : RoundingMode::kTowardZero;
  Mismatches mismatches;
  Mismatches refused;  // inputs the profile has no result for
  std::uint64_t refused_allowed = 0;
  for (std::size_t i = 0; i < dump.inputs.size(); ++i) {
    const std::string input_class = InputClass(src, dump.inputs[i]);
    EncodeResult result;
    if (!ProfileEncode(profile, src, dump.inputs[i], dst, mode, &result)) {
      // C++ leaves static_cast of NaN/Inf to an integer undefined, and the
      // profile declines those inputs into int4/uint4 (profiles/ml_dtypes.h);
      // every other input must have a result.
      const bool undefined_in_cpp = !dst.IsFloat() && (input_class.rfind("NaN", 0) == 0 ||
                                                       input_class.rfind("Inf", 0) == 0);
      if (undefined_in_cpp) {
        ++refused_allowed;
      } else {
        refused.Add(input_class, dump.inputs[i], 0, 0);
      }
      continue;
    }
    if (result.code != dump.outputs[i]) {
      mismatches.Add(input_class, dump.inputs[i], dump.outputs[i], result.code);
    }
  }
  const std::uint64_t checked = dump.inputs.size() - refused.total() - refused_allowed;
  if (checked == 0 && c.dst == "fp16") {
    // FP16 is numpy's type (fp32 -> fp16 is numpy's cast); a profile may leave
    // it out, and then this case is reported as skipped, not passed.
    GTEST_SKIP() << "the ml_dtypes profile does not model " << c.src << " -> fp16";
  }
  EXPECT_EQ(refused.total(), 0u)
      << "the ml_dtypes profile has no result for inputs that ml_dtypes converts ("
      << c.src << " -> " << c.dst << "): " << refused.Describe(dump.inputs.size(), "have no result (grouped by input class only)");
  EXPECT_EQ(mismatches.total(), 0u) << mismatches.Describe(checked);
  if (refused_allowed) {
    std::printf("%s -> %s: %llu NaN/Inf inputs not compared (undefined in C++)\n", c.src.c_str(),
                c.dst.c_str(), static_cast<unsigned long long>(refused_allowed));
  }
}

INSTANTIATE_TEST_SUITE_P(MlDtypes, MlDtypesEncode, ::testing::ValuesIn(EncodeCases()),
                         [](const auto& info) { return info.param.src + "_to_" + info.param.dst; });

// ---------------------------------------------------------------------------
// The list itself: every type the installed ml_dtypes has is either a lowbit
// format (and then compared above) or one lowbit does not model yet, named
// here so that a type a newer ml_dtypes adds shows up as a failure instead of
// going unnoticed. A lowbit format that names an ml_dtypes type the dump does
// not hold fails too (the name would be misspelt).

// ml_dtypes 0.6 types that no format_list.h row names (docs/adding-a-format.md
// says how to add one). Entries that become lowbit formats are harmless here.
const char* const kNotModelled[] = {"float8_e4m3b11fnuz", "int1", "int2", "uint1", "uint2"};

TEST(MlDtypesTypes, EveryTypeIsModelledOrKnownMissing) {
  std::ifstream in(DumpDir() + "/types.txt");
  ASSERT_TRUE(in) << "cannot open " << DumpDir()
                  << "/types.txt: the ctest fixture ml_dtypes_dump did not run";
  std::set<std::string> dumped;
  std::string name;
  int bits = 0;
  while (in >> name >> bits) {
    dumped.insert(name);
    FormatId id{};
    if (FindFormat(name, &id) && Spec(id).ml_dtypes_name != nullptr &&
        name == Spec(id).ml_dtypes_name) {
      EXPECT_EQ(Spec(id).total_bits, bits) << name << ": bits of a code differ from ml_dtypes";
      continue;
    }
    EXPECT_NE(std::find_if(std::begin(kNotModelled), std::end(kNotModelled),
                           [&](const char* n) { return name == n; }),
              std::end(kNotModelled))
        << "ml_dtypes has a type " << name
        << " that no format_list.h row names: add the format (docs/adding-a-format.md) or "
           "list it in kNotModelled";
  }
  EXPECT_GE(dumped.size(), 10u) << "types.txt is too short to be the dump of ml_dtypes 0.6";
  for (FormatId id : kAllFormats) {
    const char* ml_name = Spec(id).ml_dtypes_name;
    if (ml_name == nullptr) continue;
    EXPECT_EQ(dumped.count(ml_name), 1u)
        << Spec(id).name << " names ml_dtypes." << ml_name << ", which ml_dtypes does not have";
  }
}

}  // namespace
}  // namespace lowbit
