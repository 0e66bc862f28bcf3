// Endpoint exchange at communicator creation: every rank contributes a fixed-size blob and receives
// every peer's, ordered by communicator rank. PMIx carries the blobs where the launcher provides it;
// MPI_Allgather carries them otherwise.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "alloy.h"
#include "bootstrap.h"

namespace alloy {

// Collective over comm. On success *all holds nranks * bytes bytes and *used says which path carried
// them. Every rank returns the same result code.
alloyResult_t exchangeEndpoints(MPI_Comm comm, const void* mine, size_t bytes,
                                std::vector<uint8_t>* all, BootstrapPath* used);

// The two transports behind exchangeEndpoints; each is collective over comm.
alloyResult_t exchangeOverMpi(MPI_Comm comm, const void* mine, size_t bytes,
                              std::vector<uint8_t>* all);
// Returns alloyNotSupported on every rank when PMIx is unusable on any rank (no server, PMIx_Init
// failing), so that the caller can fall back consistently.
alloyResult_t exchangeOverPmix(MPI_Comm comm, const void* mine, size_t bytes,
                               std::vector<uint8_t>* all);

}  // namespace alloy
