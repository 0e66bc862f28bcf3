// NetChannel and the proxy thread between MPI ranks, driven as the library drives them but with host
// buffers: the test thread adds an operation and rings the doorbell as the GPU stream would, then waits
// for the proxy's release. Every received byte is checked against a reference the receiver computes on
// its own (net_test_util.h: seed, round, source, target, message), and every receive buffer has a
// poisoned guard past its end that no operation may touch, failed ones included.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "net_channel.h"
#include "net_test_util.h"
#include "proxy_thread.h"
#include "ucx_transport.h"

namespace nettest {
namespace {

using alloy::net::NetChannel;
using alloy::net::NetChannelConfig;
using alloy::net::NetGeometry;
using alloy::net::NetMessage;
using alloy::net::NetOperation;
using alloy::net::ProxyThread;
using Clock = std::chrono::steady_clock;

// How long the test thread waits for a doorbell's release before it fails the test and aborts the
// channel, so that a broken protocol fails the run instead of hanging it.
constexpr double kRingSeconds = 60.0;
// The channel's peer timeout where a test does not shorten it: far above any wait of a healthy run.
constexpr long long kPeerTimeoutMs = 30000;
constexpr size_t kGuardBytes = 64;  // poisoned bytes past the end of every receive buffer
// Small enough that messages span chunk boundaries and reuse slots within one message.
constexpr NetGeometry kSmall{3, 4096};

// A draw that both ends of the pair (source, target) agree on, for one round and purpose (salt).
uint64_t pairDraw(uint64_t seed, uint64_t round, int source, int target, uint64_t salt = 0) {
  return mix64(seed ^ mix64((round << 24) ^ (static_cast<uint64_t>(source) << 12) ^ static_cast<uint64_t>(target)) ^
               mix64(salt + 0x73616c74));
}

// The message sizes that matter to the chunk protocol, by shape: nothing (the message is left out), one
// byte, a slot less one, a slot, a slot and one, whole slots, more than all slots (slots reused within
// the message), anything up to twice all slots. The draw picks the size within the shape.
constexpr uint64_t kShapes = 8;
size_t shapedBytes(uint64_t shape, uint64_t draw, NetGeometry g) {
  const size_t slot = g.slotBytes, all = g.slots * g.slotBytes;
  switch (shape % kShapes) {
    case 0: return 0;
    case 1: return 1;
    case 2: return slot - 1;
    case 3: return slot;
    case 4: return slot + 1;
    case 5: return slot * (2 + draw % g.slots);
    case 6: return all + 1 + draw % all;
    default: return 1 + draw % (2 * all);
  }
}

// Whether an error message names rank r ("rank 1 sent ...", "waiting for rank(s) 1 (data)").
bool namesRank(const std::string& message, int r) {
  return std::regex_search(message, std::regex("rank(\\(s\\))? " + std::to_string(r) + "\\b"));
}

// The messages of one operation on this rank and their buffers. In round r, message i from source to
// target (i counts that pair's messages in order) holds messageBytes(mix64(seed + r), source, target,
// i): the sender writes it, the receiver recomputes it.
class Traffic {
 public:
  Traffic(uint64_t seed, int rank) : seed_(seed), rank_(rank) {}

  void add(bool send, int peer, size_t bytes) {
    std::vector<Message>& list = send ? sends_ : recvs_;
    const uint64_t ordinal = std::count_if(list.begin(), list.end(), [&](const Message& m) { return m.peer == peer; });
    list.push_back(Message{peer, ordinal, bytes, std::vector<char>(bytes + (send ? 0 : kGuardBytes))});
  }
  bool empty() const { return sends_.empty() && recvs_.empty(); }

  // The operation over these buffers: valid while this object lives (persistent operations replay it).
  NetOperation operation() {
    NetOperation op;
    for (Message& m : sends_) op.sends.push_back(NetMessage{m.peer, m.storage.data(), m.bytes});
    for (Message& m : recvs_) op.recvs.push_back(NetMessage{m.peer, m.storage.data(), m.bytes});
    return op;
  }

  // Before round r is rung: sends hold round r's data, receives and their guards only poison.
  void prepare(uint64_t round) {
    for (Message& m : sends_) {
      const std::vector<uint8_t> data = reference(round, rank_, m);
      std::memcpy(m.storage.data(), data.data(), m.bytes);
    }
    for (Message& m : recvs_) std::memset(m.storage.data(), kPoison, m.storage.size());
  }

  // After round r: every receive holds its reference, and every guard is intact.
  void check(uint64_t round) const {
    for (const Message& m : recvs_) {
      std::vector<uint8_t> expected = reference(round, m.peer, m);
      expected.resize(m.storage.size(), kPoison);
      expectBytes(m, expected, round);
    }
  }
  // After a failed operation, whose receive buffers may hold anything: the guards only.
  void checkGuards() const {
    const std::vector<uint8_t> poison(kGuardBytes, kPoison);
    for (const Message& m : recvs_)
      EXPECT_EQ(0, std::memcmp(m.storage.data() + m.bytes, poison.data(), kGuardBytes))
          << "rank " << rank_ << ": the guard past a receive of " << m.bytes << " bytes from rank " << m.peer
          << " was written";
  }

 private:
  struct Message {
    int peer;
    uint64_t ordinal;  // among this operation's messages with the same peer and direction
    size_t bytes;
    std::vector<char> storage;  // receives: bytes, then the guard
  };

  std::vector<uint8_t> reference(uint64_t round, int source, const Message& m) const {
    const int target = source == rank_ ? m.peer : rank_;
    return messageBytes(mix64(seed_ + round), source, target, m.ordinal, m.bytes);
  }

  void expectBytes(const Message& m, const std::vector<uint8_t>& expected, uint64_t round) const {
    const char* got = m.storage.data();
    if (std::memcmp(got, expected.data(), expected.size()) == 0) return;
    size_t first = expected.size(), wrong = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (static_cast<uint8_t>(got[i]) == expected[i]) continue;
      first = std::min(first, i);
      ++wrong;
    }
    ADD_FAILURE() << "rank " << rank_ << ", round " << round << ": message " << m.ordinal << " from rank " << m.peer
                  << " (" << m.bytes << " bytes + " << kGuardBytes << " of guard): " << wrong
                  << " bytes differ, first at " << first << " (got 0x" << std::hex
                  << int(static_cast<uint8_t>(got[first])) << ", expected 0x" << int(expected[first]) << std::dec
                  << ")";
  }

  uint64_t seed_;
  int rank_;
  std::vector<Message> sends_, recvs_;
};

// Which messages go from source to target (their sizes, in matching order; zeros are left out).
using PairPlan = std::function<std::vector<size_t>(int source, int target)>;

class NetChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rank = worldRank();
    nranks = worldSize();
    seed = testSeed();
    interleave_.seed(mix64(seed ^ (0x5eedull + rank)));
    if (nranks < 2) GTEST_SKIP() << "needs 2 ranks";
  }
  void TearDown() override;

  // Creates this rank's channel (hostOf: every rank its own host when empty), connects it to every rank
  // on another host and hands it to the proxy thread. Collective.
  void open(NetGeometry geometry, long long timeoutMs = kPeerTimeoutMs, std::vector<uint64_t> hostOf = {});
  bool remote(int peer) const { return hostOf_[peer] != hostOf_[rank]; }

  // This rank's side of a round in which every pair of ranks on different hosts exchanges plan(source,
  // target). The lists of different peers are interleaved at random (each pair's order kept): messages
  // match by peer, not by position.
  Traffic traffic(const PairPlan& plan);
  // One message per pair, its shape cycling with the round so that every pair meets every shape.
  Traffic alltoallv(uint64_t round);
  // Adds traffic's operation (not persistent), runs it as round `round` and checks what arrived.
  void runRound(Traffic& traffic, uint64_t round);
  // Rings the doorbell with id as the stream does (a release store of id + 1) and waits for the proxy to
  // write 0. Past kRingSeconds: a test failure, and the channel is aborted. Whether it was released in time.
  bool ring(uint32_t id);
  // Adds operation and rings it; the channel's error afterwards.
  alloyResult_t ringOnce(NetOperation operation);

  int rank = 0;
  int nranks = 0;
  uint64_t seed = 0;
  NetGeometry geometry{};
  std::unique_ptr<NetChannel> channel;

 private:
  std::vector<std::vector<uint8_t>> allgather(const std::vector<uint8_t>& mine) const;

  std::vector<uint64_t> hostOf_;
  std::mt19937_64 interleave_;  // this rank's own: how its message lists interleave peers
};

std::vector<std::vector<uint8_t>> NetChannelTest::allgather(const std::vector<uint8_t>& mine) const {
  const int size = static_cast<int>(mine.size());
  std::vector<int> sizes(nranks), starts(nranks, 0);
  MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < nranks; ++r) starts[r] = starts[r - 1] + sizes[r - 1];
  std::vector<uint8_t> all(starts.back() + sizes.back());
  MPI_Allgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), starts.data(), MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> byRank(nranks);
  // Entries of ranks on this host stay empty: connect() must not need them.
  for (int r = 0; r < nranks; ++r)
    if (remote(r)) byRank[r].assign(all.begin() + starts[r], all.begin() + starts[r] + sizes[r]);
  return byRank;
}

void NetChannelTest::open(NetGeometry g, long long timeoutMs, std::vector<uint64_t> hostOf) {
  geometry = g;
  hostOf_ = std::move(hostOf);
  if (hostOf_.empty())
    for (int r = 0; r < nranks; ++r) hostOf_.push_back(r);
  NetChannelConfig config{rank, nranks, hostOf_, -1, timeoutMs, geometry};
  std::unique_ptr<alloy::net::Transport> transport;
  alloyResult_t prepared = alloy::net::createUcxTransport(alloy::net::UcxOptions{}, &transport);
  std::vector<uint8_t> address, key;
  if (prepared == alloySuccess)
    prepared = NetChannel::prepare(config, std::move(transport), &address, &key, &channel);
  // A rank that failed so far still takes part in the exchanges, so that the others fail rather than hang.
  const std::vector<std::vector<uint8_t>> addresses = allgather(address), keys = allgather(key);
  ASSERT_ALLOY(alloySuccess, prepared);
  ASSERT_ALLOY(alloySuccess, channel->connect(addresses, keys));
  ProxyThread::add(channel.get());
}

void NetChannelTest::TearDown() {
  if (channel == nullptr) return;
  ProxyThread::remove(channel.get());
  const alloyResult_t failed = channel->error();
  const alloyResult_t drained = channel->drain();
  // A failed channel may report its error again; a healthy one must drain cleanly.
  if (failed == alloySuccess || drained != failed) {
    EXPECT_ALLOY(alloySuccess, drained) << " (rank " << rank << ")";
  }
  // Which transports carried the run's connections, once (the ctest checks it is the forced one).
  static bool described = false;
  if (rank == 0 && !described && failed == alloySuccess) {
    const char* tls = std::getenv("UCX_TLS");
    std::printf("net channel: UCX_TLS=%s: rank 0's connections run over %s\n", tls != nullptr ? tls : "(unset)",
                channel->describe().c_str());
    described = true;
  }
  // Once every rank has drained, the memory may go. The barrier keeps progressing the channel, as
  // alloyCommDestroy's does: over tcp and shared memory UCX emulates RMA with active messages, so a
  // peer's last flushes complete only while this rank progresses.
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  for (int done = 0; !done; MPI_Test(&barrier, &done, MPI_STATUS_IGNORE)) channel->progress();
  channel.reset();
}

Traffic NetChannelTest::traffic(const PairPlan& plan) {
  Traffic t(seed, rank);
  for (bool send : {true, false}) {
    std::vector<std::vector<size_t>> sizes(nranks);
    std::vector<int> order;
    for (int peer = 0; peer < nranks; ++peer) {
      if (!remote(peer)) continue;
      for (size_t bytes : send ? plan(rank, peer) : plan(peer, rank))
        if (bytes > 0) sizes[peer].push_back(bytes);
      order.insert(order.end(), sizes[peer].size(), peer);
    }
    std::shuffle(order.begin(), order.end(), interleave_);
    std::vector<size_t> next(nranks, 0);
    for (int peer : order) t.add(send, peer, sizes[peer][next[peer]++]);
  }
  return t;
}

Traffic NetChannelTest::alltoallv(uint64_t round) {
  return traffic([&](int source, int target) {
    const uint64_t shape = pairDraw(seed, 0, source, target, 1) + round;
    return std::vector<size_t>{shapedBytes(shape, pairDraw(seed, round, source, target), geometry)};
  });
}

bool NetChannelTest::ring(uint32_t id) {
  uint32_t* word = const_cast<uint32_t*>(channel->doorbell());
  EXPECT_EQ(0u, __atomic_load_n(word, __ATOMIC_ACQUIRE)) << "rank " << rank << ": rang over an operation in hand";
  __atomic_store_n(word, id + 1, __ATOMIC_RELEASE);
  const auto deadline = Clock::now() + std::chrono::duration<double>(kRingSeconds);
  bool late = false;
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != 0) {
    if (!late && Clock::now() > deadline) {
      ADD_FAILURE() << "rank " << rank << ": operation " << id << " was not released within " << kRingSeconds
                    << " s; aborting the channel";
      channel->abort();
      late = true;
    } else if (late && Clock::now() > deadline + std::chrono::seconds(10)) {
      ADD_FAILURE() << "rank " << rank << ": abort() did not release the doorbell";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return !late;
}

alloyResult_t NetChannelTest::ringOnce(NetOperation operation) {
  uint32_t id = 0;
  const alloyResult_t added = channel->addOperation(std::move(operation), false, &id);
  EXPECT_ALLOY(alloySuccess, added);
  if (added != alloySuccess) return added;
  ring(id);
  return channel->error();
}

void NetChannelTest::runRound(Traffic& traffic, uint64_t round) {
  // The library rings nothing for an operation without a message between hosts.
  if (traffic.empty()) return;
  traffic.prepare(round);
  ASSERT_EQ(alloySuccess, ringOnce(traffic.operation()))
      << "rank " << rank << ", round " << round << ": " << channel->errorMessage();
  traffic.check(round);
}

// Every rank sends one message to and receives one from every other, of a size that changes each round
// and goes through every shape (nothing, a byte, around a slot, whole slots, more than all slots).
TEST_F(NetChannelTest, AlltoallvRandomSizes) {
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  for (uint64_t round = 0; round < 64 && !HasFailure(); ++round) {
    Traffic t = alltoallv(round);
    ASSERT_NO_FATAL_FAILURE(runRound(t, round));
  }
}

// The default geometry (ALLOY_NET_SLOTS, ALLOY_NET_SLOT_BYTES): a round of every shape.
TEST_F(NetChannelTest, AlltoallvDefaultGeometry) {
  ASSERT_NO_FATAL_FAILURE(open(alloy::net::netGeometry()));
  for (uint64_t round = 0; round < kShapes && !HasFailure(); ++round) {
    Traffic t = alltoallv(round);
    ASSERT_NO_FATAL_FAILURE(runRound(t, round));
  }
}

// Send/recv groups: several messages of different sizes to one peer in one operation, matched in order.
TEST_F(NetChannelTest, SeveralMessagesPerPeerMatchInOrder) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{2, 8192}));
  for (uint64_t round = 0; round < 24 && !HasFailure(); ++round) {
    Traffic t = traffic([&](int source, int target) {
      std::vector<size_t> sizes(2 + pairDraw(seed, round, source, target) % 4);
      for (size_t i = 0; i < sizes.size(); ++i)
        sizes[i] = shapedBytes(1 + pairDraw(seed, round, source, target, 2 * i) % (kShapes - 1),
                               pairDraw(seed, round, source, target, 2 * i + 1), geometry);
      return sizes;
    });
    ASSERT_NO_FATAL_FAILURE(runRound(t, round));
  }
}

// One persistent operation replayed as a CUDA graph replays it: the sender rewrites its buffers before
// each ring, the receiver checks each time. One-off operations in between share the operation table.
TEST_F(NetChannelTest, PersistentOperationReplayed) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{2, 8192}));
  Traffic replayed = traffic([&](int source, int target) {
    return std::vector<size_t>{shapedBytes(1 + pairDraw(seed, 0, source, target) % (kShapes - 1),
                                           pairDraw(seed, 0, source, target, 1), geometry),
                               shapedBytes(6, pairDraw(seed, 0, source, target, 2), geometry)};
  });
  uint32_t id = 0;
  ASSERT_ALLOY(alloySuccess, channel->addOperation(replayed.operation(), true, &id));
  constexpr uint64_t kReplays = 240, kOneOffEvery = 60;
  for (uint64_t round = 0; round < kReplays && !HasFailure(); ++round) {
    replayed.prepare(round);
    ASSERT_TRUE(ring(id)) << "round " << round;
    ASSERT_ALLOY(alloySuccess, channel->error()) << "round " << round << ": " << channel->errorMessage();
    replayed.check(round);
    if (round % kOneOffEvery != kOneOffEvery - 1) continue;
    Traffic oneOff = alltoallv(round);
    ASSERT_NO_FATAL_FAILURE(runRound(oneOff, kReplays + round));
  }
}

// A sender runs ahead of its receiver into the free slots: rank 0 completes an operation that only sends
// to rank 1 while rank 1 has not reached it (rank 1 waits for word of it, then sleeps 200 ms more), and
// rings the next at once, whose sends fill the remaining slots and whose receive waits for rank 1.
TEST_F(NetChannelTest, RunsAhead) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{4, 4096}));
  if (rank > 1) return;
  const int peer = 1 - rank;
  // Two chunks each: the first two operations' sends fill rank 1's four slots exactly.
  const size_t first = geometry.slotBytes + 1 + pairDraw(seed, 0, 0, 1) % (geometry.slotBytes - 1);
  const size_t second = geometry.slotBytes + 1 + pairDraw(seed, 1, 0, 1) % (geometry.slotBytes - 1);
  const size_t back = shapedBytes(6, pairDraw(seed, 1, 1, 0), geometry);
  Traffic ahead(seed, rank), next(seed, rank);
  ahead.add(rank == 0, peer, first);
  next.add(rank == 0, peer, second);
  next.add(rank == 1, peer, back);
  constexpr int kTag = 77;
  int word = 1;
  if (rank == 0) {
    ASSERT_NO_FATAL_FAILURE(runRound(ahead, 0));
    MPI_Send(&word, 1, MPI_INT, 1, kTag, MPI_COMM_WORLD);
    ASSERT_NO_FATAL_FAILURE(runRound(next, 1));
    return;
  }
  MPI_Request request;
  MPI_Irecv(&word, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, &request);
  const auto deadline = Clock::now() + std::chrono::duration<double>(kRingSeconds);
  int arrived = 0;
  for (MPI_Test(&request, &arrived, MPI_STATUS_IGNORE); !arrived && Clock::now() < deadline;
       MPI_Test(&request, &arrived, MPI_STATUS_IGNORE))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(arrived) << "rank 0's send-only operation did not complete before rank 1 reached it";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_NO_FATAL_FAILURE(runRound(ahead, 0));
  ASSERT_NO_FATAL_FAILURE(runRound(next, 1));
  if (!arrived) MPI_Wait(&request, MPI_STATUS_IGNORE);
}

// Sizes that disagree: rank 1 sends sentBytes to rank 0, which expects expectedBytes (in slots + bytes).
struct Mismatch {
  const char* name;
  size_t sentSlots, sentExtra, expectedSlots, expectedExtra;
};

class NetChannelMismatchTest : public NetChannelTest, public ::testing::WithParamInterface<Mismatch> {};

// Rank 0's operation fails naming rank 1, without writing past its buffer; every later doorbell of the
// failed channel is released at once. Rank 1's operation fits in its slots; it may still see the failure.
TEST_P(NetChannelMismatchTest, SizeMismatchFailsNamingThePeer) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{4, 4096}, 3000));
  if (rank > 1) return;
  const Mismatch& m = GetParam();
  Traffic t(seed, rank);
  if (rank == 1) t.add(true, 0, m.sentSlots * geometry.slotBytes + m.sentExtra);
  if (rank == 0) t.add(false, 1, m.expectedSlots * geometry.slotBytes + m.expectedExtra);
  t.prepare(0);
  const alloyResult_t result = ringOnce(t.operation());
  if (rank == 1) {
    EXPECT_TRUE(result == alloySuccess || result == alloyTimeout || result == alloyRemoteError)
        << alloyGetErrorString(result) << ": " << channel->errorMessage();
    return;
  }
  EXPECT_NE(alloySuccess, result);
  const std::string message = channel->errorMessage();
  EXPECT_TRUE(namesRank(message, 1)) << message;
  std::printf("net channel: %s: rank 0's error: %s\n", m.name, message.c_str());
  t.checkGuards();
  const auto rung = Clock::now();
  EXPECT_EQ(result, ringOnce(t.operation())) << "a failed channel's later operation";
  EXPECT_LT(Clock::now() - rung, std::chrono::seconds(5)) << "a failed channel held a later doorbell";
}

INSTANTIATE_TEST_SUITE_P(Sizes, NetChannelMismatchTest,
                         ::testing::Values(Mismatch{"ThreeChunksForTwo", 3, 0, 2, 0},
                                           Mismatch{"TwoChunksForThree", 2, 0, 3, 0},
                                           Mismatch{"LongerLastChunk", 2, 100, 2, 7},
                                           Mismatch{"ChunkLongerThanTheBuffer", 1, 0, 0, 4095}),
                         [](const ::testing::TestParamInfo<Mismatch>& info) { return std::string(info.param.name); });

// Rank 0 rings an operation with rank 1 that rank 1 never joins: a receive (rank 1 never sends), or a
// send of more than rank 1's slots hold (rank 1 never frees them). It is released after the channel's
// timeout and not before, with alloyTimeout naming rank 1.
class NetChannelTimeoutTest : public NetChannelTest {
 protected:
  void expectTimeoutWaitingForRank1(bool send) {
    constexpr long long kTimeoutMs = 2000;
    ASSERT_NO_FATAL_FAILURE(open(kSmall, kTimeoutMs));
    if (rank != 0) return;
    Traffic t(seed, rank);
    t.add(send, 1, (geometry.slots + 1) * geometry.slotBytes);
    t.prepare(0);
    const auto rung = Clock::now();
    EXPECT_ALLOY(alloyTimeout, ringOnce(t.operation())) << channel->errorMessage();
    const double seconds = std::chrono::duration<double>(Clock::now() - rung).count();
    EXPECT_GE(seconds, 0.9 * kTimeoutMs / 1000) << "failed before its timeout";
    EXPECT_LE(seconds, kTimeoutMs / 1000 + 5.0);
    EXPECT_TRUE(namesRank(channel->errorMessage(), 1)) << channel->errorMessage();
    t.checkGuards();
  }
};

TEST_F(NetChannelTimeoutTest, PeerThatNeverSendsTimesOut) { expectTimeoutWaitingForRank1(false); }
TEST_F(NetChannelTimeoutTest, PeerThatNeverReceivesTimesOut) { expectTimeoutWaitingForRank1(true); }

// abort() from another thread releases an operation that would otherwise wait for its peer's timeout.
TEST_F(NetChannelTest, AbortReleasesTheDoorbell) {
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  if (rank != 0) return;
  Traffic t(seed, rank);
  t.add(false, 1, 100);
  t.prepare(0);
  const auto rung = Clock::now();
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    channel->abort();
  });
  const alloyResult_t result = ringOnce(t.operation());
  aborter.join();
  EXPECT_NE(alloySuccess, result);
  EXPECT_LT(Clock::now() - rung, std::chrono::seconds(10));
  std::printf("net channel: after abort(): %s\n", channel->errorMessage().c_str());
  t.checkGuards();
}

// Malformed messages are refused with alloyInvalidArgument naming the field, and ring nothing: the
// doorbell stays 0, the channel healthy, and a round afterwards works.
TEST_F(NetChannelTest, BadMessagesAreRefused) {
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  const int peer = (rank + 1) % nranks;
  std::vector<char> buffer(64);
  struct Bad {
    NetMessage message;
    const char* field;
  };
  const Bad bad[] = {{{rank, buffer.data(), buffer.size()}, "peer"},
                     {{-1, buffer.data(), buffer.size()}, "peer"},
                     {{nranks, buffer.data(), buffer.size()}, "peer"},
                     {{peer, buffer.data(), 0}, "bytes"},
                     {{peer, nullptr, buffer.size()}, "buffer"}};
  for (const Bad& b : bad) {
    for (bool send : {true, false}) {
      NetOperation op;
      (send ? op.sends : op.recvs) = {NetMessage{peer, buffer.data(), buffer.size()}, b.message};
      uint32_t id = 0;
      EXPECT_ALLOY(alloyInvalidArgument, channel->addOperation(op, false, &id))
          << (send ? "send" : "receive") << " of " << b.message.bytes << " bytes with peer " << b.message.peer;
      EXPECT_TRUE(lastErrorMentions(send ? "sends" : "recvs") && lastErrorMentions(b.field))
          << "expected the field " << b.field << ": " << alloyGetLastError(nullptr);
    }
  }
  NetOperation device;
  device.deviceMemory = true;
  device.sends = {NetMessage{peer, buffer.data(), buffer.size()}};
  uint32_t id = 0;
  EXPECT_ALLOY(alloyInvalidArgument, channel->addOperation(device, false, &id));
  EXPECT_TRUE(lastErrorMentions("deviceMemory")) << alloyGetLastError(nullptr);
  EXPECT_ALLOY(alloyInvalidArgument, channel->addOperation(NetOperation{}, false, nullptr));
  EXPECT_EQ(0u, *channel->doorbell());
  EXPECT_ALLOY(alloySuccess, channel->error());
  Traffic t = alltoallv(0);
  runRound(t, 0);
}

// Ranks 0 and 1 share a host, rank 2 is alone on another: the channel serves only pairs on different
// hosts (connect() gets no bytes for ranks on its own host), and refuses a message to a same-host rank.
TEST_F(NetChannelTest, SomeRanksShareAHost) {
  if (nranks != 3) GTEST_SKIP() << "needs 3 ranks";
  ASSERT_NO_FATAL_FAILURE(open(kSmall, kPeerTimeoutMs, {0, 0, 1}));
  if (rank < 2) {
    std::vector<char> buffer(8);
    NetOperation op;
    op.sends = {NetMessage{1 - rank, buffer.data(), buffer.size()}};
    uint32_t id = 0;
    EXPECT_ALLOY(alloyInvalidArgument, channel->addOperation(op, false, &id));
    EXPECT_TRUE(lastErrorMentions("peer")) << alloyGetLastError(nullptr);
  }
  for (uint64_t round = 0; round < 2 * kShapes && !HasFailure(); ++round) {
    Traffic t = alltoallv(round);
    ASSERT_NO_FATAL_FAILURE(runRound(t, round));
  }
}

}  // namespace
}  // namespace nettest
