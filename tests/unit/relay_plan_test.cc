// alltoallv's rail relay planned for every rank of whole communicators and simulated on the host: the
// pack copies, then the launch inside each host, then the launch along the rails, each message matched
// with its peer's in the order both added them (as the point-to-point engine matches them), must leave
// every rank's receive buffer holding exactly what an alltoallv defines: rank s's block for r at r's
// displacement for s, and nothing else touched. Random counts (empty blocks included) and displacements
// with gaps, on layouts a GPU machine cannot hold: 4 hosts x 3 ranks, hosts whose ranks interleave,
// are grouped, or are shuffled.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "relay_plan.h"
#include "topology.h"

namespace {

using alloy::RelayBuffer;
using alloy::RelayMessage;
using alloy::RelayPlan;

constexpr uint8_t kPoison = 0xa5;

// A byte of rank s's block for rank d: independent of where either rank keeps it.
uint8_t blockByte(int s, int d, size_t i) { return static_cast<uint8_t>((s * 131 + d * 31 + i * 7 + (i >> 8)) % 251); }

struct Rank {
  std::vector<size_t> sendBytes, sendOffsets, recvBytes, recvOffsets;
  std::vector<uint8_t> send, recv, pack, relay;
  RelayPlan plan;
  std::vector<uint8_t>& buffer(RelayBuffer b) {
    switch (b) {
      case RelayBuffer::kSend: return send;
      case RelayBuffer::kRecv: return recv;
      case RelayBuffer::kPack: return pack;
      default: return relay;
    }
  }
};

// Lays blocks of the given sizes out in rank order with a random gap before each; returns the extent.
size_t layOut(const std::vector<size_t>& bytes, std::mt19937_64& g, std::vector<size_t>* offsets) {
  size_t cursor = 0;
  offsets->resize(bytes.size());
  for (size_t r = 0; r < bytes.size(); ++r) {
    cursor += g() % 5;
    (*offsets)[r] = cursor;
    cursor += bytes[r];
  }
  return cursor + 3;
}

// Delivers every message of one launch: per ordered pair, the sender's sends and the receiver's receives
// to each other in the order added, of equal sizes.
void deliver(std::vector<Rank>& ranks, std::vector<RelayMessage> RelayPlan::*launch, const char* name) {
  const int n = static_cast<int>(ranks.size());
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      std::vector<RelayMessage> sends, recvs;
      for (const RelayMessage& m : ranks[a].plan.*launch)
        if (m.isSend && m.peer == b) sends.push_back(m);
      for (const RelayMessage& m : ranks[b].plan.*launch)
        if (!m.isSend && m.peer == a) recvs.push_back(m);
      ASSERT_EQ(sends.size(), recvs.size()) << name << ": rank " << a << " to rank " << b;
      for (size_t k = 0; k < sends.size(); ++k) {
        ASSERT_EQ(sends[k].bytes, recvs[k].bytes) << name << ": message " << k << " from rank " << a << " to " << b;
        const std::vector<uint8_t>& from = ranks[a].buffer(sends[k].buffer);
        std::vector<uint8_t>& to = ranks[b].buffer(recvs[k].buffer);
        ASSERT_LE(sends[k].offset + sends[k].bytes, from.size()) << name << ": rank " << a << " reads past a buffer";
        ASSERT_LE(recvs[k].offset + recvs[k].bytes, to.size()) << name << ": rank " << b << " writes past a buffer";
        std::copy_n(from.begin() + sends[k].offset, sends[k].bytes, to.begin() + recvs[k].offset);
      }
    }
}

void simulate(const std::vector<uint64_t>& hostOf, uint64_t seed) {
  const int n = static_cast<int>(hostOf.size());
  std::mt19937_64 g(seed);
  std::vector<std::vector<size_t>> counts(n, std::vector<size_t>(n));  // [s][d] bytes
  for (auto& row : counts)
    for (size_t& c : row) c = g() % 4 == 0 ? 0 : g() % 300;
  std::vector<Rank> ranks(n);
  std::vector<alloy::LocalTopology> topo(n);
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    topo[r] = alloy::computeLocalTopology(hostOf, r);
    ASSERT_FALSE(topo[r].rails.empty()) << "the layout must give every host the same number of ranks";
    for (int p = 0; p < n; ++p) {
      k.sendBytes.push_back(counts[r][p]);
      k.recvBytes.push_back(counts[p][r]);
    }
    k.send.assign(layOut(k.sendBytes, g, &k.sendOffsets), kPoison);
    k.recv.assign(layOut(k.recvBytes, g, &k.recvOffsets), kPoison);
    for (int d = 0; d < n; ++d)
      for (size_t i = 0; i < k.sendBytes[d]; ++i) k.send[k.sendOffsets[d] + i] = blockByte(r, d, i);
  }
  for (int r = 0; r < n; ++r) {
    const alloy::LocalTopology& t = topo[r];
    ranks[r].plan = alloy::planRelay(t, hostOf, r, ranks[r].sendBytes, ranks[r].sendOffsets, ranks[r].recvBytes,
                                     ranks[r].recvOffsets, [&](int j, int d) { return counts[t.localPeers[j]][d]; });
    ranks[r].pack.assign(ranks[r].plan.packBytes, kPoison);
    ranks[r].relay.assign(ranks[r].plan.relayBytes, kPoison);
    for (const alloy::RelayCopy& c : ranks[r].plan.packs)
      std::copy_n(ranks[r].send.begin() + c.sendOffset, c.bytes, ranks[r].pack.begin() + c.packOffset);
    // Inside stays inside the host; along goes only to the rank's rail on other hosts.
    for (const RelayMessage& m : ranks[r].plan.inside)
      EXPECT_EQ(hostOf[m.peer], hostOf[r]) << "rank " << r << ": a message inside the host to rank " << m.peer;
    for (const RelayMessage& m : ranks[r].plan.along) {
      EXPECT_NE(hostOf[m.peer], hostOf[r]) << "rank " << r << ": a message along the rail to rank " << m.peer;
      EXPECT_EQ(topo[m.peer].localRank, t.localRank) << "rank " << r << ": rank " << m.peer << " is on another rail";
    }
  }
  ASSERT_NO_FATAL_FAILURE(deliver(ranks, &RelayPlan::inside, "inside the host"));
  ASSERT_NO_FATAL_FAILURE(deliver(ranks, &RelayPlan::along, "along the rails"));
  for (int r = 0; r < n; ++r) {
    std::vector<uint8_t> expected(ranks[r].recv.size(), kPoison);
    for (int s = 0; s < n; ++s)
      for (size_t i = 0; i < counts[s][r]; ++i) expected[ranks[r].recvOffsets[s] + i] = blockByte(s, r, i);
    ASSERT_EQ(ranks[r].recv, expected) << "rank " << r << "'s receive buffer";
  }
}

std::vector<uint64_t> hosts(std::initializer_list<int> of) { return std::vector<uint64_t>(of.begin(), of.end()); }

TEST(RelayPlan, EveryBlockArrivesWhereAlltoallvPutsIt) {
  const std::vector<std::pair<std::string, std::vector<uint64_t>>> layouts = {
      {"2 hosts x 2, interleaved", hosts({0, 1, 0, 1})},
      {"2 hosts x 2, grouped", hosts({0, 0, 1, 1})},
      {"3 hosts x 2, placed 0,1,1,2,2,0", hosts({0, 1, 1, 2, 2, 0})},
      {"4 hosts x 3, grouped", hosts({0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3})},
      {"4 hosts x 3, shuffled", hosts({2, 0, 3, 1, 1, 2, 0, 3, 3, 0, 2, 1})},
      {"2 hosts x 5", hosts({1, 0, 0, 1, 1, 0, 1, 0, 0, 1})},
  };
  const uint64_t seed = std::random_device{}();
  for (const auto& [name, hostOf] : layouts)
    for (uint64_t round = 0; round < 5; ++round) {
      SCOPED_TRACE(name + ", seed " + std::to_string(seed + round));
      ASSERT_NO_FATAL_FAILURE(simulate(hostOf, seed + round));
    }
}

}  // namespace
