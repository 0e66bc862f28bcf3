// The table on standard output, in nccl-tests' columns, with NCCL's time, bus bandwidth and the ratio
// appended in compare mode, and in overlap mode (-O) the compute load's times beside each library's
// collective after them. Printed by rank 0 only.
#ifndef ALLOY_PERF_TABLE_H_
#define ALLOY_PERF_TABLE_H_

#include <cstdio>
#include <string>

#include "results.h"

namespace alloyperf {

class Table {
 public:
  Table(FILE* out, bool withNccl, bool check, bool overlap)
      : out_(out), nccl_(withNccl), check_(check), overlap_(overlap) {}
  void printRunInfo(const RunInfo& info, const Options& opts);
  void printHeader(Coll coll);
  void printRow(const Row& row);
  // nccl-tests' closing lines: the number of wrong values and the average bus bandwidth.
  void printFooter(long long wrong, double avgBusBw, int rowsMeasured);

 private:
  void printNoteOnce(const char* who, const std::string& note);
  void printOverlapHeader(const char* prefix, bool units);
  void printOverlap(const char* prefix, const OverlapMeasurement& o);

  FILE* out_;
  bool nccl_, check_, overlap_;
  std::string lastNote_;
};

}  // namespace alloyperf

#endif  // ALLOY_PERF_TABLE_H_
