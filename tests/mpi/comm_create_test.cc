// Communicator creation: every rank must hold every peer's endpoint blob byte for byte (checked against
// an independent MPI_Allgather of the blobs and of the host names and pids), the topology must match
// MPI's own view of shared-memory nodes, and the bootstrap path must be the one the test expects.
#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "comm.h"
#include "mpi_test_util.h"

namespace {

void expectBootstrapPath(alloyComm_t comm) {
  const char* expected = std::getenv("ALLOY_TEST_EXPECT_BOOTSTRAP");
  const std::string want = expected ? expected : "any";
  const std::string got = alloy::bootstrapPathName(alloy::commBootstrapPath(comm));
  if (want != "any") EXPECT_EQ(got, want) << "endpoints travelled over the wrong path";
}

// Checks everything creation promises about comm, built from userComm.
void verifyCommunicator(MPI_Comm userComm, alloyComm_t comm) {
  int rank = 0, nranks = 0;
  MPI_Comm_rank(userComm, &rank);
  MPI_Comm_size(userComm, &nranks);
  int value = -1;
  ASSERT_ALLOY(alloySuccess, alloyCommCount(comm, &value));
  EXPECT_EQ(value, nranks);
  ASSERT_ALLOY(alloySuccess, alloyCommUserRank(comm, &value));
  EXPECT_EQ(value, rank);

  // The reference: each rank's own blob gathered over MPI, independent of the bootstrap path.
  const size_t blobBytes = sizeof(alloy::EndpointBlob);
  std::vector<alloy::EndpointBlob> reference(nranks);
  MPI_Allgather(&alloy::commPeerBlob(comm, rank), blobBytes, MPI_BYTE, reference.data(), blobBytes, MPI_BYTE,
                userComm);
  for (int r = 0; r < nranks; ++r)
    EXPECT_EQ(0, std::memcmp(&alloy::commPeerBlob(comm, r), &reference[r], blobBytes))
        << "rank " << rank << " holds a wrong blob for peer " << r;

  // The blob's contents describe the peer: its host name and pid, as the peer itself reports them.
  struct Identity {
    char host[alloy::kHostNameBytes];
    int pid;
  } mine{}, all[64];
  ASSERT_LE(nranks, 64);
  gethostname(mine.host, sizeof(mine.host) - 1);
  mine.pid = getpid();
  MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, userComm);
  for (int r = 0; r < nranks; ++r) {
    EXPECT_STREQ(alloy::commPeerBlob(comm, r).hostName, all[r].host) << "peer " << r;
    EXPECT_EQ(alloy::commPeerBlob(comm, r).pid, all[r].pid) << "peer " << r;
  }

  // Local rank and size agree with MPI's split by shared memory, refined by ALLOY_HOSTID (virtual
  // hosts: ranks of one machine with different values are on different hosts).
  MPI_Comm machine, node;
  MPI_Comm_split_type(userComm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &machine);
  const char* hostId = std::getenv("ALLOY_HOSTID");
  const std::string virtualHost = hostId != nullptr ? hostId : "";
  MPI_Comm_split(machine, static_cast<int>(std::hash<std::string>()(virtualHost) & 0x3fffffff), rank, &node);
  int nodeRank = 0, nodeSize = 0;
  MPI_Comm_rank(node, &nodeRank);
  MPI_Comm_size(node, &nodeSize);
  MPI_Comm_free(&node);
  MPI_Comm_free(&machine);
  EXPECT_EQ(comm->topology.localRank, nodeRank);
  EXPECT_EQ(comm->topology.localSize, nodeSize);
  // Set where the ranks of MPI_COMM_WORLD are known to form hosts of this size (the virtual-host test),
  // so that a variable that did not reach the ranks fails rather than agreeing with an unsplit machine.
  int worldSize = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  const char* expected = std::getenv("ALLOY_TEST_EXPECT_LOCAL_SIZE");
  if (expected != nullptr && nranks == worldSize)
    EXPECT_EQ(comm->topology.localSize, std::atoi(expected)) << "ALLOY_HOSTID=" << virtualHost;

  int device = -2, visible = 0;
  ASSERT_ALLOY(alloySuccess, alloyCommCuDevice(comm, &device));
  if (cudaGetDeviceCount(&visible) != cudaSuccess) visible = 0;
  if (visible == 0) EXPECT_EQ(device, -1) << "no CUDA device here: the communicator must be host-only";
  else EXPECT_GE(device, 0);
  expectBootstrapPath(comm);
}

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
  verifyCommunicator(MPI_COMM_WORLD, comm);
  alloyResult_t async = alloyInternalError;
  EXPECT_ALLOY(alloySuccess, alloyCommGetAsyncError(comm, &async));
  EXPECT_EQ(async, alloySuccess);
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}

TEST(CommCreate, FromSplitWithReversedRanks) {
  // Within each colour the rank order is reversed, so communicator ranks differ from world ranks.
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, worldRank() % 2, -worldRank(), &split);
  alloyComm_t comm = nullptr;
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPI(split, nullptr, &comm));
  verifyCommunicator(split, comm);
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
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
                             Differing{"ALLOY_NET_SLOTS", "3"}, Differing{"ALLOY_NET_STAGING_BYTES", "2097152"}}) {
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
  // Only even ranks abort; odd ranks destroy. Neither may wait for the other.
  if (worldRank() % 2 == 0) ASSERT_ALLOY(alloySuccess, alloyCommAbort(comm));
  else ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}
