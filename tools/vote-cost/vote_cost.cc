// vote-cost [votes]: the host time of one agreement (a ballot of two ints combined by max, the layer's) on
// MPI_COMM_WORLD, through shared memory and through MPI_Allreduce, alternating rounds of each so that both
// see the same machine; prints the median round of each, in us per vote. Run under mpirun with the ranks
// on one node (docs/benchmarks.md, "The per-call agreement").
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "shared_vote.h"

namespace {

double perVote(int votes, const std::function<void(const int*, int*)>& agree) {
  int ballot[2] = {0, 0}, all[2] = {0, 0};
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int k = 0; k < votes; ++k) {
    ballot[0] = k;
    agree(ballot, all);
  }
  return (MPI_Wtime() - start) / votes * 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int votes = argc > 1 ? std::atoi(argv[1]) : 20000;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<alloy_mpix::SharedVote> vote = alloy_mpix::SharedVote::create(MPI_COMM_WORLD);
  if (vote == nullptr) {
    if (rank == 0) std::fprintf(stderr, "vote-cost: no shared vote (one rank, several nodes, or ALLOY_MPIX_SHARED_VOTE=0)\n");
    MPI_Finalize();
    return 1;
  }
  std::vector<double> shared, viaMpi;
  for (int round = 0; round < 5; ++round) {
    shared.push_back(perVote(votes, [&](const int* b, int* a) { vote->maxOf(b, a, 2); }));
    viaMpi.push_back(perVote(votes, [&](const int* b, int* a) {
      MPI_Allreduce(b, a, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }));
  }
  if (rank == 0)
    std::printf("vote-cost: %d ranks, %d votes per round, median of 5 rounds: shared memory %.3f us, "
                "MPI_Allreduce %.3f us per vote\n", size, votes, median(shared), median(viaMpi));
  vote.reset();
  MPI_Finalize();
  return 0;
}
