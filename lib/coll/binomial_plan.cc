#include "binomial_plan.h"

namespace alloy {

BinomialNode binomialNode(int n, int root, int me) {
  BinomialNode node;
  const int v = (me - root + n) % n;
  int mask = 1;
  while (mask < n && (v & mask) == 0) mask <<= 1;
  if (v != 0) node.parent = ((v - mask) + root) % n;
  // The root's children are below the first power of two at or above n; a member's, below its lowest bit.
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < n) node.children.push_back((v + mask + root) % n);
  return node;
}

int binomialDepth(int n) {
  int depth = 0;
  while ((1 << depth) < n) ++depth;
  return depth;
}

}  // namespace alloy
