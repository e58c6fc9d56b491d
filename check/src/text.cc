// The text renderer (text.h): the table and lines `lowbit verify` prints.
#include "lowbit/check/text.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "describe.h"

namespace lowbit::check {

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string StatusText(const Row& row) {
  std::string status;
  if (!row.skipped.empty()) {
    status = "SKIPPED (" + row.skipped + ")";
  } else if (row.mismatches > 0) {
    status = "MISMATCH";
  } else if (row.checked == 0) {
    status = "SKIPPED (no option set supported)";
  } else {
    status = "ok";
  }
  if (row.skipped.empty() && row.unsupported_option_sets > 0) {
    status += " (" + std::to_string(row.unsupported_option_sets) + " option sets unsupported)";
  }
  return status;
}

namespace {

std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

// "0x7e (e4m3 448)", or "0x7e (448)" without a format, or "0x7e".
std::string CodeText(std::uint64_t code, const std::string& format, const std::string& value) {
  std::string text = internal::Hex(code);
  if (!value.empty()) text += " (" + (format.empty() ? value : format + " " + value) + ")";
  return text;
}

}  // namespace

std::string RenderTable(const std::vector<Row>& rows) {
  std::size_t widths[3] = {7, 9, 6};
  for (const Row& r : rows) {
    widths[0] = std::max(widths[0], r.backend.size());
    widths[1] = std::max(widths[1], r.operation.size());
    widths[2] = std::max(widths[2], r.format.size());
  }
  const auto w = [](std::size_t x) { return static_cast<int>(x); };
  std::string out = Printf("%-*s  %-*s  %-*s  %12s  %10s  %s\n", w(widths[0]), "backend",
                           w(widths[1]), "operation", w(widths[2]), "format", "inputs",
                           "mismatches", "status");
  for (const Row& r : rows) {
    out += Printf("%-*s  %-*s  %-*s  %12llu  %10llu  %s\n", w(widths[0]), r.backend.c_str(),
                  w(widths[1]), r.operation.c_str(), w(widths[2]), r.format.c_str(),
                  static_cast<unsigned long long>(r.checked),
                  static_cast<unsigned long long>(r.mismatches), StatusText(r).c_str());
  }
  return out;
}

std::string DescribeMismatch(const Mismatch& m, const char* expected_name,
                             const char* actual_name) {
  std::string text;
  if (!m.where.empty()) text += m.where;
  if (!m.input_format.empty()) {
    text += (text.empty() ? "" : " ") + std::string("input ") +
            CodeText(m.input, m.input_format, m.input_value);
  }
  if (!m.combo.empty()) text += (text.empty() ? "" : " ") + std::string("combo ") + m.combo;
  if (m.random_bits) text += " random " + internal::Hex(*m.random_bits);
  const bool has_outputs = !m.expected_value.empty() || !m.actual_value.empty();
  if (has_outputs) {
    const std::string expected = m.expected_is_code
                                     ? CodeText(m.expected, m.output_format, m.expected_value)
                                     : m.expected_value;
    text += std::string(": ") + expected_name + " " + expected + ", " + actual_name + " " +
            CodeText(m.actual, m.output_format, m.actual_value);
    if (m.code_distance) {
      text += ", " + std::to_string(*m.code_distance) +
              (*m.code_distance == 1 ? " code apart" : " codes apart");
    }
  }
  if (!m.note.empty()) text += (has_outputs ? "; " : ": ") + m.note;
  return text;
}

std::string DescribeMismatch(const Row& row, const Mismatch& mismatch) {
  if (row.kind == RowKind::kOracle) return DescribeMismatch(mismatch, "oracle", "model");
  if (row.kind == RowKind::kTensorCore) return DescribeMismatch(mismatch, "model", "hardware");
  return DescribeMismatch(mismatch, "model", "kernel");
}

std::string RenderFirstMismatches(const std::vector<Row>& rows) {
  std::string out;
  for (const Row& r : rows) {
    if (r.mismatches == 0) continue;
    out += "first mismatch of " + r.backend + " " + r.operation + " " + r.format + ": " +
           (r.first_mismatches.empty() ? std::string("(not recorded)")
                                       : DescribeMismatch(r, r.first_mismatches.front())) +
           "\n";
  }
  return out;
}

std::string RenderSummary(const Results& results, const std::string& title) {
  return Printf("%s: %zu rows, %llu inputs checked, %llu mismatches, %zu skipped, %.1f s\n",
                title.c_str(), results.rows.size(),
                static_cast<unsigned long long>(results.checked()),
                static_cast<unsigned long long>(results.mismatches()), results.skipped_rows(),
                results.seconds);
}

}  // namespace lowbit::check
