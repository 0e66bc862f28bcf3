// The low-latency protocol past 2^32 chunks on a channel. Its lines carry a 32-bit flag derived from the
// chunk's 64-bit sequence number; flags that counted sequences modulo 2^32 gave chunk 2^32 - 1 the flag
// 0, which a zeroed line already shows, so the receiver took the line before the data came (and a
// line left from 2^32 chunks earlier passed for new). Reaching 2^32 chunks takes hours of traffic, so
// the test sets every sequence counter of every rank just below it (a hook of the IPC transport), then
// runs small operations across the boundary, and a bulk one after, checking every byte.
#include <string>
#include <vector>

#include "comm.h"
#include "gpu_test_util.h"
#include "local_transport.h"

namespace alloytest {
namespace {

class LowLatencyWrap : public CommTest {
 protected:
  // A uint32 sum over every rank's data, against the same sum computed on the host (over the rings: the
  // test keeps the direct engine out).
  void allreduceRoundTrip(size_t count, uint64_t tag) {
    SCOPED_TRACE("allreduce of " + std::to_string(count) + " x uint32");
    DeviceBuffer send(count * 4), recv(count * 4);
    ASSERT_TRUE(send.ok() && recv.ok());
    send.upload(genVector(streamOf(seed, tag, rank), count * 4), 0, stream);
    recv.poison(stream);
    ALLOY_EXPECT_OK(alloyAllReduce(send.get(), recv.get(), count, alloyUint32, alloySum, comm, stream));
    const std::vector<uint8_t> expected = uint32SumOfRanks(seed, tag, nranks, count);
    const std::vector<uint8_t> got = recv.download(stream);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recvbuff"));
  }
};

TEST_F(LowLatencyWrap, SequencesCrossTwoToThe32) {
  // The rings' low-latency protocol is under test: small allreduces and alltoalls would otherwise take
  // the direct engine's lines, whose flags come from its own epochs.
  ScopedEnv rings("ALLOY_DIRECT_MAX_BYTES", 0);
  // Channel 0 carries at least one chunk of every operation below: 16 operations take it from
  // 2^32 - 5 past 2^32 + 10.
  const uint64_t start = (1ull << 32) - 5;
  CUDA_ASSERT_OK(cudaStreamSynchronize(stream));
  MPI_Barrier(MPI_COMM_WORLD);  // no operation in flight anywhere
  ALLOY_ASSERT_OK(comm->local->setSequencesForTest(start));
  MPI_Barrier(MPI_COMM_WORLD);  // every rank's counters set before any rank sends
  const size_t kAlltoallCounts[] = {8, 1000, 4096, 40000, 262144};  // bytes per peer, low-latency
  for (int i = 0; i < 16; ++i) {
    if (i % 4 == 3)
      allreduceRoundTrip(1 + 997 * i, 0x100 + i);
    else
      alltoallRoundTrip(kAlltoallCounts[i % 5], alloyUint8, 0x200 + i, i % 3, (i * 7) % 16);
  }
  alltoallRoundTrip(3 << 20, alloyUint8, 0x300);  // bulk chunks after the wrap
  alltoallRoundTrip(1000, alloyUint8, 0x301);
}

}  // namespace
}  // namespace alloytest
