// Data tests of the transport between MPI ranks: real data, a reference the receiver computes on its
// own, and the ring protocol's rule that a counter is never visible before the data it announces.
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "net_test_util.h"

namespace nettest {
namespace {

const size_t kSizes[] = {0, 1, 7, 8, 4095, 4096, (1u << 20) + 3};
constexpr size_t kNumSizes = sizeof(kSizes) / sizeof(kSizes[0]);
constexpr size_t kSlack = 256;  // random offsets within each message's slot

// Message i of every source: at slotStart(i) + a random offset below kSlack of the source's region.
size_t slotStart(size_t i) {
  size_t start = 0;
  for (size_t j = 0; j < i; ++j) start += (kSizes[j] + kSlack + 63) / 64 * 64;
  return start;
}

size_t randomOffset(uint64_t seed, int source, int target, size_t i) {
  return mix64(seed ^ mix64(0x6f6666736574ull + (static_cast<uint64_t>(source) << 32) + (target << 16) + i)) % kSlack;
}

// Every size to every peer at a random offset, each followed by a flush and a signal of its count (the
// flush orders the signal after the data: signal itself orders nothing); the receiver checks, whenever
// it sees the counter move to k, that messages 0..k-1 are all already in place.
TEST_F(NetTest, EverySizeLandsAtRandomOffsetsBeforeItsSignal) {
  std::vector<std::vector<uint8_t>> sent(nranks);  // per peer, all messages back to back (kept until flushed)
  std::vector<alloy::net::Registration*> sentRegs(nranks, nullptr);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    for (size_t i = 0; i < kNumSizes; ++i) {
      const std::vector<uint8_t> bytes = messageBytes(seed, rank, peer, i, kSizes[i]);
      sent[peer].insert(sent[peer].end(), bytes.begin(), bytes.end());
    }
    std::vector<uint8_t> unusedKey;
    ASSERT_ALLOY(alloySuccess, transport->registerMemory(sent[peer].data(), sent[peer].size(), &sentRegs[peer], &unusedKey));
    size_t from = 0;
    for (size_t i = 0; i < kNumSizes; ++i) {
      const size_t at = regionOffset(rank) + slotStart(i) + randomOffset(seed, rank, peer, i);
      ASSERT_ALLOY(alloySuccess, retry([&] {
        return transport->put(connections[peer], sent[peer].data() + from, sentRegs[peer], keys[peer], at, kSizes[i], nullptr);
      }));
      flushTo(peer);
      ASSERT_ALLOY(alloySuccess, retry([&] { return transport->signal(connections[peer], keys[peer], counterOffset(rank), i + 1, nullptr); }));
      from += kSizes[i];
    }
  }
  for (int source = 0; source < nranks; ++source) {
    if (source == rank) continue;
    uint64_t verified = 0;
    while (verified < kNumSizes) {
      uint64_t seen = 0;
      if (!waitUntil([&] { return (seen = counter(source)) > verified; }, "the next signal")) return;
      ASSERT_LE(seen, kNumSizes) << "counter of rank " << source;
      for (; verified < seen; ++verified)
        expectBytes(source, slotStart(verified) + randomOffset(seed, source, rank, verified),
                    messageBytes(seed, source, rank, verified, kSizes[verified]),
                    ("message of " + std::to_string(kSizes[verified]) + " bytes, counter " + std::to_string(seen)).c_str());
    }
  }
  flushAll();
  for (int peer = 0; peer < nranks; ++peer) {
    if (sentRegs[peer] == nullptr) continue;
    EXPECT_ALLOY(alloySuccess, transport->deregister(sentRegs[peer]));
  }
}

// putSignal of every size it takes, to every peer at random offsets, with no flush: when the receiver
// sees the counter move to k, messages 0..k-1 are all in place (the one message orders its data before
// its signal). Sizes above maxPutSignalBytes() are left out.
TEST_F(NetTest, PutSignalLandsDataBeforeItsSignal) {
  const size_t limit = transport->maxPutSignalBytes();
  if (limit == 0) GTEST_SKIP() << "the backend has no putSignal";
  std::vector<size_t> sizes;
  for (size_t s : kSizes)
    if (s > 0 && s <= limit) sizes.push_back(s);
  sizes.push_back(limit);
  // Message i's place in the source's region: its own slot, laid out for these sizes.
  auto start = [&](size_t i) {
    size_t offset = 0;
    for (size_t j = 0; j < i; ++j) offset += (sizes[j] + kSlack + 63) / 64 * 64;
    return offset;
  };
  ASSERT_LE(start(sizes.size()), kRegionBytes);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::vector<uint8_t> bytes = messageBytes(seed, rank, peer, i, sizes[i]);
      const size_t at = regionOffset(rank) + start(i) + randomOffset(seed, rank, peer, i);
      Request req;
      ASSERT_ALLOY(alloySuccess, retry([&] {
        return transport->putSignal(connections[peer], bytes.data(), bytes.size(), keys[peer], at, counterOffset(rank),
                                    i + 1, &req);
      }));
      ASSERT_ALLOY(alloySuccess, wait(&req)) << "putSignal of " << sizes[i] << " bytes to peer " << peer;
    }
  }
  for (int source = 0; source < nranks; ++source) {
    if (source == rank) continue;
    uint64_t verified = 0;
    while (verified < sizes.size()) {
      uint64_t seen = 0;
      if (!waitUntil([&] { return (seen = counter(source)) > verified; }, "the next signal")) return;
      ASSERT_LE(seen, sizes.size()) << "counter of rank " << source;
      for (; verified < seen; ++verified)
        expectBytes(source, start(verified) + randomOffset(seed, source, rank, verified),
                    messageBytes(seed, source, rank, verified, sizes[verified]),
                    ("putSignal message of " + std::to_string(sizes[verified]) + " bytes, counter " +
                     std::to_string(seen)).c_str());
    }
  }
  flushAll();
}

// Rounds of many puts, one flush and one signal: when the counter shows the round, all of its puts have
// landed.
TEST_F(NetTest, ManyPutsThenOneSignal) {
  constexpr int kRounds = 6, kPuts = 48;
  for (int round = 0; round < kRounds; ++round) {
    // Sizes and places of round r's puts: the same on every rank, fresh each round.
    std::mt19937_64 shape(mix64(seed + round));
    std::vector<size_t> sizes(kPuts), offsets(kPuts);
    size_t end = 0;
    for (int i = 0; i < kPuts; ++i) {
      sizes[i] = 1 + shape() % 40000;
      offsets[i] = end + shape() % 64;
      end = offsets[i] + sizes[i];
    }
    ASSERT_LE(end, kRegionBytes);
    const uint64_t index0 = static_cast<uint64_t>(round) * kPuts;
    std::vector<std::vector<uint8_t>> data;  // kept until flushed
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == rank) continue;
      for (int i = 0; i < kPuts; ++i) {
        data.push_back(messageBytes(seed, rank, peer, index0 + i, sizes[i]));
        ASSERT_ALLOY(alloySuccess, retry([&] {
          return transport->put(connections[peer], data.back().data(), nullptr, keys[peer],
                                regionOffset(rank) + offsets[i], sizes[i], nullptr);
        }));
      }
      flushTo(peer);
      ASSERT_ALLOY(alloySuccess, retry([&] { return transport->signal(connections[peer], keys[peer], counterOffset(rank), round + 1, nullptr); }));
    }
    for (int source = 0; source < nranks; ++source) {
      if (source == rank) continue;
      if (!waitUntil([&] { return counter(source) == static_cast<uint64_t>(round + 1); }, "the round's signal")) return;
      for (int i = 0; i < kPuts; ++i)
        expectBytes(source, offsets[i], messageBytes(seed, source, rank, index0 + i, sizes[i]),
                    ("round " + std::to_string(round) + " put " + std::to_string(i)).c_str());
    }
    flushAll();
    barrier();  // nobody overwrites a round before its receivers checked it
  }
}

// Puts with no signal are at the target once a flush completes.
TEST_F(NetTest, FlushCompletesPutsAtTheTarget) {
  std::vector<std::vector<uint8_t>> data(nranks);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    data[peer] = messageBytes(seed, rank, peer, 0, 300000);
    ASSERT_ALLOY(alloySuccess, retry([&] {
      return transport->put(connections[peer], data[peer].data(), nullptr, keys[peer], regionOffset(rank) + 5,
                            data[peer].size(), nullptr);
    }));
    Request flushed;
    ASSERT_ALLOY(alloySuccess, retry([&] { return transport->flush(connections[peer], &flushed); }));
    ASSERT_ALLOY(alloySuccess, wait(&flushed));
  }
  barrier();  // every sender's flush has completed
  for (int source = 0; source < nranks; ++source) {
    if (source == rank) continue;
    expectBytes(source, 5, messageBytes(seed, source, rank, 0, 300000), "flushed put");
    EXPECT_EQ(counter(source), 0u);
  }
}

// Transport::describeTraffic's "put 3/3, signal 1/1, ..." as kind -> (posted, completed).
std::map<std::string, std::pair<long, long>> parseTally(const std::string& text) {
  std::map<std::string, std::pair<long, long>> counts;
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    std::istringstream fields(item);
    std::string kind;
    long posted = -1, completed = -1;
    char slash = 0;
    fields >> kind >> posted >> slash >> completed;
    if (slash == '/') counts[kind] = {posted, completed};
  }
  return counts;
}

// The tally a stall report prints (Transport::describeTraffic) counts each kind as posted and as
// completed: three unobserved puts, a put+signal, an unobserved signal and a flush to the next rank add
// exactly that to what the fixture's set-up did, all completed once the flush has and the transport has
// been progressed; the data they carried landed (checked by the receiver), so the counts describe
// operations that really ran.
TEST_F(NetTest, TrafficTallyCountsPostedAndCompletedOperations) {
  if (nranks < 2) GTEST_SKIP() << "needs 2 ranks";
  const int peer = (rank + 1) % nranks, source = (rank + nranks - 1) % nranks;
  const auto before = parseTally(transport->describeTraffic(connections[peer]));
  ASSERT_EQ(before.size(), 4u) << transport->describeTraffic(connections[peer]);
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < 4; ++i) data.push_back(messageBytes(seed, rank, peer, i, 1000));
  for (int i = 0; i < 3; ++i)
    ASSERT_ALLOY(alloySuccess, retry([&] {
      return transport->put(connections[peer], data[i].data(), nullptr, keys[peer], regionOffset(rank) + 1000 * i, 1000,
                            nullptr);
    }));
  Request landed;
  ASSERT_ALLOY(alloySuccess, retry([&] {
    return transport->putSignal(connections[peer], data[3].data(), 1000, keys[peer], regionOffset(rank) + 3000,
                                counterOffset(rank), 1, &landed);
  }));
  ASSERT_ALLOY(alloySuccess, wait(&landed));
  ASSERT_ALLOY(alloySuccess, retry([&] { return transport->signal(connections[peer], keys[peer], counterOffset(rank), 2, nullptr); }));
  flushTo(peer);
  const std::map<std::string, long> added = {{"put", 3}, {"signal", 1}, {"put+signal", 1}, {"flush", 1}};
  auto matches = [&] {
    const auto now = parseTally(transport->describeTraffic(connections[peer]));
    for (const auto& [kind, n] : added) {
      const auto at = now.find(kind), was = before.find(kind);
      if (at == now.end() || was == before.end() || at->second.first - was->second.first != n ||
          at->second.second - was->second.second != n)
        return false;
    }
    return true;
  };
  waitUntil(matches, "the tally of the operations posted, all completed");
  EXPECT_TRUE(matches()) << "now: " << transport->describeTraffic(connections[peer]);
  // The signal's trace: the value it stored (what it replaced depends on whether the put+signal's store
  // landed first, which only the flush orders).
  const std::string traffic = transport->describeTraffic(connections[peer]);
  EXPECT_NE(traffic.find(": 0x2 replacing 0x"), std::string::npos) << traffic;
  barrier();  // every sender's flush has completed
  for (int i = 0; i < 4; ++i)
    expectBytes(source, 1000 * i, messageBytes(seed, source, rank, i, 1000), "message counted in the tally");
  EXPECT_EQ(counter(source), 2u);
}

// With a bound of 4: four operations posted with requests fill the connection (completed or not, until
// tested); the fifth put, a signal and a flush are refused with alloyInProgress and send nothing; once
// the requests are tested, the put goes through. Then 200 unobserved puts go through the same bound.
TEST_F(NetBackPressureTest, RefusesBeyondTheBoundWithoutSideEffects) {
  const int peer = (rank + 1) % nranks;
  const int source = (rank + nranks - 1) % nranks;
  if (nranks < 2) GTEST_SKIP() << "needs 2 ranks";
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < 5; ++i) data.push_back(messageBytes(seed, rank, peer, i, 1000));
  const std::vector<uint8_t> refused = messageBytes(seed, rank, peer, 99, 1000);
  Request reqs[5];
  for (int i = 0; i < 4; ++i)
    ASSERT_ALLOY(alloySuccess, transport->put(connections[peer], data[i].data(), nullptr, keys[peer],
                                              regionOffset(rank) + 1000 * i, 1000, &reqs[i]));
  Request none;
  EXPECT_ALLOY(alloyInProgress, transport->put(connections[peer], refused.data(), nullptr, keys[peer],
                                               regionOffset(rank) + 100000, 1000, &none));
  EXPECT_ALLOY(alloyInProgress, transport->signal(connections[peer], keys[peer], counterOffset(rank), 7, &none));
  EXPECT_ALLOY(alloyInProgress, transport->flush(connections[peer], &none));
  const Request copy = reqs[0];
  for (int i = 0; i < 4; ++i) EXPECT_ALLOY(alloySuccess, wait(&reqs[i]));
  // A request is spent once tested done: its copy no longer names an operation.
  Request stale = copy;
  bool done = false;
  EXPECT_ALLOY(alloyInvalidArgument, transport->test(&stale, &done));
  EXPECT_TRUE(lastErrorMentions("req"));
  ASSERT_ALLOY(alloySuccess, transport->put(connections[peer], data[4].data(), nullptr, keys[peer],
                                            regionOffset(rank) + 4000, 1000, &reqs[4]));
  EXPECT_ALLOY(alloySuccess, wait(&reqs[4]));

  std::vector<std::vector<uint8_t>> many;
  for (int i = 0; i < 200; ++i) {
    many.push_back(messageBytes(seed, rank, peer, 1000 + i, 4096));
    ASSERT_ALLOY(alloySuccess, retry([&] {
      return transport->put(connections[peer], many.back().data(), nullptr, keys[peer],
                            regionOffset(rank) + 200000 + 4096 * i, 4096, nullptr);
    }));
  }
  flushAll();
  barrier();
  for (int i = 0; i < 5; ++i) expectBytes(source, 1000 * i, messageBytes(seed, source, rank, i, 1000), "bounded put");
  expectBytes(source, 100000, std::vector<uint8_t>(1000, kPoison), "the refused put's target");
  EXPECT_EQ(counter(source), 0u) << "the refused signal arrived";
  for (int i = 0; i < 200; ++i)
    expectBytes(source, 200000 + 4096 * i, messageBytes(seed, source, rank, 1000 + i, 4096), "unobserved put");
}

}  // namespace
}  // namespace nettest
