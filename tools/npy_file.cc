// npy_file.h: one read(2) loop (errno and the size limit in view, as
// value_file.cc does), then the .npy header parsed by hand: a Python dict
// literal with three keys.
#include "npy_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "commands.h"
#include "lowbit/formats/checked_size.h"
#include "value_file.h"

namespace lowbit::tools {
namespace {

struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) close(fd);
  }
};

std::vector<std::uint8_t> ReadWholeFile(const std::string& name, const std::string& path) {
  Descriptor file;
  std::uint64_t size = 0;
  file.fd = OpenInputFile(name, path, "an array file", &size);
  if (size > kMaxArrayFileBytes) {
    throw CommandError(name + ": " + std::to_string(size) + " bytes, more than the " +
                       std::to_string(kMaxArrayFileBytes >> 20) + " MiB lowbit check reads");
  }
  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(size));
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(file.fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw CommandError(name + ": read error after " + std::to_string(bytes.size()) + " bytes: " +
                         std::strerror(errno));
    }
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > kMaxArrayFileBytes) {
      throw CommandError(name + ": more than the " + std::to_string(kMaxArrayFileBytes >> 20) +
                         " MiB lowbit check reads");
    }
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  return bytes;
}

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

// A cursor over the header's dict literal.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  [[noreturn]] void Fail(const std::string& what) const {
    throw CommandError(name_ + ": not a .npy header lowbit reads (" + what + ") in " + QuoteUserWord(text_));
  }
  void SkipBlanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  bool Take(char c) {
    SkipBlanks();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Take(c)) Fail(std::string("expected '") + c + "'");
  }
  std::string String() {
    SkipBlanks();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) Fail("expected a quoted string");
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) Fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool Bool() {
    SkipBlanks();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    Fail("fortran_order is not True or False");
  }
  std::vector<std::size_t> Shape() {
    Expect('(');
    std::vector<std::size_t> shape;
    while (!Take(')')) {
      SkipBlanks();
      std::size_t v = 0;
      const std::size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (!CheckedMul(v, 10, &v) || !CheckedAdd(v, static_cast<std::size_t>(text_[pos_] - '0'), &v)) {
          Fail("a dimension too large");
        }
        ++pos_;
      }
      if (pos_ == start) Fail("a dimension that is not a whole number");
      shape.push_back(v);
      if (!Take(',')) {
        Expect(')');
        break;
      }
    }
    return shape;
  }
  bool AtEnd() {
    SkipBlanks();
    return pos_ == text_.size();
  }

 private:
  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

void ParseDescr(const std::string& descr, BinaryArray* a) {
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '>' && descr[0] != '|' && descr[0] != '=')) {
    throw CommandError(a->name + ": dtype " + QuoteUserWord(descr) +
                       " is not a plain type (lowbit reads float, int, uint and the ml_dtypes types)");
  }
  const char kind = descr[1];
  if (kind != 'f' && kind != 'u' && kind != 'i' && kind != 'V') {
    throw CommandError(a->name + ": dtype " + QuoteUserWord(descr) +
                       " holds neither numbers nor codes (lowbit reads float, int, uint and the ml_dtypes types)");
  }
  // The digits after the kind are the item size in bytes: a non-digit names
  // no size; a size past 64 is too large whatever its digits (the count
  // stops growing there, so '<V4294967296' cannot wrap to a small size).
  int bytes = 0;
  for (std::size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9') {
      throw CommandError(a->name + ": dtype " + QuoteUserWord(descr) + " has no size (a kind, then its bytes: <f4)");
    }
    if (bytes <= 64) bytes = bytes * 10 + (descr[i] - '0');
  }
  if (bytes > 64) {
    throw CommandError(a->name + ": dtype " + QuoteUserWord(descr) +
                       " has items too large (lowbit reads 1, 2, 4 or 8 bytes)");
  }
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
    throw CommandError(a->name + ": dtype " + QuoteUserWord(descr) + " has " + std::to_string(bytes) +
                       "-byte items (lowbit reads 1, 2, 4 or 8)");
  }
  a->kind = kind;
  a->item_bytes = bytes;
}

// The C-order position of each Fortran-order item: the array is the same
// tensor, its items were written first index fastest.
std::vector<std::uint8_t> FortranToC(const std::vector<std::uint8_t>& data, const std::vector<std::size_t>& shape,
                                     std::size_t item) {
  std::vector<std::uint8_t> out(data.size());
  const std::size_t count = data.size() / item;
  std::vector<std::size_t> index(shape.size(), 0);
  for (std::size_t f = 0; f < count; ++f) {
    std::size_t c = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) c = c * shape[d] + index[d];
    std::memcpy(out.data() + c * item, data.data() + f * item, item);
    for (std::size_t d = 0; d < shape.size(); ++d) {  // first index fastest
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

std::string ShapeText(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

BinaryArray ReadArrayFile(const std::string& option, const std::string& path) {
  BinaryArray a;
  a.name = option + " " + QuoteUserWord(path);
  std::vector<std::uint8_t> bytes = ReadWholeFile(a.name, path);
  if (bytes.size() < kMagicBytes || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0) {
    a.data = std::move(bytes);
    a.shape = {a.data.size()};
    return a;
  }
  a.npy = true;
  if (bytes.size() < 10) throw CommandError(a.name + ": a .npy file cut short inside its header");
  const int major = bytes[6];
  std::size_t header_bytes = 0;
  std::size_t offset = 0;
  if (major == 1) {
    header_bytes = static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw CommandError(a.name + ": a .npy file cut short inside its header");
    header_bytes = static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8) |
                   (static_cast<std::size_t>(bytes[10]) << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    offset = 12;
  } else {
    throw CommandError(a.name + ": .npy format version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
                       " (lowbit reads 1.0, 2.0 and 3.0)");
  }
  if (header_bytes > bytes.size() - offset) throw CommandError(a.name + ": a .npy file cut short inside its header");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + offset), header_bytes);
  HeaderParser p(header, a.name);
  p.Expect('{');
  bool have_descr = false, have_order = false, have_shape = false;
  while (!p.Take('}')) {
    const std::string key = p.String();
    p.Expect(':');
    if (key == "descr") {
      a.descr = p.String();  // a list here is a structured dtype: String() refuses it
      have_descr = true;
    } else if (key == "fortran_order") {
      a.fortran_order = p.Bool();
      have_order = true;
    } else if (key == "shape") {
      a.shape = p.Shape();
      have_shape = true;
    } else {
      p.Fail("unknown key " + QuoteUserWord(key));
    }
    if (!p.Take(',')) {
      p.Expect('}');
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) p.Fail("descr, fortran_order and shape are all needed");
  ParseDescr(a.descr, &a);
  std::size_t count = 1;
  for (std::size_t d : a.shape) {
    if (!CheckedMul(count, d, &count)) throw CommandError(a.name + ": shape " + ShapeText(a.shape) + " overflows");
  }
  std::size_t data_bytes = 0;
  if (!CheckedMul(count, static_cast<std::size_t>(a.item_bytes), &data_bytes)) {
    throw CommandError(a.name + ": shape " + ShapeText(a.shape) + " of " + a.descr + " overflows");
  }
  const std::size_t have = bytes.size() - offset - header_bytes;
  if (have != data_bytes) {
    throw CommandError(a.name + ": the header says shape " + ShapeText(a.shape) + " of " + a.descr + " (" +
                       std::to_string(data_bytes) + " bytes), the file holds " + std::to_string(have) +
                       " bytes of data");
  }
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset + header_bytes), bytes.end());
  // '>' numbers to this machine's (little-endian) order; opaque items and
  // single bytes have no order.
  if (a.descr[0] == '>' && a.kind != 'V' && a.item_bytes > 1) {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint8_t* item = a.data.data() + i * static_cast<std::size_t>(a.item_bytes);
      for (int lo = 0, hi = a.item_bytes - 1; lo < hi; ++lo, --hi) std::swap(item[lo], item[hi]);
    }
  }
  if (a.fortran_order && a.shape.size() > 1) a.data = FortranToC(a.data, a.shape, static_cast<std::size_t>(a.item_bytes));
  return a;
}

void RequireItemBytes(BinaryArray* a, int item_bytes, const std::string& what) {
  if (!a->npy) {
    if (a->data.size() % static_cast<std::size_t>(item_bytes) != 0) {
      throw CommandError(a->name + ": " + std::to_string(a->data.size()) + " bytes is not a whole number of " +
                         what + " (" + std::to_string(item_bytes) + " bytes each)");
    }
    a->item_bytes = item_bytes;
    a->shape = {a->data.size() / static_cast<std::size_t>(item_bytes)};
    return;
  }
  if (a->item_bytes != item_bytes) {
    throw CommandError(a->name + ": dtype " + a->descr + " has " + std::to_string(a->item_bytes) + "-byte items; " +
                       what + " are " + std::to_string(item_bytes) + " byte" + (item_bytes == 1 ? "" : "s") + " each");
  }
}

}  // namespace lowbit::tools
