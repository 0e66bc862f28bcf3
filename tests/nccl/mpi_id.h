/* The unique id of a communicator over every MPI rank: made on rank 0, handed to the others by MPI. */
#ifndef ALLOY_NCCL_TEST_MPI_ID_H_
#define ALLOY_NCCL_TEST_MPI_ID_H_

#include <mpi.h>

#include "check.h"

static ncclUniqueId mpiSharedId(int rank) {
  ncclUniqueId id;
  memset(&id, 0, sizeof(id));
  if (rank == 0) CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  return id;
}

#endif
