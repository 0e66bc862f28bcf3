// Large broadcasts between hosts in parts (broadcast_parts_plan.h) planned for every rank of whole
// communicators and simulated on the host, launch by launch: each message is matched with its peer's in
// the order both added them (as the point-to-point engine matches them), and a send may only read bytes its
// rank held before the launch. Over the rails, launches 1 and 3 stay inside a host and launch 2 crosses
// hosts along a rail. At the end every rank must hold the root's buffer, each byte received once. Layouts a
// GPU machine cannot hold: hosts whose ranks interleave, are grouped or are shuffled, up to 4 hosts x 3
// ranks; every root; sizes below, at and above the parts' 16-byte grain.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "broadcast_parts_plan.h"
#include "topology.h"

namespace {

using alloy::PartLaunches;
using alloy::PartMessage;

constexpr uint8_t kPoison = 0xa5;

uint8_t sourceByte(size_t i) { return static_cast<uint8_t>((i * 7 + (i >> 8) * 3 + 1) % 251); }

// Whether a message of launch `launch` between ranks `from` and `to` goes where its plan says.
using Placement = std::function<bool(int launch, int from, int to)>;

struct Rank {
  PartLaunches plan;
  std::vector<uint8_t> data;      // the root's source, everyone else's recvbuff
  std::vector<bool> held;         // bytes this rank holds
  std::vector<int> receptions;    // how often each byte arrived
};

// Every rank's plan by plan(r), simulated; `placed` judges where each message goes.
void simulate(int n, int root, size_t bytes, const std::function<PartLaunches(int)>& plan, const Placement& placed) {
  const std::string where = "root " + std::to_string(root) + ", " + std::to_string(bytes) + " bytes";
  std::vector<Rank> ranks(n);
  size_t launches = 0;
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    k.plan = plan(r);
    if (r == 0) launches = k.plan.size();
    ASSERT_EQ(k.plan.size(), launches) << where << ": every rank plans as many launches";
    k.data.assign(bytes, kPoison);
    k.held.assign(bytes, r == root);
    k.receptions.assign(bytes, 0);
  }
  for (size_t i = 0; i < bytes; ++i) ranks[root].data[i] = sourceByte(i);

  for (int launch = 0; launch < static_cast<int>(launches); ++launch) {
    // Each pair's messages of this launch, in the order they were added.
    std::map<std::pair<int, int>, std::vector<PartMessage>> sent, received;
    for (int r = 0; r < n; ++r) {
      for (const PartMessage& m : ranks[r].plan[launch]) {
        ASSERT_GE(m.peer, 0) << where;
        ASSERT_LT(m.peer, n) << where;
        ASSERT_NE(m.peer, r) << where << ": rank " << r << " messages itself";
        ASSERT_LE(m.offset + m.bytes, bytes) << where;
        ASSERT_GT(m.bytes, 0u) << where << ": an empty message";
        EXPECT_TRUE(placed(launch, r, m.peer)) << where << ": launch " << launch + 1 << " from rank " << r
                                               << " to rank " << m.peer << " goes where its plan says it does not";
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
    std::vector<std::pair<int, PartMessage>> arrivals;  // applied after the launch's sends were all read
    for (const auto& [pair, sends] : sent) {
      const auto match = received.find(pair);
      ASSERT_NE(match, received.end()) << where << ": rank " << pair.first << " sends to " << pair.second
                                       << ", which receives nothing from it";
      ASSERT_EQ(sends.size(), match->second.size()) << where;
      for (size_t k = 0; k < sends.size(); ++k) {
        const PartMessage& s = sends[k];
        const PartMessage& d = match->second[k];
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

// Sizes below, at and above the 16-byte grain of the parts, and of many parts.
const size_t kSizes[] = {1, 15, 16, 17, 100, 4099, 65536 + 40};

void overRails(const std::vector<uint64_t>& hostOf) {
  const int n = static_cast<int>(hostOf.size());
  std::vector<alloy::LocalTopology> t(n);
  for (int r = 0; r < n; ++r) {
    t[r] = alloy::computeLocalTopology(hostOf, r);
    ASSERT_TRUE(t[r].localSize > 1 && t[r].railPeers().size() > 1)
        << "the layout must give every one of several hosts the same L > 1 ranks";
  }
  // Launches 1 and 3 inside a host (the first on the root's), launch 2 between hosts on one rail.
  for (int root = 0; root < n; ++root) {
    const Placement placed = [&](int launch, int from, int to) {
      if (launch == 1) return hostOf[from] != hostOf[to] && t[from].localRank == t[to].localRank;
      return hostOf[from] == hostOf[to] && (launch == 2 || hostOf[from] == hostOf[root]);
    };
    for (size_t bytes : kSizes)
      simulate(n, root, bytes, [&](int r) { return alloy::planBroadcastOverRails(t[r], r, root, bytes); }, placed);
  }
}

void scatteredAndGathered(int n) {
  const Placement anywhere = [](int, int, int) { return true; };
  for (int root = 0; root < n; ++root)
    for (size_t bytes : kSizes)
      simulate(n, root, bytes, [&](int r) { return alloy::planBroadcastScatterGather(n, r, root, bytes); }, anywhere);
}

TEST(BroadcastPartsPlan, OverRailsOfTwoHostsOfTwoInterleaved) { overRails({0, 1, 0, 1}); }

TEST(BroadcastPartsPlan, OverRailsOfTwoHostsOfTwoGrouped) { overRails({0, 0, 1, 1}); }

TEST(BroadcastPartsPlan, OverRailsOfThreeHostsOfTwo) { overRails({0, 1, 2, 0, 1, 2}); }

TEST(BroadcastPartsPlan, OverRailsOfTwoHostsOfFour) { overRails({0, 0, 0, 0, 1, 1, 1, 1}); }

TEST(BroadcastPartsPlan, OverRailsOfFourHostsOfThreeShuffled) { overRails({2, 0, 3, 1, 1, 0, 2, 3, 0, 3, 1, 2}); }

TEST(BroadcastPartsPlan, ScatteredAndGatheredAmongTwoToSevenRanks) {
  for (int n = 2; n <= 7; ++n) scatteredAndGathered(n);
}

// Each rail carries its own part between hosts: the bytes a rank sends or receives along its rail are its
// part's. Scattered and gathered, the root sends 2 (n - 1) / n of the buffer.
TEST(BroadcastPartsPlan, EachConnectionCarriesAShare) {
  const std::vector<uint64_t> hostOf{0, 1, 0, 1};
  const size_t bytes = 1 << 20;
  for (int r = 0; r < 4; ++r) {
    const PartLaunches p = alloy::planBroadcastOverRails(alloy::computeLocalTopology(hostOf, r), r, 0, bytes);
    size_t along = 0;
    for (const PartMessage& m : p[1]) along += m.bytes;
    EXPECT_EQ(along, bytes / 2) << "rank " << r;
  }
  size_t fromRoot = 0;
  for (const std::vector<PartMessage>& launch : alloy::planBroadcastScatterGather(4, 0, 0, bytes))
    for (const PartMessage& m : launch) fromRoot += m.isSend ? m.bytes : 0;
  EXPECT_EQ(fromRoot, 2 * 3 * bytes / 4);
}

}  // namespace
