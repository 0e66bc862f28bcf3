// Built when libpmix was not found at configure time: the PMIx path reports itself unavailable, and
// exchangeEndpoints falls back to MPI_Allgather.
#include "error.h"
#include "exchange.h"

namespace alloy {

alloyResult_t exchangeOverPmix(MPI_Comm, const void*, size_t, std::vector<uint8_t>*) {
  return fail(alloyNotSupported, "this build of Alloy has no PMIx support (libpmix was not found)");
}

}  // namespace alloy
