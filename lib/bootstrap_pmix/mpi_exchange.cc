#include <climits>

#include "error.h"
#include "exchange.h"

namespace alloy {

alloyResult_t exchangeOverMpi(MPI_Comm comm, const void* mine, size_t bytes,
                              std::vector<uint8_t>* all) {
  int nranks = 0;
  MPI_Comm_size(comm, &nranks);
  if (bytes > INT_MAX) return fail(alloyInternalError, "endpoint blob of %zu bytes is too large", bytes);
  all->assign(bytes * nranks, 0);
  int rc = PMPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all->data(),
                          static_cast<int>(bytes), MPI_BYTE, comm);
  if (rc != MPI_SUCCESS) return fail(alloyInternalError, "MPI_Allgather of endpoint blobs failed (%d)", rc);
  return alloySuccess;
}

}  // namespace alloy
