// The communicator the other tests rely on.
#include <cstdlib>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

class Communicator : public CommTest {};

TEST_F(Communicator, Queries) {
  int count = -1, me = -1, version = 0, devices = 0;
  ALLOY_EXPECT_OK(alloyCommCount(comm, &count));
  ALLOY_EXPECT_OK(alloyCommUserRank(comm, &me));
  EXPECT_EQ(count, nranks);
  EXPECT_EQ(me, rank);
  ALLOY_EXPECT_OK(alloyGetVersion(&version));
  EXPECT_EQ(version, ALLOY_VERSION_CODE);
  alloyResult_t asyncError = alloyInternalError;
  ALLOY_EXPECT_OK(alloyCommGetAsyncError(comm, &asyncError));
  EXPECT_EQ(asyncError, alloySuccess);
  // The library's default device: local rank % visible devices (ranks may share a GPU).
  CUDA_EXPECT_OK(cudaGetDeviceCount(&devices));
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) {
    EXPECT_EQ(device, std::atoi(local) % devices) << "OMPI_COMM_WORLD_LOCAL_RANK=" << local;
  }
  EXPECT_GE(device, 0);
  EXPECT_LT(device, devices);
}

}  // namespace
}  // namespace alloytest
