// Bad input the CLI must refuse with one error line that names the real
// problem (docs/bad-input.md "Command line", "Empty values", "Words in
// messages", "Files that are not files"): empty values and files with no
// data are errors, never "not given"; every user word in a message is quoted
// (escaped, cut to a bounded length); FIFOs are refused without waiting for
// a writer; the message names the problem the input has; an error is the
// only line on stderr; contradictory options are refused. Each input here
// is one an attacker or a careless user tried; the same words are seeds of
// the fuzzers (fuzz/corpus/fuzz_cli_args, fuzz/cli_args.dict).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_files.h"
#include "run_cli.h"

namespace lowbit::testing {
namespace {

class CliBadInput : public CliFilesTest {
 protected:
  // 32 ones and their MXFP8 (E4M3) quantization, which the model matches:
  // scale 2^-8 (E8M0 0x77), every element 256 (E4M3 0x78).
  void WriteMxfp8Block() {
    const std::vector<float> ones(32, 1.0f);
    const std::vector<std::uint8_t> codes(32, 0x78);
    const std::uint8_t scale = 0x77;
    x_ = WriteNpy("x.npy", "<f4", "(32,)", ones.data(), 128);
    y_ = WriteNpy("y.npy", "|u1", "(32,)", codes.data(), 32);
    s_ = WriteNpy("s.npy", "|u1", "(1,)", &scale, 1);
  }
  std::string x_, y_, s_;
};

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

bool AllPrintable(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F);
  });
}

// The one shape of every CLI error: exit 2, one printable line on stderr
// naming the problem, nothing on stdout.
void ExpectError(const CliResult& r, const std::string& part) {
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("lowbit: error: ", 0), 0u) << r.err;
  EXPECT_TRUE(AllPrintable(r.err)) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << "'" << r.err << "' lacks '" << part << "'";
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
}

CliResult Lowbit(const std::vector<std::string>& args) { return RunCliWith(args, {.timeout_seconds = 30}); }

// ---- empty values and files with no data ---------------------------------------

TEST_F(CliBadInput, EmptyScalesAreRefusedNeverSkipped) {
  WriteMxfp8Block();
  // The check itself passes with the right scale...
  ASSERT_EQ(Lowbit({"check", "mxfp8", "--input", x_, "--output", y_, "--scales", s_}).exit_code, 0);
  // ...and was "0 mismatches: MATCH", exit 0, with none.
  ExpectError(Lowbit({"check", "mxfp8", "--input", x_, "--output", y_, "--scales", "/dev/null"}),
              "--scales '/dev/null': holds no data");
  const std::string no_scales = WriteNpy("none.npy", "|u1", "(0,)", nullptr, 0);
  ExpectError(Lowbit({"check", "mxfp8", "--input", x_, "--output", y_, "--scales", no_scales}), "holds no data");
  ExpectError(Lowbit({"check", "mxfp8", "--input", x_, "--output", y_, "--scales", ""}),
              "--scales is given an empty value");
  ExpectError(Lowbit({"check", "mxfp8", "--input", x_, "--output", y_, "--scales="}), "--scales is given an empty value");
  // Zero points and the tensor scale.
  const float four[4] = {1, 2, 3, 4};
  const std::uint8_t codes[4] = {0, 85, 170, 255};
  const std::string x = WriteNpy("x4.npy", "<f4", "(4,)", four, sizeof four);
  const std::string y = WriteNpy("y4.npy", "|u1", "(4,)", codes, sizeof codes);
  ExpectError(Lowbit({"check", "int8:ao-asym", "--input", x, "--output", y, "--zero-points", "/dev/null"}),
              "--zero-points '/dev/null': holds no data");
  ExpectError(Lowbit({"check", "int8:ao-asym", "--input", x, "--output", y, "--zero-points", ""}),
              "--zero-points is given an empty value");
  ExpectError(Lowbit({"check", "nvfp4", "--input", x_, "--output", y_, "--tensor-scale", ""}),
              "--tensor-scale is given an empty value");
  ExpectError(Lowbit({"check", "nvfp4", "--input", x_, "--output", y_, "--tensor-scale", "/dev/null"}),
              "holds 0 values, not one");
}

TEST_F(CliBadInput, EmptyOptionValuesAreErrorsNotDefaults) {
  // Each ran with its default before: dynamic scales, one row, per tensor,
  // dynamic statistics, every format.
  ExpectError(Lowbit({"quantize", "e4m3:vllm", "1", "2", "--scale", ""}), "--scale is given an empty value");
  ExpectError(Lowbit({"quantize", "int8:ao-sym", "1", "2", "--shape", ""}), "--shape is given an empty value");
  ExpectError(Lowbit({"quantize", "int8:ao-sym", "1", "2", "--layout", ""}), "--layout is given an empty value");
  ExpectError(Lowbit({"quantize", "int8:ao-sym", "1", "2", "--layout="}), "--layout is given an empty value");
  ExpectError(Lowbit({"quantize", "int8:ao-sym", "1", "2", "--static", ""}), "--static is given an empty value");
  ExpectError(Lowbit({"verify", "--format", "", "--level", "smoke"}), "--format is given an empty value");
  ExpectError(Lowbit({"encode", "e4m3", "1", "--profile", ""}), "--profile is given an empty value");
  ExpectError(Lowbit({"check", "e4m3", "--input", "", "--output", "y"}), "--input is given an empty value");
}

// ---- user words in messages ---------------------------------------------------------

TEST_F(CliBadInput, UserWordsAreQuotedEscapedAndCut) {
  // A newline in a format name forged a second "lowbit: ok" line.
  ExpectError(Lowbit({"decode", "e4m3\nlowbit: ok", "1"}), "unknown format 'e4m3\\x0alowbit: ok'");
  const std::string esc = "x\x1b[31m";
  const std::string shown = "'x\\x1b[31m'";
  const std::vector<std::vector<std::string>> commands = {
      {"encode", esc, "1"},
      {"decode", esc, "1"},
      {"show", esc, "1"},
      {"table", esc},
      {"encode", "e4m3", "1", "--from", esc},
      {"encode", "e4m3", "1", "--profile", esc},
      {"encode", "e4m3", "1", "--round", esc},
      {"decode", "e4m3", "1", "--profile", esc},
      {"verify", "--format", esc},
      {"verify", "--level", esc},
      {"quantize", "int8:ao-sym", "1", "2", "--layout", esc},
      {"quantize", esc, "1"},
      {"list", esc},
      {esc},
      {"check", esc, "--input", "x", "--output", "y"},
      {"check", "e4m3", "--input", "x", "--output", "y", "--dtype", esc},
      {"check", "e4m3", "--input", "x", "--output", "y", "--round", esc},
      {"check", "e4m3", "--input", "x", "--output", "y", "--packing", esc},
      {"check", "e4m3", "--input", "x", "--output", "y", "--profile", esc},
  };
  for (const std::vector<std::string>& args : commands) {
    SCOPED_TRACE(args[0] + " ... " + args.back());
    ExpectError(Lowbit(args), shown);
  }
  ExpectError(Lowbit({"encode", "e4m3", "1", "--" + esc}), "unknown option '--x\\x1b[31m'");
  ExpectError(Lowbit({"explain", esc + ",,te", "1"}), "empty recipe name in 'x\\x1b[31m,,te'");
  // A 100 KB name comes back as a bounded line with its length.
  const std::string huge(100000, 'a');
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"decode", huge, "1"}, {"list", huge}, {huge}, {"encode", "e4m3", "1", "--round", huge},
           {"quantize", "int8:ao-sym/" + huge, "1"}, {"decode", "e4m3", "1", "2", huge}}) {
    const CliResult r = Lowbit(args);
    ExpectError(r, "(100000 bytes)");
    EXPECT_LT(r.err.size(), 1000u);
  }
}

// ---- files that are not files ----------------------------------------------------------

TEST_F(CliBadInput, FifoIsRefusedWithoutWaitingForAWriter) {
  // open(2) of a FIFO without a writer blocked forever.
  const std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExpectError(Lowbit({"check", "e4m3", "--input", fifo, "--output", fifo}), "is a FIFO");
  ExpectError(Lowbit({"quantize", "int8:ao-sym", "--file", fifo}), "is a FIFO");
  ExpectError(Lowbit({"quantize", "e4m3:vllm", "1", "--scale-file", fifo}), "is a FIFO");
  // Character devices stay readable: /dev/null is a file with no data.
  ExpectError(Lowbit({"quantize", "int8:ao-sym", "--file", "/dev/null"}), "holds no numbers");
}

// ---- errors that name the right problem ---------------------------------------------------

TEST_F(CliBadInput, LayoutSizesNameTheirRealProblemAndOneLimit) {
  // Each said "a size of 0 names no group".
  for (const std::string layout : {"g4.0", "g2_0", "g0x4", "g00", "group:4.0"}) {
    const CliResult r = Lowbit({"quantize", "int4:ao-sym/" + layout, "1", "2", "3", "4"});
    ExpectError(r, "is not a whole number from 1 to 9999999");
    EXPECT_EQ(r.err.find("names no group"), std::string::npos) << r.err;
  }
  ExpectError(Lowbit({"quantize", "int8:common", "1", "2", "3", "4", "--layout", "tile:2.0x2"}),
              "tile '2.0x2' is not ROWSxCOLS with whole numbers from 1 to 9999999");
  // One limit in one message, whichever way the size is spelled.
  for (const std::string layout : {"g10000000", "g4294967297", "group:4294967297"}) {
    ExpectError(Lowbit({"quantize", "int4:ao-sym/" + layout, "1", "2", "3", "4"}), "from 1 to 9999999");
    ExpectError(Lowbit({"quantize", "int8:ao-sym", "1", "2", "--layout", layout}), "from 1 to 9999999");
  }
}

TEST_F(CliBadInput, ErrorsNameTheRealProblem) {
  // "value is required": -x is an option lowbit encode does not have.
  ExpectError(Lowbit({"encode", "e4m3", "-x"}), "unknown option '-x' for lowbit encode");
  ExpectError(Lowbit({"decode", "e4m3", "1", "--bogus"}), "unknown option '--bogus' for lowbit decode");
  // 2-byte words with --dtype fp32 were "not an input type".
  const std::uint16_t words[2] = {0x3f80, 0x4000};
  const std::uint8_t codes[2] = {0x38, 0x40};
  const std::string x = WriteNpy("x.npy", "<u2", "(2,)", words, sizeof words);
  const std::string y = WriteNpy("y.npy", "|u1", "(2,)", codes, sizeof codes);
  ExpectError(Lowbit({"check", "e4m3", "--input", x, "--output", y, "--dtype", "fp32"}),
              "--dtype fp32 needs 4-byte words; the file holds <u2 (2-byte words)");
  // A size too large was "has no size".
  const std::string v = WriteNpy("v.npy", "<V4294967296", "(1,)", codes, 1);
  ExpectError(Lowbit({"check", "e4m3", "--input", v, "--output", y}), "dtype '<V4294967296' has items too large");
}

// ---- an error is the only line ------------------------------------------------------------

TEST_F(CliBadInput, AnErrorIsTheOnlyLineOnStderr) {
  // The note that 0.1 is not an FP64 value came before the error.
  ExpectError(Lowbit({"encode", "e4m3", "0.1", "--random-bits", "5"}), "--random-bits needs --round stochastic");
  ExpectError(Lowbit({"encode", "e4m3", "0.1", "--profile", "nvidia", "--saturate"}), "--saturate with --profile");
  // verify's progress lines came before "no kernel matches".
  ExpectError(Lowbit({"verify", "--backend", "no-such-backend", "--level", "smoke"}), "no kernel matches");
  // With a result, the note still comes (on stderr, the result on stdout).
  const CliResult ok = Lowbit({"encode", "e4m3", "0.1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.err.find("note: '0.1' is not a fp64 value"), std::string::npos) << ok.err;
}

// ---- contradictory options -------------------------------------------------------------------

TEST_F(CliBadInput, ContradictoryOptionsAreRefused) {
  // `check` exited 1 ("NOTHING CHECKED") where `encode` exits 2.
  const float x[2] = {1.0f, 2.5f};
  const std::uint8_t codes[2] = {0x38, 0x42};
  const std::string xs = WriteNpy("x.npy", "<f4", "(2,)", x, sizeof x);
  const std::string ys = WriteNpy("y.npy", "|u1", "(2,)", codes, sizeof codes);
  ExpectError(Lowbit({"encode", "e4m3", "1", "--profile", "nvidia", "--round", "rtz"}), "profile nvidia has no conversion");
  ExpectError(Lowbit({"check", "e4m3", "--profile", "nvidia", "--round", "rtz", "--input", xs, "--output", ys}),
              "profile nvidia has no conversion to e4m3 with rounding rtz");
  ExpectError(Lowbit({"check", "e4m3:nvidia", "--round", "rtz", "--input", xs, "--output", ys}),
              "profile nvidia has no conversion to e4m3 with rounding rtz");
  // --random-bit-count without stochastic rounding was ignored.
  ExpectError(Lowbit({"encode", "e4m3", "1", "--random-bit-count", "3"}), "--random-bit-count needs --round stochastic");
  ExpectError(Lowbit({"encode", "e4m3", "1", "--profile", "nvidia", "--random-bit-count", "3"}),
              "profiles take no random bits");
  EXPECT_EQ(Lowbit({"encode", "e4m3", "1", "--round", "stochastic", "--random-bits", "5", "--random-bit-count", "3"})
                .exit_code,
            0);
}

}  // namespace
}  // namespace lowbit::testing
