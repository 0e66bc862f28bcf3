#include "bootstrap.h"

#include "error.h"

namespace alloy {

const char* bootstrapPathName(BootstrapPath path) {
  switch (path) {
    case BootstrapPath::Pmix: return "pmix";
    case BootstrapPath::Mpi: return "mpi";
    case BootstrapPath::Socket: return "socket";
  }
  return "?";
}

alloyResult_t agree(Bootstrap& bootstrap, alloyResult_t mine, const char* step) {
  const int nranks = bootstrap.nranks();
  int lowest = nranks;
  const alloyResult_t voted = bootstrap.minimum(mine == alloySuccess ? nranks : bootstrap.rank(), &lowest);
  if (mine != alloySuccess) return mine;
  if (voted != alloySuccess) return fail(voted, "could not agree on %s with the other ranks: %s", step, lastError());
  if (lowest != nranks) return fail(alloyRemoteError, "rank %d failed during %s", lowest, step);
  return alloySuccess;
}

}  // namespace alloy
