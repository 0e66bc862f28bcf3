// The per-call agreement of the MPIX functions and of the layer of standard calls through shared memory:
// every rank's ballot (a few ints) combined by max and known to every rank, where all ranks of the
// communicator share one node. Each rank publishes its ballot in a slot of its own on a page that all of
// them map and reads the others' slots, instead of an MPI_Allreduce (which the layer's cost on 4 x H100
// put near 3 us per call: docs/benchmarks.md, "Session 8"). Why it is safe to reuse the slots: votes
// alternate between two sets of slots, and a rank can publish vote k + 2 into the set of vote k only after
// it has seen every rank publish vote k + 1, which each does only after reading all of vote k.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace alloy_mpix {

constexpr int kMaxBallot = 6;  // ints per ballot

class SharedVote {
 public:
  // Collective over comm: every rank calls it at the same point. nullptr on every rank alike where the
  // ranks do not all share one node, where there is one rank, where ALLOY_MPIX_SHARED_VOTE is 0 on some
  // rank, or where some rank could not map the page; the caller then agrees through MPI.
  static std::unique_ptr<SharedVote> create(MPI_Comm comm);
  ~SharedVote();
  SharedVote(const SharedVote&) = delete;
  SharedVote& operator=(const SharedVote&) = delete;

  // all[i] = the largest ballot[i] over the ranks, for i < count (at most kMaxBallot). Collective: every
  // rank calls it at the same point with the same count. While it waits for a peer it lets MPI progress
  // (through comm), as a waiting MPI_Allreduce would: a peer may be waiting for this rank's part of a
  // nonblocking operation before it can come to the vote.
  void maxOf(const int* ballot, int* all, int count);

 private:
  struct alignas(64) Slot {
    uint64_t vote;  // the number of the vote whose ballot the slot holds, 0 before the first
    int32_t ballot[kMaxBallot];
  };
  SharedVote(MPI_Comm comm, Slot* slots, size_t bytes, int rank, int size);
  void awaitVote(const Slot& slot, uint64_t vote) const;

  MPI_Comm comm_;
  Slot* slots_;  // two sets of `size` slots, rank r's at r in each
  size_t bytes_;
  int rank_, size_;
  bool yield_;  // waits yield the core (ranks outnumber this process's cores)
  uint64_t votes_ = 0;
};

}  // namespace alloy_mpix
