#include "doubling_plan.h"

#include <algorithm>

namespace alloy {

std::vector<DoublingRound> doublingRounds(int n, int me) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;  // members p .. n-1, each paired with member (i - p) < extra
  std::vector<DoublingRound> rounds;
  if (me >= p) {
    rounds.push_back({DoublingStep::kHandIn, me - p});
    rounds.push_back({DoublingStep::kTakeBack, me - p});
    return rounds;
  }
  if (me < extra) rounds.push_back({DoublingStep::kTakeIn, me + p});
  for (int distance = 1; distance < p; distance *= 2) rounds.push_back({DoublingStep::kCombine, me ^ distance});
  if (me < extra) rounds.push_back({DoublingStep::kHandBack, me + p});
  return rounds;
}

std::vector<MemberRange> doublingHeld(int n, int me, int distance) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int base = me & ~(distance - 1);
  std::vector<MemberRange> held{{base, distance}};
  // Member i < n - p took member i + p's input in.
  const int handedIn = std::min(n, p + base + distance) - (p + base);
  if (handedIn > 0) held.push_back({p + base, handedIn});
  return held;
}

int doublingDepth(int n) {
  int p = 1, depth = 0;
  while (p * 2 <= n) {
    p *= 2;
    ++depth;
  }
  return depth + (p == n ? 0 : 2);
}

}  // namespace alloy
