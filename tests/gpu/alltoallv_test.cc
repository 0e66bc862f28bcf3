// alloyAlltoAllv: random count matrices that every rank derives from the test's shared seed, random
// displacements in a shuffled order with gaps (the gaps of recvbuff must keep the poison), ranks that send
// or receive nothing, self-sends, and blocks larger than the engine's 256 KB slot.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

// 256 KiB per peer: the default low-latency limit (ALLOY_LL_MAX_BYTES), once the slot size; the bulk
// slot is 512 KiB now (alltoall_test.cc ProtocolBoundarySizes covers the actual boundaries).
constexpr size_t kSlotBytes = 256 << 10;

// Displacements (in elements) for one rank's blocks: the blocks are laid out in a random order of peers,
// with a random gap (0..maxGap elements) before each and after the last. A zero-count block gets an
// arbitrary displacement, sometimes past the end: it must be ignored.
struct Placement {
  std::vector<size_t> displs;
  size_t extent = 0;  // elements the buffer must hold
};

Placement place(const std::vector<size_t>& counts, size_t maxGap, uint64_t stream) {
  Rng rng(stream);
  const size_t n = counts.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.range(0, i - 1)]);
  Placement p;
  p.displs.assign(n, 0);
  size_t cursor = rng.range(0, maxGap);
  for (size_t peer : order) {
    p.displs[peer] = cursor;
    cursor += counts[peer] + rng.range(0, maxGap);
  }
  p.extent = cursor;
  for (size_t peer = 0; peer < n; ++peer)
    if (counts[peer] == 0 && rng.chance(0.5)) p.displs[peer] = cursor + rng.range(0, 100000);
  return p;
}

class AlltoAllv : public CommTest {
 protected:
  // counts[p * nranks + r]: elements rank p sends to rank r (the same matrix on every rank).
  // relayBytes > 0 offers a relaybuff of that size (optional scratch; NULL otherwise).
  void roundTrip(const std::vector<size_t>& counts, alloyDataType_t type, uint64_t tag, size_t maxGap,
                 size_t relayBytes = 0) {
    SCOPED_TRACE(std::string("alltoallv of ") + typeName(type) + ", tag " + std::to_string(tag) + ", matrix " +
                 describe(counts));
    const int n = nranks;
    const size_t es = typeSize(type);
    std::vector<Placement> sendPlace(n), recvPlace(n);
    for (int p = 0; p < n; ++p) {
      std::vector<size_t> row(n), column(n);
      for (int r = 0; r < n; ++r) {
        row[r] = counts[p * n + r];
        column[r] = counts[r * n + p];
      }
      sendPlace[p] = place(row, maxGap, streamOf(seed, tag, 0x5e5d, p));
      recvPlace[p] = place(column, maxGap, streamOf(seed, tag, 0x7ec5, p));
    }
    std::vector<size_t> sendcounts(n), recvcounts(n);
    for (int r = 0; r < n; ++r) {
      sendcounts[r] = counts[rank * n + r];
      recvcounts[r] = counts[r * n + rank];
    }
    const size_t sendBytes = sendPlace[rank].extent * es;
    const size_t recvBytes = recvPlace[rank].extent * es;

    // Expected destination: poison everywhere but in the blocks.
    std::vector<uint8_t> expected(recvBytes + kGuard, kPoison);
    for (int p = 0; p < n; ++p) {
      if (recvcounts[p] == 0) continue;
      genBytes(streamOf(seed, tag, p), sendPlace[p].displs[rank] * es, recvcounts[p] * es,
               expected.data() + recvPlace[rank].displs[p] * es);
    }

    DeviceBuffer send(sendBytes), recv(recvBytes + kGuard);
    DeviceBuffer relay(relayBytes);
    const bool ready = send.ok() && recv.ok() && relay.ok();
    const std::vector<uint8_t> sendData = genVector(streamOf(seed, tag, rank), sendBytes);
    if (ready) {
      send.upload(sendData, 0, stream);
      recv.poison(stream);
    }
    const alloyResult_t r =
        ready ? alloyAlltoAllv(send.get(), sendcounts.data(), sendPlace[rank].displs.data(), recv.get(),
                               recvcounts.data(), recvPlace[rank].displs.data(), relayBytes > 0 ? relay.get() : nullptr,
                               type, comm, stream)
              : alloyInternalError;
    EXPECT_EQ(r, alloySuccess) << alloyFailure("alloyAlltoAllv", r);
    if (!ready) return;
    const std::vector<uint8_t> got = recv.download(stream);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recvbuff (blocks, gaps and guard)"));
    if (sendBytes > 0) {
      const std::vector<uint8_t> sendAfter = send.download(stream);
      EXPECT_TRUE(bytesEqual(sendData.data(), sendAfter.data(), sendBytes, "sendbuff after the call (unchanged)"));
    }
  }

  std::string describe(const std::vector<size_t>& counts) const {
    std::string s = "[";
    for (int p = 0; p < nranks; ++p) {
      s += p ? "; " : "";
      for (int r = 0; r < nranks; ++r) s += (r ? " " : "") + std::to_string(counts[p * nranks + r]);
    }
    return s + "]";
  }

  std::vector<size_t> randomMatrix(uint64_t stream, size_t maxCount, double zeroChance) const {
    Rng rng(stream);
    std::vector<size_t> counts(static_cast<size_t>(nranks) * nranks);
    for (size_t& c : counts) c = rng.chance(zeroChance) ? 0 : rng.range(1, maxCount);
    return counts;
  }
};

TEST_F(AlltoAllv, RandomMatrices) {
  const alloyDataType_t types[] = {alloyUint8, alloyBfloat16, alloyInt32, alloyFloat64, alloyFloat8e5m2};
  uint64_t tag = 0;
  for (alloyDataType_t type : types) {
    for (int round = 0; round < 3; ++round) {
      ++tag;
      std::vector<size_t> counts = randomMatrix(streamOf(seed, tag, 0xc0), 3000, 0.25);
      if (round == 0)  // a self-send on every rank at least once
        for (int p = 0; p < nranks; ++p) counts[p * nranks + p] = 1 + counts[p * nranks + p];
      roundTrip(counts, type, tag, 64, round == 2 ? size_t{4} << 20 : 0);
    }
  }
}

// With relaybuff, between hosts that each hold several ranks, blocks for other hosts go through the rank
// of this host that faces their destination's rail (alltoallv_relay.h): random matrices with empty
// blocks, with a relaybuff large enough and with one too small for what a rank relays (the library then
// stages in scratch memory), and a matrix where one rank sends nothing at all. On one host, or hosts of
// one rank, the calls take the direct path and must give the same results.
TEST_F(AlltoAllv, RelayThroughTheRails) {
  uint64_t tag = 0;
  for (alloyDataType_t type : {alloyUint8, alloyFloat32, alloyFloat64}) {
    for (size_t relayBytes : {size_t{64} << 20, size_t{1}}) {
      ++tag;
      roundTrip(randomMatrix(streamOf(seed, tag, 0xe1), 40000, 0.3), type, tag, 64, relayBytes);
    }
  }
  std::vector<size_t> counts = randomMatrix(streamOf(seed, ++tag, 0xe2), 5000, 0.0);
  const int silent = static_cast<int>(streamOf(seed, tag, 0x52) % nranks);
  for (int r = 0; r < nranks; ++r) counts[silent * nranks + r] = 0;
  roundTrip(counts, alloyInt32, tag, 64, size_t{16} << 20);
}

// One rank sends nothing to anybody and another receives nothing from anybody.
TEST_F(AlltoAllv, SilentRankAndDeafRank) {
  for (uint64_t tag = 1; tag <= 3; ++tag) {
    std::vector<size_t> counts = randomMatrix(streamOf(seed, tag, 0xc1), 2000, 0.0);
    const int silent = static_cast<int>(streamOf(seed, tag, 0x51) % nranks);
    const int deaf = (silent + static_cast<int>(tag)) % nranks;
    for (int r = 0; r < nranks; ++r) counts[silent * nranks + r] = 0;
    for (int p = 0; p < nranks; ++p) counts[p * nranks + deaf] = 0;
    roundTrip(counts, tag == 2 ? alloyFloat16 : alloyUint8, tag, 16);
  }
}

TEST_F(AlltoAllv, SelfOnly) {
  std::vector<size_t> counts(static_cast<size_t>(nranks) * nranks, 0);
  Rng rng(streamOf(seed, 0xd1a9));
  for (int p = 0; p < nranks; ++p) counts[p * nranks + p] = rng.range(1, 100000);
  roundTrip(counts, alloyInt64, 1, 32);
}

// Blocks around and well over one slot (256 KB), a few empty.
TEST_F(AlltoAllv, BlocksCrossingSlotSize) {
  uint64_t tag = 0;
  for (alloyDataType_t type : {alloyUint8, alloyFloat32}) {
    ++tag;
    const size_t es = typeSize(type);
    Rng rng(streamOf(seed, tag, 0xb1));
    std::vector<size_t> counts(static_cast<size_t>(nranks) * nranks);
    for (size_t i = 0; i < counts.size(); ++i) {
      size_t bytes = 0;
      switch (rng.range(0, 5)) {
        case 0: bytes = kSlotBytes - es; break;
        case 1: bytes = kSlotBytes; break;
        case 2: bytes = kSlotBytes + es; break;
        case 3: bytes = 0; break;
        default: bytes = rng.range(kSlotBytes / 2, 3 * kSlotBytes); break;
      }
      counts[i] = bytes / es;
    }
    roundTrip(counts, type, tag, 4096 + 3);
  }
}

// One random exchange of small blocks (low-latency protocol) and one of blocks over a slot (bulk): the
// reduced suite for compute-sanitizer (scripts/gpu-check.sh sanitize).
TEST_F(AlltoAllv, BothProtocols) {
  const EngineSizes e = engineSizes();
  roundTrip(randomMatrix(streamOf(seed, 1, 0xc2), 3000, 0.2), alloyUint8, 1, 64);
  std::vector<size_t> large = randomMatrix(streamOf(seed, 2, 0xc2), e.slotBytes / 4, 0.2);
  for (size_t& c : large)
    if (c != 0) c += e.llMaxBytes / 4;  // float32: every non-empty block over the low-latency limit
  roundTrip(large, alloyFloat32, 2, 4096 + 3);
}

TEST_F(AlltoAllv, AllZeroCounts) {
  std::vector<size_t> counts(static_cast<size_t>(nranks) * nranks, 0);
  roundTrip(counts, alloyFloat32, 1, 8);
}

// An independent reference: the same exchange done on the host by MPI_Alltoallv, with data drawn from
// another generator.
TEST_F(AlltoAllv, MatchesMpiAlltoallv) {
  const int n = nranks;
  Rng shape(streamOf(seed, 0x3a1));
  std::vector<int> matrix(static_cast<size_t>(n) * n);
  for (int& c : matrix) c = shape.chance(0.2) ? 0 : static_cast<int>(shape.range(1, 50000));
  std::vector<size_t> counts(matrix.begin(), matrix.end());

  std::vector<int> scount(n), rcount(n), sdisp(n), rdisp(n);
  std::vector<size_t> sendcounts(n), recvcounts(n), sdispls(n), rdispls(n);
  Rng gaps(streamOf(seed, 0x3a2, rank));
  size_t sendTotal = 0, recvTotal = 0;
  for (int r = 0; r < n; ++r) {
    sendTotal += gaps.range(0, 9);
    scount[r] = matrix[rank * n + r];
    sdisp[r] = static_cast<int>(sendTotal);
    sendTotal += scount[r];
    recvTotal += gaps.range(0, 9);
    rcount[r] = matrix[r * n + rank];
    rdisp[r] = static_cast<int>(recvTotal);
    recvTotal += rcount[r];
    sendcounts[r] = scount[r];
    recvcounts[r] = rcount[r];
    sdispls[r] = sdisp[r];
    rdispls[r] = rdisp[r];
  }
  std::mt19937_64 engine(seed ^ (0x9e3779b97f4a7c15ull * (rank + 1)));
  std::vector<uint8_t> sendHost(sendTotal);
  for (uint8_t& b : sendHost) b = static_cast<uint8_t>(engine() >> 56);
  std::vector<uint8_t> expected(recvTotal + kGuard, kPoison);
  MPI_Alltoallv(sendHost.data(), scount.data(), sdisp.data(), MPI_BYTE, expected.data(), rcount.data(),
                rdisp.data(), MPI_BYTE, MPI_COMM_WORLD);

  DeviceBuffer send(sendTotal), recv(recvTotal + kGuard);
  ASSERT_TRUE(allRanksOk(send.ok() && recv.ok()));
  send.upload(sendHost, 0, stream);
  recv.poison(stream);
  ALLOY_EXPECT_OK(alloyAlltoAllv(send.get(), sendcounts.data(), sdispls.data(), recv.get(), recvcounts.data(),
                                 rdispls.data(), nullptr, alloyUint8, comm, stream));
  const std::vector<uint8_t> got = recv.download(stream);
  EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "recvbuff against MPI_Alltoallv"));
}

}  // namespace
}  // namespace alloytest
