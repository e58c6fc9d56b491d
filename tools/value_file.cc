// value_file.h: one read(2) loop, so that errno, the byte offset and the
// limits are all in view (an istream would turn a read error into end of
// file and read a whole token before its length could be checked).
#include "value_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "commands.h"
#include "value_limits.h"

namespace lowbit::tools {
namespace {

bool IsBlank(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool IsText(unsigned char c) { return IsBlank(c) || (c >= 0x20 && c < 0x7F); }

// Closes the descriptor on every path out, exceptions included.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

int OpenInputFile(const std::string& name, const std::string& path, const char* kind, std::uint64_t* regular_size) {
  Descriptor file;
  file.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file.fd < 0) throw CommandError(name + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (fstat(file.fd, &info) != 0) throw CommandError(name + ": cannot stat: " + std::strerror(errno));
  const char* what = S_ISDIR(info.st_mode)    ? "a directory"
                     : S_ISFIFO(info.st_mode) ? "a FIFO (named or anonymous pipe)"
                     : S_ISSOCK(info.st_mode) ? "a socket"
                     : S_ISBLK(info.st_mode)  ? "a block device"
                     : S_ISREG(info.st_mode) || S_ISCHR(info.st_mode) ? nullptr
                                                                      : "not a regular file";
  if (what != nullptr) {
    throw CommandError(name + ": is " + std::string(what) + ", not " + kind +
                       " (lowbit reads regular files and character devices; write the data to a file first)");
  }
  const int flags = fcntl(file.fd, F_GETFL);
  if (flags < 0 || fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    throw CommandError(name + ": cannot read: " + std::strerror(errno));
  }
  *regular_size = S_ISREG(info.st_mode) ? static_cast<std::uint64_t>(info.st_size) : 0;
  const int fd = file.fd;
  file.fd = -1;
  return fd;
}

void ForEachWordInFile(const std::string& path,
                       const std::function<void(std::string_view word, long index)>& word) {
  const std::string name = "--file " + QuoteUserWord(path);
  Descriptor file;
  std::uint64_t size = 0;
  file.fd = OpenInputFile(name, path, "a text file of numbers", &size);
  if (size > kMaxValueFileBytes) {
    throw CommandError(name + ": " + std::to_string(size) + " bytes, more than the " +
                       std::to_string(kMaxValueFileBytes >> 20) + " MiB lowbit reads");
  }
  std::vector<char> buffer(std::size_t{1} << 16);
  std::string current;
  long index = 0;
  std::uint64_t offset = 0;
  for (;;) {
    const ssize_t got = read(file.fd, buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      throw CommandError(name + ": read error after " + std::to_string(offset) + " bytes: " + std::strerror(errno));
    }
    if (got == 0) break;
    for (ssize_t i = 0; i < got; ++i, ++offset) {
      const unsigned char c = static_cast<unsigned char>(buffer[static_cast<std::size_t>(i)]);
      if (!IsText(c)) {
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02x", c);
        throw CommandError(name + ": not a text file of numbers (byte " + byte + " at offset " +
                           std::to_string(offset) + "); give whitespace-separated decimals or hex floats");
      }
      if (!IsBlank(c)) {
        if (current.size() >= kMaxValueLength) {
          throw CommandError(name + ": value " + std::to_string(index + 1) + " (at offset " +
                             std::to_string(offset - current.size()) + ") is longer than " +
                             std::to_string(kMaxValueLength) + " characters");
        }
        current += static_cast<char>(c);
      } else if (!current.empty()) {
        word(current, index++);
        current.clear();
      }
    }
    if (offset > kMaxValueFileBytes) {
      throw CommandError(name + ": more than the " + std::to_string(kMaxValueFileBytes >> 20) +
                         " MiB lowbit reads (a device that does not end?)");
    }
  }
  if (!current.empty()) word(current, index);
}

}  // namespace lowbit::tools
