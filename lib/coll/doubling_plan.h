// Recursive doubling among n members, planned as data for one member: the rounds after which every
// member holds the reduction of all n inputs, computed in the same order on every member, so that every
// member holds the same bits. ceil(log2 n) rounds of one partner each where n is a power of two; else p
// is the largest power of two below n, and members p..n-1 first hand their input to member (i - p) and
// take the result back at the end (two rounds more for them and their partners). Planned apart from the
// GPU so that whole groups can be simulated on the host (tests/unit/round_plans_test.cc).
#pragma once

#include <vector>

namespace alloy {

enum class DoublingStep {
  kCombine,   // exchange inputs with the partner; both reduce (lower member first, higher second)
  kTakeIn,    // receive the partner's input and reduce (this member first: its partner is always higher)
  kHandIn,    // send this member's input to the partner; nothing else until kTakeBack
  kHandBack,  // send the result to the partner that handed its input in
  kTakeBack,  // receive the result from the partner this member handed its input to
};

struct DoublingRound {
  DoublingStep step;
  int partner;  // member index
};

// The rounds of member `me` of n (0 <= me < n), in order; none where n is 1.
std::vector<DoublingRound> doublingRounds(int n, int me);

// The most rounds any member of n waits through: ceil(log2 n), plus the two of handing in and back
// where n is not a power of two.
int doublingDepth(int n);

// The same rounds as an allgather, where members pass inputs on instead of reducing them: the members
// whose inputs member `me` (one that combines: below the largest power of two p) holds just before its
// kCombine round at `distance` (the partner is me ^ distance). Its group of `distance` members, then the
// members past p that handed their inputs to that group; non-empty ranges only, in that order. Each is
// contiguous, so that where inputs lie in member order a round moves at most two blocks of memory.
struct MemberRange {
  int first;
  int count;
};
std::vector<MemberRange> doublingHeld(int n, int me, int distance);


}  // namespace alloy
