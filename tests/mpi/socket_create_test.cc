// Communicators created over the unique-id socket bootstrap (the NCCL API's path, no MPI inside Alloy),
// with MPI used here only to start the ranks, hand out the id and compute the references: the same checks as
// for alloyCommCreateFromMPI (comm_verify.h), on the whole job, on a split with reversed ranks, and on
// virtual hosts (ALLOY_HOSTID, set per rank by ctest).
#include <cstring>
#include <memory>

#include "comm.h"
#include "comm_verify.h"
#include "mpi_test_util.h"
#include "root.h"
#include "socket_bootstrap.h"

namespace {

// Rank 0 of userComm starts a root; every rank joins it with its rank in userComm.
alloyResult_t createOverSockets(MPI_Comm userComm, alloyComm_t* comm) {
  int rank = 0, nranks = 0;
  MPI_Comm_rank(userComm, &rank);
  MPI_Comm_size(userComm, &nranks);
  uint8_t id[alloy::kUniqueIdBytes] = {};
  if (rank == 0 && alloy::startRoot(id) != alloySuccess) ADD_FAILURE() << alloyGetLastError(nullptr);
  MPI_Bcast(id, sizeof(id), MPI_BYTE, 0, userComm);
  std::unique_ptr<alloy::Bootstrap> bootstrap;
  const alloyResult_t joined = alloy::SocketBootstrap::join(id, nranks, rank, &bootstrap);
  if (joined != alloySuccess) return joined;
  return alloy::commCreate(std::move(bootstrap), nullptr, comm);
}

}  // namespace

TEST(SocketCreate, FromWorld) {
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, createOverSockets(MPI_COMM_WORLD, &comm));
  verifyAndDestroy(MPI_COMM_WORLD, comm);
}

TEST(SocketCreate, FromSplitWithReversedRanks) {
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, worldRank() % 2, -worldRank(), &split);
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, createOverSockets(split, &comm));
  verifyAndDestroy(split, comm);
  MPI_Comm_free(&split);
}

// The bootstrap's own collectives against MPI's: an all-gather of distinct bytes per rank, several sizes
// (one byte to many socket buffers), the minimum, and a barrier whose progress callback runs.
TEST(SocketCreate, BootstrapCollectivesMatchMpi) {
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, createOverSockets(MPI_COMM_WORLD, &comm));
  alloy::Bootstrap& bootstrap = *comm->bootstrap;
  for (size_t bytes : {size_t(1), size_t(4096), size_t(3) << 20}) {
    std::vector<uint8_t> mine(bytes), reference(bytes * worldSize()), got(7, 0xee);  // poisoned
    for (size_t i = 0; i < bytes; ++i) mine[i] = static_cast<uint8_t>(i * 131 + worldRank() * 17 + 1);
    MPI_Allgather(mine.data(), static_cast<int>(bytes), MPI_BYTE, reference.data(), static_cast<int>(bytes), MPI_BYTE,
                  MPI_COMM_WORLD);
    ASSERT_ALLOY(alloySuccess, bootstrap.allgather(mine.data(), bytes, &got));
    EXPECT_TRUE(got == reference) << bytes << " bytes per rank";
  }
  int lowest = -1;
  ASSERT_ALLOY(alloySuccess, bootstrap.minimum(100 - worldRank() * 3, &lowest));
  EXPECT_EQ(lowest, 100 - (worldSize() - 1) * 3);
  int calls = 0;
  if (worldRank() == 0) usleep(200000);  // the others wait, and progress, in the barrier meanwhile
  ASSERT_ALLOY(alloySuccess, bootstrap.barrier([&calls] { ++calls; }, 60000));
  if (worldRank() != 0 && worldSize() > 1) EXPECT_GT(calls, 0);
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}
