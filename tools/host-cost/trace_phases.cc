#include "trace_phases.h"

#include <algorithm>

namespace {

using alloy::KernelTraceRecord;

double median(std::vector<double> values) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Microseconds from stamp `from` to stamp `to` of r, or nothing (false) where either is missing.
bool span(const KernelTraceRecord& r, int from, int to, double* us) {
  if (r.stamp[from] == 0 || r.stamp[to] == 0 || r.stamp[to] < r.stamp[from]) return false;
  *us = static_cast<double>(r.stamp[to] - r.stamp[from]) / 1000.0;
  return true;
}

// The latest stamp before `to` that r has, from kTraceEntry on.
int previousStamp(const KernelTraceRecord& r, int to) {
  for (int k = to - 1; k > alloy::kTraceEntry; --k)
    if (r.stamp[k] != 0) return k;
  return alloy::kTraceEntry;
}

}  // namespace

TracePhases tracePhases(const std::vector<KernelTraceRecord>& records, size_t latest) {
  std::vector<KernelTraceRecord> written;
  for (const KernelTraceRecord& r : records)
    if (r.stamp[alloy::kTraceEntry] != 0 && r.stamp[alloy::kTraceEnd] != 0) written.push_back(r);
  std::sort(written.begin(), written.end(),
            [](const KernelTraceRecord& a, const KernelTraceRecord& b) { return a.operation < b.operation; });
  TracePhases out;
  if (written.empty()) return out;
  // The newest run of consecutive operations, cut to `latest`.
  size_t first = written.size() - 1;
  while (first > 0 && written[first - 1].operation + 1 == written[first].operation &&
         written.size() - first < latest)
    --first;
  std::vector<double> gap, phase[alloy::kTraceStamps], total, rounds, perRound[alloy::kTraceRoundPhases];
  for (size_t i = first; i < written.size(); ++i) {
    const KernelTraceRecord& r = written[i];
    double us = 0;
    if (i > first && r.stamp[alloy::kTraceEntry] >= written[i - 1].stamp[alloy::kTraceEnd])
      gap.push_back(static_cast<double>(r.stamp[alloy::kTraceEntry] - written[i - 1].stamp[alloy::kTraceEnd]) / 1000.0);
    for (int k = alloy::kTraceLoaded; k < alloy::kTraceStamps; ++k)
      if (r.stamp[k] != 0 && span(r, previousStamp(r, k), k, &us)) phase[k].push_back(us);
    if (span(r, alloy::kTraceEntry, alloy::kTraceEnd, &us)) total.push_back(us);
    if (r.rounds == 0) continue;
    rounds.push_back(static_cast<double>(r.rounds));
    for (int k = 0; k < alloy::kTraceRoundPhases; ++k)
      perRound[k].push_back(static_cast<double>(r.roundNs[k]) / static_cast<double>(r.rounds) / 1000.0);
  }
  out.launches = written.size() - first;
  out.gap = median(gap);
  out.loaded = median(phase[alloy::kTraceLoaded]);
  out.sent = median(phase[alloy::kTraceSent]);
  out.received = median(phase[alloy::kTraceReceived]);
  out.end = median(phase[alloy::kTraceEnd]);
  out.total = median(total);
  out.rounds = median(rounds);
  out.roundStores = median(perRound[alloy::kRoundStores]);
  out.roundReduce = median(perRound[alloy::kRoundReduce]);
  out.roundWhole = median(perRound[alloy::kRoundWhole]);
  return out;
}
