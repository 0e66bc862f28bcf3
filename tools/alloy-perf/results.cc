#include "results.h"

#include <cmath>

namespace alloyperf {

double ratio(const Row& row) {
  if (!row.hasNccl || !row.alloy.supported || !row.nccl.supported || row.alloy.timeUs <= 0) return NAN;
  return row.nccl.timeUs / row.alloy.timeUs;
}

const char* redopLabel(const Row& row) { return collReduces(row.coll) ? redopName(row.redop) : "none"; }

}  // namespace alloyperf
