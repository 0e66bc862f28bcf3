// The per-call agreement through shared memory (mpi_ext/shared_vote.h): every rank's ballot combined by max
// over thousands of votes against the maximum each rank computes itself, on the world and on split
// communicators side by side; every rank falls back together; and a vote never starves a peer that waits
// for this rank's side of a message.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "mpix_test_util.h"
#include "shared_vote.h"

namespace mpixtest {
namespace {

using alloy_mpix::kMaxBallot;
using alloy_mpix::SharedVote;

// The ballot of `rank` in vote k, entry i: fresh for every vote and rank, negative ones among them, and
// computable by every rank (the reference).
int ballotOf(uint32_t seed, int rank, uint64_t k, int i) {
  uint64_t x = (static_cast<uint64_t>(seed) << 40) ^ (k << 16) ^ (static_cast<uint64_t>(rank) << 4) ^ i;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<int>(x % 2001) - 1000;
}

// `votes` votes on comm through vote, each with 1..kMaxBallot entries; the number of results that differ
// from the maximum over every rank's ballot.
int wrongResults(SharedVote* vote, MPI_Comm comm, uint32_t seed, int votes) {
  const int me = rankOf(comm), n = sizeOf(comm);
  int wrong = 0;
  for (int k = 0; k < votes; ++k) {
    const int count = 1 + k % kMaxBallot;
    int ballot[kMaxBallot], all[kMaxBallot];
    for (int i = 0; i < count; ++i) {
      ballot[i] = ballotOf(seed, me, k, i);
      all[i] = 1 << 30;  // poisoned
    }
    vote->maxOf(ballot, all, count);
    for (int i = 0; i < count; ++i) {
      int expected = ballotOf(seed, 0, k, i);
      for (int r = 1; r < n; ++r) expected = std::max(expected, ballotOf(seed, r, k, i));
      wrong += all[i] != expected;
    }
  }
  return wrong;
}

uint32_t agreedSeed() {
  uint32_t seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
  return seed;
}

TEST(SharedVote, MaxOfEveryRanksBallot) {
  std::unique_ptr<SharedVote> vote = SharedVote::create(MPI_COMM_WORLD);
  if (sizeOf(MPI_COMM_WORLD) == 1) {
    EXPECT_EQ(vote, nullptr) << "one rank has nobody to vote with";
    return;
  }
  ASSERT_NE(vote, nullptr) << "every rank of this job runs on one node";
  EXPECT_EQ(wrongResults(vote.get(), MPI_COMM_WORLD, agreedSeed(), 20000), 0);
}

TEST(SharedVote, SplitCommunicatorsSideBySide) {
  if (sizeOf(MPI_COMM_WORLD) < 4) GTEST_SKIP() << "needs 4 ranks for two halves of 2";
  const int me = rankOf(MPI_COMM_WORLD);
  MPI_Comm half = MPI_COMM_NULL, pairs = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &pairs);
  std::unique_ptr<SharedVote> a = SharedVote::create(half), b = SharedVote::create(pairs);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const uint32_t seed = agreedSeed();
  int wrong = 0;
  for (int round = 0; round < 200; ++round) {  // the two communicators' votes interleaved
    wrong += wrongResults(a.get(), half, seed + round, 10);
    wrong += wrongResults(b.get(), pairs, seed ^ round, 10);
  }
  EXPECT_EQ(wrong, 0);
  a.reset();
  b.reset();
  MPI_Comm_free(&half);
  MPI_Comm_free(&pairs);
}

TEST(SharedVote, OneRankWithoutItSendsEveryRankToMpi) {
  if (sizeOf(MPI_COMM_WORLD) == 1) GTEST_SKIP() << "needs 2 ranks";
  const bool last = rankOf(MPI_COMM_WORLD) == sizeOf(MPI_COMM_WORLD) - 1;
  if (last) setenv("ALLOY_MPIX_SHARED_VOTE", "0", 1);
  std::unique_ptr<SharedVote> vote = SharedVote::create(MPI_COMM_WORLD);
  if (last) unsetenv("ALLOY_MPIX_SHARED_VOTE");
  EXPECT_EQ(vote, nullptr) << "ALLOY_MPIX_SHARED_VOTE=0 on the last rank must keep every rank on MPI";
}

// Rank 0 starts a large send to rank 1 and votes; rank 1 receives it before voting. The send's body
// moves only as rank 0's MPI progresses (a rendezvous, with single-copy transfers off as ALLOY_MPIRUN
// runs them), so a vote that waited without letting MPI progress would never end.
TEST(SharedVote, LetsMpiProgressWhileItWaits) {
  if (sizeOf(MPI_COMM_WORLD) == 1) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::unique_ptr<SharedVote> vote = SharedVote::create(comm);
  ASSERT_NE(vote, nullptr);
  const int me = rankOf(comm);
  std::vector<char> data(size_t{16} << 20, static_cast<char>(me + 1));
  int ballot[1] = {me}, all[1] = {-1};
  if (me == 0) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Isend(data.data(), static_cast<int>(data.size()), MPI_CHAR, 1, 7, comm, &request);
    vote->maxOf(ballot, all, 1);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    if (me == 1) MPI_Recv(data.data(), static_cast<int>(data.size()), MPI_CHAR, 0, 7, comm, MPI_STATUS_IGNORE);
    vote->maxOf(ballot, all, 1);
    if (me == 1) {
      EXPECT_EQ(data[data.size() - 1], 1) << "rank 0's bytes";
    }
  }
  EXPECT_EQ(all[0], sizeOf(comm) - 1);
  vote.reset();
  MPI_Comm_free(&comm);
}

}  // namespace
}  // namespace mpixtest
