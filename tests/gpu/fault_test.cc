// Faults: a peer that never joins an operation, and alloyCommAbort. The waiting rank must get
// alloyTimeout within the communicator's timeout with a message naming the operation, the peer(s) and
// the time waited; operations queued behind the failed one must not run; alloyCommAbort must stop a
// waiting kernel; and the CUDA context and a fresh communicator must work afterwards.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

class Faults : public CommTest {
 protected:
  void SetUp() override {
    CommTest::SetUp();
    if (HasFatalFailure()) return;
    if (nranks < 2) GTEST_SKIP() << "needs a peer";
  }

  // The CUDA context took no error, and a fresh communicator moves data correctly.
  void contextAndFreshCommunicatorWork() {
    CUDA_EXPECT_OK(cudaGetLastError());
    DeviceBuffer probe(1 << 20);
    EXPECT_TRUE(probe.ok());
    if (probe.ok()) probe.poison(stream);
    alloyComm_t fresh = nullptr;
    ALLOY_ASSERT_OK(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &fresh));
    alltoallRoundTripOn(fresh, rank, nranks, 70000, alloyUint8, 0x91, 0, 0);
    alltoallRoundTripOn(fresh, rank, nranks, 100, alloyUint8, 0x92, 0, 0);
    ALLOY_EXPECT_OK(alloyCommDestroy(fresh));
  }
};

TEST_F(Faults, PeerThatNeverJoinsTimesOutAndNamesIt) {
  constexpr int kTimeoutMs = 2000;
  alloyComm_t c = nullptr;
  ALLOY_ASSERT_OK(createCommWithTimeout(kTimeoutMs, &c));
  if (rank == 0) {
    // An allreduce no peer joins, and an alltoall queued behind it: its copy to itself needs no peer,
    // so only the check on entry keeps it from writing recvbuff after the communicator failed.
    const size_t count = 1000;
    DeviceBuffer send(count * 4 * nranks), recv(count * 4 * nranks);
    ASSERT_TRUE(send.ok() && recv.ok());
    send.upload(genVector(streamOf(seed, 0x90), count * 4 * nranks), 0, stream);
    recv.poison(stream);
    const auto t0 = std::chrono::steady_clock::now();
    ALLOY_EXPECT_OK(alloyAllReduce(send.get(), send.get(), count, alloyFloat32, alloySum, c, stream));
    ALLOY_EXPECT_OK(alloyAlltoAll(send.get(), recv.get(), count * 4, alloyUint8, c, stream));
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    const double waited = secondsSince(t0);
    EXPECT_GE(waited, 0.9 * kTimeoutMs / 1000.0);
    EXPECT_LE(waited, kTimeoutMs / 1000.0 + 2.0) << "the queued operation should not wait a timeout of its own";

    const std::string message = expectTimedOut(c, waited);
    for (const char* needle : {"alloyAllReduce", "timed out", "rank 0", "for rank(s) 1", " ms", "2000 ms"})
      EXPECT_NE(message.find(needle), std::string::npos) << "the message should name \"" << needle << "\": " << message;
    const std::vector<uint8_t> got = recv.download(stream);
    EXPECT_TRUE(allPoison(got.data(), got.size(), "recvbuff of the alltoall queued after the timeout"));

    // The next call says why the communicator is unusable.
    ALLOY_EXPECT_ERROR(alloyAllReduce(send.get(), send.get(), count, alloyFloat32, alloySum, c, stream),
                       alloyTimeout, "timed out");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ALLOY_EXPECT_OK(alloyCommDestroy(c));
  contextAndFreshCommunicatorWork();
}

TEST_F(Faults, AbortStopsAWaitingKernel) {
  alloyComm_t c = nullptr;
  // Far longer than the test: only the abort can end the wait.
  ALLOY_ASSERT_OK(createCommWithTimeout(120000, &c));
  if (rank == 0) {
    DeviceBuffer send(1 << 20), recv(1 << 20);
    ASSERT_TRUE(send.ok() && recv.ok());
    ALLOY_EXPECT_OK(alloyAlltoAll(send.get(), recv.get(), (1 << 20) / nranks, alloyUint8, c, stream));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady) << "the alltoall should still wait for its peers";
    cudaGetLastError();  // "not ready" is an answer, not an error to carry on
    const auto t0 = std::chrono::steady_clock::now();
    ALLOY_EXPECT_OK(alloyCommAbort(c));  // returns once the kernel has stopped
    const double stopped = secondsSince(t0);
    std::printf("[ fault     ] alloyCommAbort returned after %.3f s\n", stopped);
    EXPECT_LT(stopped, 5.0);
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    // Local: these ranks never launched anything. After rank 0's kernel has stopped, since it writes
    // into their workspaces.
    MPI_Barrier(MPI_COMM_WORLD);
    ALLOY_EXPECT_OK(alloyCommAbort(c));
  }
  contextAndFreshCommunicatorWork();
}

}  // namespace
}  // namespace alloytest
