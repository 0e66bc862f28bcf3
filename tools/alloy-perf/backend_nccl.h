// Backend over NCCL loaded at run time (nccl_api.h), bootstrapped over MPI.
#ifndef ALLOY_PERF_BACKEND_NCCL_H_
#define ALLOY_PERF_BACKEND_NCCL_H_

#include <mpi.h>

#include <memory>
#include <string>

#include "backend.h"

namespace alloyperf {

// Collective over comm: loads NCCL on every rank and, only if every rank could, creates NCCL's
// communicator (rank 0's unique id goes to the others with MPI_Bcast). Returns null with *why set when
// NCCL cannot be loaded anywhere; a failure after loading is fatal. *description names the library and
// its version for the report.
std::unique_ptr<Backend> createNcclBackend(MPI_Comm comm, std::string* why, std::string* description,
                                           int* version);

}  // namespace alloyperf

#endif  // ALLOY_PERF_BACKEND_NCCL_H_
