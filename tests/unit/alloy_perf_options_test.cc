// alloy-perf's command line (tools/alloy-perf/options.h): overlap mode's options, and that every bad
// value is refused with a message naming the option and what it expects.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives.h"
#include "options.h"

namespace alloyperf {
namespace {

struct Parsed {
  ParseResult result;
  Options opts;
  std::string error;
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "alloy-perf");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(&a[0]);
  Parsed p{ParseResult::run, Options{}, ""};
  p.result = parseArguments(static_cast<int>(argv.size()), argv.data(), &p.opts, &p.error);
  return p;
}

TEST(AlloyPerfOptions, OverlapIsOffByDefault) {
  const Parsed p = parse({});
  ASSERT_EQ(p.result, ParseResult::run);
  EXPECT_EQ(p.opts.overlapMs, 0);
  EXPECT_EQ(p.opts.overlapReps, 5);
  EXPECT_EQ(p.opts.overlapKernels, 100);
}

TEST(AlloyPerfOptions, OverlapTakesAnOptionalTime) {
  EXPECT_EQ(parse({"-O"}).opts.overlapMs, kDefaultOverlapMs);
  EXPECT_EQ(parse({"-O", "50"}).opts.overlapMs, 50);
  EXPECT_EQ(parse({"--overlap=7"}).opts.overlapMs, 7);
  EXPECT_EQ(parse({"-O", "0"}).opts.overlapMs, 0);
  // A next argument that is not a number is the next option.
  const Parsed p = parse({"-O", "-n", "3"});
  ASSERT_EQ(p.result, ParseResult::run) << p.error;
  EXPECT_EQ(p.opts.overlapMs, kDefaultOverlapMs);
  EXPECT_EQ(p.opts.iters, 3);
  const Parsed q = parse({"-O", "30", "--overlap_reps", "9", "--overlap_kernels=40"});
  ASSERT_EQ(q.result, ParseResult::run) << q.error;
  EXPECT_EQ(q.opts.overlapMs, 30);
  EXPECT_EQ(q.opts.overlapReps, 9);
  EXPECT_EQ(q.opts.overlapKernels, 40);
}

// The message must name the option as the user wrote it and say what it takes.
void expectRefused(const std::vector<std::string>& args, const std::string& mentions, const std::string& expects) {
  const Parsed p = parse(args);
  EXPECT_EQ(p.result, ParseResult::bad) << args[0];
  EXPECT_NE(p.error.find(mentions), std::string::npos) << p.error;
  EXPECT_NE(p.error.find(expects), std::string::npos) << p.error;
}

TEST(AlloyPerfOptions, BadOverlapValuesNameTheOptionAndWhatItExpects) {
  expectRefused({"-O", "20000"}, "bad value for -O ('20000')", "expected a time in ms up to 10000");
  expectRefused({"--overlap=abc"}, "bad value for --overlap ('abc')", "expected a time in ms");
  expectRefused({"--overlap_reps", "0"}, "--overlap_reps ('0')", "expected a whole number from 1 to 1000");
  expectRefused({"--overlap_kernels"}, "missing value for --overlap_kernels", "expected a whole number");
  expectRefused({"--overlap_kernels", "x"}, "--overlap_kernels ('x')", "from 1 to 100000");
}

TEST(AlloyPerfOptions, OtherBadValuesNameTheOptionAndWhatItExpects) {
  expectRefused({"-n", "0"}, "bad value for -n ('0')", "expected a whole number >= 1");
  expectRefused({"-b", "12Q"}, "-b ('12Q')", "a size in bytes");
  expectRefused({"-f", "1"}, "-f ('1')", ">= 2");
  expectRefused({"-o", "allreduce,nope"}, "-o ('allreduce,nope')", "collective names");
  expectRefused({"--compare", "mpi"}, "--compare ('mpi')", "expected nccl");
  expectRefused({"-c=2x"}, "unknown option -c=2x", "");
  expectRefused({"--check=x"}, "--check ('x')", "0 or 1");
  expectRefused({"--frobnicate"}, "unknown option --frobnicate", "");
  expectRefused({"-O", "abc"}, "unexpected argument 'abc'", "-O take a number or nothing");
}

TEST(AlloyPerfOptions, OverlapAndGraphsExcludeEachOther) {
  expectRefused({"-O", "-G"}, "-O", "-G, not both");
  EXPECT_EQ(parse({"-O", "0", "-G"}).result, ParseResult::run);
}

// The command line of scripts/gpu-check.sh overlap, with its defaults.
TEST(AlloyPerfOptions, GpuCheckOverlapCommandLineParses) {
  const Parsed p = parse({"-o", "alltoallv,alltoall", "-b", "64K", "-e", "64M", "-f", "4", "-w", "2", "-n", "10", "-O",
                          "20", "--overlap_reps", "5", "--overlap_kernels", "100", "--compare", "nccl", "-c"});
  ASSERT_EQ(p.result, ParseResult::run) << p.error;
  EXPECT_EQ(p.opts.overlapMs, 20);
  EXPECT_TRUE(p.opts.check);
  EXPECT_TRUE(p.opts.compareNccl);
  EXPECT_EQ(sweepSizes(p.opts).size(), 6u);  // 64 KB, 256 KB, 1 MB, 4 MB, 16 MB, 64 MB
}

TEST(AlloyPerfOptions, BlockingIsOffUnlessAskedAndExcludesGraphsAndOverlap) {
  EXPECT_FALSE(parse({}).opts.blocking);
  const Parsed p = parse({"--blocking", "-b", "8", "-e", "1M", "-n", "1000"});
  ASSERT_EQ(p.result, ParseResult::run) << p.error;
  EXPECT_TRUE(p.opts.blocking);
  expectRefused({"--blocking", "-G"}, "--blocking", "not with -G or -O");
  expectRefused({"-O", "--blocking"}, "--blocking", "not with -G or -O");
  // Blocking rows are timed as OSU times them, so the table and the JSON name OSU's average.
  EXPECT_STREQ(timeAcrossRanks(parse({}).opts), "max over ranks");
  EXPECT_STREQ(timeAcrossRanks(p.opts), "the ranks' average (OSU's)");
}

TEST(AlloyPerfOptions, LegacyStreamOnlyWithBlocking) {
  EXPECT_FALSE(parse({"--blocking"}).opts.legacyStream);
  const Parsed p = parse({"--blocking", "--legacy-stream"});
  ASSERT_EQ(p.result, ParseResult::run) << p.error;
  EXPECT_TRUE(p.opts.legacyStream);
  expectRefused({"--legacy-stream"}, "--legacy-stream", "give --blocking too");
}

TEST(AlloyPerfOptions, RelayIsOffUnlessAsked) {
  EXPECT_FALSE(parse({"-o", "alltoallv"}).opts.relay);
  const Parsed p = parse({"-o", "alltoallv", "--relay", "-b", "1M"});
  ASSERT_EQ(p.result, ParseResult::run) << p.error;
  EXPECT_TRUE(p.opts.relay);
  EXPECT_EQ(p.opts.minBytes, size_t{1} << 20);  // --relay takes no value: the next option still parses
}

TEST(AlloyPerfOptions, UniformAlltoallvCountsAreAlltoallsBlocks) {
  EXPECT_FALSE(parse({"-o", "alltoallv"}).opts.uniform);
  const Parsed p = parse({"-o", "alltoallv", "--uniform", "-e", "1M"});
  ASSERT_EQ(p.result, ParseResult::run) << p.error;
  EXPECT_TRUE(p.opts.uniform);
  // 4 ranks, 4000 floats: alltoall's 1000 to every rank, where the matrix gives 400, 800, 1200, 1600
  // (docs/benchmarks.md); the bytes crossing between ranks are then alltoall's.
  const Layout even = makeLayout(Coll::alltoallv, 16000, 4, 4, 1, true);
  const Layout all = makeLayout(Coll::alltoall, 16000, 4, 4, 1, false);
  EXPECT_EQ(even.sendCounts, (std::vector<size_t>{1000, 1000, 1000, 1000}));
  EXPECT_EQ(even.recvDispls, (std::vector<size_t>{0, 1000, 2000, 3000}));
  EXPECT_EQ(even.sendElems, all.sendElems);
  EXPECT_DOUBLE_EQ(even.busBytes, all.busBytes);
  const Layout matrix = makeLayout(Coll::alltoallv, 16000, 4, 4, 0, false);
  EXPECT_EQ(matrix.sendCounts, (std::vector<size_t>{400, 800, 1200, 1600}));
}

TEST(AlloyPerfOptions, HelpIsNotAnError) { EXPECT_EQ(parse({"--help"}).result, ParseResult::help); }

}  // namespace
}  // namespace alloyperf
