#include "table.h"

#include <cmath>

#include "datatypes.h"

namespace alloyperf {

namespace {

// Fixed-width numbers: two decimals while they fit, whole numbers beyond (a 1 GB row can take seconds).
std::string number(double v, int width) {
  char buf[64];
  snprintf(buf, sizeof buf, "%*.2f", width, v);
  if (static_cast<int>(std::string(buf).size()) > width) snprintf(buf, sizeof buf, "%*.0f", width, v);
  return buf;
}

std::string wrongText(long long wrong) { return wrong < 0 ? "N/A" : std::to_string(wrong); }

// Widths of the measured columns; a row that was not measured writes its text across them instead.
constexpr int kTimeW = 10, kBwW = 7, kWrongW = 6;
constexpr int kAlloyW = 2 + kTimeW + 2 + kBwW + 2 + kBwW + 2 + kWrongW;

}  // namespace

void Table::printRunInfo(const RunInfo& info, const Options& opts) {
  fprintf(out_, "# alloy-perf: %d ranks, alloy version %d, %s, %d warm-up and %d timed iterations%s\n",
          info.nranks, info.alloyVersion, opts.graphLaunches > 0 ? "CUDA graph replays" : "eager launches",
          opts.warmupIters, opts.iters, opts.check ? ", check on" : "");
  for (const DeviceInfo& d : info.devices)
    fprintf(out_, "#  rank %3d on %s device %2d [%s] %s\n", d.rank, d.host.c_str(), d.device, d.pciBusId.c_str(),
            d.name.c_str());
  if (!info.alloyUnavailable.empty()) fprintf(out_, "# alloy unavailable: %s\n", info.alloyUnavailable.c_str());
  if (info.ncclRequested)
    fprintf(out_, "# nccl: %s%s\n", info.ncclLoaded ? "" : "cannot be loaded, continuing without it: ",
            info.ncclDescription.c_str());
  fprintf(out_, "# time: per iteration, max over ranks; ratio = alloy busbw / nccl busbw\n");
}

void Table::printHeader(Coll coll) {
  fprintf(out_, "#\n# %s\n#\n", collName(coll));
  fprintf(out_, "# %10s  %12s  %8s  %6s  %6s  %*s  %*s  %*s  %*s", "size", "count", "type", "redop", "root",
          kTimeW, "time", kBwW, "algbw", kBwW, "busbw", kWrongW, "#wrong");
  if (nccl_) {
    fprintf(out_, "  %*s  %*s", kTimeW, "nccl time", kBwW + 3, "nccl busbw");
    if (check_) fprintf(out_, "  %*s", kWrongW, "#wrong");
    fprintf(out_, "  %6s", "ratio");
  }
  fprintf(out_, "\n# %10s  %12s  %8s  %6s  %6s  %*s  %*s  %*s  %*s", "(B)", "(elements)", "", "", "", kTimeW,
          "(us)", kBwW, "(GB/s)", kBwW, "(GB/s)", kWrongW, "");
  if (nccl_) fprintf(out_, "  %*s  %*s", kTimeW, "(us)", kBwW + 3, "(GB/s)");
  fprintf(out_, "\n");
  fflush(out_);
}

void Table::printNoteOnce(const char* who, const std::string& note) {
  const std::string line = std::string(who) + ": " + note;
  if (line == lastNote_) return;
  fprintf(out_, "# %s\n", line.c_str());
  lastNote_ = line;
}

void Table::printRow(const Row& row) {
  if (!row.alloy.supported && !row.alloy.note.empty()) printNoteOnce("alloy", row.alloy.note);
  if (row.hasNccl && !row.nccl.supported && !row.nccl.note.empty()) printNoteOnce("nccl", row.nccl.note);

  fprintf(out_, "  %10zu  %12zu  %8s  %6s  %6d", row.sizeBytes, row.count, typeInfo(row.type).name,
          redopLabel(row), row.root);
  const Measurement& a = row.alloy;
  if (a.supported) {
    fprintf(out_, "  %s  %s  %s  %*s", number(a.timeUs, kTimeW).c_str(), number(a.algBw, kBwW).c_str(),
            number(a.busBw, kBwW).c_str(), kWrongW, wrongText(a.wrong).c_str());
  } else {
    fprintf(out_, "  %-*s", kAlloyW - 2, "not supported by alloy");
  }
  if (nccl_) {
    const Measurement& n = row.nccl;
    if (n.supported) {
      fprintf(out_, "  %s  %s", number(n.timeUs, kTimeW).c_str(), number(n.busBw, kBwW + 3).c_str());
      if (check_) fprintf(out_, "  %*s", kWrongW, wrongText(n.wrong).c_str());
    } else {
      fprintf(out_, "  %*s  %*s", kTimeW, "n/a", kBwW + 3, "n/a");
      if (check_) fprintf(out_, "  %*s", kWrongW, "");
    }
    const double r = ratio(row);
    if (std::isnan(r)) fprintf(out_, "  %6s", "-");
    else fprintf(out_, "  %6.2f", r);
  }
  fprintf(out_, "\n");
  fflush(out_);  // a row at a time, so that a long sweep can be followed (and survives a later abort)
}

void Table::printFooter(long long wrong, double avgBusBw, int rowsMeasured) {
  fprintf(out_, "#\n# Out of bounds values : %lld %s\n", wrong, wrong ? "FAILED" : "OK");
  fprintf(out_, "# Avg bus bandwidth    : %g (alloy, over %d measured rows)\n#\n", avgBusBw, rowsMeasured);
  fflush(out_);
}

}  // namespace alloyperf
