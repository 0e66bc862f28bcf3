// One communicator used on two streams with nothing ordering them: the library must run the
// operations one after the other in the order they were enqueued (lib/core/launch_order.h), since its
// kernels share the communicator's sequence counters. Without that ordering two kernels start from the
// same counters, and the data come out wrong or the ranks wait for each other until the timeout.
#include <string>
#include <vector>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

class StreamOrder : public CommTest {};

// An alltoall or a uint32 allreduce, with its buffers, filled before any operation is enqueued.
struct Op {
  bool allreduce;
  size_t count;  // elements per peer (alltoall) or in the buffer (allreduce)
  DeviceBuffer send, recv;
};

TEST_F(StreamOrder, OperationsAlternateBetweenTwoStreams) {
  constexpr int kOps = 36;
  // Low-latency, one-chunk, multi-chunk and multi-slot sizes (bytes per peer).
  const size_t kSizes[] = {64, 4000, 100000, 300000, 1200000};
  cudaStream_t other = nullptr;
  CUDA_ASSERT_OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  Rng shape(streamOf(seed, 0x50));
  std::vector<Op> ops(kOps);
  for (int i = 0; i < kOps; ++i) {
    Op& op = ops[i];
    op.allreduce = i % 3 == 2;
    const size_t bytes = kSizes[shape.range(0, sizeof(kSizes) / sizeof(kSizes[0]) - 1)];
    op.count = op.allreduce ? bytes / 4 + 1 : bytes;
    const size_t total = op.allreduce ? op.count * 4 : op.count * nranks;
    op.send = DeviceBuffer(total);
    op.recv = DeviceBuffer(total);
    ASSERT_TRUE(op.send.ok() && op.recv.ok());
    op.send.upload(genVector(streamOf(seed, i, rank), total), 0, stream);
    op.recv.poison(stream);
  }
  // Every buffer is ready on the device (upload and poison synchronise the stream).
  for (int i = 0; i < kOps; ++i) {
    const Op& op = ops[i];
    const cudaStream_t s = i % 2 == 0 ? stream : other;
    if (op.allreduce)
      ALLOY_EXPECT_OK(alloyAllReduce(op.send.get(), op.recv.get(), op.count, alloyUint32, alloySum, comm, s));
    else
      ALLOY_EXPECT_OK(alloyAlltoAll(op.send.get(), op.recv.get(), op.count, alloyUint8, comm, s));
  }
  CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
  CUDA_EXPECT_OK(cudaStreamSynchronize(other));
  for (int i = 0; i < kOps; ++i) {
    const Op& op = ops[i];
    SCOPED_TRACE("operation " + std::to_string(i) + (op.allreduce ? ": allreduce of " : ": alltoall of ") +
                 std::to_string(op.count));
    const std::vector<uint8_t> got = op.recv.download(stream);
    if (op.allreduce) {
      const std::vector<uint8_t> expected = uint32SumOfRanks(seed, i, nranks, op.count);
      EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recvbuff"));
    } else {
      const std::vector<uint8_t> expected = alltoallExpected(i, rank, nranks, op.count);
      EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recvbuff"));
    }
  }
  CUDA_EXPECT_OK(cudaStreamDestroy(other));
}

}  // namespace
}  // namespace alloytest
