// Several communicators over the same processes, used alternately on one stream: the fixture's (from
// MPI_COMM_WORLD), a second one from MPI_COMM_WORLD, and one from a split of MPI_COMM_WORLD that numbers
// the ranks in reverse.
#include <string>
#include <vector>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

class MultiComm : public CommTest {
 protected:
  void SetUp() override {
    CommTest::SetUp();
    if (HasFatalFailure()) return;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - 1 - rank, &reversedMpi_);
    const alloyResult_t a = alloyCommCreateFromMPI(reversedMpi_, nullptr, &reversed);
    const alloyResult_t b = alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &second);
    EXPECT_EQ(a, alloySuccess) << alloyFailure("alloyCommCreateFromMPI(reversed split)", a);
    EXPECT_EQ(b, alloySuccess) << alloyFailure("alloyCommCreateFromMPI(MPI_COMM_WORLD)", b);
    ASSERT_TRUE(a == alloySuccess && b == alloySuccess);
    int reversedRank = -1, device2 = -1;
    ALLOY_EXPECT_OK(alloyCommUserRank(reversed, &reversedRank));
    EXPECT_EQ(reversedRank, nranks - 1 - rank);
    ALLOY_EXPECT_OK(alloyCommCuDevice(reversed, &device2));
    EXPECT_EQ(device2, device) << "both communicators of a process should pick the same device";
  }

  void TearDown() override {
    if (stream != nullptr) CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    for (alloyComm_t* c : {&reversed, &second}) {
      if (*c == nullptr) continue;
      alloyResult_t asyncError = alloySuccess;
      ALLOY_EXPECT_OK(alloyCommGetAsyncError(*c, &asyncError));
      EXPECT_EQ(asyncError, alloySuccess);
      ALLOY_EXPECT_OK(alloyCommDestroy(*c));
      *c = nullptr;
    }
    if (reversedMpi_ != MPI_COMM_NULL) MPI_Comm_free(&reversedMpi_);
    CommTest::TearDown();
  }

  void ringsOnTwoCommunicators(bool oddRanksReverse);

  alloyComm_t reversed = nullptr;
  alloyComm_t second = nullptr;

 private:
  MPI_Comm reversedMpi_ = MPI_COMM_NULL;
};

// 30 alltoalls cycling over the three communicators, all enqueued before one host synchronisation.
TEST_F(MultiComm, AlternatingAlltoAllOnOneStream) {
  constexpr int kIterations = 30;
  const alloyComm_t comms[3] = {comm, reversed, second};
  const int myRank[3] = {rank, nranks - 1 - rank, rank};
  const alloyDataType_t type = alloyUint8;
  Rng shape(streamOf(seed, 0x3c));
  std::vector<size_t> counts(kIterations), offsets(kIterations + 1, 0);
  for (int i = 0; i < kIterations; ++i) {
    counts[i] = i % 7 == 3 ? shape.range(256 << 10, 600 << 10) : shape.range(1, 20000);
    offsets[i + 1] = offsets[i] + counts[i] * nranks;
  }
  DeviceBuffer send(offsets[kIterations]), recv(offsets[kIterations] + kGuard);
  ASSERT_TRUE(allRanksOk(send.ok() && recv.ok()));
  {
    std::vector<uint8_t> host(offsets[kIterations]);
    for (int i = 0; i < kIterations; ++i)
      genBytes(streamOf(seed, 1 + i, myRank[i % 3]), 0, offsets[i + 1] - offsets[i], host.data() + offsets[i]);
    send.upload(host, 0, stream);
  }
  recv.poison(stream);
  for (int i = 0; i < kIterations; ++i) {
    const alloyResult_t r =
        alloyAlltoAll(send.get() + offsets[i], recv.get() + offsets[i], counts[i], type, comms[i % 3], stream);
    EXPECT_EQ(r, alloySuccess) << "iteration " << i << ": " << alloyFailure("alloyAlltoAll", r);
  }
  const std::vector<uint8_t> got = recv.download(stream);
  for (int i = 0; i < kIterations; ++i) {
    const std::vector<uint8_t> expected = alltoallExpected(1 + i, myRank[i % 3], nranks, counts[i]);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data() + offsets[i], expected.size(),
                           "iteration " + std::to_string(i) + " on communicator " + std::to_string(i % 3)));
  }
  EXPECT_TRUE(allPoison(got.data() + offsets[kIterations], kGuard, "guard bytes"));
}

// One group holding a ring on the world-ordered communicator and a ring on the reversed one (the
// opposite direction in world terms), on one stream. With oddRanksReverse, odd ranks post the reversed
// communicator's operations first: the library must still queue the two launches alike on every rank.
void MultiComm::ringsOnTwoCommunicators(bool oddRanksReverse) {
  const int n = nranks;
  const int rRank = n - 1 - rank;
  const size_t countA = 100003, countB = 70001;  // uint8
  const int nextA = (rank + 1) % n, prevA = (rank + n - 1) % n;
  const int nextB = (rRank + 1) % n, prevB = (rRank + n - 1) % n;  // ranks of the reversed communicator
  DeviceBuffer sendA(countA), sendB(countB), recvA(countA + kGuard), recvB(countB + kGuard);
  ASSERT_TRUE(allRanksOk(sendA.ok() && sendB.ok() && recvA.ok() && recvB.ok()));
  sendA.upload(genVector(streamOf(seed, 1, rank), countA), 0, stream);
  sendB.upload(genVector(streamOf(seed, 2, rRank), countB), 0, stream);
  recvA.poison(stream);
  recvB.poison(stream);
  auto postA = [&] {
    ALLOY_EXPECT_OK(alloySend(sendA.get(), countA, alloyUint8, nextA, comm, stream));
    ALLOY_EXPECT_OK(alloyRecv(recvA.get(), countA, alloyUint8, prevA, comm, stream));
  };
  auto postB = [&] {
    ALLOY_EXPECT_OK(alloyRecv(recvB.get(), countB, alloyUint8, prevB, reversed, stream));
    ALLOY_EXPECT_OK(alloySend(sendB.get(), countB, alloyUint8, nextB, reversed, stream));
  };
  ALLOY_EXPECT_OK(alloyGroupStart());
  if (oddRanksReverse && rank % 2 == 1) {
    postB();
    postA();
  } else {
    postA();
    postB();
  }
  ALLOY_EXPECT_OK(alloyGroupEnd());
  std::vector<uint8_t> expectedA = genVector(streamOf(seed, 1, prevA), countA);
  std::vector<uint8_t> expectedB = genVector(streamOf(seed, 2, prevB), countB);
  expectedA.resize(countA + kGuard, kPoison);
  expectedB.resize(countB + kGuard, kPoison);
  const std::vector<uint8_t> gotA = recvA.download(stream), gotB = recvB.download(stream);
  EXPECT_TRUE(bytesEqual(expectedA.data(), gotA.data(), gotA.size(), "ring on the world-ordered communicator"));
  EXPECT_TRUE(bytesEqual(expectedB.data(), gotB.data(), gotB.size(), "ring on the reversed communicator"));
}

TEST_F(MultiComm, GroupSpanningTwoCommunicators) { ringsOnTwoCommunicators(false); }

TEST_F(MultiComm, GroupSpanningTwoCommunicatorsPostedInOppositeOrders) { ringsOnTwoCommunicators(true); }

}  // namespace
}  // namespace alloytest
