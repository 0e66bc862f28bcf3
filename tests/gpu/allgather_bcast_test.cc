// alloyBroadcast and alloyAllGather: data movement, so every byte is compared exactly. Every datatype,
// sizes from 0 to many ring turns, every root, unaligned buffers, in place (NCCL's definitions), and
// 100 operations back to back.
#include <algorithm>
#include <string>
#include <vector>

#include "algorithm.h"
#include "comm.h"
#include "gpu_test_util.h"
#include "local_transport.h"

namespace alloytest {
namespace {

struct Layout {
  size_t sendOffset = 0;  // bytes into the send allocation (in place: into the receive allocation)
  size_t recvOffset = 0;
  bool inPlace = false;
};

class Gathers : public CommTest {
 protected:
  // One broadcast of count elements from root with fresh data; checks the whole receive allocation.
  void broadcast(size_t count, alloyDataType_t type, int root, uint64_t tag, Layout l = {}) {
    SCOPED_TRACE("broadcast count " + std::to_string(count) + " " + typeName(type) + " root " + std::to_string(root) +
                 (l.inPlace ? " in place" : "") + " offsets " + std::to_string(l.sendOffset) + "/" +
                 std::to_string(l.recvOffset));
    const size_t bytes = count * typeSize(type);
    const std::vector<uint8_t> data = genVector(streamOf(seed, tag, root), bytes);
    const size_t recvAt = l.inPlace ? l.sendOffset : l.recvOffset;
    DeviceBuffer send(l.sendOffset + bytes), recv(recvAt + bytes + kGuard);
    ASSERT_TRUE(allRanksOk(send.ok() && recv.ok()));
    send.poison(stream);
    recv.poison(stream);
    uint8_t* sendPtr = l.inPlace ? recv.get() + recvAt : send.get() + l.sendOffset;
    if (rank == root) (l.inPlace ? recv : send).upload(data, l.inPlace ? recvAt : l.sendOffset, stream);
    ALLOY_EXPECT_OK(alloyBroadcast(sendPtr, recv.get() + recvAt, count, type, root, comm, stream));
    std::vector<uint8_t> expected(recv.bytes(), kPoison);
    std::copy(data.begin(), data.end(), expected.begin() + recvAt);
    const std::vector<uint8_t> got = recv.download(stream);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recv allocation"));
  }

  // One allgather of count elements per rank with fresh data; checks the whole receive allocation.
  void allgather(size_t count, alloyDataType_t type, uint64_t tag, Layout l = {}) {
    SCOPED_TRACE("allgather count " + std::to_string(count) + " " + typeName(type) + (l.inPlace ? " in place" : "") +
                 " offsets " + std::to_string(l.sendOffset) + "/" + std::to_string(l.recvOffset));
    const size_t part = count * typeSize(type), n = static_cast<size_t>(nranks);
    const size_t recvAt = l.inPlace ? l.sendOffset : l.recvOffset;
    DeviceBuffer send(l.sendOffset + part), recv(recvAt + part * n + kGuard);
    ASSERT_TRUE(allRanksOk(send.ok() && recv.ok()));
    send.poison(stream);
    recv.poison(stream);
    std::vector<uint8_t> expected(recv.bytes(), kPoison);
    for (size_t p = 0; p < n; ++p) genBytes(streamOf(seed, tag, p), 0, part, expected.data() + recvAt + p * part);
    const std::vector<uint8_t> mine = genVector(streamOf(seed, tag, rank), part);
    uint8_t* sendPtr;
    if (l.inPlace) {
      sendPtr = recv.get() + recvAt + rank * part;
      recv.upload(mine, recvAt + rank * part, stream);
    } else {
      sendPtr = send.get() + l.sendOffset;
      send.upload(mine, l.sendOffset, stream);
    }
    ALLOY_EXPECT_OK(alloyAllGather(sendPtr, recv.get() + recvAt, count, type, comm, stream));
    const std::vector<uint8_t> got = recv.download(stream);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recv allocation"));
  }
};

class Broadcast : public Gathers {};
class AllGather : public Gathers {};

// Small ones through the direct engine's lines (by default) and over the rings (ALLOY_DIRECT_MAX_BYTES=0),
// the root moving with every call.
TEST_F(Broadcast, EveryDatatypeCountAndRoot) {
  uint64_t tag = 0;
  for (const size_t directMax : {size_t{1} << 62, size_t{0}}) {
    ScopedEnv engine("ALLOY_DIRECT_MAX_BYTES", directMax);
    for (alloyDataType_t type : kAllTypes)
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}, size_t{7001}}) {
        ++tag;
        broadcast(count, type, static_cast<int>(tag % nranks), tag);
      }
  }
  for (int root = 0; root < nranks; ++root)
    for (size_t bytes : {size_t{4096}, size_t{262145}, (size_t{3} << 20) + 5, (size_t{64} << 20) + 3})
      broadcast(bytes, alloyUint8, root, ++tag);
}

TEST_F(Broadcast, InPlaceAndUnaligned) {
  uint64_t tag = 0;
  const int root = nranks - 1;
  for (size_t count : {size_t{1}, size_t{1001}, size_t{9001}, size_t{300001}}) {
    broadcast(count, alloyFloat32, root, ++tag, {0, 0, true});
    broadcast(count, alloyInt8, root, ++tag, {3, 3, true});
    broadcast(count, alloyUint8, root, ++tag, {1, 3});
    broadcast(count, alloyFloat16, root, ++tag, {2, 6});
  }
}

// Scatter and forward inside one host (broadcast.cc, broadcastScattered), forced wherever it can run:
// every root; parts just above the low-latency limit (the smallest that forwards), several ring turns
// with a ragged end; in place, and receive buffers off their 16-byte alignment (the forwarding rank then
// copies its part out apart from the fan-out to its peers).
TEST_F(Broadcast, ScatteredAndForwarded) {
  if (nranks < 3 || comm->topology.spansHosts()) GTEST_SKIP() << "forwarding needs 3 or more ranks on one host";
  ScopedEnv force("ALLOY_BROADCAST_FORWARD", 1);
  const size_t smallest = (nranks - 1) * (comm->local->lowLatencyMaxBytes() + 4096);
  uint64_t tag = 0;
  for (int root = 0; root < nranks; ++root) {
    broadcast(smallest, alloyUint8, root, ++tag);
    broadcast((size_t{24} << 20) + 7, alloyUint8, root, ++tag);
    broadcast((size_t{3} << 20) + 5, alloyInt8, root, ++tag, {3, 3, true});
    broadcast((size_t{3} << 20) + 5, alloyUint8, root, ++tag, {1, 3});
    broadcast(size_t{1} << 20, alloyFloat32, root, ++tag, {0, 0, true});
  }
}

// Scattered and passed on in the direct engine's lines (DirectPlan::planBroadcastTwoShot: 3 ranks or more
// inside one host, from past the one-shot's sizes while a part fits a slot), every root: the first size
// past the one-shot, a ragged middle one, the largest the lines take (ALLOY_DIRECT_LL_MAX_BYTES, 1 MiB)
// and one byte more (the rings then); in place, and buffers off their 16-byte alignment. Twice, so that
// both generations of the line areas carry it.
TEST_F(Broadcast, TwoStepLinesEveryRoot) {
  if (nranks < 3 || comm->topology.spansHosts()) GTEST_SKIP() << "the two-step lines need 3 or more ranks on one host";
  const size_t oneShotLast =
      std::min(comm->local->lowLatencyMaxBytes(), alloy::allreduceOneShotMaxBytes(nranks) / nranks);
  const size_t largest = alloy::directLowLatencyMaxBytes();
  uint64_t tag = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int root = 0; root < nranks; ++root) {
      broadcast(oneShotLast + 1, alloyUint8, root, ++tag);
      broadcast(size_t{500001}, alloyInt8, root, ++tag, {3, 3, true});
      broadcast(size_t{300001}, alloyUint8, root, ++tag, {1, 3});
      broadcast(largest / 4, alloyFloat32, root, ++tag, {0, 0, true});
      broadcast(largest + 1, alloyUint8, root, ++tag);
    }
}

// The binomial tree between hosts (broadcast.cc, broadcastStaged), which by default runs only where the
// cost model expects it to be faster (small buffers between many hosts), forced at any host count: every
// root (the tree is rooted at each in turn, along its rail where hosts are even), sizes up to the
// one-shot limit, in place and unaligned.
TEST_F(Broadcast, BinomialTreeBetweenHosts) {
  if (!comm->topology.spansHosts()) GTEST_SKIP() << "the communicator does not span hosts (set ALLOY_HOSTID per rank)";
  ScopedEnv force("ALLOY_BROADCAST_TREE", 1);
  uint64_t tag = 0;
  for (int root = 0; root < nranks; ++root) {
    for (size_t bytes : {size_t{1}, size_t{4096}, size_t{65537}}) broadcast(bytes, alloyUint8, root, ++tag);
    broadcast(1001, alloyFloat32, root, ++tag, {0, 0, true});
    broadcast(1001, alloyFloat16, root, ++tag, {2, 6});
  }
  broadcast(std::min(alloy::allreduceOneShotMaxBytes(nranks), size_t{256} << 10), alloyUint8, nranks - 1, ++tag);
}

// Large broadcasts between hosts in parts (broadcastInParts, the default: over every rail where the hosts
// hold the same L > 1 ranks, else scattered and gathered) and whole (ALLOY_BROADCAST_PARTS=0). Every root;
// just above the one-shot limit, where the parts are smallest, and a ragged size of several network chunks
// per part; in place, and buffers off their 16-byte alignment.
TEST_F(Broadcast, InPartsBetweenHosts) {
  if (!comm->topology.spansHosts()) GTEST_SKIP() << "the communicator does not span hosts (set ALLOY_HOSTID per rank)";
  uint64_t tag = 0;
  for (const int parts : {1, 0}) {
    ScopedEnv schedule("ALLOY_BROADCAST_PARTS", parts);
    const size_t smallest = alloy::allreduceOneShotMaxBytes(nranks) + 1;
    for (int root = 0; root < nranks; ++root) {
      broadcast(smallest, alloyUint8, root, ++tag);
      broadcast((size_t{5} << 20) + 3, alloyUint8, root, ++tag);
      broadcast((size_t{1} << 20) + 7, alloyInt8, root, ++tag, {3, 3, true});
      broadcast(size_t{300001}, alloyFloat16, root, ++tag, {2, 6});
    }
  }
}

// The ways an all-gather inside a host runs: the direct engine's 16-byte lines for small ones and the
// rings above them (the defaults), 128-byte lines at every size (ALLOY_DIRECT_LL_MAX_BYTES=0 and
// ALLOY_DIRECT_LL128_MAX_BYTES unlimited; where the links carry no wide lines, the rings), and the rings
// alone (ALLOY_DIRECT_MAX_BYTES=0).
struct AllGatherEngine {
  const char* name;
  size_t linesMax, wideLinesMax, directMax;
};
constexpr size_t kUnlimited = size_t{1} << 62;
constexpr AllGatherEngine kAllGatherEngines[] = {
    {"direct engine", size_t{1} << 20, 0, kUnlimited},
    {"direct engine, wide lines only", 0, kUnlimited, kUnlimited},
    {"rings", size_t{1} << 20, 0, 0},
};

TEST_F(AllGather, EveryDatatypeAndCount) {
  uint64_t tag = 0;
  for (const AllGatherEngine& e : kAllGatherEngines) {
    SCOPED_TRACE(e.name);
    ScopedEnv engine("ALLOY_DIRECT_MAX_BYTES", e.directMax);
    ScopedEnv lines("ALLOY_DIRECT_LL_MAX_BYTES", e.linesMax);
    ScopedEnv wide("ALLOY_DIRECT_LL128_MAX_BYTES", e.wideLinesMax);
    for (alloyDataType_t type : kAllTypes)
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}, size_t{70001}}) allgather(count, type, ++tag);
  }
  for (size_t bytes : {size_t{4096}, size_t{262143}, (size_t{3} << 20) + 5, (size_t{32} << 20) + 1})
    allgather(bytes, alloyUint8, ++tag);
}

TEST_F(AllGather, InPlaceAndUnaligned) {
  uint64_t tag = 0;
  for (const AllGatherEngine& e : kAllGatherEngines) {
    SCOPED_TRACE(e.name);
    ScopedEnv engine("ALLOY_DIRECT_MAX_BYTES", e.directMax);
    ScopedEnv lines("ALLOY_DIRECT_LL_MAX_BYTES", e.linesMax);
    ScopedEnv wide("ALLOY_DIRECT_LL128_MAX_BYTES", e.wideLinesMax);
    for (size_t count : {size_t{1}, size_t{1001}, size_t{300001}}) {
      allgather(count, alloyFloat32, ++tag, {0, 0, true});
      allgather(count, alloyInt8, ++tag, {3, 3, true});
      allgather(count, alloyUint8, ++tag, {1, 3});
      allgather(count, alloyBfloat16, ++tag, {2, 6});
    }
  }
}

// Recursive doubling between hosts (allgather_doubling.h), which by default runs only where the model
// expects it to be faster (several ranks per host, or dozens of hosts), forced at any host count: with
// 3 hosts (or 3 ranks on uneven hosts) a member hands its block in and takes the whole result back;
// with even hosts the doubling runs along the rails before the exchange inside the host. Sizes up to the
// one-shot limit (at most 256 KiB in all), in place and unaligned.
TEST_F(AllGather, RecursiveDoublingBetweenHosts) {
  if (!comm->topology.spansHosts()) GTEST_SKIP() << "the communicator does not span hosts (set ALLOY_HOSTID per rank)";
  ScopedEnv force("ALLOY_ALLGATHER_DOUBLING", 1);
  const size_t limit = std::min(alloy::allreduceOneShotMaxBytes(nranks), size_t{256} << 10);  // kept quick
  uint64_t tag = 0;
  for (alloyDataType_t type : {alloyUint8, alloyFloat32, alloyFloat64, alloyBfloat16})
    for (size_t count : {size_t{1}, size_t{7}, size_t{1001}}) allgather(count, type, ++tag);
  allgather(limit / nranks, alloyUint8, ++tag);
  allgather(1001, alloyFloat32, ++tag, {0, 0, true});
  allgather(3001, alloyInt8, ++tag, {3, 3, true});
  allgather(1001, alloyBfloat16, ++tag, {2, 6});
}

// 100 broadcasts and allgathers alternating on one stream with no host synchronisation, each into its
// own region of one receive buffer, the root changing every time.
TEST_F(AllGather, HundredBackToBackWithBroadcasts) {
  constexpr int kIterations = 100;
  const size_t n = static_cast<size_t>(nranks);
  Rng shape(streamOf(seed, 1000));
  std::vector<size_t> counts(kIterations), offsets(kIterations + 1, 0);
  for (int i = 0; i < kIterations; ++i) {
    counts[i] = i % 10 == 9 ? shape.range(300000, 400000) : shape.range(1, 5000);
    offsets[i + 1] = offsets[i] + counts[i] * (i % 2 == 0 ? n : 1);
  }
  DeviceBuffer send(400000), recv(offsets[kIterations] + kGuard);
  ASSERT_TRUE(allRanksOk(send.ok() && recv.ok()));
  recv.poison(stream);
  // Every iteration sends bytes [0, count) of this rank's one stream: the send buffer never changes.
  const std::vector<uint8_t> mine = genVector(streamOf(seed, 1, rank), 400000);
  send.upload(mine, 0, stream);
  for (int i = 0; i < kIterations; ++i) {
    uint8_t* dst = recv.get() + offsets[i];
    const alloyResult_t r = i % 2 == 0 ? alloyAllGather(send.get(), dst, counts[i], alloyUint8, comm, stream)
                                       : alloyBroadcast(send.get(), dst, counts[i], alloyUint8, i % nranks, comm, stream);
    EXPECT_EQ(r, alloySuccess) << "iteration " << i << ": " << alloyFailure("the collective", r);
  }
  const std::vector<uint8_t> got = recv.download(stream);
  std::vector<uint8_t> expected(got.size(), kPoison);
  for (int i = 0; i < kIterations; ++i) {
    if (i % 2 == 0) {
      for (size_t p = 0; p < n; ++p) genBytes(streamOf(seed, 1, p), 0, counts[i], expected.data() + offsets[i] + p * counts[i]);
    } else {
      genBytes(streamOf(seed, 1, i % nranks), 0, counts[i], expected.data() + offsets[i]);
    }
  }
  EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "all 100 results"));
}

}  // namespace
}  // namespace alloytest
