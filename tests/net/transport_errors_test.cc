// Failures of the transport: malformed peer bytes, arguments outside what was registered, and a peer
// that went away. Each must fail with a clear error, send nothing, and never hang.
#include <cstring>
#include <random>

#include "net_test_util.h"

namespace nettest {
namespace {

std::vector<uint8_t> randomBytes(uint64_t seed, size_t n) { return messageBytes(seed, -1, -1, 0, n); }

TEST_F(NetTest, GarbageAddressFailsCleanly) {
  Connection* conn = nullptr;
  const std::vector<uint8_t> garbage = randomBytes(seed, 120);
  EXPECT_ALLOY(alloyInvalidArgument, transport->connect(1, garbage.data(), garbage.size(), &conn));
  EXPECT_TRUE(lastErrorMentions("address (peer 1)")) << alloyGetLastError(nullptr);
  EXPECT_EQ(conn, nullptr);

  std::vector<uint8_t> address;
  ASSERT_ALLOY(alloySuccess, transport->localAddress(&address));
  EXPECT_ALLOY(alloyInvalidArgument, transport->connect(1, address.data(), address.size() - 1, &conn));
  EXPECT_TRUE(lastErrorMentions("truncated")) << alloyGetLastError(nullptr);
  address[address.size() / 2] ^= 0x40;
  EXPECT_ALLOY(alloyInvalidArgument, transport->connect(1, address.data(), address.size(), &conn));
  EXPECT_TRUE(lastErrorMentions("checksum")) << alloyGetLastError(nullptr);
  EXPECT_ALLOY(alloyInvalidArgument, transport->connect(1, nullptr, 0, &conn));
  EXPECT_EQ(conn, nullptr);
}

// Bad keys and ranges are refused before anything is sent: afterwards, this rank's region and counter
// at every peer still hold their initial values.
TEST_F(NetTest, BadKeyAndOutOfRangeFailWithoutSending) {
  const std::vector<uint8_t> data = randomBytes(seed, 4096);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    Connection* conn = connections[peer];
    RemoteKey* key = nullptr;
    const std::vector<uint8_t> garbage = randomBytes(seed + peer, 64);
    EXPECT_ALLOY(alloyInvalidArgument, transport->importKey(conn, garbage.data(), garbage.size(), &key));
    EXPECT_TRUE(lastErrorMentions("key (peer")) << alloyGetLastError(nullptr);
    EXPECT_EQ(key, nullptr);

    const size_t windowEnd = regionOffset(nranks);
    Request req;
    EXPECT_ALLOY(alloyInvalidArgument, transport->put(conn, data.data(), nullptr, keys[peer], windowEnd - 3, 4, &req));
    EXPECT_TRUE(lastErrorMentions("dstOffset")) << alloyGetLastError(nullptr);
    EXPECT_ALLOY(alloyInvalidArgument, transport->put(conn, data.data(), nullptr, keys[peer], SIZE_MAX, 1, &req));
    EXPECT_TRUE(lastErrorMentions("dstOffset")) << alloyGetLastError(nullptr);
    EXPECT_ALLOY(alloyInvalidArgument, transport->signal(conn, keys[peer], counterOffset(rank) + 4, 1, &req));
    EXPECT_TRUE(lastErrorMentions("dstOffset")) << alloyGetLastError(nullptr);
    EXPECT_ALLOY(alloyInvalidArgument, transport->signal(conn, keys[peer], windowEnd, 1, &req));
    EXPECT_TRUE(lastErrorMentions("dstOffset")) << alloyGetLastError(nullptr);
    const size_t at = regionOffset(rank), counter = counterOffset(rank);
    EXPECT_ALLOY(alloyInvalidArgument, transport->putSignal(conn, data.data(), 0, keys[peer], at, counter, 1, &req));
    EXPECT_TRUE(lastErrorMentions("bytes: 0")) << alloyGetLastError(nullptr);
    EXPECT_ALLOY(alloyInvalidArgument, transport->putSignal(conn, data.data(), transport->maxPutSignalBytes() + 1,
                                                            keys[peer], at, counter, 1, &req));
    EXPECT_TRUE(lastErrorMentions("maxPutSignalBytes()")) << alloyGetLastError(nullptr);
    EXPECT_ALLOY(alloyInvalidArgument, transport->putSignal(conn, data.data(), 4, keys[peer], windowEnd - 3, counter, 1, &req));
    EXPECT_TRUE(lastErrorMentions("dstOffset")) << alloyGetLastError(nullptr);
    EXPECT_ALLOY(alloyInvalidArgument, transport->putSignal(conn, data.data(), 4, keys[peer], at, counter + 4, 1, &req));
    EXPECT_TRUE(lastErrorMentions("signalOffset")) << alloyGetLastError(nullptr);

    // A source outside the registration it names.
    alloy::net::Registration* reg = nullptr;
    std::vector<uint8_t> packed;
    ASSERT_ALLOY(alloySuccess, transport->registerMemory(const_cast<uint8_t*>(data.data()), 1024, &reg, &packed));
    EXPECT_ALLOY(alloyInvalidArgument,
                 transport->put(conn, data.data() + 512, reg, keys[peer], regionOffset(rank), 1024, &req));
    EXPECT_TRUE(lastErrorMentions("src")) << alloyGetLastError(nullptr);
    EXPECT_ALLOY(alloySuccess, transport->deregister(reg));

    // A key used on a connection it was not imported on.
    const int other = (peer + 1) % nranks == rank ? (peer + 2) % nranks : (peer + 1) % nranks;
    if (other != peer && other != rank) {
      EXPECT_ALLOY(alloyInvalidArgument, transport->put(conn, data.data(), nullptr, keys[other], 0, 8, &req));
      EXPECT_TRUE(lastErrorMentions("dst: the key was imported")) << alloyGetLastError(nullptr);
    }
    EXPECT_EQ(req.ticket, 0u) << "a refused call filled its request";
  }
  flushAll();
  barrier();
  for (int source = 0; source < nranks; ++source) {
    if (source == rank) continue;
    expectUntouched(source);
    EXPECT_EQ(counter(source), 0u);
  }
}

// A peer whose transport is gone: operations to it fail with alloyRemoteError naming it, within the
// wait bound, instead of hanging.
TEST_F(NetTest, DeadPeerFailsWithRemoteErrorNamingIt) {
  if (nranks < 2) GTEST_SKIP() << "needs 2 ranks";
  if (transport->describe(connections[rank == 0 ? 1 : 0]).find("no peer failure detection") != std::string::npos)
    GTEST_SKIP() << "UCX detects no dead peer over " << transport->describe(connections[rank == 0 ? 1 : 0]);
  barrier();
  if (rank != 0) {
    transport.reset();  // force-closes its endpoints: rank 0's connection to it breaks
    connections.clear();
    barrier();
    return;
  }
  barrier();
  const std::vector<uint8_t> data = randomBytes(seed, 64);
  alloyResult_t result = alloySuccess;
  waitUntil([&] {
    Request req;
    result = transport->put(connections[1], data.data(), nullptr, keys[1], regionOffset(0), data.size(), &req);
    if (result == alloySuccess) result = wait(&req);
    if (result == alloySuccess) result = transport->flush(connections[1], &req);
    if (result == alloySuccess) result = wait(&req);
    return result != alloySuccess && result != alloyInProgress;
  }, "the dead peer's error");
  EXPECT_EQ(result, alloyRemoteError) << alloyGetLastError(nullptr);
  EXPECT_TRUE(lastErrorMentions("peer 1")) << alloyGetLastError(nullptr);
  std::printf("net: the dead peer's error: %s\n", alloyGetLastError(nullptr));
  connections.clear();  // every peer is gone: TearDown has nothing to flush
}

}  // namespace
}  // namespace nettest
