// The model against the oracle (lowbit::reference, exact rationals, no shared
// code): every code decodes to the oracle's exact value, and encodes of the
// boundary inputs of each format agree in code and flags for every option
// set. The oracle's value grid covers float formats of at most 16 bits and
// the integers, so FP32 as a destination is a SKIPPED row.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/inputs.h"
#include "lowbit/check/progress.h"
#include "lowbit/formats/convert.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"
#include "lowbit/registry/parallel.h"

namespace lowbit::check {
namespace {

using reference::Exact;
using reference::ExactClass;
using reference::Rational;

constexpr std::uint64_t kSmokeRandom = 256;
constexpr std::uint64_t kCiRandom = 4096;
constexpr int kFp64MantissaBits = 52;

// A finite double as an exact rational, through frexp (no model code).
Rational RationalOf(double x) {
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(x), &exponent);  // [0.5, 1)
  const auto significand = static_cast<std::int64_t>(std::ldexp(fraction, kFp64MantissaBits + 1));
  Rational r = Rational(significand) * reference::PowerOfTwo(exponent - kFp64MantissaBits - 1);
  return std::signbit(x) ? Rational(-r) : r;
}

// The oracle's exact value as text: "nan", "-inf", "-0", "3/1024".
std::string ExactText(const Exact& x) {
  const char* sign = x.negative ? "-" : "";
  switch (x.value_class) {
    case ExactClass::kNan: return std::string(sign) + "nan";
    case ExactClass::kInf: return std::string(sign) + "inf";
    case ExactClass::kZero: return std::string(sign) + "0";
    case ExactClass::kFinite: break;
  }
  std::ostringstream text;
  text << x.Signed();
  return text.str();
}

// Empty when the model's FP64 decode of `code` is the oracle's value, else
// the mismatch (expected: the oracle's exact value; actual: the model's FP64).
std::optional<Mismatch> CompareDecode(const FormatSpec& spec, std::uint64_t code) {
  const Exact want = reference::ExactValue(spec, code);
  const double got = DecodeToF64(spec, code);
  std::uint64_t got_bits;
  std::memcpy(&got_bits, &got, sizeof got);
  const bool got_negative = std::signbit(got);
  ExactClass got_class = ExactClass::kFinite;
  if (std::isnan(got)) got_class = ExactClass::kNan;
  else if (std::isinf(got)) got_class = ExactClass::kInf;
  else if (got == 0) got_class = ExactClass::kZero;
  std::string why;
  if (got_class != want.value_class) {
    why = "class differs";
  } else if (got_negative != want.negative) {
    why = "sign differs";
  } else if (got_class == ExactClass::kFinite && RationalOf(got) != want.Signed()) {
    why = "value differs";
  } else if (got_class == ExactClass::kNan) {
    // DecodeOptions{} keeps the payload, MSB-aligned, quiet bit forced on.
    const std::uint64_t quiet = std::uint64_t{1} << (kFp64MantissaBits - 1);
    const std::uint64_t want_mantissa = (want.nan_payload >> (64 - kFp64MantissaBits)) | quiet;
    if ((got_bits & ((std::uint64_t{1} << kFp64MantissaBits) - 1)) != want_mantissa) {
      why = "NaN payload differs (oracle payload " + internal::Hex(want.nan_payload) + ")";
    }
  }
  if (why.empty()) return std::nullopt;
  Mismatch m;
  m.combo = "decode";
  m.input = code;
  m.input_format = spec.name;
  m.input_value = ExactText(want);
  m.expected_value = ExactText(want);
  m.expected_is_code = false;
  m.output_format = kFp64.name;
  m.actual = got_bits;
  m.actual_value = internal::ValueText(kFp64, got_bits);
  m.note = why;
  return m;
}

struct Task {
  enum Kind { kDecode, kEncode } kind;
  FormatId format;
  std::size_t row;
  const FormatSpec* input_type = nullptr;  // encodes: FP32, BF16 or FP16
};

// Strides through the 16-bit inputs: smoke 1/256, ci 1/16, full all.
std::uint64_t SixteenBitStride(Level level) {
  return level == Level::kSmoke ? 256 : level == Level::kCi ? 16 : 1;
}

class OracleChecker {
 public:
  OracleChecker(Level level, std::vector<Row>* rows) : level_(level), rows_(rows) {}

  void Run(const Task& task) {
    const FormatSpec& spec = Spec(task.format);
    Row local;
    if (task.kind == Task::kDecode) {
      for (std::uint64_t code : DecodeCodes(spec)) {
        ++local.checked;
        std::optional<Mismatch> m = CompareDecode(spec, code);
        if (m) internal::AddMismatch(&local, std::move(*m));
      }
    } else {
      const std::vector<EncodeCombo> combos = EncodeCombos(spec);
      const FormatSpec& from = *task.input_type;
      for (const std::uint64_t input : EncodeInputs(from, spec)) {
        const Exact x = reference::ExactValue(from, input);
        reference::Location location;
        if (x.value_class == ExactClass::kFinite) location = reference::Locate(spec, x.magnitude);
        for (std::size_t c = 0; c < combos.size(); ++c) {
          EncodeOptions options = combos[c].options;
          options.random_bits = RandomWord(input, static_cast<int>(c));
          const EncodeResult want = reference::Decide(spec, x, location, options);
          const EncodeResult got = Convert(from, input, spec, options);
          ++local.checked;
          if (want.code != got.code || want.flags != got.flags) {
            Mismatch m = internal::ElementMismatch(combos[c].name, from, input, spec, want.code,
                                                   got.code);
            if (options.rounding == RoundingMode::kStochastic) m.random_bits = options.random_bits;
            if (want.flags != got.flags) {
              m.note = "flags: oracle " + internal::Hex(want.flags) + ", model " +
                       internal::Hex(got.flags);
            }
            internal::AddMismatch(&local, std::move(m));
          }
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    Row& row = (*rows_)[task.row];
    row.checked += local.checked;
    row.mismatches += local.mismatches;
    for (Mismatch& m : local.first_mismatches) {
      if (row.first_mismatches.size() >= kMaxMismatchesPerRow) break;
      row.first_mismatches.push_back(std::move(m));
    }
  }

 private:
  // FP32: the boundary vectors of `dst` and pseudo-random words; BF16/FP16:
  // a stride through all 65536 inputs.
  std::vector<std::uint64_t> EncodeInputs(const FormatSpec& from, const FormatSpec& dst) const {
    std::vector<std::uint64_t> inputs;
    if (from.total_bits == 16) {
      for (std::uint64_t x = 0; x < 0x10000; x += SixteenBitStride(level_)) inputs.push_back(x);
      return inputs;
    }
    for (std::uint32_t bits : BoundaryF32(dst)) inputs.push_back(bits);
    const std::uint64_t random = level_ == Level::kSmoke ? kSmokeRandom : kCiRandom;
    for (std::uint64_t i = 0; i < random; ++i) inputs.push_back(RandomWord(i, 77));
    return inputs;
  }

  std::vector<std::uint64_t> DecodeCodes(const FormatSpec& spec) const {
    std::vector<std::uint64_t> codes;
    if (spec.total_bits <= 16) {
      for (std::uint64_t code = 0; code <= spec.CodeMask(); ++code) codes.push_back(code);
      return codes;
    }
    for (std::uint32_t bits : BoundaryF32(spec)) codes.push_back(bits);
    const std::uint64_t random = level_ == Level::kSmoke ? kSmokeRandom : kCiRandom * 16;
    for (std::uint64_t i = 0; i < random; ++i) codes.push_back(RandomWord(i, 55) & spec.CodeMask());
    return codes;
  }

  Level level_;
  std::vector<Row>* rows_;
  std::mutex mutex_;
};

Row OracleRow(const std::string& operation, const FormatSpec& spec) {
  Row row;
  row.kind = RowKind::kOracle;
  row.backend = "model-vs-oracle";
  row.operation = operation;
  row.format = spec.name;
  return row;
}

}  // namespace

bool OracleBuilt() { return true; }

std::vector<Row> CheckModelAgainstOracle(Level level, const Filter& filter, int threads,
                                         Progress* progress) {
  std::vector<Row> rows;
  std::vector<Task> tasks;
  if (!filter.Backend("oracle")) return rows;
  for (FormatId format : kAllFormats) {
    const FormatSpec& spec = Spec(format);
    if (format == FormatId::kFp64 || !filter.Format(spec)) continue;
    rows.push_back(OracleRow("decode-exact", spec));
    tasks.push_back({Task::kDecode, format, rows.size() - 1});
    const std::pair<registry::Operation, const FormatSpec*> kEncodes[] = {
        {registry::Operation::kEncodeF32, &kFp32},
        {registry::Operation::kEncodeBf16, &kBf16},
        {registry::Operation::kEncodeF16, &kFp16}};
    for (const auto& [operation, from] : kEncodes) {
      rows.push_back(OracleRow(registry::OperationName(operation), spec));
      if (spec.IsFloat() && spec.total_bits > 16) {
        rows.back().skipped = "oracle value grid covers formats of at most 16 bits";
        continue;
      }
      tasks.push_back({Task::kEncode, format, rows.size() - 1, from});
    }
  }
  // The slow encodes first, so the two threads finish together.
  std::stable_partition(tasks.begin(), tasks.end(),
                        [](const Task& t) { return t.kind == Task::kEncode; });
  if (progress) progress->Begin("model vs oracle", tasks.size());
  OracleChecker checker(level, &rows);
  // The process's pool (registry/parallel.h), not threads of its own: tasks
  // are handed out in order to whichever thread is free, as before; each
  // task writes only its own row, so the rows do not depend on the threads.
  registry::ThreadPool::Shared().ParallelFor(
      tasks.size(),
      [&](std::size_t t) {
        checker.Run(tasks[t]);
        if (progress) progress->Advance(1);
      },
      threads < 1 ? 1 : threads);
  if (progress) progress->End();
  return rows;
}

}  // namespace lowbit::check
