// One row of results, as the table prints it and the JSON file records it, and the run's description.
#ifndef ALLOY_PERF_RESULTS_H_
#define ALLOY_PERF_RESULTS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "alloy.h"
#include "collectives.h"
#include "measure.h"
#include "options.h"

namespace alloyperf {

struct Row {
  Coll coll;
  alloyDataType_t type;
  alloyRedOp_t redop;  // meaningful when collReduces(coll)
  int root;            // -1 for collectives without a root, as nccl-tests prints it
  size_t sizeBytes;
  size_t count;
  Measurement alloy;
  bool hasNccl = false;
  Measurement nccl;
};

// Alloy busbw / NCCL busbw. Both ran the same bytes, so this is NCCL's time over Alloy's, which stays
// defined where busbw is 0 (one rank, or empty rows). NaN when either side has no time.
double ratio(const Row& row);

const char* redopLabel(const Row& row);  // "none" for collectives that do not reduce

struct DeviceInfo {
  int rank;
  std::string host;
  int device;
  std::string name;
  std::string pciBusId;
};

struct RunInfo {
  int nranks = 0;
  int alloyVersion = 0;
  std::string alloyUnavailable;  // why every row is "not supported by alloy", if it is
  bool ncclRequested = false;
  bool ncclLoaded = false;
  std::string ncclDescription;  // path and version, or why it could not be loaded
  int ncclVersion = 0;
  std::vector<DeviceInfo> devices;
  ComputeLoadShape load;  // overlap mode's compute load; targetMs 0 without -O
};

}  // namespace alloyperf

#endif  // ALLOY_PERF_RESULTS_H_
