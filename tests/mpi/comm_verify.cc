#include "comm_verify.h"

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

}  // namespace

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


void verifyAndDestroy(MPI_Comm userComm, alloyComm_t comm) {
  verifyCommunicator(userComm, comm);
  alloyResult_t async = alloyInternalError;  // poisoned
  EXPECT_ALLOY(alloySuccess, alloyCommGetAsyncError(comm, &async));
  EXPECT_EQ(async, alloySuccess);
  EXPECT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}
