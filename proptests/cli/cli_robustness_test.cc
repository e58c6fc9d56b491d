// The lowbit CLI as a new user meets it: one regression test per finding of
// the bad-input review (docs/bad-input.md: files that are devices, pipes,
// directories, binary or huge; out of memory; write errors; profiles with
// the default --from; negative
// values; absurd --threads; malformed codes, ranges, random bits and sizes;
// the test-level switch; explain's name check; bare `lowbit` and --version;
// powers of two; accepted values in --help). Each error must be one line
// "lowbit: error: ..." naming the problem, exit status 2, nothing on stdout.
// docs/bad-input.md "Command line" lists the same rows.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_files.h"
#include "run_cli.h"
#include "test_level.h"
#include "under_sanitizer.h"

namespace lowbit::testing {
namespace {

class CliRobustness : public CliFilesTest {};

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// The shape every CLI error has.
void ExpectUsageError(const CliResult& r, const std::string& part) {
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("lowbit: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << "'" << r.err << "' lacks '" << part << "'";
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
}

bool AllPrintable(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F);
  });
}

// ---- --file ----------------------------------------------------------------

TEST_F(CliRobustness, FileThatIsADeviceOfZerosIsRefusedAsBinaryAtOnce) {
  // Before: /dev/zero was read forever while memory grew ~200 MB/s.
  const CliResult r = RunCliWith({"quantize", "int8:ao-sym", "--file", "/dev/zero"}, {.timeout_seconds = 30});
  ExpectUsageError(r, "--file '/dev/zero': not a text file of numbers (byte 0x00 at offset 0)");
}

TEST_F(CliRobustness, FifoIsRefusedBeforeReading) {
  // A FIFO is refused when opened, even one with a writer and data waiting:
  // before, one without a writer blocked open(2) forever, and an endless one
  // was read up to the 64 MiB limit.
  const std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int holder = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // lets the writer open without blocking
  ASSERT_GE(holder, 0);
  const int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(write(writer, "1 2 3\n", 6), 6);
  const CliResult r = RunCliWith({"quantize", "int8:ao-sym", "--file", fifo}, {.timeout_seconds = 60});
  close(writer);
  close(holder);
  ExpectUsageError(r, "is a FIFO (named or anonymous pipe), not a text file of numbers");
}

TEST_F(CliRobustness, FileOverTheLimitIsRefusedByItsSizeBeforeReading) {
  // A sparse file of 64 MiB + 1 byte: refused from its size, nothing read.
  const std::string big = Path("big.txt");
  const int fd = open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, (off_t{64} << 20) + 1), 0);
  close(fd);
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", big}),
                   "67108865 bytes, more than the 64 MiB lowbit reads");
}

TEST_F(CliRobustness, HugeTokenIsRefusedBeforeItIsReadWhole) {
  // Refused once the token passes 4096 characters, from a file and as an
  // argument.
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", WriteFile("token.txt", std::string(1 << 20, '1'))}),
                   "value 1 (at offset 0) is longer than 4096 characters");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", WriteFile("long.txt", "1 2 " + std::string(5000, '7'))}),
                   "value 3 (at offset 4) is longer than 4096 characters");
  ExpectUsageError(RunCli({"encode", "e4m3", std::string(5000, '7')}), "value too long (over 4096 characters)");
}

TEST_F(CliRobustness, ReadErrorIsReportedNotTakenForEndOfFile) {
  // Reading /proc/self/mem at offset 0 fails with EIO (page 0 is unmapped):
  // before, the values read so far were quantized and the exit status was 0.
  const CliResult r = RunCli({"quantize", "int8:ao-sym", "1", "2", "--file", "/proc/self/mem"});
  ExpectUsageError(r, "--file '/proc/self/mem': read error after 0 bytes: ");
}

TEST_F(CliRobustness, BinaryFileIsRefusedWithoutEchoingItsBytes) {
  const CliResult r = RunCli({"quantize", "int8:ao-sym", "--file", "/bin/ls"});
  ExpectUsageError(r, "--file '/bin/ls': not a text file of numbers (byte 0x7f at offset 0)");
  EXPECT_TRUE(AllPrintable(r.err)) << r.err;
  // A text file with one stray byte names its offset.
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", WriteFile("stray.txt", "1 2\n3\x01 4")}),
                   "(byte 0x01 at offset 5)");
  // Odd bytes in an argument are escaped in the message, not echoed raw.
  const CliResult arg = RunCli({"encode", "e4m3", "1\x1b[31m"});
  ExpectUsageError(arg, "malformed value '1\\x1b[31m'");
  EXPECT_TRUE(AllPrintable(arg.err)) << arg.err;
}

TEST_F(CliRobustness, DirectoryMissingAndEmptyFilesAreNamed) {
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", dir_}), "is a directory, not a text file of numbers");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", dir_ + "/none.txt"}),
                   "cannot open: No such file or directory");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", WriteFile("blank.txt", " \n\t ")}),
                   "holds no numbers");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--file", WriteFile("bad.txt", "1 2\n3 x4")}),
                   "value 4: malformed value 'x4'");
}

TEST_F(CliRobustness, FileValuesAreQuantizedLikeArguments) {
  // The bounded reader changes nothing for a good file: blanks of every kind
  // separate values, and the last value needs no newline.
  const CliResult from_file =
      RunCli({"quantize", "int8:ao-sym", "--file", WriteFile("good.txt", "127.5\t10\r\n255\v-20")});
  const CliResult from_args = RunCli({"quantize", "int8:ao-sym", "127.5", "10", "255", "-20"});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, from_args.out);
}

// ---- memory and output -------------------------------------------------------

TEST_F(CliRobustness, OutOfMemoryIsAnErrorNotAnAbort) {
#if defined(LOWBIT_UNDER_SANITIZER)
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: RLIMIT_AS cannot be used";
#else
  // The smallest address-space limit (1 MiB steps) under which `lowbit`
  // starts and encodes one value; 8 MiB more is far too little for two
  // million values (their floats alone are 8 MiB, and 12 MiB while the vector
  // grows from 4 to 8 MiB; then codes and the dequantized copy), so an
  // allocation must fail.
  // Before: std::bad_alloc was not caught (abort, exit 134).
  std::uint64_t base = 0;
  for (std::uint64_t mib = 8; mib <= 4096; mib += mib < 256 ? 1 : 64) {
    if (RunCliWith({"encode", "e4m3", "1"}, {.address_space_limit = mib << 20}).exit_code == 0) {
      base = mib << 20;
      break;
    }
  }
  if (base == 0) GTEST_SKIP() << "lowbit does not start under any address-space limit up to 4 GiB";
  std::string values;
  for (int i = 0; i < 2000000; ++i) values += "1.5\n";
  const std::string file = WriteFile("two_million.txt", values);
  const CliResult r = RunCliWith({"quantize", "int8:ao-sym", "--file", file},
                                 {.address_space_limit = base + (std::uint64_t{8} << 20), .timeout_seconds = 300});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal;
  EXPECT_NE(r.err.find("lowbit: error: out of memory"), std::string::npos) << r.err;
#endif
}

TEST_F(CliRobustness, WriteErrorsAreDetected) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  // Before: `lowbit table bf16 > /dev/full` exited 0.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"table", "bf16"}, {"encode", "e4m3", "1"}, {"list", "recipes"}}) {
    const CliResult r = RunCliWith(args, {.stdout_path = "/dev/full"});
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("lowbit: error: writing the output failed: No space left on device"), std::string::npos)
        << r.err;
  }
}

// ---- arguments -------------------------------------------------------------------

TEST_F(CliRobustness, ProfileWorksWithTheDefaultFrom) {
  // Before: every profile failed with the default --from fp64. A profile now
  // converts from its natural source (FP32 first): docs/formats-reference.md
  // §4.1 / §9.1, |x| > 464 -> 448 on NVIDIA satfinite, NaN in ml_dtypes.
  EXPECT_EQ(RunCli({"encode", "e4m3", "465", "--profile", "nvidia"}).FirstToken(), "0x7e");
  EXPECT_EQ(RunCli({"encode", "e4m3", "465", "--profile", "ml_dtypes"}).FirstToken(), "0x7f");
  // pytorch-cpu-2.15: torch >= 2.13's CPU cast saturates (pytorch/pytorch PR #178817).
  EXPECT_EQ(RunCli({"encode", "e4m3", "465", "--profile", "pytorch-cpu"}).FirstToken(), "0x7f");
  EXPECT_EQ(RunCli({"encode", "e4m3", "465", "--profile", "pytorch-cpu-2.15"}).FirstToken(), "0x7e");
  EXPECT_EQ(RunCli({"encode", "e4m3", "-inf", "--profile", "pytorch-cpu-2.15"}).FirstToken(), "0xfe");
  for (const char* profile :
       {"ocp", "nvidia", "nvidia-nosat", "ml_dtypes", "pytorch-cpu", "pytorch-cuda", "pytorch-cpu-2.15"}) {
    const CliResult r = RunCli({"encode", "e4m3", "1", "--profile", profile});
    EXPECT_EQ(r.exit_code, 0) << profile << ": " << r.err;
    EXPECT_EQ(r.out, "0x38 1 flags=none\n") << profile;
  }
  // An explicit --from the profile lacks lists the pairs it has.
  ExpectUsageError(RunCli({"encode", "e4m3", "1", "--profile", "nvidia", "--from", "fp64"}),
                   "profile nvidia has no conversion fp64 -> e4m3 with rounding rne; it has: --from fp32 --round rne");
}

TEST_F(CliRobustness, NegativeNumbersAreValues) {
  // Before: CLI11 read "-.5" as an option.
  EXPECT_EQ(RunCli({"encode", "e4m3", "-.5"}).out, "0xb0 -0.5 flags=none\n");
  EXPECT_EQ(RunCli({"encode", "e4m3", "-0.5"}).out, "0xb0 -0.5 flags=none\n");
  EXPECT_EQ(RunCli({"encode", "e4m3", "-Inf", "--saturate"}).FirstToken(), "0xfe");
  EXPECT_EQ(RunCli({"encode", "e5m2", "-.5e1"}).out, "0xc5 -5 flags=none\n");  // -1.25 * 2^2
  const CliResult q = RunCli({"quantize", "int8:ao-sym", "-.5", "1"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find("dequantized: -0.5"), std::string::npos) << q.out;
  // Options stay options.
  EXPECT_EQ(RunCli({"encode", "-h"}).exit_code, 0);
}

TEST_F(CliRobustness, ThreadsAreBoundedAndDefaultToTheCores) {
  // Before: --threads 99999 aborted (exit 134) when std::thread failed.
  ExpectUsageError(RunCli({"verify", "--threads", "99999"}), "--threads: Value 99999 not in range 1 to 256");
  ExpectUsageError(RunCli({"verify", "--threads", "0"}), "--threads: Value 0 not in range 1 to 256");
  ExpectUsageError(RunCli({"verify", "--threads", "two"}), "--threads");
  const unsigned cores = std::max(1u, std::min(256u, std::thread::hardware_concurrency()));
  const CliResult help = RunCli({"verify", "--help"});
  EXPECT_NE(help.out.find("INT in [1 - 256]=" + std::to_string(cores) + "\n"), std::string::npos) << help.out;
}

TEST_F(CliRobustness, CodesNeedDigits) {
  // Before: "_" was taken as code 0 (the separator skipped, no digit needed).
  for (const char* code : {"_", "0x_", "0b__", "7_", "_7", "0x", "''"}) {
    ExpectUsageError(RunCli({"decode", "e4m3", code}), "malformed code");
  }
  EXPECT_EQ(RunCli({"decode", "e4m3", "0b0_1111_110"}).FirstToken(), "448");
}

TEST_F(CliRobustness, StaticRangeIsTwoOrderedFiniteNumbers) {
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--static", "2,1", "1", "2"}),
                   "--static '2,1': LO 2 (0x40000000) is greater than HI 1 (0x3f800000)");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--static", "nan,nan", "1", "2"}),
                   "LO and HI must be finite numbers");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--static", "-inf,1", "1", "2"}),
                   "LO and HI must be finite numbers");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "--static", "1", "1", "2"}), "expected LO,HI");
  const CliResult ok = RunCli({"quantize", "int8:ao-sym", "--static", "-.5,1", "1", "2"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("static scales"), std::string::npos) << ok.out;
}

TEST_F(CliRobustness, RandomBitsAreAWholeNumberThatFits) {
  // Before: "-1" wrapped to 18446744073709551615 and was reported as such.
  const std::vector<std::string> base = {"encode", "e2m1", "1.0625", "--round", "stochastic", "--random-bits"};
  for (const char* bad : {"-1", "4294967296", "1.5", "0x", "ten"}) {
    std::vector<std::string> args = base;
    args.push_back(bad);
    ExpectUsageError(RunCli(args), "expected a whole number from 0 to 4294967295");
  }
  std::vector<std::string> args = base;
  args.push_back("0xffffffff");
  EXPECT_EQ(RunCli(args).FirstToken(), "0x3");  // all ones: the carry is taken
}

TEST_F(CliRobustness, SizesAreRangeChecked) {
  // Before: the product 4 x (2^62 + 1) wrapped and the quantizer wrote past
  // its buffers (SIGSEGV); group:4294967297 ran as group 1.
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "1", "2", "3", "4", "--shape", "4x4611686018427387905"}),
                   "--shape '4x4611686018427387905': columns 4611686018427387905 is more than the 4 values given");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "1", "2", "3", "4", "--shape", "18446744073709551617x1"}),
                   "rows '18446744073709551617' is not a whole number");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "1", "2", "3", "4", "--shape", "0x4"}), "rows must be at least 1");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "1", "2", "3", "4", "--shape", "-1x4"}),
                   "rows '-1' is not a whole number");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "1", "2", "3", "4", "--shape", "2x3"}),
                   "--shape '2x3' needs 6 values, got 4");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "1", "2", "3", "4", "--layout", "group:4294967297"}),
                   "--layout: group size '4294967297' is not a whole number from 1 to 9999999");
  ExpectUsageError(RunCli({"quantize", "int8:ao-sym", "1", "2", "3", "4", "--layout", "group:0"}),
                   "group size '0' is not a whole number from 1 to 9999999");
  ExpectUsageError(RunCli({"quantize", "int4:ao-sym/g4294967297", "1", "2", "3", "4"}),
                   "group size '4294967297' is not a whole number from 1 to 9999999");
  ExpectUsageError(RunCli({"quantize", "int8:common", "1", "2", "3", "4", "--layout", "block:99999999999x2"}),
                   "tile '99999999999x2' is not ROWSxCOLS with whole numbers from 1 to 9999999");
}

TEST_F(CliRobustness, ExplainChecksEveryRecipeBeforePrinting) {
  ExpectUsageError(RunCli({"explain", "mxfp4:ocp,bogus", "1", "2"}), "unknown profile 'bogus' for mxfp4");
  ExpectUsageError(RunCli({"explain", "mxfp4:ocp,int8:ao-sym", "1", "2"}), "another kind of recipe");
  ExpectUsageError(RunCli({"explain", "mxfp4:ocp,", "1", "2"}), "empty recipe name");
  ExpectUsageError(RunCli({"explain", "a,b", "1", "2"}), "unknown format 'a'");
  const CliResult both = RunCli({"explain", "mxfp4:ocp,mxfp4:te", "1", "2"});
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("== mxfp4:te"), std::string::npos) << both.out;
}

// Step 3 of explain names what bounds the element codes: the element format
// for a float element (the recipe's integer range is unused there), the
// integer range [qmin, qmax] otherwise (int8 symmetric: [-128, 127]).
TEST_F(CliRobustness, ExplainNamesWhatBoundsTheElements) {
  const CliResult fp8 = RunCli({"explain", "e4m3:vllm", "1", "-2", "300"});
  EXPECT_EQ(fp8.exit_code, 0) << fp8.err;
  EXPECT_NE(fp8.out.find("3. elements (round half even, e4m3 codes):"), std::string::npos) << fp8.out;
  EXPECT_EQ(fp8.out.find("range ["), std::string::npos) << fp8.out;
  const CliResult int8 = RunCli({"explain", "int8:ao-sym", "1", "-2", "300"});
  EXPECT_EQ(int8.exit_code, 0) << int8.err;
  EXPECT_NE(int8.out.find("3. elements (round half even, range [-128, 127]):"), std::string::npos) << int8.out;
}

TEST_F(CliRobustness, BareLowbitPrintsUsageAndVersionPrintsTheVersion) {
  const CliResult bare = RunCli({});
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find("Usage:"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("verify"), std::string::npos) << bare.out;
  EXPECT_TRUE(bare.err.empty()) << bare.err;
  const CliResult version = RunCli({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out.rfind("lowbit 0.", 0), 0u) << version.out;
  EXPECT_EQ(Lines(version.out), 1) << version.out;
}

TEST_F(CliRobustness, PowersOfTwoPrintTheExponentBesideTheDecimal) {
  // Every E8M0 value is 2^(code - 127) (docs/formats-reference.md §1).
  EXPECT_EQ(RunCli({"decode", "e8m0", "0x7f"}).out, "1 (2^0) fp32=0x3f800000 fp64=0x1p+0\n");
  EXPECT_EQ(RunCli({"decode", "e8m0", "0x80"}).FirstToken(), "2");
  EXPECT_NE(RunCli({"decode", "e8m0", "0x80"}).out.find("2 (2^1) fp32="), std::string::npos);
  EXPECT_NE(RunCli({"decode", "e8m0", "0xfe"}).out.find(
                "170141183460469231731687303715884105728 (2^127) fp32=0x7f000000"),
            std::string::npos);
  EXPECT_NE(RunCli({"show", "e8m0", "0"}).out.find("(2^-127)\n"), std::string::npos);
  const CliResult table = RunCli({"table", "e8m0"});
  EXPECT_NE(table.out.find("\n0x7f normal 1 (2^0)\n"), std::string::npos);
  EXPECT_NE(table.out.find("\n0xff nan nan\n"), std::string::npos);
  // Other formats: a power of two whose decimal is long (FP16's smallest
  // subnormal 2^-24), not a short one or a non-power.
  EXPECT_EQ(RunCli({"decode", "fp16", "0x0001"}).out,
            "0.000000059604644775390625 (2^-24) fp32=0x33800000 fp64=0x1p-24\n");
  EXPECT_EQ(RunCli({"decode", "e4m3", "0x38"}).out, "1 fp32=0x3f800000 fp64=0x1p+0\n");
  EXPECT_EQ(RunCli({"decode", "e4m3", "0x7e"}).out, "448 fp32=0x43e00000 fp64=0x1.cp+8\n");
  EXPECT_EQ(RunCli({"encode", "fp32", "-0x1p-20"}).out, "0xb5800000 -0.00000095367431640625 (-2^-20) flags=none\n");
}

TEST_F(CliRobustness, HelpListsTheAcceptedValues) {
  const CliResult encode = RunCli({"encode", "--help"});
  EXPECT_NE(encode.out.find("{rne,rna,rtz,up,down,odd,rnu,rnd,rnz,stochastic"), std::string::npos) << encode.out;
  EXPECT_NE(encode.out.find("PROFILE in {ocp,nvidia"), std::string::npos) << encode.out;
  EXPECT_NE(encode.out.find("TYPE in {fp64,fp32,fp16,bf16}"), std::string::npos) << encode.out;
  EXPECT_NE(encode.out.find("INT in [0 - 32]"), std::string::npos) << encode.out;
  const CliResult verify = RunCli({"verify", "--help"});
  EXPECT_NE(verify.out.find("{smoke,ci,full}"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("INT in [1 - 256]"), std::string::npos) << verify.out;
  const CliResult list = RunCli({"list", "--help"});
  EXPECT_NE(list.out.find("{formats,profiles,recipes}"), std::string::npos) << list.out;
}

// ---- the test-level switch (proptests/support/test_level.h) --------------------

TEST(TestLevelSwitch, AnUnknownLevelStopsTheTestProgram) {
  // Before: LOWBIT_TEST_LEVEL=fulll ran as ci and passed green.
  EXPECT_EXIT(
      {
        setenv("LOWBIT_TEST_LEVEL", "fulll", 1);
        CurrentTestLevel();
      },
      ::testing::ExitedWithCode(2), "LOWBIT_TEST_LEVEL=fulll: unknown test level \\(valid levels: smoke, ci, full\\)");
  EXPECT_EXIT(
      {
        setenv("LOWBIT_TEST_LEVEL", "full", 1);
        std::exit(CurrentTestLevel() == TestLevel::kFull ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace lowbit::testing
