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

// Overlap mode's columns, one block per library: the compute load alone and with the collective beside
// it, their ratio, and the collective's own time and bus bandwidth beside the load; the check's count
// of wrong elements after the overlapped calls last, with -c only.
enum OverlapColumn { kComputeAlone, kComputeWith, kSlowdown, kOverlapTime, kOverlapBusBw, kOverlapWrong };
constexpr int kOverlapColumns = 6;
const char* const kOverlapNames[kOverlapColumns] = {"cmp alone", "cmp with", "slowdown", "ovl time", "ovl busbw",
                                                    "#wrong"};
const char* const kOverlapUnits[kOverlapColumns] = {"(ms)", "(ms)", "(x)", "(us)", "(GB/s)", ""};

// A column is as wide as its number or its name with the library's prefix ("nccl "), whichever is wider.
int overlapWidth(const char* prefix, int column) {
  const int numberWidth = column == kOverlapWrong ? kWrongW : kTimeW;
  const int nameWidth = static_cast<int>(std::string(prefix).size() + std::string(kOverlapNames[column]).size());
  return nameWidth > numberWidth ? nameWidth : numberWidth;
}

}  // namespace

void Table::printRunInfo(const RunInfo& info, const Options& opts) {
  const char* mode = opts.graphLaunches > 0 ? "CUDA graph replays"
                     : opts.blocking && opts.legacyStream ? "blocking calls on the legacy default stream (host time)"
                     : opts.blocking        ? "blocking calls (host time)"
                                            : "eager launches";
  fprintf(out_, "# alloy-perf: %d ranks, alloy version %d, %s, %d warm-up and %d timed iterations%s\n",
          info.nranks, info.alloyVersion, mode, opts.warmupIters, opts.iters, opts.check ? ", check on" : "");
  for (const DeviceInfo& d : info.devices)
    fprintf(out_, "#  rank %3d on %s device %2d [%s] %s\n", d.rank, d.host.c_str(), d.device, d.pciBusId.c_str(),
            d.name.c_str());
  if (!info.alloyUnavailable.empty()) fprintf(out_, "# alloy unavailable: %s\n", info.alloyUnavailable.c_str());
  if (overlap_) {
    const ComputeLoadShape& l = info.load;
    fprintf(out_, "# overlap: compute load of %d launches x %d blocks x %d threads, %lld FMAs per thread, %.2f ms"
                  " alone (target %d ms, calibrated on every rank at once)\n",
            l.kernels, l.blocks, l.threads, l.loop, l.calibratedMs, l.targetMs);
    fprintf(out_, "# overlap: cmp alone, cmp with: the load alone and with the collective looping beside it;"
                  " slowdown = with / alone; ovl time, ovl busbw: the collective beside the load;"
                  " each rank's median of %d repetitions, max over ranks\n",
            opts.overlapReps);
  }
  if (info.ncclRequested)
    fprintf(out_, "# nccl: %s%s\n", info.ncclLoaded ? "" : "cannot be loaded, continuing without it: ",
            info.ncclDescription.c_str());
  fprintf(out_, "# time: per iteration, %s; ratio = alloy busbw / nccl busbw\n", timeAcrossRanks(opts));
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
  if (overlap_) {
    printOverlapHeader("", false);
    if (nccl_) printOverlapHeader("nccl ", false);
  }
  fprintf(out_, "\n# %10s  %12s  %8s  %6s  %6s  %*s  %*s  %*s  %*s", "(B)", "(elements)", "", "", "", kTimeW,
          "(us)", kBwW, "(GB/s)", kBwW, "(GB/s)", kWrongW, "");
  if (nccl_) fprintf(out_, "  %*s  %*s", kTimeW, "(us)", kBwW + 3, "(GB/s)");
  if (overlap_) {
    if (nccl_ && check_) fprintf(out_, "  %*s", kWrongW, "");  // under nccl's #wrong
    if (nccl_) fprintf(out_, "  %6s", "");                     // under the ratio
    printOverlapHeader("", true);
    if (nccl_) printOverlapHeader("nccl ", true);
  }
  fprintf(out_, "\n");
  fflush(out_);
}

void Table::printOverlapHeader(const char* prefix, bool units) {
  for (int col = 0; col < kOverlapColumns; ++col) {
    if (col == kOverlapWrong && !check_) break;
    const std::string label = units ? kOverlapUnits[col] : std::string(prefix) + kOverlapNames[col];
    fprintf(out_, "  %*s", overlapWidth(prefix, col), label.c_str());
  }
}

void Table::printOverlap(const char* prefix, const OverlapMeasurement& o) {
  for (int col = 0; col < kOverlapColumns; ++col) {
    if (col == kOverlapWrong && !check_) break;
    const int w = overlapWidth(prefix, col);
    if (!o.measured) {
      fprintf(out_, "  %*s", w, "-");
      continue;
    }
    std::string text;
    switch (col) {
      case kComputeAlone: text = number(o.computeAloneMs, w); break;
      case kComputeWith: text = number(o.computeWithMs, w); break;
      case kSlowdown: text = number(o.slowdown, w); break;
      case kOverlapTime: text = number(o.timeUs, w); break;
      case kOverlapBusBw: text = number(o.busBw, w); break;
      case kOverlapWrong: text = wrongText(o.wrong); break;
    }
    fprintf(out_, "  %*s", w, text.c_str());
  }
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
  if (overlap_) {
    printOverlap("", row.alloy.overlap);
    if (nccl_) printOverlap("nccl ", row.nccl.overlap);
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
