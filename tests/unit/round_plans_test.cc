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

struct Member {
  std::vector<DoublingRound> rounds;
  size_t next = 0;
  std::string value;
};

// Runs the plans of n members to the end; fails the test where no round can run while some remain.
std::vector<Member> simulate(int n) {
  std::vector<Member> members(n);
  for (int m = 0; m < n; ++m) {
    members[m].rounds = alloy::doublingRounds(n, m);
    members[m].value = "x" + std::to_string(m);
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (int a = 0; a < n; ++a) {
      Member& ma = members[a];
      if (ma.next == ma.rounds.size()) continue;
      const DoublingRound ra = ma.rounds[ma.next];
      EXPECT_GE(ra.partner, 0);
      EXPECT_LT(ra.partner, n);
      EXPECT_NE(ra.partner, a);
      Member& mb = members[ra.partner];
      if (mb.next == mb.rounds.size()) continue;
      const DoublingRound rb = mb.rounds[mb.next];
      if (rb.partner != a || rb.step != counterpart(ra.step)) continue;
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
      ++ma.next;
      ++mb.next;
      progress = true;
    }
  }
  for (int m = 0; m < n; ++m)
    EXPECT_EQ(members[m].next, members[m].rounds.size()) << "member " << m << " of " << n << " left waiting";
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
  EXPECT_FALSE(alloy::fewerRoundsPay(1, alloy::doublingDepth(2), false, 8));         // 2 hosts x 1
  EXPECT_FALSE(alloy::fewerRoundsPay(3, alloy::doublingDepth(4), false, 4096));      // 4 hosts x 1
  EXPECT_FALSE(alloy::fewerRoundsPay(2, alloy::doublingDepth(2), true, 8));          // 2 hosts x 2
  EXPECT_FALSE(alloy::fewerRoundsPay(15, alloy::doublingDepth(16), false, 8));       // 16 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(31, alloy::doublingDepth(32), false, 4096));     // 32 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(8, alloy::doublingDepth(2), true, 8));           // 2 hosts x 8
  EXPECT_TRUE(alloy::fewerRoundsPay(1016, alloy::doublingDepth(128), true, 65536));  // 128 hosts x 8
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
  EXPECT_FALSE(alloy::fewerRoundsPay(1, alloy::binomialDepth(2), false, 8));         // 2 hosts x 1
  EXPECT_FALSE(alloy::fewerRoundsPay(3, alloy::binomialDepth(4), false, 8));         // 4 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(127, alloy::binomialDepth(128), false, 4096));   // 128 hosts x 1
  EXPECT_TRUE(alloy::fewerRoundsPay(1016, alloy::binomialDepth(128), true, 4096));   // 128 hosts x 8
}

}  // namespace
