// alloyAlltoAll: every datatype, edge counts, sizes up to 64 MB per rank, unaligned buffers, and 100
// operations back to back on one stream.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "algorithm.h"
#include "gpu_test_util.h"

namespace alloytest {
namespace {

class AlltoAll : public CommTest {};

// 256 KiB per peer: the default low-latency limit (ALLOY_LL_MAX_BYTES); the bulk slot is 512 KiB since
// the low-latency protocol came (ProtocolBoundarySizes below follows the run's actual values).
constexpr size_t kSlotBytes = 256 << 10;

// Data movement is bytes: every datatype, counts 0, 1 and odd ones; count 0 must leave recvbuff alone.
TEST_F(AlltoAll, EveryDatatypeAndCount) {
  const size_t counts[] = {0, 1, 7, 1001};
  uint64_t tag = 0;
  for (alloyDataType_t type : kAllTypes)
    for (size_t count : counts) alltoallRoundTrip(count, type, ++tag);
}

TEST_F(AlltoAll, SizesUpTo64MB) {
  struct Case {
    size_t blockBytes;
    alloyDataType_t type;
  };
  const size_t total64 = (size_t{64} << 20) / static_cast<size_t>(nranks);  // 64 MB per rank in all
  const Case cases[] = {
      {4096, alloyUint32},                          // one page per peer
      {kSlotBytes - 1, alloyUint8},                 // just under, at and just over one slot
      {kSlotBytes, alloyFloat32},
      {kSlotBytes + 1, alloyUint8},
      {(size_t{1} << 20) + 8, alloyFloat64},        // a few slots per channel
      {(size_t{3} << 20) + 5, alloyInt8},           // odd, several ring turns
      {total64 & ~size_t{7}, alloyInt64},           // 64 MB per rank: flow control over many turns
  };
  uint64_t tag = 0;
  for (const Case& c : cases) alltoallRoundTrip(c.blockBytes / typeSize(c.type), c.type, ++tag);
}

// Block sizes per peer just under, at and just over every protocol boundary of the engine (pages, the
// low-latency chunk, the low-latency limit, the bulk slot; gpu_test_util.h boundarySizes): in float32
// (one element either side), and in uint8 at odd offsets (one byte either side, partial 8-byte lines of
// the low-latency protocol). Small enough to repeat (scripts/gpu-check.sh stress).
TEST_F(AlltoAll, ProtocolBoundarySizes) {
  uint64_t tag = 0;
  for (size_t bytes : boundarySizes(4)) alltoallRoundTrip(bytes / 4, alloyFloat32, ++tag);
  const EngineSizes e = engineSizes();
  for (size_t boundary : {e.llChunkBytes, e.llMaxBytes, e.slotBytes}) {
    if (boundary == 0) continue;
    for (size_t bytes : {boundary - 1, boundary + 1}) alltoallRoundTrip(bytes, alloyUint8, ++tag, 1, 3);
  }
}

// Inside a host, alltoalls up to allreduce's one-shot limit (and what the lines carry) go through the
// direct engine's lines, larger ones and those with ALLOY_DIRECT_MAX_BYTES=0 over the rings: blocks of a
// few bytes, odd ones at odd offsets, and either side of the limit, on both engines.
TEST_F(AlltoAll, SmallSizesOnBothEngines) {
  const size_t limit = std::min(alloy::allreduceOneShotMaxBytes(nranks), alloy::directLowLatencyMaxBytes());
  const size_t perPeer = limit / static_cast<size_t>(nranks);
  uint64_t tag = 0x500;
  for (bool rings : {false, true}) {
    SCOPED_TRACE(rings ? "over the rings" : "direct engine where it fits");
    std::unique_ptr<ScopedEnv> force;
    if (rings) force = std::make_unique<ScopedEnv>("ALLOY_DIRECT_MAX_BYTES", 0);
    for (size_t bytes : {size_t{1}, size_t{8}, size_t{13}, size_t{4096}, perPeer - 1, perPeer, perPeer + 1})
      alltoallRoundTrip(bytes, alloyUint8, ++tag, 1, 3);
  }
}

// One small alltoall (low-latency protocol) and one large (bulk, over a slot per peer): the reduced
// suite for compute-sanitizer (scripts/gpu-check.sh sanitize), where every access costs 10-100x.
TEST_F(AlltoAll, BothProtocols) {
  const EngineSizes e = engineSizes();
  alltoallRoundTrip(4096 / 4 + 1, alloyFloat32, 1);
  alltoallRoundTrip(e.llMaxBytes + e.slotBytes + 3, alloyUint8, 2, 1, 3);
}

// Buffers at odd byte offsets (legal for 1-byte types), and at 4-byte offsets with float; blocks of odd
// sizes so that every peer's block starts unaligned too.
TEST_F(AlltoAll, UnalignedBuffers) {
  struct Case {
    size_t count;
    alloyDataType_t type;
    size_t sendOffset, recvOffset;
  };
  const Case cases[] = {
      {1001, alloyInt8, 1, 3},
      {7, alloyUint8, 3, 1},
      {kSlotBytes + 4097, alloyUint8, 1, 3},      // over a slot, unaligned on both sides
      {(size_t{2} << 20) + 1, alloyInt8, 3, 1},   // several slots per channel
      {7, alloyFloat8e4m3, 1, 3},
      {1001, alloyFloat32, 4, 4},
      {70001, alloyFloat32, 4, 12},
      {(kSlotBytes / 4) + 3, alloyFloat32, 12, 4},
  };
  uint64_t tag = 0;
  for (const Case& c : cases) alltoallRoundTrip(c.count, c.type, ++tag, c.sendOffset, c.recvOffset);
}

// 100 alltoalls enqueued on one stream with no host synchronisation between them. Before each, a
// device-to-device copy (stream-ordered) refills the same send buffer with that iteration's data, so an
// operation that read its input late, or one that ran ahead of the previous copy, delivers wrong bytes;
// each iteration has its own count and lands at its own offset of one big receive buffer.
TEST_F(AlltoAll, HundredBackToBackWithoutSync) {
  constexpr int kIterations = 100;
  const alloyDataType_t type = alloyInt32;
  Rng shape(streamOf(seed, 1000));
  std::vector<size_t> counts(kIterations), recvOffsets(kIterations + 1, 0), stageOffsets(kIterations + 1, 0);
  size_t largest = 0;
  for (int i = 0; i < kIterations; ++i) {
    // mostly small, every tenth one over a slot per peer
    counts[i] = i % 10 == 9 ? kSlotBytes / 4 + shape.range(1, 20000) : shape.range(1, 5000);
    const size_t total = counts[i] * typeSize(type) * nranks;
    recvOffsets[i + 1] = recvOffsets[i] + total;
    stageOffsets[i + 1] = stageOffsets[i] + total;
    largest = std::max(largest, total);
  }
  DeviceBuffer staging(stageOffsets[kIterations]);
  DeviceBuffer send(largest);
  DeviceBuffer recv(recvOffsets[kIterations] + kGuard);
  ASSERT_TRUE(allRanksOk(staging.ok() && send.ok() && recv.ok()));
  {
    std::vector<uint8_t> all(stageOffsets[kIterations]);
    for (int i = 0; i < kIterations; ++i)
      genBytes(streamOf(seed, 1 + i, rank), 0, stageOffsets[i + 1] - stageOffsets[i], all.data() + stageOffsets[i]);
    staging.upload(all, 0, stream);
  }
  send.poison(stream);
  recv.poison(stream);

  for (int i = 0; i < kIterations; ++i) {
    const size_t total = stageOffsets[i + 1] - stageOffsets[i];
    CUDA_EXPECT_OK(cudaMemcpyAsync(send.get(), staging.get() + stageOffsets[i], total, cudaMemcpyDeviceToDevice, stream));
    const alloyResult_t r = alloyAlltoAll(send.get(), recv.get() + recvOffsets[i], counts[i], type, comm, stream);
    EXPECT_EQ(r, alloySuccess) << "iteration " << i << ": " << alloyFailure("alloyAlltoAll", r);
  }
  const std::vector<uint8_t> got = recv.download(stream);
  for (int i = 0; i < kIterations; ++i) {
    const size_t block = counts[i] * typeSize(type);
    const std::vector<uint8_t> expected = alltoallExpected(1 + i, rank, nranks, block);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data() + recvOffsets[i], expected.size(),
                           "iteration " + std::to_string(i) + " (count " + std::to_string(counts[i]) + ")"));
  }
  EXPECT_TRUE(allPoison(got.data() + recvOffsets[kIterations], kGuard, "guard bytes after the last iteration"));
}

// The same buffers reused for operations of growing and shrinking sizes: stale bytes of a larger
// earlier operation must not be confused with fresh ones (the buffer is re-poisoned each time).
TEST_F(AlltoAll, ReusedBuffersVaryingSizes) {
  const size_t counts[] = {5000, 1, kSlotBytes + 3, 0, 77, kSlotBytes * 3 - 1, 2};
  const size_t largest = kSlotBytes * 3 * nranks;
  DeviceBuffer send(largest), recv(largest + kGuard);
  ASSERT_TRUE(allRanksOk(send.ok() && recv.ok()));
  uint64_t tag = 0;
  for (size_t count : counts) {
    ++tag;
    SCOPED_TRACE("count " + std::to_string(count));
    const size_t total = count * nranks;
    send.upload(genVector(streamOf(seed, tag, rank), total), 0, stream);
    recv.poison(stream);
    ALLOY_EXPECT_OK(alloyAlltoAll(send.get(), recv.get(), count, alloyUint8, comm, stream));
    const std::vector<uint8_t> got = recv.download(stream);
    const std::vector<uint8_t> expected = alltoallExpected(tag, rank, nranks, count);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), total, "recvbuff"));
    EXPECT_TRUE(allPoison(got.data() + total, got.size() - total, "bytes after recvbuff"));
  }
}

// docs/api.md: managed memory and mapped pinned host memory are device-accessible, so accepted.
TEST_F(AlltoAll, ManagedAndMappedHostBuffers) {
  const size_t count = 70001;  // uint8, a few chunks per peer
  const size_t total = count * nranks;
  void* managed = nullptr;
  void* mapped = nullptr;
  const bool ok = cudaMallocManaged(&managed, total) == cudaSuccess &&
                  cudaHostAlloc(&mapped, total + kGuard, cudaHostAllocMapped) == cudaSuccess;
  cudaGetLastError();
  if (allRanksOk(ok)) {
    const std::vector<uint8_t> data = genVector(streamOf(seed, 1, rank), total);
    std::memcpy(managed, data.data(), total);
    std::memset(mapped, kPoison, total + kGuard);
    ALLOY_EXPECT_OK(alloyAlltoAll(managed, mapped, count, alloyUint8, comm, stream));
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    const std::vector<uint8_t> expected = alltoallExpected(1, rank, nranks, count);
    const uint8_t* got = static_cast<const uint8_t*>(mapped);
    EXPECT_TRUE(bytesEqual(expected.data(), got, total, "mapped pinned recvbuff"));
    EXPECT_TRUE(allPoison(got + total, kGuard, "guard bytes after recvbuff"));
  } else {
    ADD_FAILURE() << "cudaMallocManaged or cudaHostAlloc failed on some rank";
  }
  if (managed != nullptr) cudaFree(managed);
  if (mapped != nullptr) cudaFreeHost(mapped);
}

}  // namespace
}  // namespace alloytest
