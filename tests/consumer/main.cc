// A program outside lowbit that uses every library target it was given: the
// model headers always, and the oracle, registry, SIMD, CUDA and harness
// libraries when the consumer's CMakeLists found them (LOWBIT_CONSUMER_HAS_*).
// Shared by tests/consumer (installed package, find_package) and
// tests/subdirectory (add_subdirectory of the source tree). The values are
// pinned by docs/formats-reference.md §1/§4.
#include <cstdint>
#include <cstdio>
#include <string>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

#ifdef LOWBIT_CONSUMER_HAS_REFERENCE
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"
#endif
#ifdef LOWBIT_CONSUMER_HAS_REGISTRY
#include "lowbit/registry/registry.h"
#endif
#ifdef LOWBIT_CONSUMER_HAS_SIMD
#include "lowbit/simd/register.h"
#endif
#ifdef LOWBIT_CONSUMER_HAS_CUDA
#include "lowbit/cuda/register.h"
#endif
#ifdef LOWBIT_CONSUMER_HAS_CHECK
#include "lowbit/check/backends.h"
#include "lowbit/check/check.h"
#endif

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

#ifdef LOWBIT_CONSUMER_HAS_REGISTRY
// How many kernel rows of `registry` have a backend name starting with `prefix`.
int RowsOf(const lowbit::registry::Registry& registry, const std::string& prefix) {
  int rows = 0;
  for (const lowbit::registry::KernelEntry& e : registry.Entries()) rows += e.backend.rfind(prefix, 0) == 0;
  return rows;
}
#endif

}  // namespace

int main() {
  std::string used = "formats";
  static_assert(lowbit::EncodeF32(lowbit::kE4m3, 448.0f).code == 0x7E);
  Check(lowbit::EncodeF32(lowbit::kE4m3, 464.0f).code == 0x7E, "e4m3(464) == 0x7E");
  Check(lowbit::EncodeF32(lowbit::kE2m1, 5.0f).code == 0x6, "e2m1(5.0) == 0x6");
  Check(lowbit::DecodeToF32Bits(lowbit::kE8m0, 0) == 0x00400000u, "e8m0 0x00 -> 2^-127");
  lowbit::FormatId id{};
  Check(lowbit::FindFormat("float8_e5m2", &id) && id == lowbit::FormatId::kE5m2,
        "FindFormat(float8_e5m2)");
#ifdef LOWBIT_CONSUMER_HAS_REFERENCE
  // The oracle and the model agree on a tie (1.0625 = 1 + 2^-4 lies halfway
  // between the E4M3 neighbours 1 and 1.125: ties to even gives 1.0 = 0x38).
  const std::uint32_t tie = 0x3F880000u;
  const auto oracle =
      lowbit::reference::OracleEncode(lowbit::kE4m3, lowbit::reference::ExactValue(lowbit::kFp32, tie));
  Check(oracle.code == 0x38 && lowbit::EncodeF32Bits(lowbit::kE4m3, tie).code == 0x38,
        "oracle and model: e4m3(1.0625) == 0x38");
  used += " reference";
#endif
#ifdef LOWBIT_CONSUMER_HAS_REGISTRY
  lowbit::registry::Registry registry;
  lowbit::registry::RegisterScalarBackend(registry);
  Check(registry.Find(lowbit::registry::Operation::kEncodeF32, lowbit::FormatId::kE4m3, "scalar") != nullptr,
        "registry: scalar encode-f32 e4m3 row");
  used += " registry";
#ifdef LOWBIT_CONSUMER_HAS_SIMD
  lowbit::registry::RegisterSimdBackends(registry);
  Check(RowsOf(registry, "simd:") > 0, "simd: rows registered");
  used += " simd";
#endif
#ifdef LOWBIT_CONSUMER_HAS_CUDA
  // Registering needs no GPU: without one the rows are there but unavailable.
  lowbit::registry::RegisterCudaBackends(registry);
  Check(RowsOf(registry, "cuda-") > 0, "cuda: rows registered");
  used += " cuda";
#endif
#endif
#ifdef LOWBIT_CONSUMER_HAS_CHECK
  lowbit::registry::Registry all;
  lowbit::check::RegisterAllBackends(all);
  const lowbit::registry::KernelEntry* scalar =
      all.Find(lowbit::registry::Operation::kEncodeF32, lowbit::FormatId::kE2m1, "scalar");
  Check(scalar != nullptr, "backends: scalar encode-f32 e2m1 row");
  if (scalar != nullptr) {
    const lowbit::check::Row row = lowbit::check::CheckKernel(*scalar, lowbit::check::Level::kSmoke);
    Check(row.checked > 0 && row.mismatches == 0 && row.skipped.empty(),
          "check: scalar encode-f32 e2m1 against the model");
  }
  used += " backends check";
#endif
  std::printf("lowbit consumer: %s %s\n", used.c_str(), failures == 0 ? "OK" : "FAILED");
  return failures == 0 ? 0 : 1;
}
