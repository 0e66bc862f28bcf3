// Communicator creation: every rank must hold every peer's endpoint blob byte for byte (checked against
// an independent MPI_Allgather of the blobs and of the host names and pids), the topology must match
// MPI's own view of shared-memory nodes, and the bootstrap path must be the one the test expects.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "comm.h"
#include "comm_verify.h"
#include "mpi_test_util.h"

namespace {

int openFileDescriptors() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
  }
  return count;
}

}  // namespace

TEST(CommCreate, FromWorld) {
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  verifyAndDestroy(MPI_COMM_WORLD, comm);
}

TEST(CommCreate, FromSplitWithReversedRanks) {
  // Within each colour the rank order is reversed, so communicator ranks differ from world ranks.
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, worldRank() % 2, -worldRank(), &split);
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(split, nullptr, &comm));
  verifyAndDestroy(split, comm);
  MPI_Comm_free(&split);
}

TEST(CommCreate, FromDup) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  alloyComm_t a = nullptr, b = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(dup, nullptr, &a));
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(dup, nullptr, &b));  // two on one MPI communicator
  verifyCommunicator(dup, a);
  verifyCommunicator(dup, b);
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(b));
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(a));
  MPI_Comm_free(&dup);
}

TEST(CommCreate, TwoHundredCreateDestroyCyclesLeakNoDescriptors) {
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));  // warm-up
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
  const int before = openFileDescriptors();
  for (int i = 0; i < 200; ++i) {
    ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm)) << "cycle " << i;
    if (i % 50 == 0) verifyCommunicator(MPI_COMM_WORLD, comm);
    ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm)) << "cycle " << i;
  }
  EXPECT_EQ(openFileDescriptors(), before);
}

// A setting of the GPU engine or the network that differs between ranks fails creation on every rank, naming it, instead
// of ranks cutting chunks differently and waiting for each other until the timeout.
TEST(CommCreate, EngineSettingsThatDifferBetweenRanksFailOnEveryRank) {
  const int nranks = worldSize();
  if (nranks < 2) GTEST_SKIP() << "needs 2 ranks";
  const int rank = worldRank();
  struct Differing {
    const char* variable;
    const char* value;  // within the variable's range, and not its default
  };
  for (const Differing& d : {Differing{"ALLOY_LL_MAX_BYTES", "3"}, Differing{"ALLOY_SLOTS", "3"},
                             Differing{"ALLOY_DIRECT_BYTES", "4096"}, Differing{"ALLOY_DIRECT_BLOCKS", "3"},
                             Differing{"ALLOY_DIRECT_LL128_MAX_BYTES", "4096"},
                             Differing{"ALLOY_NET_SLOTS", "3"}, Differing{"ALLOY_NET_STAGING_BYTES", "2097152"},
                             Differing{"ALLOY_NET_EAGER_BYTES", "4096"}}) {
    const char* variable = d.variable;
    SCOPED_TRACE(variable);
    if (rank == nranks - 1) setenv(variable, d.value, 1);
    alloyComm_t comm = nullptr;
    const alloyResult_t result = alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm);
    const std::string message = alloyGetLastError(nullptr);
    unsetenv(variable);
    EXPECT_EQ(result, alloyInvalidUsage) << message;
    EXPECT_NE(message.find(std::string(variable) + " differs between ranks"), std::string::npos) << message;
    EXPECT_NE(message.find("rank " + std::to_string(nranks - 1) + " uses " + d.value), std::string::npos) << message;
    if (result == alloySuccess) alloyCommDestroy(comm);
  }
  // Equal settings again: creation works.
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}

TEST(CommCreate, DisjointSubcommunicatorsInDifferentOrders) {
  // Parity groups and half groups overlap; even ranks create parity-then-half, odd ranks half-then-parity.
  const int rank = worldRank(), nranks = worldSize();
  MPI_Comm parity, half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
  MPI_Comm_split(MPI_COMM_WORLD, rank < nranks / 2, rank, &half);
  MPI_Comm order[2] = {parity, half};
  if (rank % 2) std::swap(order[0], order[1]);
  alloyComm_t comms[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(order[i], nullptr, &comms[i]));
  for (int i = 0; i < 2; ++i) verifyCommunicator(order[i], comms[i]);
  for (int i = 0; i < 2; ++i) ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comms[i]));
  MPI_Comm_free(&parity);
  MPI_Comm_free(&half);
}

TEST(CommCreate, HostOnlyCommunicatorRefusesGpuOperations) {
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  int device = 0;
  ASSERT_ALLOY(alloySuccess, alloyCommCuDevice(comm, &device));
  if (device >= 0) {
    alloyCommDestroy(comm);
    GTEST_SKIP() << "this machine has a CUDA device; the host-only mode is tested on CPU machines";
  }
  char buffer[64];
  EXPECT_ALLOY(alloyInvalidUsage, alloyAlltoAll(buffer, buffer + 32, 1, alloyInt8, comm, nullptr));
  EXPECT_TRUE(lastErrorMentions("host-only")) << alloyGetLastError(nullptr);
  EXPECT_ALLOY(alloyInvalidUsage, alloySend(buffer, 1, alloyInt8, 0, comm, nullptr));
  EXPECT_ALLOY(alloyInvalidUsage, alloyAllReduce(buffer, buffer, 1, alloyInt8, alloySum, comm, nullptr));
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}

TEST(CommCreate, AbortFreesWithoutPeers) {
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  // Only even ranks abort; odd ranks destroy. Neither may wait for the other: the abort enters the
  // destroy's barrier (on GPUs; host-only communicators have none) without waiting in it.
  const auto start = std::chrono::steady_clock::now();
  if (worldRank() % 2 == 0) ASSERT_ALLOY(alloySuccess, alloyCommAbort(comm));
  else ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
}
