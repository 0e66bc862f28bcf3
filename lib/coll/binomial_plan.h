// A binomial tree over n members rooted at member `root`, planned as data for one member: whom it
// receives from and whom it sends to. Member v (counted from the root, v = (me - root) mod n) receives
// from v minus its lowest set bit and sends to v + 2^k for every 2^k below that bit, the farthest
// first (the largest subtree). Every member but the root receives once, and the tree is ceil(log2 n)
// levels deep. Planned apart from the GPU so that whole trees can be simulated on the host
// (tests/unit/round_plans_test.cc).
#pragma once

#include <vector>

namespace alloy {

struct BinomialNode {
  int parent = -1;            // member index; -1 at the root
  std::vector<int> children;  // member indices, in the order to send
};

BinomialNode binomialNode(int n, int root, int me);

// Levels of the tree: ceil(log2 n); 0 where n is 1.
int binomialDepth(int n);

}  // namespace alloy
