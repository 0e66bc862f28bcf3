// A group that fails at alloyGroupEnd enqueues nothing, on any of its communicators. Plans are checked
// for every communicator before any is launched; launching each as it was checked let a group whose
// second communicator failed run the first one's operations anyway, although alloyGroupEnd reported
// that nothing was enqueued (and on a real group, that rank's peers on the first communicator were then
// out of step with it). The groups below are local to each rank (sends to and receives from itself),
// so each rank sees its own outcome.
#include <string>
#include <vector>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

class GroupValidation : public CommTest {
 protected:
  void SetUp() override {
    CommTest::SetUp();
    if (HasFatalFailure()) return;
    ALLOY_ASSERT_OK(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &second));
    CUDA_ASSERT_OK(cudaStreamCreateWithFlags(&otherStream, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (otherStream != nullptr) CUDA_EXPECT_OK(cudaStreamDestroy(otherStream));
    if (second != nullptr) ALLOY_EXPECT_OK(alloyCommDestroy(second));
    CommTest::TearDown();
  }

  // A send to and a receive from this rank on c: a local copy of `bytes` from `from` into `to`.
  static void selfCopy(alloyComm_t c, int me, const DeviceBuffer& from, const DeviceBuffer& to, size_t bytes,
                       cudaStream_t s) {
    ALLOY_EXPECT_OK(alloySend(from.get(), bytes, alloyUint8, me, c, s));
    ALLOY_EXPECT_OK(alloyRecv(to.get(), bytes, alloyUint8, me, c, s));
  }

  // One group: a valid copy on `good`, and on `bad` a mistake that only alloyGroupEnd can see. The
  // copy's destination must still be poison afterwards, whichever communicator the group launches first.
  void failingGroup(alloyComm_t good, alloyComm_t bad, bool twoStreams) {
    SCOPED_TRACE(std::string(good == comm ? "first" : "second") + " communicator valid, " +
                 (twoStreams ? "two streams on the other" : "too many operations on the other"));
    constexpr size_t kBytes = 4096;
    DeviceBuffer from(kBytes), to(kBytes), scratchIn(kBytes), scratchOut(200 * 16);
    ASSERT_TRUE(from.ok() && to.ok() && scratchIn.ok() && scratchOut.ok());
    from.upload(genVector(streamOf(seed, 0x7a), kBytes), 0, stream);
    to.poison(stream);
    ALLOY_EXPECT_OK(alloyGroupStart());
    selfCopy(good, rank, from, to, kBytes, stream);
    if (twoStreams) {
      ALLOY_EXPECT_OK(alloySend(scratchIn.get(), 16, alloyUint8, rank, bad, stream));
      ALLOY_EXPECT_OK(alloyRecv(scratchOut.get(), 16, alloyUint8, rank, bad, otherStream));
    } else {
      // 100 copies: more segments than one launch carries (kMaxP2pSegments).
      for (int k = 0; k < 100; ++k) {
        ALLOY_EXPECT_OK(alloySend(scratchIn.get(), 16, alloyUint8, rank, bad, stream));
        ALLOY_EXPECT_OK(alloyRecv(scratchOut.get() + 16 * k, 16, alloyUint8, rank, bad, stream));
      }
    }
    const alloyResult_t r = alloyGroupEnd();
    EXPECT_EQ(r, twoStreams ? alloyInvalidUsage : alloyNotSupported) << alloyGetLastError(nullptr);
    const char* needle = twoStreams ? "must use one stream" : "more than 96 sends and receives";
    EXPECT_NE(std::string(alloyGetLastError(nullptr)).find(needle), std::string::npos)
        << "the message should name \"" << needle << "\": " << alloyGetLastError(nullptr);
    CUDA_EXPECT_OK(cudaDeviceSynchronize());
    const std::vector<uint8_t> got = to.download(stream);
    EXPECT_TRUE(allPoison(got.data(), got.size(), "destination of the valid copy in the failed group"));
  }

  alloyComm_t second = nullptr;
  cudaStream_t otherStream = nullptr;
};

TEST_F(GroupValidation, FailingGroupEnqueuesNothing) {
  for (const bool twoStreams : {true, false}) {
    failingGroup(comm, second, twoStreams);
    failingGroup(second, comm, twoStreams);
  }
  // Both communicators are still in step across ranks.
  alltoallRoundTripOn(comm, rank, nranks, 5000, alloyUint8, 0x7b, 0, 0);
  alltoallRoundTripOn(second, rank, nranks, 5000, alloyUint8, 0x7c, 0, 0);
}

}  // namespace
}  // namespace alloytest
