// Command line of alloy-perf. Option letters follow nccl-tests where nccl-tests has the option; -o picks
// collectives (one nccl-tests binary is one collective) and --redop the reduction operators.
#ifndef ALLOY_PERF_OPTIONS_H_
#define ALLOY_PERF_OPTIONS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "alloy.h"
#include "collectives.h"

namespace alloyperf {

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = size_t{128} << 20;
  size_t stepFactor = 2;  // used when > 1
  size_t stepBytes = 0;   // used when stepFactor == 0 (set by -i)
  std::vector<Coll> colls{Coll::allreduce};
  std::vector<alloyDataType_t> types{alloyFloat32};
  std::vector<alloyRedOp_t> redops{alloySum};
  int warmupIters = 5;
  int iters = 20;
  int root = 0;
  bool check = false;
  int graphLaunches = 0;  // 0: eager launches; N > 0: capture the iterations once, time N replays
  std::string jsonPath;
  bool compareNccl = false;
  bool relay = false;       // --relay: alltoallv passes a relaybuff (the rail relay between hosts)
  bool uniform = false;     // --uniform: alltoallv sends alltoall's equal blocks
  bool blocking = false;    // --blocking: each timed call waits for its stream (host time per call)
  bool legacyStream = false;  // --legacy-stream: --blocking's calls on the legacy default stream
  unsigned long long seed = 1;
  int overlapMs = 0;        // -O: target time of the compute load beside each row; 0: overlap mode off
  int overlapReps = 5;      // repetitions of alone and beside whose medians are reported
  int overlapKernels = 100; // launches of the compute kernel in one load
};

constexpr int kDefaultOverlapMs = 20;  // -O without a value
constexpr int kMaxOverlapMs = 10000;

enum class ParseResult { run, help, bad };

// Parses argv into opts. On a bad argument returns bad with *error naming the option and what it
// expects. Prints nothing.
ParseResult parseArguments(int argc, char** argv, Options* opts, std::string* error);

// parseArguments, and what to tell the user: on --help prints usage and returns false with *exitCode 0;
// on a bad argument prints the reason and usage to stderr and returns false with *exitCode 2. Only
// rank 0 should print (quiet otherwise), but every rank parses so that all agree on what to run.
bool parseOptions(int argc, char** argv, bool quiet, Options* opts, int* exitCode);

// The sizes swept, in order: minBytes, then times stepFactor (or plus stepBytes) up to maxBytes.
std::vector<size_t> sweepSizes(const Options& opts);

const char* redopName(alloyRedOp_t op);

// How a row's time is taken across ranks: the slowest rank's (nccl-tests), or with --blocking the ranks'
// average (OSU's), in words for the table and the JSON file.
const char* timeAcrossRanks(const Options& opts);

}  // namespace alloyperf

#endif  // ALLOY_PERF_OPTIONS_H_
