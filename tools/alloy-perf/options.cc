#include "options.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "datatypes.h"

namespace alloyperf {

namespace {

const char* const kRedopNames[alloyNumOps] = {"sum", "prod", "max", "min", "avg"};

const char kUsage[] =
    "usage: mpirun -np NGPU alloy-perf [options]\n"
    "  -b, --minbytes N        smallest size (default 8); K, M, G suffixes (powers of 1024)\n"
    "  -e, --maxbytes N        largest size (default 128M)\n"
    "  -f, --stepfactor N      multiply the size by N each step (default 2)\n"
    "  -i, --stepbytes N       add N bytes each step instead\n"
    "  -o, --op LIST           collectives, comma separated, or all (default allreduce):\n"
    "                          allreduce reduce broadcast allgather reducescatter alltoall alltoallv sendrecv\n"
    "  -d, --datatype LIST     int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 fp8e4m3\n"
    "                          fp8e5m2, comma separated, or all (default float)\n"
    "      --redop LIST        sum prod max min avg, comma separated, or all (default sum)\n"
    "  -w, --warmup_iters N    untimed iterations before timing (default 5)\n"
    "  -n, --iters N           timed iterations (default 20)\n"
    "  -r, --root N            root of reduce and broadcast (default 0)\n"
    "  -c, --check [0|1]       check every row against a host reference on fresh data (default off)\n"
    "  -G, --cudagraph [N]     capture the timed iterations in a CUDA graph, time N replays (default 1)\n"
    "  -J, --json FILE         write every number of every row to FILE (rank 0)\n"
    "      --compare nccl      also run NCCL (dlopen libnccl.so.2 or $ALLOY_PERF_NCCL_LIB) on the same buffers\n"
    "      --seed N            seed of the check data (default 1)\n"
    "      --relay             alltoallv passes Alloy a relaybuff as large as its send buffer: between hosts\n"
    "                          that each hold several ranks, blocks then travel along the rails\n"
    "      --uniform           alltoallv sends every rank the same count (alltoall's blocks, as OSU's\n"
    "                          osu_alltoallv does) instead of the count matrix\n"
    "      --blocking          time each call as OSU 5.7 times a blocking MPI collective: the call, then\n"
    "                          cudaStreamSynchronize, on the host's clock, an MPI_Barrier after each call\n"
    "                          outside the clock; each rank's average over -n, then the ranks' average;\n"
    "                          not with -G or -O\n"
    "      --legacy-stream     with --blocking: the calls go on the legacy default stream and wait for it,\n"
    "                          as liballoy_mpi.so runs a blocking MPI collective (docs/mpi-layer.md)\n"
    "  -O, --overlap [MS]      overlap mode (default MS 20): each row is also run beside a compute load, a\n"
    "                          series of --overlap_kernels launches of one FMA kernel (one full wave of\n"
    "                          blocks each) on a second stream (non-blocking, default priority), its loop\n"
    "                          calibrated at start-up, on every rank at once, so that the series takes MS.\n"
    "                          Per repetition: MPI_Barrier, the load alone; MPI_Barrier, the load with\n"
    "                          K = ceil(load time / collective time alone) calls looping beside it on the\n"
    "                          benchmark's stream (made again with more calls where the load outlasted\n"
    "                          them on any rank). Reported: cmp alone, cmp with (CUDA events around the\n"
    "                          series), slowdown = with / alone, ovl time and busbw (events around the K\n"
    "                          calls, over K); each rank's median, then the maximum over ranks. The load's\n"
    "                          output is checked after every series; with -c the collective's output is\n"
    "                          checked again after the overlapped calls. Not with -G\n"
    "      --overlap_reps N    repetitions of alone and beside (default 5)\n"
    "      --overlap_kernels N launches of the compute kernel in one load (default 100)\n"
    "  -h, --help              this text\n";

bool parseUnsigned(const std::string& text, unsigned long long* value) {
  if (text.empty() || text[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  *value = strtoull(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

bool parseInt(const std::string& text, int* value) {
  unsigned long long v;
  if (!parseUnsigned(text, &v) || v > 1000000000ull) return false;
  *value = static_cast<int>(v);
  return true;
}

// "64", "4K", "16M", "1G": binary multiples, as nccl-tests reads them.
bool parseBytes(const std::string& text, size_t* bytes) {
  if (text.empty()) return false;
  std::string digits = text;
  unsigned shift = 0;
  switch (text.back()) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    default: break;
  }
  if (shift) digits.pop_back();
  unsigned long long v;
  if (!parseUnsigned(digits, &v) || v > (~0ull >> shift)) return false;
  *bytes = static_cast<size_t>(v << shift);
  return true;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// One parser for the three name lists (-o, -d, --redop): "all" takes every value in order.
template <typename T>
bool parseList(const std::string& text, int numValues, bool (*parseOne)(const std::string&, T*),
               std::vector<T>* out) {
  out->clear();
  if (text == "all") {
    for (int i = 0; i < numValues; ++i) out->push_back(static_cast<T>(i));
    return true;
  }
  for (const std::string& item : splitList(text)) {
    T v;
    if (!parseOne(item, &v)) return false;
    out->push_back(v);
  }
  return !out->empty();
}

bool parseRedop(const std::string& name, alloyRedOp_t* op) {
  for (int i = 0; i < alloyNumOps; ++i) {
    if (name == kRedopNames[i]) {
      *op = static_cast<alloyRedOp_t>(i);
      return true;
    }
  }
  return false;
}

struct Parser {
  int argc;
  char** argv;
  int i = 1;

  // The option's value: "--name=value", or the next argument.
  bool value(const std::string& inlineValue, bool hasInline, std::string* out) {
    if (hasInline) {
      *out = inlineValue;
      return true;
    }
    if (i + 1 >= argc) return false;
    *out = argv[++i];
    return true;
  }

  // -c, -G and -O take an optional number (nccl-tests writes "-c 1", "-G 1"); alone they read as
  // `absent`. A next argument that is not a number is the next option. Returns -1 for a bad inline value.
  int optionalCount(const std::string& inlineValue, bool hasInline, int absent, std::string* shown) {
    int v;
    if (hasInline) {
      *shown = inlineValue;
      return parseInt(inlineValue, &v) ? v : -1;
    }
    if (i + 1 < argc && parseInt(argv[i + 1], &v)) {
      *shown = argv[++i];
      return v;
    }
    return absent;
  }
};

bool inRange(int v, int lo, int hi) { return v >= lo && v <= hi; }

}  // namespace

const char* redopName(alloyRedOp_t op) { return kRedopNames[op]; }

const char* timeAcrossRanks(const Options& opts) {
  return opts.blocking ? "the ranks' average (OSU's)" : "max over ranks";
}

ParseResult parseArguments(int argc, char** argv, Options* opts, std::string* error) {
  Parser p{argc, argv, 1};
  bool sawFactor = false, sawStep = false;
  for (; p.i < argc; ++p.i) {
    std::string arg = argv[p.i], inlineValue;
    bool hasInline = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inlineValue = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasInline = true;
    }
    auto is = [&](const char* s, const char* l) { return (s && arg == s) || arg == l; };
    std::string v;
    const char* expected = nullptr;  // what the option takes, for the error message
    bool ok = true;
    if (is("-h", "--help")) {
      return ParseResult::help;
    } else if (is("-b", "--minbytes")) {
      expected = "a size in bytes, with an optional K, M or G suffix";
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->minBytes);
    } else if (is("-e", "--maxbytes")) {
      expected = "a size in bytes, with an optional K, M or G suffix";
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->maxBytes);
    } else if (is("-f", "--stepfactor")) {
      expected = "a whole number >= 2";
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->stepFactor) && opts->stepFactor >= 2;
      sawFactor = true;
    } else if (is("-i", "--stepbytes")) {
      expected = "a size in bytes > 0, with an optional K, M or G suffix";
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->stepBytes) && opts->stepBytes > 0;
      sawStep = true;
    } else if (is("-o", "--op")) {
      expected = "collective names, comma separated, or all";
      ok = p.value(inlineValue, hasInline, &v) && parseList(v, kNumColls, parseCollName, &opts->colls);
    } else if (is("-d", "--datatype")) {
      expected = "data type names, comma separated, or all";
      ok = p.value(inlineValue, hasInline, &v) &&
           parseList(v, static_cast<int>(alloyNumTypes), parseTypeName, &opts->types);
    } else if (is(nullptr, "--redop")) {
      expected = "sum, prod, max, min or avg, comma separated, or all";
      ok = p.value(inlineValue, hasInline, &v) &&
           parseList(v, static_cast<int>(alloyNumOps), parseRedop, &opts->redops);
    } else if (is("-w", "--warmup_iters")) {
      expected = "a whole number";
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->warmupIters);
    } else if (is("-n", "--iters")) {
      expected = "a whole number >= 1";
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->iters) && opts->iters > 0;
    } else if (is("-r", "--root")) {
      expected = "a rank";
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->root);
    } else if (is("-c", "--check")) {
      expected = "0 or 1, or nothing";
      const int c = p.optionalCount(inlineValue, hasInline, 1, &v);
      ok = c >= 0;
      opts->check = c > 0;
    } else if (is("-G", "--cudagraph")) {
      expected = "a number of replays, or nothing";
      opts->graphLaunches = p.optionalCount(inlineValue, hasInline, 1, &v);
      ok = opts->graphLaunches >= 0;
    } else if (is("-O", "--overlap")) {
      expected = "a time in ms up to 10000 (0: off), or nothing";
      opts->overlapMs = p.optionalCount(inlineValue, hasInline, kDefaultOverlapMs, &v);
      ok = inRange(opts->overlapMs, 0, kMaxOverlapMs);
    } else if (is(nullptr, "--overlap_reps")) {
      expected = "a whole number from 1 to 1000";
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->overlapReps) &&
           inRange(opts->overlapReps, 1, 1000);
    } else if (is(nullptr, "--overlap_kernels")) {
      expected = "a whole number from 1 to 100000";
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->overlapKernels) &&
           inRange(opts->overlapKernels, 1, 100000);
    } else if (is("-J", "--json")) {
      expected = "a file name";
      ok = p.value(inlineValue, hasInline, &opts->jsonPath) && !opts->jsonPath.empty();
    } else if (is(nullptr, "--compare")) {
      expected = "nccl";
      ok = p.value(inlineValue, hasInline, &v) && v == "nccl";
      opts->compareNccl = ok;
    } else if (is(nullptr, "--relay")) {
      opts->relay = true;
    } else if (is(nullptr, "--uniform")) {
      opts->uniform = true;
    } else if (is(nullptr, "--blocking")) {
      opts->blocking = true;
    } else if (is(nullptr, "--legacy-stream")) {
      opts->legacyStream = true;
    } else if (is(nullptr, "--seed")) {
      expected = "a whole number";
      ok = p.value(inlineValue, hasInline, &v) && parseUnsigned(v, &opts->seed);
    } else if (arg.empty() || arg[0] != '-') {
      // Most likely a value given to an option whose value is an optional number.
      *error = "unexpected argument '" + arg + "' (-c, -G and -O take a number or nothing)";
      return ParseResult::bad;
    } else {
      *error = "unknown option " + arg;
      return ParseResult::bad;
    }
    if (!ok) {
      *error = (v.empty() ? "missing value for " + arg : "bad value for " + arg + " ('" + v + "')") +
               ": expected " + expected;
      return ParseResult::bad;
    }
  }
  const char* conflict = nullptr;
  if (sawFactor && sawStep) conflict = "give either -f or -i, not both";
  else if (opts->minBytes > opts->maxBytes) conflict = "-b is larger than -e";
  else if (opts->overlapMs > 0 && opts->graphLaunches > 0)
    conflict = "give either -O (its collectives are launched eagerly) or -G, not both";
  else if (opts->blocking && (opts->graphLaunches > 0 || opts->overlapMs > 0))
    conflict = "--blocking times calls one by one: not with -G or -O";
  else if (opts->legacyStream && !opts->blocking)
    conflict = "--legacy-stream applies to --blocking's calls: give --blocking too";
  if (conflict) {
    *error = conflict;
    return ParseResult::bad;
  }
  if (sawStep) opts->stepFactor = 0;
  return ParseResult::run;
}

bool parseOptions(int argc, char** argv, bool quiet, Options* opts, int* exitCode) {
  std::string error;
  switch (parseArguments(argc, argv, opts, &error)) {
    case ParseResult::run: return true;
    case ParseResult::help:
      if (!quiet) fputs(kUsage, stdout);
      *exitCode = 0;
      return false;
    case ParseResult::bad: break;
  }
  if (!quiet) fprintf(stderr, "alloy-perf: %s\n%s", error.c_str(), kUsage);
  *exitCode = 2;
  return false;
}

std::vector<size_t> sweepSizes(const Options& opts) {
  std::vector<size_t> sizes;
  for (size_t size = opts.minBytes; size <= opts.maxBytes;) {
    sizes.push_back(size);
    const size_t next = opts.stepFactor > 1 ? size * opts.stepFactor : size + opts.stepBytes;
    if (next <= size) break;  // overflow, or -b 0 with a factor: stop instead of looping forever
    size = next;
  }
  return sizes;
}

}  // namespace alloyperf
