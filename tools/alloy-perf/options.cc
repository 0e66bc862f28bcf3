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
  std::string error;

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

  // -c and -G take an optional number (nccl-tests writes "-c 1", "-G 1"; "-c" alone reads as 1).
  int optionalCount(const std::string& inlineValue, bool hasInline) {
    int v;
    if (hasInline) return parseInt(inlineValue, &v) ? v : -1;
    if (i + 1 < argc && parseInt(argv[i + 1], &v)) {
      ++i;
      return v;
    }
    return 1;
  }
};

}  // namespace

const char* redopName(alloyRedOp_t op) { return kRedopNames[op]; }

bool parseOptions(int argc, char** argv, bool quiet, Options* opts, int* exitCode) {
  Parser p{argc, argv, 1, ""};
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
    bool ok = true;
    if (is("-h", "--help")) {
      if (!quiet) fputs(kUsage, stdout);
      *exitCode = 0;
      return false;
    } else if (is("-b", "--minbytes")) {
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->minBytes);
    } else if (is("-e", "--maxbytes")) {
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->maxBytes);
    } else if (is("-f", "--stepfactor")) {
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->stepFactor) && opts->stepFactor >= 2;
      sawFactor = true;
    } else if (is("-i", "--stepbytes")) {
      ok = p.value(inlineValue, hasInline, &v) && parseBytes(v, &opts->stepBytes) && opts->stepBytes > 0;
      sawStep = true;
    } else if (is("-o", "--op")) {
      ok = p.value(inlineValue, hasInline, &v) && parseList(v, kNumColls, parseCollName, &opts->colls);
    } else if (is("-d", "--datatype")) {
      ok = p.value(inlineValue, hasInline, &v) &&
           parseList(v, static_cast<int>(alloyNumTypes), parseTypeName, &opts->types);
    } else if (is(nullptr, "--redop")) {
      ok = p.value(inlineValue, hasInline, &v) &&
           parseList(v, static_cast<int>(alloyNumOps), parseRedop, &opts->redops);
    } else if (is("-w", "--warmup_iters")) {
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->warmupIters);
    } else if (is("-n", "--iters")) {
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->iters) && opts->iters > 0;
    } else if (is("-r", "--root")) {
      ok = p.value(inlineValue, hasInline, &v) && parseInt(v, &opts->root);
    } else if (is("-c", "--check")) {
      const int c = p.optionalCount(inlineValue, hasInline);
      ok = c >= 0;
      opts->check = c > 0;
    } else if (is("-G", "--cudagraph")) {
      opts->graphLaunches = p.optionalCount(inlineValue, hasInline);
      ok = opts->graphLaunches >= 0;
    } else if (is("-J", "--json")) {
      ok = p.value(inlineValue, hasInline, &opts->jsonPath) && !opts->jsonPath.empty();
    } else if (is(nullptr, "--compare")) {
      ok = p.value(inlineValue, hasInline, &v) && v == "nccl";
      opts->compareNccl = ok;
    } else if (is(nullptr, "--seed")) {
      ok = p.value(inlineValue, hasInline, &v) && parseUnsigned(v, &opts->seed);
    } else {
      p.error = "unknown option " + arg;
      ok = false;
    }
    if (!ok) {
      if (p.error.empty()) p.error = "bad or missing value for " + arg + (v.empty() ? "" : " ('" + v + "')");
      break;
    }
  }
  if (p.error.empty()) {
    if (sawFactor && sawStep) p.error = "give either -f or -i, not both";
    else if (opts->minBytes > opts->maxBytes) p.error = "-b is larger than -e";
  }
  if (!p.error.empty()) {
    if (!quiet) fprintf(stderr, "alloy-perf: %s\n%s", p.error.c_str(), kUsage);
    *exitCode = 2;
    return false;
  }
  if (sawStep) opts->stepFactor = 0;
  return true;
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
