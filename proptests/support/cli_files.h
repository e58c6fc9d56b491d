// A fixture for tests of the lowbit binary that write its input files: a
// fresh temporary folder per test, removed with the files named through
// Path() afterwards, and .npy files exactly as numpy.save writes them. The
// test is skipped, by name, when the CLI is not built.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "run_cli.h"

namespace lowbit::testing {

class CliFilesTest : public ::testing::Test {
 protected:
  // A fixture that prepares more calls this first and returns when
  // IsSkipped() or HasFatalFailure().
  void SetUp() override {
    if (!CliBuilt()) GTEST_SKIP() << "the lowbit CLI is not built (LOWBIT_BUILD_TOOLS=OFF)";
    char dir[] = "/tmp/lowbit_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    for (const std::string& f : files_) std::remove(f.c_str());
    rmdir(dir_.c_str());
  }

  // NAME in the test's folder, removed after the test.
  std::string Path(const std::string& name) {
    files_.push_back(dir_ + "/" + name);
    return files_.back();
  }

  std::string WriteRaw(const std::string& name, const void* data, std::size_t bytes) {
    const std::string p = Path(name);
    std::ofstream out(p, std::ios::binary);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    return p;
  }
  std::string WriteFile(const std::string& name, const std::string& contents) {
    return WriteRaw(name, contents.data(), contents.size());
  }

  // A .npy file (format 1.0) exactly as numpy.save writes it: magic,
  // version, header length, the dict padded with spaces to a multiple of 64
  // bytes and ended by '\n', then the data.
  std::string WriteNpy(const std::string& name, const std::string& descr, const std::string& shape,
                       const void* data, std::size_t bytes, bool fortran = false) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                         ", 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file += static_cast<char>(header.size() & 0xFF);
    file += static_cast<char>(header.size() >> 8);
    file += header;
    file.append(static_cast<const char*>(data), bytes);
    return WriteRaw(name, file.data(), file.size());
  }

  std::string dir_;
  std::vector<std::string> files_;
};

}  // namespace lowbit::testing
