// Descriptions (mpi_ext/describe.h) of the two calls the layer serves that the MPI extension has no
// function for: allgatherv and reduce_scatter with per-rank counts.
#pragma once

#include <mpi.h>

#include "request.h"

namespace alloy_layer {

// Moved as an alltoallv in which every rank sends its one block to every rank.
void describeAllgatherv(const char* function, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        const alloy_mpix::CommShape& shape, alloy_mpix::Request* r);

// The GPU engine's reduce-scatter where every rank's count is the same; otherwise an allreduce into
// stream-ordered scratch, of which each rank keeps its block.
void describeReduceScatter(const char* function, const void* sendbuf, void* recvbuf, const int recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, const alloy_mpix::CommShape& shape,
                           alloy_mpix::Request* r);

}  // namespace alloy_layer
