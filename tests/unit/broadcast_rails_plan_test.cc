// The broadcast over every rail (broadcast_rails_plan.h) planned for every rank of whole communicators and
// simulated on the host, launch by launch: each message is matched with its peer's in the order both added
// them (as the point-to-point engine matches them), a send may only read bytes its rank held before the
// launch, messages of launches 1 and 3 stay inside a host and those of launch 2 cross hosts along a rail.
// At the end every rank must hold the root's buffer, each byte received once. Layouts a GPU machine cannot
// hold: hosts whose ranks interleave, are grouped or are shuffled, up to 4 hosts x 3 ranks; every root;
// sizes below, at and above the parts' 16-byte grain.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "broadcast_rails_plan.h"
#include "topology.h"

namespace {

using alloy::BroadcastRailsPlan;
using alloy::RailsMessage;

constexpr uint8_t kPoison = 0xa5;

uint8_t sourceByte(size_t i) { return static_cast<uint8_t>((i * 7 + (i >> 8) * 3 + 1) % 251); }

struct Rank {
  alloy::LocalTopology topology;
  BroadcastRailsPlan plan;
  std::vector<uint8_t> data;      // the root's source, everyone else's recvbuff
  std::vector<bool> held;         // bytes this rank holds
  std::vector<int> receptions;    // how often each byte arrived
};

const std::vector<RailsMessage>& launchOf(const BroadcastRailsPlan& p, int launch) {
  return launch == 0 ? p.scatter : launch == 1 ? p.along : p.gather;
}

void simulate(const std::vector<uint64_t>& hostOf, int root, size_t bytes) {
  const int n = static_cast<int>(hostOf.size());
  const std::string where = "root " + std::to_string(root) + ", " + std::to_string(bytes) + " bytes";
  std::vector<Rank> ranks(n);
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    k.topology = alloy::computeLocalTopology(hostOf, r);
    ASSERT_TRUE(k.topology.localSize > 1 && k.topology.railPeers().size() > 1)
        << "the layout must give every one of several hosts the same L > 1 ranks";
    k.plan = alloy::planBroadcastRails(k.topology, r, root, bytes);
    k.data.assign(bytes, kPoison);
    k.held.assign(bytes, r == root);
    k.receptions.assign(bytes, 0);
  }
  for (size_t i = 0; i < bytes; ++i) ranks[root].data[i] = sourceByte(i);

  for (int launch = 0; launch < 3; ++launch) {
    // Each pair's messages of this launch, in the order they were added.
    std::map<std::pair<int, int>, std::vector<RailsMessage>> sent, received;
    for (int r = 0; r < n; ++r) {
      for (const RailsMessage& m : launchOf(ranks[r].plan, launch)) {
        ASSERT_GE(m.peer, 0) << where;
        ASSERT_LT(m.peer, n) << where;
        ASSERT_NE(m.peer, r) << where << ": rank " << r << " messages itself";
        ASSERT_LE(m.offset + m.bytes, bytes) << where;
        ASSERT_GT(m.bytes, 0u) << where << ": an empty message";
        const bool sameHost = hostOf[m.peer] == hostOf[r];
        if (launch == 1) {
          EXPECT_FALSE(sameHost) << where << ": launch 2 stays inside the host of rank " << r;
          EXPECT_EQ(ranks[r].topology.localRank, ranks[m.peer].topology.localRank)
              << where << ": launch 2 leaves rank " << r << "'s rail";
        } else {
          EXPECT_TRUE(sameHost) << where << ": launch " << launch + 1 << " crosses hosts from rank " << r;
        }
        if (launch == 0) EXPECT_EQ(hostOf[r], hostOf[root]) << where << ": a scatter off the root's host";
        if (m.isSend) {
          for (size_t i = m.offset; i < m.offset + m.bytes; ++i)
            ASSERT_TRUE(ranks[r].held[i]) << where << ": rank " << r << " sends byte " << i << " before it holds it";
          sent[{r, m.peer}].push_back(m);
        } else {
          received[{m.peer, r}].push_back(m);
        }
      }
    }
    ASSERT_EQ(sent.size(), received.size()) << where << ", launch " << launch + 1 << ": unmatched pairs";
    std::vector<std::pair<int, RailsMessage>> arrivals;  // applied after the launch's sends were all read
    for (const auto& [pair, sends] : sent) {
      const auto match = received.find(pair);
      ASSERT_NE(match, received.end()) << where << ": rank " << pair.first << " sends to " << pair.second
                                       << ", which receives nothing from it";
      ASSERT_EQ(sends.size(), match->second.size()) << where;
      for (size_t k = 0; k < sends.size(); ++k) {
        const RailsMessage& s = sends[k];
        const RailsMessage& d = match->second[k];
        ASSERT_EQ(s.bytes, d.bytes) << where << ": message " << k << " from " << pair.first << " to " << pair.second;
        arrivals.push_back({pair.second, d});
        for (size_t i = 0; i < s.bytes; ++i)
          ranks[pair.second].data[d.offset + i] = ranks[pair.first].data[s.offset + i];
      }
    }
    for (const auto& [to, m] : arrivals) {
      for (size_t i = m.offset; i < m.offset + m.bytes; ++i) {
        ranks[to].held[i] = true;
        ++ranks[to].receptions[i];
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < bytes; ++i) {
      ASSERT_EQ(ranks[r].data[i], sourceByte(i)) << where << ": rank " << r << " byte " << i;
      ASSERT_EQ(ranks[r].receptions[i], r == root ? 0 : 1) << where << ": rank " << r << " byte " << i;
    }
  }
}

void everyRootAndSize(const std::vector<uint64_t>& hostOf) {
  for (int root = 0; root < static_cast<int>(hostOf.size()); ++root)
    for (size_t bytes : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{100}, size_t{4099}, size_t{65536 + 40}})
      simulate(hostOf, root, bytes);
}

TEST(BroadcastRailsPlan, TwoHostsOfTwoInterleaved) { everyRootAndSize({0, 1, 0, 1}); }

TEST(BroadcastRailsPlan, TwoHostsOfTwoGrouped) { everyRootAndSize({0, 0, 1, 1}); }

TEST(BroadcastRailsPlan, ThreeHostsOfTwo) { everyRootAndSize({0, 1, 2, 0, 1, 2}); }

TEST(BroadcastRailsPlan, TwoHostsOfFour) { everyRootAndSize({0, 0, 0, 0, 1, 1, 1, 1}); }

TEST(BroadcastRailsPlan, FourHostsOfThreeShuffled) { everyRootAndSize({2, 0, 3, 1, 1, 0, 2, 3, 0, 3, 1, 2}); }

// Each rail carries its own part between hosts: the bytes a rank sends along its rail are its part's.
TEST(BroadcastRailsPlan, EveryRailCarriesOnlyItsPart) {
  const std::vector<uint64_t> hostOf{0, 1, 0, 1};
  const size_t bytes = 1 << 20;
  for (int r = 0; r < 4; ++r) {
    const BroadcastRailsPlan p = alloy::planBroadcastRails(alloy::computeLocalTopology(hostOf, r), r, 0, bytes);
    size_t along = 0;
    for (const RailsMessage& m : p.along) along += m.bytes;
    EXPECT_EQ(along, bytes / 2) << "rank " << r;
  }
}

}  // namespace
