// The schedules of several rounds between hosts, planned as data and simulated on the host for whole
// groups of 1 to 40 members. Recursive doubling (doubling_plan.h): each member's value is the expression
// of the reduction it holds ("(x0+x1)"), each round executed when both its members reach it, as the
// point-to-point engine pairs launches; every member must end with the same expression (the same bits on
// the GPU), holding every input exactly once, in the planned number of rounds, with no member left
// waiting. The binomial tree (binomial_plan.h): from every root, every member receives once, from a
// member that already holds the data, within ceil(log2 n) levels. And the cost rule that picks them
// (round_cost.h) on the layouts the model was worked through for.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "binomial_plan.h"
#include "doubling_plan.h"
#include "round_cost.h"

namespace {

using alloy::DoublingRound;
using alloy::DoublingStep;

// The step a partner must be at for `step` to run.
DoublingStep counterpart(DoublingStep step) {
  switch (step) {
    case DoublingStep::kTakeIn: return DoublingStep::kHandIn;
    case DoublingStep::kHandIn: return DoublingStep::kTakeIn;
    case DoublingStep::kHandBack: return DoublingStep::kTakeBack;
    case DoublingStep::kTakeBack: return DoublingStep::kHandBack;
    default: return DoublingStep::kCombine;
  }
}

// Runs the doubling plans of n members to the end: execute(a, round) runs for each pair of rounds that
// meet, once, from member a's side (round.partner is the other); fails the test where no round can run
// while some remain.
template <typename Execute>
void runRounds(int n, Execute execute) {
  std::vector<std::vector<DoublingRound>> rounds(n);
  std::vector<size_t> next(n, 0);
  for (int m = 0; m < n; ++m) rounds[m] = alloy::doublingRounds(n, m);
  for (bool progress = true; progress;) {
    progress = false;
    for (int a = 0; a < n; ++a) {
      if (next[a] == rounds[a].size()) continue;
      const DoublingRound ra = rounds[a][next[a]];
      EXPECT_GE(ra.partner, 0);
      EXPECT_LT(ra.partner, n);
      EXPECT_NE(ra.partner, a);
      const int b = ra.partner;
      if (next[b] == rounds[b].size()) continue;
      const DoublingRound rb = rounds[b][next[b]];
      if (rb.partner != a || rb.step != counterpart(ra.step)) continue;
      execute(a, ra);
      ++next[a];
      ++next[b];
      progress = true;
    }
  }
  for (int m = 0; m < n; ++m)
    EXPECT_EQ(next[m], rounds[m].size()) << "member " << m << " of " << n << " left waiting";
}

struct Member {
  std::string value;
};

// Recursive doubling as a reduction: each member's value is the expression it holds.
std::vector<Member> simulate(int n) {
  std::vector<Member> members(n);
  for (int m = 0; m < n; ++m) members[m].value = "x" + std::to_string(m);
  runRounds(n, [&](int a, const DoublingRound& ra) {
      Member& ma = members[a];
      Member& mb = members[ra.partner];
      const int lo = a < ra.partner ? a : ra.partner;
      const std::string combined = "(" + members[lo].value + "+" + members[a + ra.partner - lo].value + ")";
      switch (ra.step) {
        case DoublingStep::kCombine:
          ma.value = mb.value = combined;
          break;
        case DoublingStep::kTakeIn:
          EXPECT_LT(a, ra.partner) << "the member taking an input in must be the lower";
          ma.value = combined;
          break;
        case DoublingStep::kHandIn:
          EXPECT_GT(a, ra.partner);
          mb.value = combined;
          break;
        case DoublingStep::kHandBack:
          mb.value = ma.value;
          break;
        case DoublingStep::kTakeBack:
          ma.value = mb.value;
          break;
      }
  });
  return members;
}

TEST(DoublingPlan, EveryMemberEndsWithTheSameReductionOfEveryInputOnce) {
  for (int n = 1; n <= 40; ++n) {
    const std::vector<Member> members = simulate(n);
    for (int m = 0; m < n; ++m) {
      EXPECT_EQ(members[m].value, members[0].value) << "member " << m << " of " << n;
    }
    for (int i = 0; i < n; ++i) {
      const std::regex input("x" + std::to_string(i) + "\\b");
      const auto found = std::distance(std::sregex_iterator(members[0].value.begin(), members[0].value.end(), input),
                                       std::sregex_iterator());
      EXPECT_EQ(found, 1) << "input " << i << " in " << members[0].value << " (" << n << " members)";
    }
  }
}

// The same rounds as an allgather (doublingHeld): each member's set of inputs, where a member may send only
// inputs it holds and every member must end with all n. A combine round moves the ranges each side holds
// (one or two), a hand-in the member's own input, a hand-back all n.
TEST(DoublingPlan, GatheringEndsWithEveryInputOnEveryMember) {
  for (int n = 1; n <= 40; ++n) {
    std::vector<std::vector<int>> has(n, std::vector<int>(n, 0));
    for (int m = 0; m < n; ++m) has[m][m] = 1;
    // `held`: what the sender held when the round began (in a combine both sides send at once).
    auto give = [&](const std::vector<std::vector<int>>& held, int from, int to, int first, int count) {
      EXPECT_GT(count, 0) << n << " members";
      for (int u = first; u < first + count; ++u) {
        ASSERT_TRUE(u >= 0 && u < n) << "input " << u << " of " << n;
        EXPECT_EQ(held[from][u], 1) << "member " << from << " sends input " << u << " it does not hold (" << n
                                    << " members)";
        has[to][u] = 1;
      }
    };
    runRounds(n, [&](int a, const DoublingRound& r) {
      const int b = r.partner;
      switch (r.step) {
        case DoublingStep::kCombine: {
          const std::vector<std::vector<int>> before = has;
          for (const alloy::MemberRange& range : alloy::doublingHeld(n, a, a ^ b))
            give(before, a, b, range.first, range.count);
          for (const alloy::MemberRange& range : alloy::doublingHeld(n, b, a ^ b))
            give(before, b, a, range.first, range.count);
          break;
        }
        case DoublingStep::kTakeIn: give(has, b, a, b, 1); break;
        case DoublingStep::kHandIn: give(has, a, b, a, 1); break;
        case DoublingStep::kHandBack: give(has, a, b, 0, n); break;
        case DoublingStep::kTakeBack: give(has, b, a, 0, n); break;
      }
    });
    for (int m = 0; m < n; ++m)
      for (int u = 0; u < n; ++u)
        EXPECT_EQ(has[m][u], 1) << "member " << m << " lacks input " << u << " (" << n << " members)";
  }
}

TEST(DoublingPlan, RoundsAreLogarithmic) {
  for (int n = 1; n <= 40; ++n) {
    int log2 = 0;
    while ((2 << log2) <= n) ++log2;
    const bool folded = (1 << log2) != n;
    for (int m = 0; m < n; ++m) {
      const size_t rounds = alloy::doublingRounds(n, m).size();
      const bool handsIn = m >= (1 << log2);
      const bool takesIn = m < n - (1 << log2);
      const size_t expected = handsIn ? 2 : log2 + (takesIn ? 2 : 0);
      EXPECT_EQ(rounds, expected) << "member " << m << " of " << n << (folded ? " (folded)" : "");
    }
  }
}

TEST(DoublingPlan, DepthIsTheLongestMembersRounds) {
  for (int n = 1; n <= 40; ++n) {
    size_t longest = 0;
    for (int m = 0; m < n; ++m) longest = std::max(longest, alloy::doublingRounds(n, m).size());
    EXPECT_EQ(static_cast<size_t>(alloy::doublingDepth(n)), longest) << n << " members";
  }
}

// The choice on layouts the model was worked through for (docs/architecture.md): one rank per host keeps
// the flat round up to a few dozen hosts; hosts of 8 GPUs, whose host step removes 7 peers per rank from
// the network round, take doubling from 2 hosts; the layouts of one GPU machine stay flat at small sizes.
TEST(RoundCost, DoublingPaysWhereTheFlatRoundServesManyPeers) {
  EXPECT_FALSE(alloy::fewerRoundsPay(1, 8, alloy::doublingDepth(2), 8, false));  // 2 hosts x 1
  EXPECT_FALSE(alloy::fewerRoundsPay(3, 4096, alloy::doublingDepth(4), 4096, false));  // 4 hosts x 1
  EXPECT_FALSE(alloy::fewerRoundsPay(2, 8, alloy::doublingDepth(2), 8, true));  // 2 hosts x 2
  EXPECT_FALSE(alloy::fewerRoundsPay(15, 8, alloy::doublingDepth(16), 8, false));  // 16 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(31, 4096, alloy::doublingDepth(32), 4096, false));  // 32 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(8, 8, alloy::doublingDepth(2), 8, true));  // 2 hosts x 8
  EXPECT_TRUE(alloy::fewerRoundsPay(1016, 65536, alloy::doublingDepth(128), 65536, true));  // 128 hosts x 8
}

// A reduce-scatter's flat round sends each peer one part (1/n of the buffer); doubling, run as an allreduce,
// passes the whole buffer each round: it pays at many hosts for small buffers only.
TEST(RoundCost, ReduceScatterDoublingPaysForSmallBuffersAtManyHosts) {
  auto rule = [](int hosts, size_t whole) {
    return alloy::fewerRoundsPay(hosts - 1, whole / hosts, alloy::doublingDepth(hosts), whole, false);
  };
  EXPECT_FALSE(rule(4, 4096));        // 4 hosts x 1: 49 us flat, 75 us doubling
  EXPECT_TRUE(rule(32, 4096));        // 32 hosts x 1: 217 us flat, 187 us doubling
  EXPECT_FALSE(rule(32, 256 << 10));  // 32 hosts x 1: 300 us flat, 617 us doubling
}

TEST(BinomialPlan, EveryMemberReceivesOnceFromAHolderWithinTheDepth) {
  for (int n = 1; n <= 40; ++n) {
    for (int root = 0; root < n; root += (n > 8 ? 3 : 1)) {
      std::vector<alloy::BinomialNode> nodes(n);
      for (int m = 0; m < n; ++m) nodes[m] = alloy::binomialNode(n, root, m);
      EXPECT_EQ(nodes[root].parent, -1) << n << " members, root " << root;
      // Each member's level: when it holds the data. Its children are sent to in order from the next level.
      std::vector<int> level(n, -1), parentsSeen(n, 0);
      level[root] = 0;
      for (bool progress = true; progress;) {
        progress = false;
        for (int m = 0; m < n; ++m) {
          if (level[m] < 0) continue;
          for (int c : nodes[m].children) {
            ASSERT_GE(c, 0);
            ASSERT_LT(c, n);
            EXPECT_EQ(nodes[c].parent, m) << "child " << c << " of " << m << " (" << n << " members, root " << root << ")";
            if (level[c] < 0) {
              level[c] = level[m] + 1;
              ++parentsSeen[c];
              progress = true;
            }
          }
        }
      }
      for (int m = 0; m < n; ++m) {
        EXPECT_GE(level[m], 0) << "member " << m << " never receives (" << n << " members, root " << root << ")";
        EXPECT_LE(level[m], alloy::binomialDepth(n)) << "member " << m;
        if (m != root) EXPECT_EQ(parentsSeen[m], 1) << "member " << m;
      }
    }
  }
}

TEST(RoundCost, TreePaysForSmallBroadcastsBetweenManyHosts) {
  EXPECT_FALSE(alloy::fewerRoundsPay(1, 8, alloy::binomialDepth(2), 8, false));  // 2 hosts x 1
  EXPECT_FALSE(alloy::fewerRoundsPay(3, 8, alloy::binomialDepth(4), 8, false));  // 4 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(127, 4096, alloy::binomialDepth(128), 4096, false));  // 128 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(1016, 4096, alloy::binomialDepth(128), 4096, true));  // 128 hosts x 8
}

}  // namespace
