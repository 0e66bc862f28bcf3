// What creation promises about a communicator, checked against MPI's own view of the same ranks: shared by
// the tests of every bootstrap (MPI/PMIx in comm_create_test.cc, unique-id sockets in socket_create_test.cc).
#pragma once

#include <mpi.h>

#include "alloy.h"

// Count and rank as userComm's; every peer's endpoint blob byte for byte against an MPI_Allgather of each
// rank's own, with the peers' host names and pids; the topology against MPI's split of shared-memory nodes,
// refined by ALLOY_HOSTID; the device; and the bootstrap path against ALLOY_TEST_EXPECT_BOOTSTRAP.
void verifyCommunicator(MPI_Comm userComm, alloyComm_t comm);

// verifyCommunicator, then no asynchronous error and a clean destroy.
void verifyAndDestroy(MPI_Comm userComm, alloyComm_t comm);
