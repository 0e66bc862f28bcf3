// Bad input is rejected with the exact result code and a message naming the argument, before anything
// is enqueued (the destination keeps its poison), and the communicator stays usable: every test ends
// with a valid alltoall on the same communicator. Every rank makes the same bad calls, so no rank ever
// waits for a peer that skipped its part.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

class BadInput : public CommTest {
 protected:
  static constexpr size_t kCount = 64;  // elements per peer in the calls below

  void SetUp() override {
    CommTest::SetUp();
    if (HasFatalFailure()) return;
    send_ = DeviceBuffer(kCount * 8 * nranks);
    recv_ = DeviceBuffer(kCount * 8 * nranks);
    ASSERT_TRUE(allRanksOk(send_.ok() && recv_.ok()));
    send_.upload(genVector(streamOf(seed, 0xbad, rank), send_.bytes()), 0, stream);
    recv_.poison(stream);
    for (int r = 0; r < nranks; ++r) {
      counts_.push_back(kCount);
      displs_.push_back(kCount * r);
    }
  }

  // After the bad calls: nothing reached recvbuff, and a valid alltoall works on the same communicator.
  void expectNothingEnqueuedAndStillUsable() {
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    const std::vector<uint8_t> got = recv_.download(stream);
    EXPECT_TRUE(allPoison(got.data(), got.size(), "recvbuff of the rejected calls"));
    alltoallRoundTrip(1001, alloyUint8, 0x900d);
    alltoallRoundTrip(kCount, alloyFloat32, 0x900e, 4, 0);
  }

  uint8_t* send() const { return send_.get(); }
  uint8_t* recv() const { return recv_.get(); }

  DeviceBuffer send_, recv_;
  std::vector<size_t> counts_, displs_;
};

TEST_F(BadInput, NullBuffersWithCountsAboveZero) {
  ALLOY_EXPECT_ERROR(alloyAlltoAll(nullptr, recv(), kCount, alloyUint8, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyAlltoAll(send(), nullptr, kCount, alloyUint8, comm, stream), alloyInvalidArgument, "recvbuff");
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(nullptr, counts_.data(), displs_.data(), recv(), counts_.data(), displs_.data(),
                                    nullptr, alloyUint8, comm, stream),
                     alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), counts_.data(), displs_.data(), nullptr, counts_.data(), displs_.data(),
                                    nullptr, alloyUint8, comm, stream),
                     alloyInvalidArgument, "recvbuff");
  const int peer = (rank + 1) % nranks;
  ALLOY_EXPECT_ERROR(alloySend(nullptr, kCount, alloyUint8, peer, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyRecv(nullptr, kCount, alloyUint8, peer, comm, stream), alloyInvalidArgument, "recvbuff");
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, PeerOutOfRange) {
  for (int peer : {nranks, nranks + 7, -1}) {
    SCOPED_TRACE("peer " + std::to_string(peer));
    ALLOY_EXPECT_ERROR(alloySend(send(), kCount, alloyUint8, peer, comm, stream), alloyInvalidArgument, "peer");
    ALLOY_EXPECT_ERROR(alloyRecv(recv(), kCount, alloyUint8, peer, comm, stream), alloyInvalidArgument, "peer");
  }
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, AlltoAllvNullArrays) {
  const size_t* c = counts_.data();
  const size_t* d = displs_.data();
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), nullptr, d, recv(), c, d, nullptr, alloyUint8, comm, stream),
                     alloyInvalidArgument, "sendcounts");
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), c, nullptr, recv(), c, d, nullptr, alloyUint8, comm, stream),
                     alloyInvalidArgument, "sdispls");
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), c, d, recv(), nullptr, d, nullptr, alloyUint8, comm, stream),
                     alloyInvalidArgument, "recvcounts");
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), c, d, recv(), c, nullptr, nullptr, alloyUint8, comm, stream),
                     alloyInvalidArgument, "rdispls");
  expectNothingEnqueuedAndStillUsable();
}

// displacement + count, or (displacement + count) * element size, beyond size_t.
TEST_F(BadInput, DisplacementOverflow) {
  const int last = nranks - 1;
  {
    std::vector<size_t> sd = displs_;
    sd[last] = SIZE_MAX - 2;  // + kCount wraps
    ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), counts_.data(), sd.data(), recv(), counts_.data(), displs_.data(),
                                      nullptr, alloyUint8, comm, stream),
                       alloyInvalidArgument, "overflow");
  }
  {
    std::vector<size_t> rd = displs_;
    rd[0] = SIZE_MAX - kCount + 1;  // displacement + count == 2^64
    ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), counts_.data(), displs_.data(), recv(), counts_.data(), rd.data(),
                                      nullptr, alloyUint8, comm, stream),
                       alloyInvalidArgument, "overflow");
  }
  {
    std::vector<size_t> rd = displs_;
    rd[last] = SIZE_MAX / 4;  // fits in elements, not in bytes of float64
    ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), counts_.data(), displs_.data(), recv(), counts_.data(), rd.data(),
                                      nullptr, alloyFloat64, comm, stream),
                       alloyInvalidArgument, "overflow");
  }
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, CountOverflow) {
  ALLOY_EXPECT_ERROR(alloyAlltoAll(send(), recv(), SIZE_MAX / 2, alloyFloat32, comm, stream), alloyInvalidArgument,
                     "overflow");
  // count * element size fits, count * element size * nranks does not
  if (nranks > 1)
    ALLOY_EXPECT_ERROR(alloyAlltoAll(send(), recv(), SIZE_MAX / 2 / sizeof(float) + 1, alloyFloat32, comm, stream),
                       alloyInvalidArgument, "overflow");
  const int peer = (rank + 1) % nranks;
  ALLOY_EXPECT_ERROR(alloySend(send(), SIZE_MAX / 4, alloyFloat64, peer, comm, stream), alloyInvalidArgument,
                     "overflow");
  ALLOY_EXPECT_ERROR(alloyRecv(recv(), SIZE_MAX / 4, alloyFloat64, peer, comm, stream), alloyInvalidArgument,
                     "overflow");
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, InvalidDatatype) {
  const int peer = (rank + 1) % nranks;
  for (int value : {static_cast<int>(alloyNumTypes), 255, -1}) {
    const alloyDataType_t bad = static_cast<alloyDataType_t>(value);
    SCOPED_TRACE("datatype " + std::to_string(value));
    ALLOY_EXPECT_ERROR(alloyAlltoAll(send(), recv(), kCount, bad, comm, stream), alloyInvalidArgument, "datatype");
    ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), counts_.data(), displs_.data(), recv(), counts_.data(), displs_.data(),
                                      nullptr, bad, comm, stream),
                       alloyInvalidArgument, "datatype");
    ALLOY_EXPECT_ERROR(alloySend(send(), kCount, bad, peer, comm, stream), alloyInvalidArgument, "datatype");
    ALLOY_EXPECT_ERROR(alloyRecv(recv(), kCount, bad, peer, comm, stream), alloyInvalidArgument, "datatype");
  }
  expectNothingEnqueuedAndStillUsable();
}

// Alltoall is not in place: overlapping send and receive ranges are refused; adjacent ones are fine.
TEST_F(BadInput, OverlappingAlltoAllBuffers) {
  const size_t total = kCount * nranks;  // bytes, uint8
  DeviceBuffer both(3 * total);
  ASSERT_TRUE(allRanksOk(both.ok()));
  both.poison(stream);
  uint8_t* base = both.get() + total;
  for (ptrdiff_t shift : {ptrdiff_t{1}, ptrdiff_t{-1}, static_cast<ptrdiff_t>(total) - 1, -static_cast<ptrdiff_t>(total) + 1}) {
    SCOPED_TRACE("recvbuff = sendbuff " + std::to_string(shift));
    ALLOY_EXPECT_ERROR(alloyAlltoAll(base, base + shift, kCount, alloyUint8, comm, stream), alloyInvalidArgument,
                       "overlap");
  }
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(base, counts_.data(), displs_.data(), base + 5, counts_.data(), displs_.data(),
                                    nullptr, alloyUint8, comm, stream),
                     alloyInvalidArgument, "overlap");
  {
    const std::vector<uint8_t> got = both.download(stream);
    EXPECT_TRUE(allPoison(got.data(), got.size(), "the overlapping buffers"));
  }
  // Adjacent, not overlapping: accepted, and correct.
  both.upload(genVector(streamOf(seed, 0xad, rank), total), total, stream);
  ALLOY_EXPECT_OK(alloyAlltoAll(base, base + total, kCount, alloyUint8, comm, stream));
  const std::vector<uint8_t> got = both.download(stream);
  const std::vector<uint8_t> expected = alltoallExpected(0xad, rank, nranks, kCount);
  EXPECT_TRUE(bytesEqual(expected.data(), got.data() + 2 * total, total, "recvbuff right after sendbuff"));
  EXPECT_TRUE(allPoison(got.data(), total, "bytes before sendbuff"));
  expectNothingEnqueuedAndStillUsable();
}

// Pageable host memory (malloc) is not device-accessible: refused, naming the argument.
TEST_F(BadInput, HostMemoryBuffers) {
  const size_t bytes = kCount * 8 * nranks;
  std::vector<uint8_t> host(bytes, 0x11);
  uint8_t* h = static_cast<uint8_t*>(std::malloc(bytes));
  ASSERT_NE(h, nullptr);
  const int peer = (rank + 1) % nranks;
  ALLOY_EXPECT_ERROR(alloyAlltoAll(h, recv(), kCount, alloyUint8, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyAlltoAll(send(), h, kCount, alloyUint8, comm, stream), alloyInvalidArgument, "recvbuff");
  ALLOY_EXPECT_ERROR(alloyAlltoAll(host.data(), recv(), kCount, alloyFloat64, comm, stream), alloyInvalidArgument,
                     "sendbuff");
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(h, counts_.data(), displs_.data(), recv(), counts_.data(), displs_.data(), nullptr,
                                    alloyUint8, comm, stream),
                     alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloySend(h, kCount, alloyUint8, peer, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyRecv(h, kCount, alloyUint8, peer, comm, stream), alloyInvalidArgument, "recvbuff");
  std::free(h);
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, NullCommunicator) {
  ALLOY_EXPECT_ERROR(alloyAlltoAll(send(), recv(), kCount, alloyUint8, nullptr, stream), alloyInvalidArgument, "comm");
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(send(), counts_.data(), displs_.data(), recv(), counts_.data(), displs_.data(),
                                    nullptr, alloyUint8, nullptr, stream),
                     alloyInvalidArgument, "comm");
  ALLOY_EXPECT_ERROR(alloySend(send(), kCount, alloyUint8, 0, nullptr, stream), alloyInvalidArgument, "comm");
  ALLOY_EXPECT_ERROR(alloyRecv(recv(), kCount, alloyUint8, 0, nullptr, stream), alloyInvalidArgument, "comm");
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, GroupEndWithoutGroupStart) {
  ALLOY_EXPECT_ERROR(alloyGroupEnd(), alloyInvalidUsage, "group");
  // one too many after a balanced (empty) pair
  ALLOY_EXPECT_OK(alloyGroupStart());
  ALLOY_EXPECT_OK(alloyGroupEnd());
  ALLOY_EXPECT_ERROR(alloyGroupEnd(), alloyInvalidUsage, "group");
  expectNothingEnqueuedAndStillUsable();
}

// One op of a group fails: alloyGroupEnd returns that error and enqueues nothing, not even the group's
// valid send/recv pairs (every rank's group fails alike, so no rank waits for another). The receive
// that would have matched keeps its poison, and the next group works.
TEST_F(BadInput, FailedOpFailsWholeGroup) {
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  // Round 0: the bad op (NULL buffer) comes between valid ones. Round 1: the bad op (peer out of range)
  // comes first.
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ALLOY_EXPECT_OK(alloyGroupStart());
    if (round == 1)
      ALLOY_EXPECT_ERROR(alloySend(send(), kCount, alloyUint8, nranks, comm, stream), alloyInvalidArgument, "peer");
    ALLOY_EXPECT_OK(alloyRecv(recv(), kCount, alloyUint8, prev, comm, stream));
    if (round == 0)
      ALLOY_EXPECT_ERROR(alloySend(nullptr, kCount, alloyUint8, next, comm, stream), alloyInvalidArgument, "sendbuff");
    ALLOY_EXPECT_OK(alloySend(send(), kCount, alloyUint8, next, comm, stream));
    ALLOY_EXPECT_ERROR(alloyGroupEnd(), alloyInvalidArgument, round == 0 ? "sendbuff" : "peer");
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    const std::vector<uint8_t> got = recv_.download(stream);
    EXPECT_TRUE(allPoison(got.data(), got.size(), "recvbuff of the failed group's receive"));
  }
  // The group state was reset: a valid group goes through.
  ALLOY_EXPECT_OK(alloyGroupStart());
  ALLOY_EXPECT_OK(alloyRecv(recv(), kCount, alloyUint8, prev, comm, stream));
  ALLOY_EXPECT_OK(alloySend(send(), kCount, alloyUint8, next, comm, stream));
  ALLOY_EXPECT_OK(alloyGroupEnd());
  {
    const std::vector<uint8_t> got = recv_.download(stream);
    std::vector<uint8_t> expected(got.size(), kPoison);
    genBytes(streamOf(seed, 0xbad, prev), 0, kCount, expected.data());
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recvbuff of the valid group after the failed ones"));
  }
  recv_.poison(stream);
  expectNothingEnqueuedAndStillUsable();
}

// Sends to self must be matched by receives from self of the same size within the group.
TEST_F(BadInput, UnmatchedSelfSendInGroup) {
  ALLOY_EXPECT_OK(alloyGroupStart());
  ALLOY_EXPECT_OK(alloySend(send(), kCount, alloyUint8, rank, comm, stream));
  ALLOY_EXPECT_ERROR(alloyGroupEnd(), alloyInvalidUsage, "self");
  ALLOY_EXPECT_OK(alloyGroupStart());
  ALLOY_EXPECT_OK(alloySend(send(), kCount, alloyUint8, rank, comm, stream));
  ALLOY_EXPECT_OK(alloyRecv(recv(), kCount - 1, alloyUint8, rank, comm, stream));
  ALLOY_EXPECT_ERROR(alloyGroupEnd(), alloyInvalidUsage, "self");
  expectNothingEnqueuedAndStillUsable();
}


// The reducing and gathering collectives. Only checks every rank fails alike are made here: a rank that
// rejects its call while a peer enqueues would leave that peer waiting.
TEST_F(BadInput, CollectivesNullBuffers) {
  const size_t c = kCount;
  ALLOY_EXPECT_ERROR(alloyAllReduce(nullptr, recv(), c, alloyFloat32, alloySum, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyAllReduce(send(), nullptr, c, alloyFloat32, alloySum, comm, stream), alloyInvalidArgument, "recvbuff");
  ALLOY_EXPECT_ERROR(alloyReduce(nullptr, recv(), c, alloyFloat32, alloySum, 0, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyReduceScatter(nullptr, recv(), c, alloyUint8, alloyMax, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyReduceScatter(send(), nullptr, c, alloyUint8, alloyMax, comm, stream), alloyInvalidArgument, "recvbuff");
  ALLOY_EXPECT_ERROR(alloyBroadcast(send(), nullptr, c, alloyUint8, 0, comm, stream), alloyInvalidArgument, "recvbuff");
  ALLOY_EXPECT_ERROR(alloyAllGather(nullptr, recv(), c, alloyUint8, comm, stream), alloyInvalidArgument, "sendbuff");
  ALLOY_EXPECT_ERROR(alloyAllGather(send(), nullptr, c, alloyUint8, comm, stream), alloyInvalidArgument, "recvbuff");
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, CollectivesRootOutOfRange) {
  for (int root : {nranks, nranks + 7, -1}) {
    SCOPED_TRACE("root " + std::to_string(root));
    ALLOY_EXPECT_ERROR(alloyReduce(send(), recv(), kCount, alloyFloat32, alloySum, root, comm, stream),
                       alloyInvalidArgument, "root");
    ALLOY_EXPECT_ERROR(alloyBroadcast(send(), recv(), kCount, alloyFloat32, root, comm, stream), alloyInvalidArgument,
                       "root");
  }
  expectNothingEnqueuedAndStillUsable();
}

TEST_F(BadInput, CollectivesInvalidOperatorAndDatatype) {
  for (int value : {static_cast<int>(alloyNumOps), 99, -1}) {
    const alloyRedOp_t bad = static_cast<alloyRedOp_t>(value);
    SCOPED_TRACE("op " + std::to_string(value));
    ALLOY_EXPECT_ERROR(alloyAllReduce(send(), recv(), kCount, alloyFloat32, bad, comm, stream), alloyInvalidArgument, "op");
    ALLOY_EXPECT_ERROR(alloyReduce(send(), recv(), kCount, alloyFloat32, bad, 0, comm, stream), alloyInvalidArgument, "op");
    ALLOY_EXPECT_ERROR(alloyReduceScatter(send(), recv(), kCount, alloyFloat32, bad, comm, stream), alloyInvalidArgument,
                       "op");
  }
  for (int value : {static_cast<int>(alloyNumTypes), 255, -1}) {
    const alloyDataType_t bad = static_cast<alloyDataType_t>(value);
    SCOPED_TRACE("datatype " + std::to_string(value));
    ALLOY_EXPECT_ERROR(alloyAllReduce(send(), recv(), kCount, bad, alloySum, comm, stream), alloyInvalidArgument, "datatype");
    ALLOY_EXPECT_ERROR(alloyReduce(send(), recv(), kCount, bad, alloySum, 0, comm, stream), alloyInvalidArgument, "datatype");
    ALLOY_EXPECT_ERROR(alloyReduceScatter(send(), recv(), kCount, bad, alloySum, comm, stream), alloyInvalidArgument,
                       "datatype");
    ALLOY_EXPECT_ERROR(alloyBroadcast(send(), recv(), kCount, bad, 0, comm, stream), alloyInvalidArgument, "datatype");
    ALLOY_EXPECT_ERROR(alloyAllGather(send(), recv(), kCount, bad, comm, stream), alloyInvalidArgument, "datatype");
  }
  expectNothingEnqueuedAndStillUsable();
}

// Overlapping buffers are accepted only at NCCL's in-place position.
TEST_F(BadInput, CollectivesPartialOverlap) {
  uint8_t* r = recv();
  ALLOY_EXPECT_ERROR(alloyAllReduce(r + 4, r, kCount, alloyFloat32, alloySum, comm, stream), alloyInvalidArgument,
                     "overlaps");
  ALLOY_EXPECT_ERROR(alloyReduceScatter(r + 1, r + rank * kCount, kCount, alloyUint8, alloySum, comm, stream),
                     alloyInvalidArgument, "overlaps");
  ALLOY_EXPECT_ERROR(alloyAllGather(r + rank * kCount + 1, r, kCount, alloyUint8, comm, stream), alloyInvalidArgument,
                     "overlaps");
  ALLOY_EXPECT_ERROR(alloyAllReduce(send(), recv(), SIZE_MAX / 2, alloyFloat32, alloySum, comm, stream),
                     alloyInvalidArgument, "overflow");
  expectNothingEnqueuedAndStillUsable();
}

}  // namespace
}  // namespace alloytest
