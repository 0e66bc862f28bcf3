// Every block of a launch must be resident at once: blocks spin on flags that other ranks' blocks
// raise, so a block the GPU has not scheduled yet can leave its peers, and through them the resident
// blocks, waiting forever. ALLOY_CHANNELS=32 on 4 ranks asks for 7 x 32 = 224 blocks of 512 threads
// per launch, more than one GPU holds, and ranks sharing a GPU under MPS split it. Creation lowers the
// channel count until the widest launch fits on every rank's share of its GPU (residentChannelLimit).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "comm.h"
#include "gpu_test_util.h"
#include "local_transport.h"

namespace alloytest {
namespace {

class Residency : public CommTest {};

TEST_F(Residency, ManyChannelsAreClampedToWhatTheGpuHolds) {
  ASSERT_EQ(setenv("ALLOY_CHANNELS", "32", 1), 0);
  alloyComm_t wide = nullptr;
  const alloyResult_t created = alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &wide);
  unsetenv("ALLOY_CHANNELS");
  ALLOY_ASSERT_OK(created);

  // The invariant, from what every rank published: channels x widest launch x ranks sharing a GPU
  // fits in that GPU's resident blocks (or a single channel, the least there is).
  const int channels = wide->local->deviceComm().channels;
  const int widest = 2 * nranks - 1;
  for (int r = 0; r < nranks; ++r) {
    const alloy::EndpointBlob& b = wide->blobs[r];
    int sharers = 0;
    for (const alloy::EndpointBlob& q : wide->blobs) sharers += std::memcmp(q.gpuUuid, b.gpuUuid, sizeof(q.gpuUuid)) == 0;
    EXPECT_GT(b.residentBlocks, 0) << "rank " << r << " published no resident-block count";
    if (channels > 1) {
      EXPECT_LE(static_cast<long long>(channels) * widest * sharers, b.residentBlocks)
          << "rank " << r << ": " << channels << " channels x " << widest << " tasks x " << sharers
          << " rank(s) on its GPU do not fit its " << b.residentBlocks << " resident blocks";
    }
  }
  if (rank == 0)
    std::printf("[ residency ] %d rank(s): ALLOY_CHANNELS=32 became %d channels; rank 0's GPU holds %d blocks\n",
                nranks, channels, wide->blobs[0].residentBlocks);

  // Launches that fill every ring on every channel complete.
  alltoallRoundTripOn(wide, rank, nranks, 24 << 20, alloyUint8, 0x51, 0, 0);
  alltoallRoundTripOn(wide, rank, nranks, 3000, alloyUint8, 0x52, 0, 0);
  CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
  alloyResult_t asyncError = alloySuccess;
  ALLOY_EXPECT_OK(alloyCommGetAsyncError(wide, &asyncError));
  EXPECT_EQ(asyncError, alloySuccess) << alloyGetLastError(wide);
  ALLOY_EXPECT_OK(alloyCommDestroy(wide));
}

}  // namespace
}  // namespace alloytest
