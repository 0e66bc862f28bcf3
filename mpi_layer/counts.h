// How many calls of each intercepted function the layer passed to the MPI library and how many it ran on
// the GPU engine, per process: what a program (or a test) sees of the layer without asking it anything.
// With ALLOY_MPI_LAYER_REPORT=1 every rank prints its counts at MPI_Finalize (docs/environment.md).
#pragma once

namespace alloy_layer {

enum class Call : int {
  Allreduce,
  Reduce,
  Bcast,
  Allgather,
  Allgatherv,
  ReduceScatterBlock,
  ReduceScatter,
  Alltoall,
  Alltoallv,
  Iallreduce,
  Ialltoallv,
  kCount
};

// "MPI_Allreduce" and so on: the name in messages and in the report.
const char* callName(Call call);

void tallyCall(Call call, bool diverted);

struct Tally {
  long long passed = 0, diverted = 0;
};
Tally tallyOf(Call call);

}  // namespace alloy_layer
