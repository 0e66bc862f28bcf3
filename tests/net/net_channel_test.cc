// NetChannel and the proxy thread between MPI ranks, driven as the library drives them but with host
// buffers. A transfer is what a collective hands the channel: messages to and from peers on other
// hosts, in user buffers. As lib/coll/net_rounds.cc does, the test lays each peer's messages end to end
// and cuts them into windows of capacity() bytes, window r going in operation ("round") r through box
// b = r % kBoxes: it copies each peer's window into outbox(peer, b), adds the operation, rings box b's
// doorbell as the GPU stream would, and, as the stream does, stages and rings round r + 1 in the other
// box before it waits for round r's release and copies each window out of inbox(peer, b) into the
// receive buffers.
//
// Every received byte is checked against a reference the receiver computes on its own (net_test_util.h:
// seed, transfer, source, target, message), never from the sender's buffers. Receive buffers are
// poisoned before a transfer and have a guard past their end; in staging, what lies past a window's
// bytes in an inbox must be what it was before the operation (the sender poisons its outbox there, so
// that a put longer than the header says shows).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device_comm.h"
#include "net_channel.h"
#include "net_channel_util.h"
#include "net_test_util.h"

namespace nettest {
namespace {

using alloy::net::NetChannel;
using alloy::net::NetGeometry;
using alloy::net::NetMessage;
using alloy::net::NetOperation;
using Clock = std::chrono::steady_clock;

// How long the test thread waits for a doorbell's release before it fails the test and aborts the
// channel, so that a broken protocol fails the run instead of hanging it.
constexpr double kRingSeconds = 60.0;
// The channel's peer timeout where a test does not shorten it: far above any wait of a healthy run.
constexpr long long kPeerTimeoutMs = 30000;
constexpr size_t kGuardBytes = 64;  // poisoned bytes past the end of every receive buffer
// Small enough that transfers take several rounds and a window several chunks.
constexpr NetGeometry kSmall{3, 4096};
// What the operations claim to be, so that error messages can be checked for it.
constexpr int kOperation = alloy::kOpAlltoAllv;

// A draw that both ends of the pair (source, target) agree on, for one transfer and purpose (salt).
uint64_t pairDraw(uint64_t seed, uint64_t transfer, int source, int target, uint64_t salt = 0) {
  return mix64(seed ^ mix64((transfer << 24) ^ (static_cast<uint64_t>(source) << 12) ^ static_cast<uint64_t>(target)) ^
               mix64(salt + 0x73616c74));
}

// The message sizes that matter to chunks and rounds, by shape: nothing (the message takes no room), one
// byte, a chunk less one, a chunk, a chunk and one, whole chunks up to a capacity, a capacity less one,
// a capacity, a capacity and one, two to three capacities, anything up to three capacities. The draw
// picks the size within the shape.
constexpr uint64_t kShapes = 11;
size_t shapedBytes(uint64_t shape, uint64_t draw, NetGeometry g) {
  const size_t chunk = g.slotBytes, capacity = g.capacity();
  switch (shape % kShapes) {
    case 0: return 0;
    case 1: return 1;
    case 2: return chunk - 1;
    case 3: return chunk;
    case 4: return chunk + 1;
    case 5: return chunk * (1 + draw % g.slots);
    case 6: return capacity - 1;
    case 7: return capacity;
    case 8: return capacity + 1;
    case 9: return 2 * capacity + draw % (capacity + 1);
    default: return 1 + draw % (3 * capacity);
  }
}

// A parameterized case's name in the test's name.
template <typename Case>
std::string paramName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

bool mentions(const std::string& message, const std::string& text) { return message.find(text) != std::string::npos; }

// A test's geometry with the eager slots that ALLOY_NET_EAGER_BYTES asks for, as creation reads it
// (net_channel_puts_tcp_np2 turns them off).
NetGeometry withEagerFromEnvironment(NetGeometry g) {
  g.eagerBytes = alloy::net::netGeometry().eagerBytes;
  return g;
}

// One transfer's messages on this rank, by peer and direction in matching order, and their buffers. In
// transfer n, message i from source to target (i counts that pair's messages) holds
// messageBytes(mix64(seed + n), source, target, i): the sender writes it, the receiver recomputes it.
class Traffic {
 public:
  Traffic(uint64_t seed, int rank, int nranks)
      : seed_(seed), rank_(rank), sends_(nranks), recvs_(nranks) {
    for (auto& byPeer : tails_) byPeer.resize(nranks);
  }

  // Appends a message to the peer's stream in that direction; one of 0 bytes takes no room in it.
  void add(bool send, int peer, size_t bytes) {
    std::vector<Message>& list = (send ? sends_ : recvs_)[peer];
    list.push_back(Message{peer, list.size(), bytes, std::vector<char>(bytes + (send ? 0 : kGuardBytes))});
  }

  // The rounds this rank takes: the most windows any of its streams spans (0: nothing crosses hosts, and
  // the library rings nothing).
  size_t rounds(size_t capacity) const {
    size_t most = 0;
    for (const auto* byPeer : {&sends_, &recvs_})
      for (const std::vector<Message>& list : *byPeer)
        most = std::max(most, (streamBytes(list) + capacity - 1) / capacity);
    return most;
  }

  // Round r's operation: an entry for every peer whose stream reaches window r, the peers in a random
  // order (entries match by peer, not by position).
  NetOperation operation(size_t round, size_t capacity, std::mt19937_64& order) const {
    NetOperation op;
    op.operation = kOperation;
    op.round = round;
    for (bool send : {true, false}) {
      std::vector<NetMessage>& entries = send ? op.sends : op.recvs;
      const std::vector<std::vector<Message>>& byPeer = send ? sends_ : recvs_;
      for (int peer = 0; peer < static_cast<int>(byPeer.size()); ++peer) {
        const size_t bytes = windowBytes(byPeer[peer], round, capacity);
        if (bytes > 0) entries.push_back(NetMessage{peer, bytes});
      }
      std::shuffle(entries.begin(), entries.end(), order);
    }
    return op;
  }

  // Before transfer n: sends hold their data, receives and their guards only poison.
  void prepare(uint64_t transfer) {
    for (std::vector<Message>& list : sends_)
      for (Message& m : list) {
        const std::vector<uint8_t> data = reference(transfer, rank_, m);
        std::memcpy(m.storage.data(), data.data(), m.bytes);
      }
    for (std::vector<Message>& list : recvs_)
      for (Message& m : list) std::memset(m.storage.data(), kPoison, m.storage.size());
  }

  // Before round r is rung: each send window into its outbox, poison past it; what lies past each
  // receive window in its inbox is kept, to be compared afterwards.
  void stageIn(const NetChannel& channel, size_t round) {
    const size_t capacity = channel.capacity();
    const int b = NetChannel::boxOf(round);
    for (int peer = 0; peer < static_cast<int>(sends_.size()); ++peer) {
      const size_t bytes = windowBytes(sends_[peer], round, capacity);
      if (bytes == 0) continue;
      char* box = channel.outbox(peer, b);
      forWindow(sends_[peer], round, capacity, [&](Message& m, size_t offset, size_t boxOffset, size_t length) {
        std::memcpy(box + boxOffset, m.storage.data() + offset, length);
      });
      std::memset(box + bytes, kPoison, capacity - bytes);
    }
    for (int peer = 0; peer < static_cast<int>(recvs_.size()); ++peer) {
      const size_t bytes = windowBytes(recvs_[peer], round, capacity);
      if (bytes > 0) tails_[b][peer].assign(channel.inbox(peer, b) + bytes, channel.inbox(peer, b) + capacity);
    }
  }

  // Once round r's doorbell has cleared: each receive window out of its inbox (as the library does,
  // whether the operation succeeded or not); after a success, the inbox past each window is unchanged.
  void stageOut(const NetChannel& channel, size_t round, bool succeeded) {
    const size_t capacity = channel.capacity();
    const int b = NetChannel::boxOf(round);
    for (int peer = 0; peer < static_cast<int>(recvs_.size()); ++peer) {
      const size_t bytes = windowBytes(recvs_[peer], round, capacity);
      if (bytes == 0) continue;
      const char* box = channel.inbox(peer, b);
      forWindow(recvs_[peer], round, capacity, [&](Message& m, size_t offset, size_t boxOffset, size_t length) {
        std::memcpy(m.storage.data() + offset, box + boxOffset, length);
      });
      if (succeeded && std::memcmp(box + bytes, tails_[b][peer].data(), capacity - bytes) != 0)
        ADD_FAILURE() << "rank " << rank_ << ", round " << round << ": the inbox for rank " << peer
                      << " changed past the " << bytes << " bytes it received";
    }
  }

  // After transfer n: every receive holds its reference, and every guard is intact.
  void check(uint64_t transfer) const {
    for (const std::vector<Message>& list : recvs_)
      for (const Message& m : list) {
        std::vector<uint8_t> expected = reference(transfer, m.peer, m);
        expected.resize(m.storage.size(), kPoison);
        expectBytes(m, expected, transfer);
      }
  }
  // After a failed transfer, whose receive buffers may hold anything: the guards only.
  void checkGuards() const {
    const std::vector<uint8_t> poison(kGuardBytes, kPoison);
    for (const std::vector<Message>& list : recvs_)
      for (const Message& m : list)
        EXPECT_EQ(0, std::memcmp(m.storage.data() + m.bytes, poison.data(), kGuardBytes))
            << "rank " << rank_ << ": the guard past a receive of " << m.bytes << " bytes from rank " << m.peer
            << " was written";
  }

 private:
  struct Message {
    int peer;
    uint64_t ordinal;  // among the messages with the same peer and direction
    size_t bytes;
    std::vector<char> storage;  // receives: bytes, then the guard
  };

  static size_t streamBytes(const std::vector<Message>& list) {
    size_t bytes = 0;
    for (const Message& m : list) bytes += m.bytes;
    return bytes;
  }
  // How many bytes of the stream fall in window `round` (0: the stream ends before it).
  static size_t windowBytes(const std::vector<Message>& list, size_t round, size_t capacity) {
    const size_t bytes = streamBytes(list), start = round * capacity;
    return bytes > start ? std::min(capacity, bytes - start) : 0;
  }
  // Calls piece(message, offset in it, offset in the box, length) for every part of a message of the
  // stream that falls in window `round`.
  template <typename Piece>
  static void forWindow(std::vector<Message>& list, size_t round, size_t capacity, Piece piece) {
    const size_t begin = round * capacity, end = begin + capacity;
    size_t at = 0;  // where the message starts in the stream
    for (Message& m : list) {
      const size_t from = std::max(at, begin), to = std::min(at + m.bytes, end);
      if (from < to) piece(m, from - at, from - begin, to - from);
      at += m.bytes;
    }
  }

  std::vector<uint8_t> reference(uint64_t transfer, int source, const Message& m) const {
    const int target = source == rank_ ? m.peer : rank_;
    return messageBytes(mix64(seed_ + transfer), source, target, m.ordinal, m.bytes);
  }

  void expectBytes(const Message& m, const std::vector<uint8_t>& expected, uint64_t transfer) const {
    const char* got = m.storage.data();
    if (std::memcmp(got, expected.data(), expected.size()) == 0) return;
    size_t first = expected.size(), wrong = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (static_cast<uint8_t>(got[i]) == expected[i]) continue;
      first = std::min(first, i);
      ++wrong;
    }
    ADD_FAILURE() << "rank " << rank_ << ", transfer " << transfer << ": message " << m.ordinal << " from rank "
                  << m.peer << " (" << m.bytes << " bytes + " << kGuardBytes << " of guard): " << wrong
                  << " bytes differ, first at " << first << " (got 0x" << std::hex
                  << int(static_cast<uint8_t>(got[first])) << ", expected 0x" << int(expected[first]) << std::dec
                  << ")";
  }

  uint64_t seed_;
  int rank_;
  std::vector<std::vector<Message>> sends_, recvs_;  // [peer]
  // [box][peer]: the inbox past the window of the round in hand in that box
  std::vector<std::vector<char>> tails_[NetChannel::kBoxes];
};

bool ringAndWait(NetChannel& channel, int box, uint32_t id) {
  ring(channel, box, id);
  return waitReleased(channel, box, id, kRingSeconds);
}

// Which messages go from source to target (their sizes, in matching order).
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

  // This rank's side of a transfer in which every pair of ranks on different hosts exchanges
  // plan(source, target).
  Traffic traffic(const PairPlan& plan);
  // One message per pair, its shape cycling with the transfer so that every pair meets every shape.
  Traffic alltoallv(uint64_t transfer);
  // The operation of round r of traffic, its peers in an order of this rank's own.
  NetOperation operation(const Traffic& traffic, size_t round) {
    return traffic.operation(round, geometry.capacity(), interleave_);
  }
  // Runs `rounds` rounds of traffic: stage in, ring, wait, stage out. Pipelined, as the library's stream
  // runs them: round r + 1 is staged and rung before round r is waited for; otherwise one after the
  // other. idOf(r, &id) gives round r's operation (adding a one-off one): on failure the round is not
  // rung and counts as failed. Every round is rung even after one failed (a failed channel releases them
  // at once). The channel's error after the first round that failed, that round in *failedRound (exact
  // only when not pipelined: then the error read after round r's wait is round r's); alloySuccess when
  // every round succeeded.
  alloyResult_t runRounds(Traffic& traffic, size_t rounds, const std::function<alloyResult_t(size_t, uint32_t*)>& idOf,
                          bool pipelined, size_t* failedRound);
  // Runs traffic as transfer n, a one-off operation per round (runRounds).
  alloyResult_t transfer(Traffic& traffic, uint64_t n, size_t* failedRound = nullptr, bool pipelined = true);
  // transfer(), which must succeed, then checks what arrived.
  void runTransfer(Traffic& traffic, uint64_t n);

  int rank = 0;
  int nranks = 0;
  uint64_t seed = 0;
  NetGeometry geometry{};
  std::unique_ptr<NetChannel> channel;

 private:
  std::vector<uint64_t> hostOf_;
  std::mt19937_64 interleave_;  // this rank's own: the order of peers in its operations
};

void NetChannelTest::open(NetGeometry g, long long timeoutMs, std::vector<uint64_t> hostOf) {
  geometry = withEagerFromEnvironment(g);
  hostOf_ = std::move(hostOf);
  if (hostOf_.empty())
    for (int r = 0; r < nranks; ++r) hostOf_.push_back(r);
  openChannel(MPI_COMM_WORLD, geometry, timeoutMs, hostOf_, &channel);
}

void NetChannelTest::TearDown() {
  if (channel == nullptr) return;
  closeChannel(MPI_COMM_WORLD, &channel, "net channel");
}

Traffic NetChannelTest::traffic(const PairPlan& plan) {
  Traffic t(seed, rank, nranks);
  for (int peer = 0; peer < nranks; ++peer) {
    if (!remote(peer)) continue;
    for (size_t bytes : plan(rank, peer)) t.add(true, peer, bytes);
    for (size_t bytes : plan(peer, rank)) t.add(false, peer, bytes);
  }
  return t;
}

Traffic NetChannelTest::alltoallv(uint64_t n) {
  return traffic([&](int source, int target) {
    const uint64_t shape = pairDraw(seed, 0, source, target, 1) + n;
    return std::vector<size_t>{shapedBytes(shape, pairDraw(seed, n, source, target), geometry)};
  });
}

alloyResult_t NetChannelTest::runRounds(Traffic& traffic, size_t rounds,
                                        const std::function<alloyResult_t(size_t, uint32_t*)>& idOf, bool pipelined,
                                        size_t* failedRound) {
  std::vector<uint32_t> ids(rounds);
  std::vector<alloyResult_t> added(rounds, alloySuccess);
  auto begin = [&](size_t r) {
    added[r] = idOf(r, &ids[r]);
    if (added[r] != alloySuccess) return;
    traffic.stageIn(*channel, r);
    ring(*channel, NetChannel::boxOf(r), ids[r]);
  };
  alloyResult_t first = alloySuccess;
  for (size_t r = 0; r < rounds; ++r) {
    if (!pipelined || r == 0) begin(r);
    if (pipelined && r + 1 < rounds) begin(r + 1);
    alloyResult_t result = added[r];
    if (result == alloySuccess) {
      waitReleased(*channel, NetChannel::boxOf(r), ids[r], kRingSeconds);
      result = channel->error();
      traffic.stageOut(*channel, r, result == alloySuccess);
    }
    if (first != alloySuccess || result == alloySuccess) continue;
    first = result;
    if (failedRound != nullptr) *failedRound = r;
  }
  return first;
}

alloyResult_t NetChannelTest::transfer(Traffic& traffic, uint64_t n, size_t* failedRound, bool pipelined) {
  traffic.prepare(n);
  auto add = [&](size_t round, uint32_t* id) {
    const alloyResult_t added = channel->addOperation(operation(traffic, round), false, id);
    EXPECT_ALLOY(alloySuccess, added) << " (rank " << rank << ", round " << round << ")";
    return added;
  };
  return runRounds(traffic, traffic.rounds(geometry.capacity()), add, pipelined, failedRound);
}

void NetChannelTest::runTransfer(Traffic& traffic, uint64_t n) {
  size_t round = 0;
  ASSERT_EQ(alloySuccess, transfer(traffic, n, &round))
      << "rank " << rank << ", transfer " << n << ", round " << round << ": " << channel->errorMessage();
  traffic.check(n);
}

// Every rank sends one message to and receives one from every other, of a size that changes each
// transfer and goes through every shape (nothing, a byte, around a chunk, around a capacity, several
// capacities), in several geometries: one slot (a chunk is the whole capacity), a few, many, and the
// default (ALLOY_NET_SLOTS, ALLOY_NET_SLOT_BYTES).
struct Layout {
  const char* name;
  int slots;  // 0: netGeometry()
  size_t slotBytes;
  uint64_t transfers;
};

class NetChannelAlltoallvTest : public NetChannelTest, public ::testing::WithParamInterface<Layout> {};

TEST_P(NetChannelAlltoallvTest, RandomSizes) {
  const Layout& layout = GetParam();
  ASSERT_NO_FATAL_FAILURE(
      open(layout.slots > 0 ? NetGeometry{layout.slots, layout.slotBytes} : alloy::net::netGeometry()));
  for (uint64_t n = 0; n < layout.transfers && !HasFailure(); ++n) {
    Traffic t = alltoallv(n);
    ASSERT_NO_FATAL_FAILURE(runTransfer(t, n));
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, NetChannelAlltoallvTest,
                         ::testing::Values(Layout{"ThreeSlots", kSmall.slots, kSmall.slotBytes, 8 * kShapes},
                                           Layout{"OneSlot", 1, 4096, 4 * kShapes},
                                           Layout{"ManySlots", 32, 4096, 4 * kShapes},
                                           // The most ALLOY_NET_SLOTS allows: a window of 64 puts, as many
                                           // as a connection holds in flight (UcxOptions::maxOutstanding).
                                           Layout{"AllSlots", 64, 4096, 2 * kShapes},
                                           Layout{"Default", 0, 0, kShapes}),
                         paramName<Layout>);

// Send/recv groups: several messages of different sizes (empty ones too) to one peer in one transfer,
// laid end to end and matched in order.
TEST_F(NetChannelTest, SeveralMessagesPerPeerMatchInOrder) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{2, 8192}));
  for (uint64_t n = 0; n < 48 && !HasFailure(); ++n) {
    Traffic t = traffic([&](int source, int target) {
      auto draw = [&](uint64_t salt) { return pairDraw(seed, n, source, target, salt); };
      std::vector<size_t> sizes(2 + draw(0) % 4);
      for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = shapedBytes(draw(2 * i + 1), draw(2 * i + 2), geometry);
      return sizes;
    });
    ASSERT_NO_FATAL_FAILURE(runTransfer(t, n));
  }
}

// The stages the channel stamps for tools/net-stages (NetStages, remote_channel.h): one record per operation
// served, in the order served, with the id each operation was given; every stage within [rung, released],
// "sent" only where the operation sent and "in" only where it received; and each operation rung no earlier
// than the one before was released (the proxy holds one at a time). More operations than the channel keeps,
// so that the ring wraps.
TEST_F(NetChannelTest, StagesOfEveryOperationInOrder) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{2, 4096}));
  std::vector<uint32_t> ids;
  std::vector<bool> sends, recvs;
  for (uint64_t n = 0; n < 80 && !HasFailure(); ++n) {
    Traffic t = alltoallv(n);
    t.prepare(n);
    auto add = [&](size_t round, uint32_t* id) {
      const NetOperation op = operation(t, round);
      const alloyResult_t added = channel->addOperation(op, false, id);
      EXPECT_ALLOY(alloySuccess, added) << " (rank " << rank << ", round " << round << ")";
      if (added == alloySuccess) {
        ids.push_back(*id);
        sends.push_back(!op.sends.empty());
        recvs.push_back(!op.recvs.empty());
      }
      return added;
    };
    ASSERT_EQ(alloySuccess, runRounds(t, t.rounds(geometry.capacity()), add, true, nullptr))
        << "rank " << rank << ", transfer " << n << ": " << channel->errorMessage();
    t.check(n);
  }
  ASSERT_GT(ids.size(), alloy::kNetStagesKept) << "too few operations to wrap the ring";
  std::vector<alloy::NetStages> stages(alloy::kNetStagesKept + 3);
  const size_t count = channel->recentStages(stages.data(), stages.size());
  ASSERT_EQ(count, alloy::kNetStagesKept);
  const size_t first = ids.size() - count;
  for (size_t k = 0; k < count; ++k) {
    const alloy::NetStages& s = stages[k];
    SCOPED_TRACE("rank " + std::to_string(rank) + ", operation " + std::to_string(first + k));
    EXPECT_EQ(s.id, ids[first + k]);
    EXPECT_GT(s.rung, 0);
    EXPECT_GE(s.released, s.rung);
    EXPECT_EQ(s.posted != 0, sends[first + k]);
    EXPECT_EQ(s.sent != 0, sends[first + k]);
    EXPECT_EQ(s.in != 0, recvs[first + k]);
    EXPECT_TRUE(s.sent == 0 || (s.rung <= s.posted && s.posted <= s.sent && s.sent <= s.released));
    EXPECT_TRUE(s.in == 0 || (s.rung <= s.in && s.in <= s.released));
    EXPECT_GE(s.rung, k > 0 ? stages[k - 1].released : 0);
  }
  EXPECT_EQ(channel->recentStages(stages.data(), 2), 2u);  // the latest two, oldest first
  EXPECT_EQ(stages[1].id, ids.back());
}

// Persistent operations replayed as a CUDA graph replays them: a transfer of several rounds is added
// once, one persistent operation per round; before each replay the sender writes new data into its
// outboxes, and the receiver checks each time. One-off transfers in between share the operation table.
TEST_F(NetChannelTest, PersistentOperationsReplayed) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{2, 8192}));
  Traffic replayed = traffic([&](int source, int target) {
    auto draw = [&](uint64_t salt) { return pairDraw(seed, 0, source, target, salt); };
    // A message of any shape, then one of more than a capacity: two rounds or more.
    return std::vector<size_t>{shapedBytes(draw(0), draw(1), geometry),
                               geometry.capacity() + 1 + draw(2) % geometry.capacity()};
  });
  std::vector<uint32_t> ids(replayed.rounds(geometry.capacity()));
  for (size_t round = 0; round < ids.size(); ++round)
    ASSERT_ALLOY(alloySuccess, channel->addOperation(operation(replayed, round), true, &ids[round]));
  constexpr uint64_t kReplays = 240, kOneOffEvery = 60;
  for (uint64_t n = 0; n < kReplays && !HasFailure(); ++n) {
    replayed.prepare(n);
    auto persistent = [&](size_t round, uint32_t* id) {
      *id = ids[round];
      return alloySuccess;
    };
    size_t failed = 0;
    ASSERT_ALLOY(alloySuccess, runRounds(replayed, ids.size(), persistent, true, &failed))
        << "replay " << n << ", round " << failed << " or the one before: " << channel->errorMessage();
    replayed.check(n);
    if (n % kOneOffEvery != kOneOffEvery - 1) continue;
    Traffic oneOff = alltoallv(n);
    ASSERT_NO_FATAL_FAILURE(runTransfer(oneOff, kReplays + n));
  }
}

// A rank rings long before its peer reaches the operation: rank 0 rings a transfer of several rounds
// each way with rank 1 while rank 1 waits for word of it and then sleeps for a while. Rank 0's first
// round can complete only once rank 1 has rung (its sends wait for rank 1's "ready", its receive for
// rank 1's data); rank 1 finds rank 0's "ready" waiting. A wait shorter than the channel's timeout is no
// failure: the transfer completes correctly.
TEST_F(NetChannelTest, RunsAhead) {
  constexpr long long kTimeoutMs = 4000;
  constexpr auto kLate = std::chrono::milliseconds(1500);
  ASSERT_NO_FATAL_FAILURE(open(kSmall, kTimeoutMs));
  if (rank > 1) return;
  const int peer = 1 - rank;
  const size_t capacity = geometry.capacity();
  Traffic t(seed, rank, nranks);
  t.add(rank == 0, peer, 2 * capacity + 1 + pairDraw(seed, 0, 0, 1) % (capacity - 1));
  t.add(rank == 1, peer, capacity + 1 + pairDraw(seed, 0, 1, 0) % capacity);
  constexpr int kTag = 77;
  int word = 1;
  if (rank == 0) {
    const auto rung = Clock::now();
    MPI_Send(&word, 1, MPI_INT, 1, kTag, MPI_COMM_WORLD);
    ASSERT_NO_FATAL_FAILURE(runTransfer(t, 0));
    EXPECT_GE(Clock::now() - rung, kLate) << "rank 0's transfer completed before rank 1 reached it";
    return;
  }
  MPI_Request request;
  MPI_Irecv(&word, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, &request);
  const auto deadline = Clock::now() + std::chrono::duration<double>(kRingSeconds);
  int arrived = 0;
  for (MPI_Test(&request, &arrived, MPI_STATUS_IGNORE); !arrived && Clock::now() < deadline;
       MPI_Test(&request, &arrived, MPI_STATUS_IGNORE))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!arrived) {
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    FAIL() << "rank 0 did not start its transfer";
  }
  std::this_thread::sleep_for(kLate);
  ASSERT_NO_FATAL_FAILURE(runTransfer(t, 0));
}

// Small sends do not wait for their receiver. Rank 0 sends kNetEagerSlots small transfers to rank 1
// before rank 1 starts any (rank 1 waits for rank 0's word that they completed): each goes into an
// eager slot of rank 1's. The next one reuses the first slot, so it waits until rank 1 has copied that
// out, which rank 1 does only after a pause. Rank 1 then receives all of them, each intact.
TEST_F(NetChannelTest, SmallSendsRunAheadOfALateReceiver) {
  constexpr auto kPause = std::chrono::milliseconds(1000);
  constexpr uint64_t kAhead = alloy::net::kNetEagerSlots;
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  if (rank > 1) return;
  const int peer = 1 - rank;
  if (geometry.eagerSlotBytes() == 0) GTEST_SKIP() << "ALLOY_NET_EAGER_BYTES=0: no eager slots";
  Traffic t(seed, rank, nranks);
  t.add(rank == 0, peer, 1 + pairDraw(seed, 0, 0, 1) % geometry.eagerSlotBytes());
  constexpr int kTag = 78;
  int ahead = 1;  // rank 0's word: whether its transfers ahead of rank 1 completed
  if (rank == 0) {
    for (uint64_t n = 0; n < kAhead && ahead; ++n) {
      runTransfer(t, n);
      ahead = !HasFatalFailure();
    }
    const auto told = Clock::now();
    MPI_Send(&ahead, 1, MPI_INT, 1, kTag, MPI_COMM_WORLD);
    ASSERT_TRUE(ahead) << "an eager send waited for its receiver";
    runTransfer(t, kAhead);
    EXPECT_GE(Clock::now() - told, kPause) << "a send reused an eager slot that its receiver had not copied out";
    return;
  }
  MPI_Recv(&ahead, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (!ahead) return;
  std::this_thread::sleep_for(kPause);
  for (uint64_t n = 0; n <= kAhead; ++n) ASSERT_NO_FATAL_FAILURE(runTransfer(t, n));
}

// A late receiver finds small transfers already in its eager slots (their "ready" may then wait for the
// release: ALLOY_NET_DEFER_READY) between larger ones, whose senders wait for their "ready". Rank 0 sends
// kNetEagerSlots small transfers, then large and small ones in turn; rank 1 starts after a pause and
// receives them back to back. Each arrives intact, and neither side waits for the channel's timeout.
TEST_F(NetChannelTest, LateReceiverOfSmallAndLargeTransfers) {
  constexpr auto kPause = std::chrono::milliseconds(300);
  constexpr uint64_t kSmallFirst = alloy::net::kNetEagerSlots;
  constexpr uint64_t kTransfers = 4 * kSmallFirst;
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  if (rank > 1) return;
  if (geometry.eagerSlotBytes() == 0) GTEST_SKIP() << "ALLOY_NET_EAGER_BYTES=0: no eager slots";
  const int peer = 1 - rank;
  Traffic small(seed, rank, nranks), large(seed, rank, nranks);
  small.add(rank == 0, peer, 1 + pairDraw(seed, 0, 0, 1) % geometry.eagerSlotBytes());
  large.add(rank == 0, peer, geometry.eagerSlotBytes() + 1 + pairDraw(seed, 1, 0, 1) % geometry.capacity());
  if (rank == 1) std::this_thread::sleep_for(kPause);
  for (uint64_t n = 0; n < kTransfers; ++n)
    ASSERT_NO_FATAL_FAILURE(runTransfer(n >= kSmallFirst && n % 2 == 0 ? large : small, n));
}

// awaitServed, which alloyCommDestroy calls before the proxy stops serving the channel (a launch that only
// sends may end at its ring), returns once every rung doorbell was released, and alloyTimeout while one
// stays rung. Rank 0 rings a send that must wait for rank 1's "ready" and does not wait for the release
// itself: awaitServed times out while rank 1 stays away, and returns once rank 1 received the bytes intact.
TEST_F(NetChannelTest, AwaitServedWaitsForARungDoorbell) {
  constexpr long long kShortMs = 200;
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  if (rank > 1) return;
  const int peer = 1 - rank;
  const size_t eager = geometry.eagerSlotBytes();
  Traffic t(seed, rank, nranks);
  t.add(rank == 0, peer, eager + 1 + pairDraw(seed, 0, 0, 1) % (geometry.capacity() - eager));
  constexpr int kTag = 79;
  int go = 1;
  if (rank == 1) {
    MPI_Recv(&go, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ASSERT_NO_FATAL_FAILURE(runTransfer(t, 0));
    return;
  }
  t.prepare(0);
  uint32_t id = 0;
  ASSERT_EQ(alloySuccess, channel->addOperation(operation(t, 0), false, &id));
  t.stageIn(*channel, 0);
  ring(*channel, 0, id);
  EXPECT_EQ(alloyTimeout, channel->awaitServed(kShortMs)) << "awaitServed returned while the doorbell was rung";
  MPI_Send(&go, 1, MPI_INT, 1, kTag, MPI_COMM_WORLD);
  EXPECT_EQ(alloySuccess, channel->awaitServed(static_cast<long long>(kRingSeconds * 1000))) << channel->errorMessage();
  EXPECT_EQ(0u, *channel->doorbell(0));
}

// Sizes that disagree in one operation: rank 1 sends `sent` bytes to rank 0, which expects `expected`,
// both in the geometry's terms. They span as many rounds on both sides and differ in the last one.
struct Bytes {
  size_t capacities, chunks, extra;
  size_t in(NetGeometry g) const { return capacities * g.capacity() + chunks * g.slotBytes + extra; }
};
struct Mismatch {
  const char* name;
  Bytes sent, expected;
};

class NetChannelMismatchTest : public NetChannelTest, public ::testing::WithParamInterface<Mismatch> {};

// Rank 0's round with the differing window fails naming rank 1 and both counts, and every later doorbell
// of the failed channel is released at once. Rank 1's sends complete: only the receiver can tell.
TEST_P(NetChannelMismatchTest, SizeMismatchFailsNamingThePeer) {
  ASSERT_NO_FATAL_FAILURE(open(NetGeometry{4, 4096}, 3000));
  if (rank > 1) return;
  const Mismatch& m = GetParam();
  const size_t capacity = geometry.capacity(), sent = m.sent.in(geometry), expected = m.expected.in(geometry);
  const size_t last = (sent - 1) / capacity;
  ASSERT_EQ(last, (expected - 1) / capacity) << "a case must take as many rounds on both sides";
  Traffic t(seed, rank, nranks);
  t.add(rank == 1, 1 - rank, rank == 1 ? sent : expected);
  // One round after the other, so that the error read after round r's wait is round r's.
  size_t failedRound = 0;
  const alloyResult_t result = transfer(t, 0, &failedRound, false);
  const std::string message = channel->errorMessage();
  if (rank == 1) {
    EXPECT_ALLOY(alloySuccess, result) << message;
    return;
  }
  EXPECT_ALLOY(alloyRemoteError, result);
  EXPECT_EQ(last, failedRound);
  const std::string counts = std::string(alloy::operationName(kOperation)) + ": rank 1 sent " +
                             std::to_string(sent - last * capacity) + " bytes where rank 0 receives " +
                             std::to_string(expected - last * capacity) + " from it";
  EXPECT_TRUE(mentions(message, counts)) << "expected \"" << counts << "\" in: " << message;
  std::printf("net channel: %s: rank 0's error: %s\n", m.name, message.c_str());
  t.checkGuards();
  const auto rung = Clock::now();
  EXPECT_EQ(result, transfer(t, 1)) << "a failed channel's later operations";
  EXPECT_LT(Clock::now() - rung, std::chrono::seconds(5)) << "a failed channel held a later doorbell";
}

INSTANTIATE_TEST_SUITE_P(Sizes, NetChannelMismatchTest,
                         ::testing::Values(Mismatch{"ThreeChunksForTwo", {0, 3, 0}, {0, 2, 0}},
                                           Mismatch{"TwoChunksForThree", {0, 2, 0}, {0, 3, 0}},
                                           Mismatch{"LongerLastChunk", {0, 2, 100}, {0, 2, 7}},
                                           Mismatch{"FullInboxForOneByte", {1, 0, 0}, {0, 0, 1}},
                                           // An eager send where a large one is expected, and two eager
                                           // ones that differ (4 KiB slots in this geometry).
                                           Mismatch{"OneByteForAFullInbox", {0, 0, 1}, {1, 0, 0}},
                                           Mismatch{"EagerSizesDiffer", {0, 0, 100}, {0, 0, 7}},
                                           Mismatch{"SecondRoundDiffers", {1, 3, 0}, {1, 1, 1}}),
                         paramName<Mismatch>);

// Rank 0 runs a transfer with rank 1 that rank 1 never joins: rank 0 sends, receives, or both. It is
// released after the channel's timeout and not before, with alloyTimeout naming rank 1 and what rank 0
// waits for: its inbox (rank 1 never rings, so never says it is ready), its data, or both.
struct Stall {
  const char* name;
  bool sends, receives;
  const char* waitingFor;
};

class NetChannelTimeoutTest : public NetChannelTest, public ::testing::WithParamInterface<Stall> {};

TEST_P(NetChannelTimeoutTest, PeerThatNeverJoinsTimesOut) {
  constexpr long long kTimeoutMs = 2000;
  ASSERT_NO_FATAL_FAILURE(open(kSmall, kTimeoutMs));
  if (rank != 0) return;
  const Stall& s = GetParam();
  Traffic t(seed, rank, nranks);
  if (s.sends) t.add(true, 1, geometry.capacity());
  if (s.receives) t.add(false, 1, 1 + pairDraw(seed, 0, 1, 0) % geometry.capacity());
  const auto rung = Clock::now();
  EXPECT_ALLOY(alloyTimeout, transfer(t, 0)) << channel->errorMessage();
  const double seconds = std::chrono::duration<double>(Clock::now() - rung).count();
  EXPECT_GE(seconds, 0.9 * kTimeoutMs / 1000) << "failed before its timeout";
  EXPECT_LE(seconds, kTimeoutMs / 1000 + 5.0);
  const std::string waiting = std::string("waiting for rank(s) ") + s.waitingFor + " between hosts";
  EXPECT_TRUE(mentions(channel->errorMessage(), waiting))
      << "expected \"" << waiting << "\" in: " << channel->errorMessage();
  t.checkGuards();
}

INSTANTIATE_TEST_SUITE_P(Directions, NetChannelTimeoutTest,
                         ::testing::Values(Stall{"PeerThatNeverReceives", true, false, "1 (its inbox)"},
                                           Stall{"PeerThatNeverSends", false, true, "1 (its data)"},
                                           Stall{"PeerThatNeverSendsNorReceives", true, true,
                                                 "1 (its data, and its inbox)"}),
                         paramName<Stall>);

// abort() from another thread releases an operation that would otherwise wait for its peer's timeout.
TEST_F(NetChannelTest, AbortReleasesTheDoorbell) {
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  if (rank != 0) return;
  Traffic t(seed, rank, nranks);
  t.add(false, 1, 100);
  const auto rung = Clock::now();
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    channel->abort();
  });
  const alloyResult_t result = transfer(t, 0);
  aborter.join();
  EXPECT_ALLOY(alloyRemoteError, result);
  EXPECT_LT(Clock::now() - rung, std::chrono::seconds(10));
  EXPECT_TRUE(mentions(channel->errorMessage(), "aborted")) << channel->errorMessage();
  std::printf("net channel: after abort(): %s\n", channel->errorMessage().c_str());
  t.checkGuards();
}

// Malformed operations are refused with alloyInvalidArgument naming the entry and its field, and ring
// nothing: the doorbell stays 0, the channel healthy, and a transfer afterwards works. The last entry
// of each list is the bad one.
TEST_F(NetChannelTest, BadMessagesAreRefused) {
  ASSERT_NO_FATAL_FAILURE(open(kSmall));
  const int peer = (rank + 1) % nranks;
  const size_t capacity = channel->capacity();
  struct Bad {
    std::vector<NetMessage> entries;
    const char* field;
    const char* why;
  };
  const char* const notRemote = "is not a rank on another host";
  const Bad bad[] = {{{{rank, 64}}, "peer", notRemote},
                     {{{-1, 64}}, "peer", notRemote},
                     {{{nranks, 64}}, "peer", notRemote},
                     {{{peer, 0}}, "bytes", "expected 1.."},
                     {{{peer, capacity + 1}}, "bytes", "expected 1.."},
                     {{{peer, capacity}, {peer, 1}}, "peer", "appears twice"}};
  for (const Bad& b : bad) {
    for (bool send : {true, false}) {
      NetOperation op;
      (send ? op.sends : op.recvs) = b.entries;
      uint32_t id = 0;
      const NetMessage& wrong = b.entries.back();
      EXPECT_ALLOY(alloyInvalidArgument, channel->addOperation(op, false, &id))
          << (send ? "send" : "receive") << " of " << wrong.bytes << " bytes with peer " << wrong.peer;
      const std::string entry = std::string("operation.") + (send ? "sends[" : "recvs[") +
                                std::to_string(b.entries.size() - 1) + "]." + b.field;
      EXPECT_TRUE(lastErrorMentions(entry.c_str()) && lastErrorMentions(b.why))
          << "expected " << entry << " and \"" << b.why << "\": " << alloyGetLastError(nullptr);
    }
  }
  EXPECT_ALLOY(alloyInvalidArgument, channel->addOperation(NetOperation{}, false, nullptr));
  for (int box = 0; box < NetChannel::kBoxes; ++box) EXPECT_EQ(0u, *channel->doorbell(box)) << "box " << box;
  EXPECT_ALLOY(alloySuccess, channel->error());
  Traffic t = alltoallv(0);
  runTransfer(t, 0);
}

// Ranks 0 and 1 share a host, rank 2 is alone on another (so the hosts hold different numbers of ranks,
// and rank 2's staging is laid out for two remote peers where theirs is for one): the channel serves
// only pairs on different hosts (connect() gets no bytes for ranks on its own host), and refuses a
// message to a same-host rank.
TEST_F(NetChannelTest, SomeRanksShareAHost) {
  if (nranks != 3) GTEST_SKIP() << "needs 3 ranks";
  ASSERT_NO_FATAL_FAILURE(open(kSmall, kPeerTimeoutMs, {0, 0, 1}));
  if (rank < 2) {
    NetOperation op;
    op.sends = {NetMessage{1 - rank, 8}};
    uint32_t id = 0;
    EXPECT_ALLOY(alloyInvalidArgument, channel->addOperation(op, false, &id));
    EXPECT_TRUE(lastErrorMentions("operation.sends[0].peer") && lastErrorMentions("is not a rank on another host"))
        << alloyGetLastError(nullptr);
  }
  for (uint64_t n = 0; n < 4 * kShapes && !HasFailure(); ++n) {
    Traffic t = alltoallv(n);
    ASSERT_NO_FATAL_FAILURE(runTransfer(t, n));
  }
}

// Several communicators of one process, each with its own channel and UCX transport, all served by the
// one proxy thread, as alloyCommCreate sets them up: a duplicate of MPI_COMM_WORLD, a split of it that
// numbers the ranks in reverse, and another duplicate. Alltoalls cycle over the three, each rung and
// awaited before the next as one stream orders them (tests/gpu/multi_comm_test.cc,
// AlternatingAlltoAllOnOneStream), so a rank runs ahead into the next communicator's operation while its
// peers still finish the last one, and every rank's proxy must keep all three moving. A transport call
// that waits (UCX 1.22's ucp_worker_fence did) stalls the other channels of its process, and the job
// deadlocks: 4 ranks over tcp hung within 10 transfers with UCX 1.22 before the signal lost its fence.
struct SharedProxyCase {
  const char* name;
  int slots;  // 0: netGeometry()
  size_t slotBytes;
};

class NetChannelSharedProxyTest : public NetChannelTest, public ::testing::WithParamInterface<SharedProxyCase> {
 protected:
  struct Comm {
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0;
    int nranks = 0;
    std::unique_ptr<NetChannel> channel;
  };
  void TearDown() override {
    // One communicator after the other, as alloyCommDestroy takes them, while the proxy drives the rest.
    for (Comm& c : comms_)
      if (c.channel != nullptr) closeChannel(c.comm, &c.channel);
    for (Comm& c : comms_)
      if (c.comm != MPI_COMM_NULL) MPI_Comm_free(&c.comm);
    NetChannelTest::TearDown();
  }
  std::vector<Comm> comms_;
};

TEST_P(NetChannelSharedProxyTest, AlltoallsCycleOverThreeCommunicators) {
  const SharedProxyCase& param = GetParam();
  geometry = param.slots > 0 ? withEagerFromEnvironment(NetGeometry{param.slots, param.slotBytes})
                            : alloy::net::netGeometry();
  comms_.resize(3);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms_[0].comm);
  MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - 1 - rank, &comms_[1].comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms_[2].comm);
  for (Comm& c : comms_) {
    MPI_Comm_rank(c.comm, &c.rank);
    MPI_Comm_size(c.comm, &c.nranks);
    // Every process its own host, by world rank.
    const uint64_t host = static_cast<uint64_t>(rank);
    std::vector<uint64_t> hostOf(c.nranks);
    MPI_Allgather(&host, 1, MPI_UINT64_T, hostOf.data(), 1, MPI_UINT64_T, c.comm);
    ASSERT_NO_FATAL_FAILURE(openChannel(c.comm, geometry, kPeerTimeoutMs, hostOf, &c.channel));
  }
  ASSERT_EQ(nranks - 1 - rank, comms_[1].rank);
  std::mt19937_64 order(mix64(seed ^ (0x0de5ull + rank)));
  const size_t capacity = geometry.capacity();
  for (uint64_t n = 0; n < 60 && !HasFailure(); ++n) {
    Comm& c = comms_[n % comms_.size()];
    // Mostly small, as the GPU test draws them, and every seventh transfer one to three capacities.
    const uint64_t draw = mix64(seed ^ mix64(n + 0x616c6c));
    const size_t bytes = n % 7 == 3 ? capacity + draw % (2 * capacity) : 1 + draw % 20000;
    Traffic t(seed, c.rank, c.nranks);
    for (int peer = 0; peer < c.nranks; ++peer) {
      if (peer == c.rank) continue;
      t.add(true, peer, bytes);
      t.add(false, peer, bytes);
    }
    t.prepare(n);
    for (size_t round = 0; round < t.rounds(capacity); ++round) {
      uint32_t id = 0;
      ASSERT_ALLOY(alloySuccess, c.channel->addOperation(t.operation(round, capacity, order), false, &id));
      t.stageIn(*c.channel, round);
      ASSERT_TRUE(ringAndWait(*c.channel, NetChannel::boxOf(round), id));
      const alloyResult_t result = c.channel->error();
      t.stageOut(*c.channel, round, result == alloySuccess);
      ASSERT_ALLOY(alloySuccess, result) << "rank " << rank << " (rank " << c.rank << " of communicator "
                                         << n % comms_.size() << "), transfer " << n << ", round " << round << ": "
                                         << c.channel->errorMessage();
    }
    t.check(n);
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, NetChannelSharedProxyTest,
                         ::testing::Values(SharedProxyCase{"Default", 0, 0},
                                           SharedProxyCase{"ThreeSlots", kSmall.slots, kSmall.slotBytes}),
                         paramName<SharedProxyCase>);

}  // namespace
}  // namespace nettest
