// `lowbit mma INSTRUCTION --a A0,A1,... --b B0,B1,... [--c C]`: one output
// element of one Hopper tensor-core instruction, D = sum_k a[k] * b[k] + C,
// explained step by step (docs/tensor-cores.md "One fused step"): each
// product's exact value and exponent e, e_max and the aligned grid
// 2^(e_max - F), each term truncated to the grid with the exact part the
// truncation dropped, the exact sum, the rounding into the output format,
// and D's code and value. `lowbit mma --list` prints every instruction with
// its parameters.
//
// Every number of the arithmetic comes from the model's own trace
// (formats/include/lowbit/formats/matmul/tensor_core.h FusedDotTrace): this
// file decodes the operands with DecodeMultiplicand, runs the steps with
// FusedDotStep in the order the instruction's lowering gives
// (TensorCoreInstruction::KOfStepProduct), and renders the trace. It computes
// only what the trace does not hold and a reader needs to see: the exact
// product of two decoded operands, and exact differences (what truncation
// dropped, what the final rounding changed). The final D is compared with
// matmul::TensorCoreDot, so the explanation cannot drift from the model.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/multiprecision/cpp_int.hpp>

#include "commands.h"
#include "lowbit/check/text.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/round_pack.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/formats/unpacked.h"
#include "lowbit/formats/user_word.h"
#include "parse.h"
#include "value_parse.h"
#include "value_text.h"

namespace lowbit::tools {
namespace {

using boost::multiprecision::cpp_int;
using matmul::FusedDotTrace;
using matmul::TensorCoreTerm;
using matmul::TermKind;

struct MmaArgs {
  std::string instruction;
  std::optional<std::string> a;  // unset: not given (an empty word is an error)
  std::optional<std::string> b;
  std::optional<std::string> c;  // unset: +0
  bool codes = false;
  bool json = false;
  bool list = false;
};

// ---- the instruction's words ------------------------------------------------

// The dot-separated parts of lowbit's name: kind, shape, output, A, B
// ("wgmma", "m64nNk32", "f32", "e4m3", "e4m3").
std::vector<std::string> NameParts(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = name.find('.', begin);
    parts.push_back(name.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin));
    if (dot == std::string::npos) return parts;
    begin = dot + 1;
  }
}

std::string AllNames() {
  std::string names;
  for (const TensorCoreInstruction& inst : kTensorCoreInstructions) {
    names += std::string(names.empty() ? "" : ", ") + inst.name;
  }
  return names;
}

// The instruction named `name`. An unknown name whose kind and shape exist
// ("mma.m16n8k16.f32.e4m3.e4m3") is a type combination that shape lacks: the
// error names the combinations it has.
const TensorCoreInstruction& FindInstruction(const std::string& name) {
  TensorCoreId id{};
  if (FindTensorCoreInstruction(name, &id)) return Instruction(id);
  const std::vector<std::string> parts = NameParts(name);
  std::string types;
  if (parts.size() >= 2) {
    const std::string shape = parts[0] + "." + parts[1] + ".";
    for (const TensorCoreInstruction& inst : kTensorCoreInstructions) {
      const std::string other = inst.name;
      if (other.rfind(shape, 0) == 0) types += std::string(types.empty() ? "" : ", ") + other.substr(shape.size());
    }
    if (!types.empty()) {
      throw CommandError("instruction " + parts[0] + "." + parts[1] + " has no types " +
                         QuoteUserWord(name.substr(shape.size())) + " (it has: " + types + ")");
    }
  }
  throw CommandError("unknown instruction " + QuoteUserWord(name) + " (known: " + AllNames() +
                     "; lowbit mma --list shows their parameters)");
}

// The type words of an operand as the name spells them ("tf32", "e4m3").
std::string OperandTypeName(const TensorCoreInstruction& inst, bool is_a) {
  const std::vector<std::string> parts = NameParts(inst.name);
  return parts.size() == 5 ? parts[is_a ? 3 : 4] : (is_a ? inst.a : inst.b).code_format.name;
}

const char* RoundingText(const TensorCoreArithmetic& arith) {
  switch (arith.rounding) {
    case FusedSumRounding::kTruncate: return "truncated toward zero";
    case FusedSumRounding::kNearestEven: return "rounded to nearest even";
    case FusedSumRounding::kWrapInteger: return "exact, wrapped modulo 2^32";
  }
  return "?";
}

// "truncated toward zero to 14 significant bits (the low 10 bits of the fp32
// code are zero)" and the like: step 6 of the instruction's datapath.
std::string OutputRuleText(const TensorCoreArithmetic& arith) {
  const FormatSpec& acc = arith.accumulator;
  if (arith.rounding == FusedSumRounding::kWrapInteger) return std::string("exact sum wrapped modulo 2^32 into ") + acc.name;
  std::string text = std::string(RoundingText(arith)) + " to " + std::to_string(arith.kept_significand_bits) +
                     " significant bits of " + acc.name;
  const int cut = acc.mantissa_bits + 1 - arith.kept_significand_bits;
  if (cut > 0) text += " (the low " + std::to_string(cut) + " bits of the " + acc.name + " code are zero)";
  return text;
}

// ---- lowbit mma --list ---------------------------------------------------------

std::string OperandTypeText(const TensorCoreInstruction& inst, bool is_a) {
  const TensorCoreOperand& op = is_a ? inst.a : inst.b;
  std::string text = OperandTypeName(inst, is_a);
  if (op.ignored_low_bits > 0) {
    text += " (" + std::string(op.code_format.name) + " code, low " + std::to_string(op.ignored_low_bits) +
            " bits not read)";
  }
  if (op.widened_to_fp16) text += " (as fp16)";
  return text;
}

void ListInstructions() {
  for (const TensorCoreInstruction& inst : kTensorCoreInstructions) {
    const TensorCoreArithmetic& arith = inst.arithmetic;
    const std::string n = inst.kind == TensorCoreInstructionKind::kWgmma ? "8..256 step 8" : std::to_string(inst.n);
    std::printf("%s\n", inst.name);
    std::printf("  ptx          %s\n", inst.ptx);
    std::printf("  shape        m %d, n %s, k %d\n", inst.m, n.c_str(), inst.k);
    std::printf("  operands     a %s, b %s, c/d %s\n", OperandTypeText(inst, true).c_str(),
                OperandTypeText(inst, false).c_str(), arith.accumulator.name);
    if (arith.rounding == FusedSumRounding::kWrapInteger) {
      std::printf("  arithmetic   %s: %d exact products per step, %s\n", arith.name, arith.products_per_step,
                  OutputRuleText(arith).c_str());
    } else {
      std::printf("  arithmetic   %s: L = %d products per step, F = %d, zero terms at 2^%d, %s, NaN %s\n",
                  arith.name, arith.products_per_step, arith.aligned_fraction_bits, arith.zero_term_exponent,
                  OutputRuleText(arith).c_str(), Hex(arith.nan_code).c_str());
    }
    std::printf("  steps        %d%s%s\n", inst.Steps(),
                inst.StepKRun() != arith.products_per_step
                    ? (", runs of " + std::to_string(inst.StepKRun()) + " consecutive k per step").c_str()
                    : "",
                inst.lowering.c_added_after_steps ? ", from +0; C added after them (nearest even)" : "");
  }
}

// ---- reading the operands ----------------------------------------------------

std::string CodeText(const FormatSpec& format, std::uint32_t code) {
  return Hex(code) + " (" + ValueText(format, code) + ")";
}

std::vector<std::string> SplitList(const std::string& text, const std::string& option) {
  if (text.empty()) throw CommandError(option + " is empty (give comma-separated values)");
  std::vector<std::string> words;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = text.find(',', begin);
    std::string word = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (word.find_first_not_of(" \t") == std::string::npos) {
      throw CommandError(option + ": value " + std::to_string(words.size()) + " is empty in " + QuoteUserWord(text));
    }
    words.push_back(std::move(word));
    if (comma == std::string::npos) return words;
    begin = comma + 1;
  }
}

// One operand word as a code of `format`: a value, rounded to nearest even
// onto the type's values with a note on stderr when it is not one of them
// (as `lowbit encode` notes its input rounding), or with --codes a code. A
// value out of the type's range, or one the type has no code for (NaN in
// int8, Inf in e4m3), is an error. `ignored_low_bits` (TF32): the values
// are those of the code format with that many fewer mantissa bits.
std::uint32_t OperandCode(const std::string& what, const std::string& word, const FormatSpec& format,
                          const std::string& type_name, int ignored_low_bits, bool codes) {
  if (codes) {
    try {
      return static_cast<std::uint32_t>(ParseCode(format, word));
    } catch (const CommandError& e) {
      throw CommandError(what + ": " + e.what());
    }
  }
  Unpacked value;
  try {
    value = ParseExactValue(word);
  } catch (const CommandError& e) {
    throw CommandError(what + ": " + e.what());
  }
  FormatSpec grid = format;
  grid.mantissa_bits -= ignored_low_bits;
  grid.total_bits -= ignored_low_bits;
  const EncodeResult r = RoundPack(grid, value, EncodeOptions{});
  const std::string shown = what + " = " + QuoteUserWord(word);
  if (r.flags & kFlagInvalid) throw CommandError(shown + ": " + type_name + " has no code for it");
  if (r.flags & kFlagOverflow) {
    throw CommandError(shown + " is out of range for " + type_name + " (largest finite value " +
                       ExactDecimal(grid, grid.MaxFiniteCode()) + ")");
  }
  const auto code = static_cast<std::uint32_t>(r.code << ignored_low_bits);
  if (r.flags & kFlagInexact) {
    std::fprintf(stderr, "note: %s is not exactly a %s value; using the nearest (ties to even), %s\n", shown.c_str(),
                 type_name.c_str(), CodeText(format, code).c_str());
  }
  return code;
}

std::vector<std::uint32_t> OperandCodes(const TensorCoreInstruction& inst, bool is_a, const std::string& text,
                                        bool codes) {
  const std::string option = is_a ? "--a" : "--b";
  const std::vector<std::string> words = SplitList(text, option);
  const std::string type_name = OperandTypeName(inst, is_a);
  if (static_cast<int>(words.size()) != inst.k) {
    throw CommandError(option + " has " + std::to_string(words.size()) + " value" + (words.size() == 1 ? "" : "s") +
                       "; " + inst.name + " takes k = " + std::to_string(inst.k) + " " + type_name +
                       (codes ? " codes" : " values"));
  }
  const TensorCoreOperand& op = is_a ? inst.a : inst.b;
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    out.push_back(OperandCode(std::string(is_a ? "a" : "b") + "[" + std::to_string(i) + "]", words[i],
                              op.code_format, type_name, op.ignored_low_bits, codes));
  }
  return out;
}

// ---- exact values for the rendering --------------------------------------------

// significand * 2^exponent, exactly.
struct Dyadic {
  cpp_int significand = 0;
  int exponent = 0;
};

Dyadic Minus(const Dyadic& x, const Dyadic& y) {
  const int low = x.exponent < y.exponent ? x.exponent : y.exponent;
  Dyadic d;
  d.significand = (x.significand << (x.exponent - low)) - (y.significand << (y.exponent - low));
  d.exponent = low;
  return d;
}

Unpacked UnpackedOf(const Dyadic& x) {
  Unpacked u;
  if (x.significand == 0) return u;
  cpp_int magnitude = x.significand < 0 ? cpp_int(-x.significand) : x.significand;
  int exponent = x.exponent;
  const unsigned zeros = boost::multiprecision::lsb(magnitude);
  magnitude >>= zeros;
  exponent += static_cast<int>(zeros);
  if (boost::multiprecision::msb(magnitude) >= 64) throw std::logic_error("an exact value past 64 bits");
  u.value_class = ValueClass::kFinite;
  u.negative = x.significand < 0;
  u.significand = static_cast<std::uint64_t>(magnitude);
  u.exponent = exponent;
  return u;
}

std::string Text(const Dyadic& x) { return ValueText(UnpackedOf(x), false); }

// A finite code's value as a Dyadic (Unpack: significand * 2^exponent).
Dyadic DyadicOfCode(const FormatSpec& format, std::uint32_t code) {
  const Unpacked u = Unpack(format, code);
  Dyadic d;
  if (u.value_class != ValueClass::kFinite) return d;
  d.significand = u.significand;
  if (u.negative) d.significand = -d.significand;
  d.exponent = u.exponent;
  return d;
}

// A decoded multiplicand's value, and the exact product of two
// (TensorCoreTerm: significand * 2^(exponent - fraction_bits)).
Dyadic Product(const TensorCoreTerm& a, int fraction_a, const TensorCoreTerm& b, int fraction_b) {
  Dyadic d;
  d.significand = cpp_int(a.significand) * b.significand;
  d.exponent = a.exponent + b.exponent - fraction_a - fraction_b;
  return d;
}

Dyadic Units(std::int64_t units, int unit_exponent) {
  Dyadic d;
  d.significand = units;
  d.exponent = unit_exponent;
  return d;
}

// ---- running the model, step by step ---------------------------------------------

struct StepRun {
  std::vector<int> k;                      // the k of each product, in step order
  std::vector<TensorCoreTerm> a, b;        // decoded (DecodeMultiplicand)
  std::uint32_t c_in = 0;                  // the accumulator the step starts from
  FusedDotTrace trace;
};

struct MmaRun {
  const TensorCoreInstruction* inst = nullptr;
  std::vector<std::uint32_t> a, b;
  std::uint32_t c = 0;
  int fraction_a = 0, fraction_b = 0;
  std::vector<StepRun> steps;
  std::uint32_t d = 0;
};

// The steps as TensorCoreDot runs them (the lowering's k order, C entering
// the first step or added after the last), with TensorCoreDot's traces.
MmaRun RunTraced(const TensorCoreInstruction& inst, std::vector<std::uint32_t> a, std::vector<std::uint32_t> b,
                 std::uint32_t c) {
  MmaRun run;
  run.inst = &inst;
  run.a = std::move(a);
  run.b = std::move(b);
  run.c = c;
  run.fraction_a = matmul::DatapathFormat(inst.a).mantissa_bits;
  run.fraction_b = matmul::DatapathFormat(inst.b).mantissa_bits;
  // The model's own walk; the decoded terms of each step are redrawn only to
  // render its products.
  std::vector<matmul::FusedDotTrace> traces(static_cast<std::size_t>(inst.Steps()));
  run.d = matmul::TensorCoreDot(inst, run.a.data(), run.b.data(), c, traces.data());
  const int count = inst.arithmetic.products_per_step;
  for (int s = 0; s < inst.Steps(); ++s) {
    StepRun step;
    for (int i = 0; i < count; ++i) {
      const int k = inst.KOfStepProduct(s, i);
      step.k.push_back(k);
      step.a.push_back(matmul::DecodeMultiplicand(inst.a, run.a[static_cast<std::size_t>(k)]));
      step.b.push_back(matmul::DecodeMultiplicand(inst.b, run.b[static_cast<std::size_t>(k)]));
    }
    step.c_in = traces[static_cast<std::size_t>(s)].accumulator;
    step.trace = traces[static_cast<std::size_t>(s)];
    run.steps.push_back(std::move(step));
  }
  return run;
}

// One term of a traced floating-point step, rendered: its exact value, its
// aligned value and what truncation dropped (exact), cross-checked against
// the trace's own truncated flag.
struct TermView {
  Dyadic value;
  Dyadic aligned;
  Dyadic dropped;
};

TermView ViewTerm(const MmaRun& run, const StepRun& step, int i) {
  const FusedDotTrace& t = step.trace;
  const int count = run.inst->arithmetic.products_per_step;
  TermView v;
  if (i < count) {
    v.value = Product(step.a[static_cast<std::size_t>(i)], run.fraction_a, step.b[static_cast<std::size_t>(i)],
                      run.fraction_b);
  } else {
    v.value = DyadicOfCode(run.inst->arithmetic.accumulator, step.c_in);
  }
  v.aligned = Units(t.aligned[i], t.unit_exponent);
  v.dropped = Minus(v.value, v.aligned);
  if ((v.dropped.significand != 0) != t.truncated[i]) {
    throw std::logic_error("term " + std::to_string(i) + ": the trace's truncation flag disagrees with its value");
  }
  return v;
}

// A multiplicand code as the datapath reads it: TF32 codes with bits in the
// ignored low bits say so and show the value read.
std::uint32_t ReadBits(const TensorCoreOperand& op, std::uint32_t code) {
  return code & ~static_cast<std::uint32_t>((std::uint64_t{1} << op.ignored_low_bits) - 1);
}

std::string OperandText(const TensorCoreOperand& op, std::uint32_t code) {
  const std::uint32_t read = ReadBits(op, code);
  if (read == code) return CodeText(op.code_format, code);
  return Hex(code) + " (read as " + ValueText(op.code_format, read) + ": the low " +
         std::to_string(op.ignored_low_bits) + " bits are not read)";
}

// ---- text ---------------------------------------------------------------------

void PrintHeader(const MmaRun& run) {
  const TensorCoreInstruction& inst = *run.inst;
  const TensorCoreArithmetic& arith = inst.arithmetic;
  std::printf("%s (%s): D = sum of a[k] * b[k] for k < %d, plus C\n", inst.name, inst.ptx, inst.k);
  if (arith.rounding == FusedSumRounding::kWrapInteger) {
    std::printf("datapath %s: %d step of %d products, %s\n", arith.name, inst.Steps(), arith.products_per_step,
                OutputRuleText(arith).c_str());
  } else {
    std::printf("datapath %s: %d step%s of L = %d products, F = %d fraction bits below e_max, %s\n", arith.name,
                inst.Steps(), inst.Steps() == 1 ? "" : "s", arith.products_per_step, arith.aligned_fraction_bits,
                OutputRuleText(arith).c_str());
  }
  for (bool is_a : {true, false}) {
    const TensorCoreOperand& op = is_a ? inst.a : inst.b;
    if (op.widened_to_fp16) {
      std::printf("%s: %s codes, converted exactly to fp16 first (ptxas lowers FP8 mma.sync on sm_90 to FP16 MMAs)\n", is_a ? "a" : "b",
                  OperandTypeName(inst, is_a).c_str());
    }
    if (op.ignored_low_bits > 0) {
      std::printf("%s: %s codes, the low %d bits of each are not read\n", is_a ? "a" : "b",
                  OperandTypeName(inst, is_a).c_str(), op.ignored_low_bits);
    }
  }
  std::printf("C = %s %s\n", arith.accumulator.name, CodeText(arith.accumulator, run.c).c_str());
}

// "0..31", "0..1,4..5,8..9": runs of consecutive k as ranges.
std::string KRanges(const std::vector<int>& ks) {
  std::string text;
  for (std::size_t i = 0; i < ks.size();) {
    std::size_t j = i;
    while (j + 1 < ks.size() && ks[j + 1] == ks[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(ks[i]) + (j > i ? ".." + std::to_string(ks[j]) : "");
    i = j + 1;
  }
  return text;
}

std::string KList(const std::vector<int>& ks) {
  std::string text;
  for (int k : ks) text += (text.empty() ? "" : ", ") + std::to_string(k);
  return text;
}

void PrintIntegerStep(const MmaRun& run, const StepRun& step) {
  const TensorCoreInstruction& inst = *run.inst;
  const FusedDotTrace& t = step.trace;
  const int count = inst.arithmetic.products_per_step;
  std::printf("  products, exact:\n");
  for (int i = 0; i < count; ++i) {
    const int k = step.k[static_cast<std::size_t>(i)];
    std::printf("    k=%-3d a %s * b %s = %lld\n", k,
                OperandText(inst.a, run.a[static_cast<std::size_t>(k)]).c_str(),
                OperandText(inst.b, run.b[static_cast<std::size_t>(k)]).c_str(),
                static_cast<long long>(t.aligned[i]));
  }
  std::printf("    C     %lld\n", static_cast<long long>(t.aligned[count]));
  std::printf("  exact sum = %lld\n", static_cast<long long>(t.sum));
  std::printf("  wrapped modulo 2^32 into %s: %s\n", inst.arithmetic.accumulator.name,
              CodeText(inst.arithmetic.accumulator, t.result).c_str());
}

void PrintFloatStep(const MmaRun& run, const StepRun& step) {
  const TensorCoreInstruction& inst = *run.inst;
  const TensorCoreArithmetic& arith = inst.arithmetic;
  const FormatSpec& acc = arith.accumulator;
  const FusedDotTrace& t = step.trace;
  const int count = arith.products_per_step;
  const auto operands = [&](int i) {
    const int k = step.k[static_cast<std::size_t>(i)];
    char line[64];
    std::snprintf(line, sizeof line, "    k=%-3d ", k);
    return std::string(line) + "a " + OperandText(inst.a, run.a[static_cast<std::size_t>(k)]) +
           " * b " + OperandText(inst.b, run.b[static_cast<std::size_t>(k)]);
  };
  if (t.special) {
    std::printf("  operands:\n");
    for (int i = 0; i < count; ++i) std::printf("%s\n", operands(i).c_str());
    std::printf("    C     %s\n", CodeText(acc, step.c_in).c_str());
    std::printf("  7. a NaN or an infinity decides: a NaN, 0 * inf or inf - inf give the datapath's NaN %s, "
                "otherwise the infinity: %s\n",
                Hex(arith.nan_code).c_str(), CodeText(acc, t.result).c_str());
    return;
  }
  std::printf("  1-2. terms, exact, with their exponent e (a zero term has e = %d):\n", arith.zero_term_exponent);
  std::vector<TermView> views;
  for (int i = 0; i <= count; ++i) views.push_back(ViewTerm(run, step, i));
  for (int i = 0; i < count; ++i) {
    std::printf("%s = %s  e=%d\n", operands(i).c_str(), Text(views[static_cast<std::size_t>(i)].value).c_str(),
                t.exponent[i]);
  }
  std::printf("    C     %s  e=%d\n", CodeText(acc, step.c_in).c_str(), t.exponent[count]);
  std::printf("  3. e_max = %d; grid 2^(e_max - F) = 2^(%d - %d) = 2^%d\n", t.max_exponent, t.max_exponent,
              arith.aligned_fraction_bits, t.unit_exponent);
  std::printf("  4. each term truncated toward zero to a multiple of 2^%d:\n", t.unit_exponent);
  for (int i = 0; i <= count; ++i) {
    const TermView& v = views[static_cast<std::size_t>(i)];
    const std::string label = i < count ? "k=" + std::to_string(step.k[static_cast<std::size_t>(i)]) : "C";
    std::printf("    %-6s %s = %lld units, dropped %s\n", label.c_str(), Text(v.aligned).c_str(),
                static_cast<long long>(t.aligned[i]), Text(v.dropped).c_str());
  }
  const Dyadic sum = Units(t.sum, t.unit_exponent);
  std::printf("  5. exact sum = %lld units = %s\n", static_cast<long long>(t.sum), Text(sum).c_str());
  std::printf("  6. %s: %s", OutputRuleText(arith).c_str(), CodeText(acc, t.result).c_str());
  const Unpacked d = Unpack(acc, t.result);
  if (t.sum == 0) {
    std::printf(" (a zero sum is +0)\n");
  } else if (d.value_class == ValueClass::kInf) {
    std::printf(" (7. the magnitude reaches 2^%d: inf)\n", acc.MaxFiniteExponentField() - acc.bias + 1);
  } else {
    std::printf(", D - sum = %s\n", Text(Minus(DyadicOfCode(acc, t.result), sum)).c_str());
  }
}

void PrintText(const MmaRun& run) {
  const TensorCoreInstruction& inst = *run.inst;
  const TensorCoreArithmetic& arith = inst.arithmetic;
  PrintHeader(run);
  for (std::size_t s = 0; s < run.steps.size(); ++s) {
    const StepRun& step = run.steps[s];
    std::printf("step %zu of %zu (k = %s), accumulator in = %s\n", s + 1, run.steps.size(), KRanges(step.k).c_str(),
                CodeText(arith.accumulator, step.c_in).c_str());
    if (arith.rounding == FusedSumRounding::kWrapInteger) {
      PrintIntegerStep(run, step);
    } else {
      PrintFloatStep(run, step);
    }
  }
  if (inst.lowering.c_added_after_steps) {
    const std::uint32_t steps_d = run.steps.back().trace.result;
    std::printf("C added after the steps: one %s addition, nearest even: %s + %s = %s\n", arith.accumulator.name,
                CodeText(arith.accumulator, steps_d).c_str(), CodeText(arith.accumulator, run.c).c_str(),
                CodeText(arith.accumulator, run.d).c_str());
  }
  std::printf("D = %s %s\n", arith.accumulator.name, CodeText(arith.accumulator, run.d).c_str());
}

// ---- JSON ---------------------------------------------------------------------

std::string Json(const std::string& text) { return check::JsonString(text); }

std::string CodeJson(const FormatSpec& format, std::uint32_t code) {
  return "{\"code\": " + Json(Hex(code)) + ", \"value\": " + Json(ExactDecimal(format, code)) + "}";
}

std::string StepJson(const MmaRun& run, const StepRun& step) {
  const TensorCoreInstruction& inst = *run.inst;
  const TensorCoreArithmetic& arith = inst.arithmetic;
  const FormatSpec& acc = arith.accumulator;
  const FusedDotTrace& t = step.trace;
  const int count = arith.products_per_step;
  const bool integer = arith.rounding == FusedSumRounding::kWrapInteger;
  std::string out = "{\"k\": [" + KList(step.k) + "], \"accumulator_in\": " + CodeJson(acc, step.c_in);
  out += std::string(", \"special\": ") + (t.special ? "true" : "false");
  if (!t.special) {
    if (!integer) {
      out += ", \"e_max\": " + std::to_string(t.max_exponent) + ", \"grid_exponent\": " + std::to_string(t.unit_exponent);
    }
    out += ", \"terms\": [";
    for (int i = 0; i <= count; ++i) {
      out += i == 0 ? "" : ", ";
      out += "{\"k\": " + (i < count ? std::to_string(step.k[static_cast<std::size_t>(i)]) : std::string("\"C\""));
      if (integer) {
        out += ", \"value\": " + Json(std::to_string(t.aligned[i])) + "}";
        continue;
      }
      const TermView v = ViewTerm(run, step, i);
      out += ", \"value\": " + Json(Text(v.value)) + ", \"e\": " + std::to_string(t.exponent[i]) +
             ", \"aligned_units\": " + std::to_string(t.aligned[i]) + ", \"aligned\": " + Json(Text(v.aligned)) +
             ", \"dropped\": " + Json(Text(v.dropped)) + ", \"truncated\": " + (t.truncated[i] ? "true" : "false") +
             "}";
    }
    out += "], \"sum\": " + Json(integer ? std::to_string(t.sum) : Text(Units(t.sum, t.unit_exponent)));
    if (!integer) out += ", \"sum_units\": " + std::to_string(t.sum);
  }
  out += ", \"result\": " + CodeJson(acc, t.result) + "}";
  return out;
}

void PrintJson(const MmaRun& run) {
  const TensorCoreInstruction& inst = *run.inst;
  const TensorCoreArithmetic& arith = inst.arithmetic;
  std::string out = "{\"instruction\": " + Json(inst.name) + ", \"ptx\": " + Json(inst.ptx) +
                    ", \"k\": " + std::to_string(inst.k) + ", \"datapath\": " + Json(arith.name);
  if (arith.rounding != FusedSumRounding::kWrapInteger) {
    out += ", \"products_per_step\": " + std::to_string(arith.products_per_step) +
           ", \"aligned_fraction_bits\": " + std::to_string(arith.aligned_fraction_bits);
  }
  out += ", \"output_rule\": " + Json(OutputRuleText(arith));
  for (bool is_a : {true, false}) {
    const std::vector<std::uint32_t>& codes = is_a ? run.a : run.b;
    const TensorCoreOperand& op = is_a ? inst.a : inst.b;
    out += std::string(", \"") + (is_a ? "a" : "b") + "\": [";
    for (std::size_t i = 0; i < codes.size(); ++i) {
      // The value the datapath reads (TF32: without the ignored low bits).
      const std::uint32_t read = ReadBits(op, codes[i]);
      out += std::string(i == 0 ? "" : ", ") + "{\"code\": " + Json(Hex(codes[i])) +
             ", \"value\": " + Json(ExactDecimal(op.code_format, read)) +
             (read != codes[i] ? ", \"low_bits_not_read\": true}" : "}");
    }
    out += "]";
  }
  out += ", \"c\": " + CodeJson(arith.accumulator, run.c) + ", \"steps\": [";
  for (std::size_t s = 0; s < run.steps.size(); ++s) out += (s == 0 ? "" : ", ") + StepJson(run, run.steps[s]);
  out += "]";
  if (inst.lowering.c_added_after_steps) {
    out += ", \"c_added_after_steps\": {\"steps_result\": " +
           CodeJson(arith.accumulator, run.steps.back().trace.result) + ", \"rounding\": \"nearest even\"}";
  }
  out += ", \"d\": " + CodeJson(arith.accumulator, run.d) + "}\n";
  std::fputs(out.c_str(), stdout);
}

void RunMma(const MmaArgs& args) {
  if (args.list) {
    if (!args.instruction.empty()) throw CommandError("--list takes no instruction");
    ListInstructions();
    return;
  }
  if (args.instruction.empty()) throw CommandError("name an instruction (lowbit mma --list shows them)");
  const TensorCoreInstruction& inst = FindInstruction(args.instruction);
  if (!args.a || !args.b) {
    throw CommandError(std::string("give ") + (args.a ? "--b" : "--a") + ": " + inst.name + " takes k = " +
                       std::to_string(inst.k) + " values each for --a and --b");
  }
  std::vector<std::uint32_t> a = OperandCodes(inst, true, *args.a, args.codes);
  std::vector<std::uint32_t> b = OperandCodes(inst, false, *args.b, args.codes);
  const FormatSpec& acc = inst.arithmetic.accumulator;
  const std::uint32_t c = args.c ? OperandCode("c", *args.c, acc, acc.name, 0, args.codes) : 0u;
  const MmaRun run = RunTraced(inst, std::move(a), std::move(b), c);
  if (args.json) {
    PrintJson(run);
  } else {
    PrintText(run);
  }
}

}  // namespace

void AddMmaCommand(CLI::App& app) {
  auto args = std::make_shared<MmaArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mma", "Explain one output of a tensor-core instruction (Hopper mma.sync / wgmma) step by step");
  cmd->footer(
      "One output element D = sum_k a[k] * b[k] + C of the instruction, as the model computes it\n"
      "(docs/tensor-cores.md \"One fused step\"): each product exactly with its exponent e; e_max and\n"
      "the grid 2^(e_max - F); each term truncated toward zero to the grid and the exact part dropped;\n"
      "the exact sum; the rounding into the output format; D's code and value. Instructions with\n"
      "several steps (FP8 mma.sync on sm_90: two FP16 steps, C added after them) show each step.\n"
      "--a and --b take exactly k comma-separated values (or codes with --codes) of the instruction's\n"
      "A and B types; a value that is not one of the type's values is rounded to nearest even with a\n"
      "note on stderr (as encode does); one out of the type's range, or with no code in it, is an error.\n"
      "--c is in the output type (fp32, fp16 or int32). A value list starting with -inf or -nan is\n"
      "written --a=-inf,... Exit status 2 with one error line on bad input.\n"
      "Example: lowbit mma mma.m16n8k16.f32.bf16.bf16 --a 1,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0 \\\n"
      "           --b 1,0x1p-30,0,0,0,0,0,0,0,0,0,0,0,0,0,0 --c 0");
  cmd->add_option("instruction", args->instruction, "lowbit's name, e.g. wgmma.m64nNk32.f32.e4m3.e4m3 (--list)");
  cmd->add_option("--a", args->a, "The k values of A's row, comma-separated");
  cmd->add_option("--b", args->b, "The k values of B's column, comma-separated");
  cmd->add_option("--c", args->c, "The accumulator C in the output type (default +0)");
  cmd->add_flag("--codes", args->codes, "Read --a, --b and --c as codes (0x3c, 0b..., 60) instead of values");
  cmd->add_flag("--json", args->json, "The explanation as one JSON object");
  cmd->add_flag("--list", args->list, "List every instruction with its parameters");
  cmd->callback([args] { RunMma(*args); });
}

}  // namespace lowbit::tools
