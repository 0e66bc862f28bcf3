// What only a communicator that spans hosts does (ALLOY_HOSTID virtual hosts on one machine, or real
// hosts): messages cut into many network chunks, many operations rung back to back, and a peer that never
// arrives. Each test skips on a one-host communicator; scripts/gpu-check.sh hosts runs them across
// virtual hosts, with the suite's other tests, which hold there as on one host (every collective,
// send/recv, graphs, bad input, Faults.AbortStopsAWaitingKernel, ...).
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm.h"
#include "gpu_test_util.h"

namespace alloytest {
namespace {

class CrossHost : public CommTest {
 protected:
  void SetUp() override {
    CommTest::SetUp();
    if (HasFatalFailure()) return;
    if (!comm->topology.spansHosts()) GTEST_SKIP() << "the communicator does not span hosts (set ALLOY_HOSTID per rank)";
  }
  // The network chunk size this run uses (ALLOY_NET_SLOT_BYTES, default 1 MiB).
  static size_t netSlotBytes() {
    const char* v = std::getenv("ALLOY_NET_SLOT_BYTES");
    return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) / 4096 * 4096 : size_t{1} << 20;
  }
  // A rank on another host than rank 0, or -1.
  int firstRemoteOfRankZero() const {
    for (int r = 1; r < nranks; ++r)
      if (comm->topology.localIndexOf[r] < 0 || comm->topology.localIndexOf[0] < 0) return r;
    return -1;
  }
};

TEST_F(CrossHost, MessagesOfManyNetworkChunks) {
  const size_t slot = netSlotBytes();
  // Around one chunk, and several chunks' worth (more than the four slots a peer has), at offsets that
  // are not aligned for the copy engines.
  size_t tag = 1;
  for (size_t bytes : {slot - 1, slot, slot + 1, 5 * slot + 4099}) alltoallRoundTrip(bytes, alloyUint8, tag++, 1, 3);
}

TEST_F(CrossHost, HundredAlltoAllsBackToBack) {
  // Each rings the doorbell after the previous one cleared it, with no host synchronisation between.
  constexpr int kOps = 100;
  const size_t block = 3000;
  const size_t perOp = block * nranks;
  DeviceBuffer send(kOps * perOp), recv(kOps * perOp);
  ASSERT_TRUE(send.ok() && recv.ok());
  send.upload(genVector(streamOf(seed, 7, rank), kOps * perOp), 0, stream);
  recv.poison(stream);
  for (int op = 0; op < kOps; ++op)
    ALLOY_EXPECT_OK(alloyAlltoAll(send.get() + op * perOp, recv.get() + op * perOp, block, alloyUint8, comm, stream));
  const std::vector<uint8_t> got = recv.download(stream);
  std::vector<uint8_t> expected(kOps * perOp);
  for (int p = 0; p < nranks; ++p) {
    const std::vector<uint8_t> theirs = genVector(streamOf(seed, 7, p), kOps * perOp);
    for (int op = 0; op < kOps; ++op)
      std::copy_n(theirs.begin() + op * perOp + rank * block, block, expected.begin() + op * perOp + p * block);
  }
  EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "100 alltoalls"));
}

// Small broadcasts between hosts back to back on one stream with no host synchronisation, each of its own
// bytes into its own region: first a run from one root, whose operations only send between hosts and so end
// their launches at the ring (ALLOY_NET_SENDS_END_AT_RING) while the proxy may still read the outbox that
// the next one stages into; then the root changing every time, so that a launch that ended early is followed
// by one that receives. The leaves take their bytes back to back, most of them already in when their
// operation starts (the ready after the data).
TEST_F(CrossHost, SmallBroadcastsBackToBack) {
  constexpr int kOneRoot = 48, kOps = 96;
  Rng shape(streamOf(seed, 1000));
  std::vector<size_t> counts(kOps), offsets(kOps + 1, 0);
  for (int i = 0; i < kOps; ++i) {
    counts[i] = shape.range(1, 4096);
    offsets[i + 1] = offsets[i] + counts[i];
  }
  const auto rootOf = [&](int i) { return i < kOneRoot ? 0 : i % nranks; };
  DeviceBuffer send(offsets[kOps]), recv(offsets[kOps] + kGuard);
  ASSERT_TRUE(allRanksOk(send.ok() && recv.ok()));
  recv.poison(stream);
  send.upload(genVector(streamOf(seed, 1, rank), offsets[kOps]), 0, stream);
  for (int i = 0; i < kOps; ++i) {
    const alloyResult_t r = alloyBroadcast(send.get() + offsets[i], recv.get() + offsets[i], counts[i], alloyUint8,
                                           rootOf(i), comm, stream);
    EXPECT_EQ(r, alloySuccess) << "broadcast " << i << ": " << alloyFailure("alloyBroadcast", r);
  }
  const std::vector<uint8_t> got = recv.download(stream);
  std::vector<uint8_t> expected(got.size(), kPoison);
  for (int i = 0; i < kOps; ++i)
    genBytes(streamOf(seed, 1, rootOf(i)), offsets[i], counts[i], expected.data() + offsets[i]);
  EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), "96 broadcasts"));
}

// Under ALLOY_NET=none a communicator that spans hosts is still created, and every collective fails on
// every rank alike, naming the missing transport, and moves nothing: also on a rank whose peers in a
// rooted collective all share its host (in 2 hosts x 2 ranks, rank 2 only receives from rank 0), which
// would otherwise wait for a root that failed.
TEST_F(CrossHost, WithoutATransportEveryCollectiveSaysWhy) {
  setenv("ALLOY_NET", "none", 1);
  alloyComm_t c = nullptr;
  const alloyResult_t created = alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &c);
  unsetenv("ALLOY_NET");
  ALLOY_ASSERT_OK(created);
  const size_t count = 1000, bytes = count * 4 * nranks;
  DeviceBuffer a(bytes), b(bytes);
  ASSERT_TRUE(a.ok() && b.ok());
  a.poison(stream);
  b.poison(stream);
  const char* why = "no transport between hosts: ALLOY_NET=none";
  ALLOY_EXPECT_ERROR(alloyAllReduce(a.get(), b.get(), count, alloyFloat32, alloySum, c, stream), alloyNotSupported, why);
  ALLOY_EXPECT_ERROR(alloyReduce(a.get(), b.get(), count, alloyFloat32, alloySum, 0, c, stream), alloyNotSupported, why);
  ALLOY_EXPECT_ERROR(alloyReduceScatter(a.get(), b.get(), count, alloyFloat32, alloySum, c, stream), alloyNotSupported,
                     why);
  ALLOY_EXPECT_ERROR(alloyBroadcast(a.get(), b.get(), count, alloyFloat32, 0, c, stream), alloyNotSupported, why);
  ALLOY_EXPECT_ERROR(alloyAllGather(a.get(), b.get(), count, alloyFloat32, c, stream), alloyNotSupported, why);
  ALLOY_EXPECT_ERROR(alloyAlltoAll(a.get(), b.get(), count, alloyFloat32, c, stream), alloyNotSupported, why);
  const std::vector<size_t> counts(nranks, count), displs = [&] {
    std::vector<size_t> d(nranks);
    for (int p = 0; p < nranks; ++p) d[p] = p * count;
    return d;
  }();
  ALLOY_EXPECT_ERROR(alloyAlltoAllv(a.get(), counts.data(), displs.data(), b.get(), counts.data(), displs.data(),
                                    nullptr, alloyFloat32, c, stream),
                     alloyNotSupported, why);
  EXPECT_TRUE(allPoison(a.download(stream).data(), bytes, "sendbuff"));
  EXPECT_TRUE(allPoison(b.download(stream).data(), bytes, "recvbuff"));
  ALLOY_EXPECT_OK(alloyCommDestroy(c));
}

TEST_F(CrossHost, PeerThatNeverJoinsTimesOut) {
  constexpr int kTimeoutMs = 2000;
  alloyComm_t c = nullptr;
  ALLOY_ASSERT_OK(createCommWithTimeout(kTimeoutMs, &c));
  if (rank == 0) {
    const size_t block = 4000;
    DeviceBuffer send(block * nranks), recv(block * nranks);
    ASSERT_TRUE(send.ok() && recv.ok());
    send.upload(genVector(streamOf(seed, 0x90), block * nranks), 0, stream);
    recv.poison(stream);
    const auto t0 = std::chrono::steady_clock::now();
    ALLOY_EXPECT_OK(alloyAlltoAll(send.get(), recv.get(), block, alloyUint8, c, stream));
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    const double waited = secondsSince(t0);
    EXPECT_GE(waited, 0.9 * kTimeoutMs / 1000.0);
    EXPECT_LE(waited, kTimeoutMs / 1000.0 + 3.0);
    const std::string message = expectTimedOut(c, waited);
    EXPECT_NE(message.find("alloyAlltoAll"), std::string::npos) << message;
    EXPECT_NE(message.find("timed out"), std::string::npos) << message;
    // With no peer on its own host, rank 0 can only have waited for the network: it names the peer.
    if (comm->topology.localSize == 1) {
      EXPECT_NE(message.find("rank(s) " + std::to_string(firstRemoteOfRankZero())), std::string::npos) << message;
    }
    ALLOY_EXPECT_ERROR(alloyAlltoAll(send.get(), recv.get(), block, alloyUint8, c, stream), alloyTimeout, "timed out");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ALLOY_EXPECT_OK(alloyCommDestroy(c));
  // The fixture's communicator still works.
  alltoallRoundTrip(70000, alloyUint8, 0x91);
}

}  // namespace
}  // namespace alloytest
