// Writes what the pytorch-cpu, pytorch-cuda and ml_dtypes profiles give for
// the inputs pytorch_profile_check.py feeds to the real libraries: the
// class-complete FP32 sample of docs/formats-reference.md §10.1 (every high 16-bit pattern
// x low 16 bits in {0000, 0001, 7FFF, 8000, 8001, FFFF}: 393 216 values), all
// 65 536 FP16 and BF16 codes, and every code of every format for decodes.
// Uses only formats/include (the GPU machine has no RapidCheck/Highway/CLI11).
//
// Output directory layout (all little-endian uint32, 0xFFFFFFFF = the profile
// has no conversion for that input):
//   formats.txt                     one line per format of format_list.h:
//                                   "<name> <bits> <float|int> <signed 0|1>
//                                   <ml_dtypes type or ->", so that the check
//                                   knows every format without a list of its own
//   sample_fp32.bin                 the FP32 inputs
//   enc__<profile>__<src>__<dst>.bin codes for every input of <src>
//   dec__<profile>__<src>.bin        FP32 bits for every code of <src>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lowbit/formats/profiles/profiles.h"

namespace {

using lowbit::EncodeResult;
using lowbit::FormatId;
using lowbit::FormatSpec;
using lowbit::ProfileId;
using lowbit::RoundingMode;

constexpr std::uint32_t kRefused = 0xFFFFFFFFu;

bool Write(const std::string& path, const std::vector<std::uint32_t>& v) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(v.data(), sizeof(std::uint32_t), v.size(), f) == v.size();
  return std::fclose(f) == 0 && ok;
}

std::vector<std::uint32_t> Fp32Sample() {
  std::vector<std::uint32_t> v;
  const std::uint32_t low[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  for (std::uint32_t hi = 0; hi < 0x10000; ++hi) {
    for (std::uint32_t lo : low) v.push_back(hi << 16 | lo);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::vector<std::uint32_t> sample = Fp32Sample();
  std::vector<std::uint32_t> all16(0x10000);
  for (std::uint32_t i = 0; i < 0x10000; ++i) all16[i] = i;
  {
    const std::string path = dir + "/formats.txt";
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      std::perror(path.c_str());
      return 1;
    }
    for (FormatId id : lowbit::kAllFormats) {
      const FormatSpec& spec = lowbit::Spec(id);
      std::fprintf(f, "%s %d %s %d %s\n", spec.name, spec.total_bits,
                   spec.IsFloat() ? "float" : "int", spec.has_sign ? 1 : 0,
                   spec.ml_dtypes_name != nullptr ? spec.ml_dtypes_name : "-");
    }
    if (std::fclose(f) != 0) {
      std::perror(path.c_str());
      return 1;
    }
  }
  if (!Write(dir + "/sample_fp32.bin", sample)) {
    std::perror("write sample");
    return 1;
  }
  const ProfileId profiles[] = {ProfileId::kPytorchCpu, ProfileId::kPytorchCuda,
                                ProfileId::kMlDtypes};
  struct Source {
    FormatId id;
    const std::vector<std::uint32_t>* inputs;
  };
  const Source sources[] = {{FormatId::kFp32, &sample},
                            {FormatId::kFp16, &all16},
                            {FormatId::kBf16, &all16}};
  int files = 0;
  for (ProfileId p : profiles) {
    for (const Source& s : sources) {
      const FormatSpec& src = lowbit::Spec(s.id);
      for (FormatId d : lowbit::kAllFormats) {
        const FormatSpec& dst = lowbit::Spec(d);
        if (d == s.id || d == FormatId::kFp64 || d == FormatId::kFp32) continue;
        lowbit::EncodeOptions o;
        RoundingMode mode = RoundingMode::kNearestEven;
        if (!lowbit::ProfileEncodeOptions(p, dst, mode, &o)) {
          mode = RoundingMode::kTowardZero;  // ml_dtypes int4/uint4 truncate
          if (!lowbit::ProfileEncodeOptions(p, dst, mode, &o)) continue;
        }
        std::vector<std::uint32_t> out;
        bool any = false;
        for (std::uint32_t x : *s.inputs) {
          EncodeResult r;
          const bool ok = lowbit::ProfileEncode(p, src, x, dst, mode, &r);
          out.push_back(ok ? static_cast<std::uint32_t>(r.code) : kRefused);
          any = any || ok;
        }
        if (!any) continue;
        const std::string name = dir + "/enc__" + lowbit::ProfileName(p) + "__" + src.name + "__" +
                                 dst.name + ".bin";
        if (!Write(name, out)) {
          std::perror(name.c_str());
          return 1;
        }
        ++files;
      }
    }
    for (FormatId s : lowbit::kAllFormats) {
      const FormatSpec& src = lowbit::Spec(s);
      if (src.total_bits > 16) continue;
      std::vector<std::uint32_t> out;
      bool any = false;
      for (std::uint64_t c = 0; c <= src.CodeMask(); ++c) {
        std::uint32_t bits = 0;
        const bool ok = lowbit::ProfileDecodeToF32Bits(p, src, c, &bits);
        out.push_back(ok ? bits : kRefused);
        any = any || ok;
      }
      if (!any) continue;
      const std::string name = dir + "/dec__" + lowbit::ProfileName(p) + "__" + src.name + ".bin";
      if (!Write(name, out)) {
        std::perror(name.c_str());
        return 1;
      }
      ++files;
    }
  }
  std::printf("wrote %d files to %s\n", files, dir.c_str());
  return 0;
}
