// The description of each collective call that both the MPIX functions and the layer of standard MPI
// calls (mpi_layer/) hand to their drivers: the regions this rank reads and writes, what is wrong with
// the arguments (for any engine, or for the GPU engine only) and the GPU engine's operation (viaGpu).
// `function` names the caller in messages. MPI's own collective is not described: each entry point passes
// its PMPI_* call to its driver (ViaMpi, request.h), and no call builds it where the GPU engine serves it.
#pragma once

#include <mpi.h>

#include "request.h"

namespace alloy_mpix {

void describeAllreduce(const char* function, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, Request* r);
void describeReduce(const char* function, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int root, const CommShape& shape, Request* r);
void describeReduceScatterBlock(const char* function, const void* sendbuf, void* recvbuf, int recvcount,
                                MPI_Datatype datatype, MPI_Op op, const CommShape& shape, Request* r);
void describeBcast(const char* function, void* buffer, int count, MPI_Datatype datatype, int root,
                   const CommShape& shape, Request* r);
void describeAllgather(const char* function, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, const CommShape& shape, Request* r);
void describeAlltoall(const char* function, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, const CommShape& shape, Request* r);
// Both count forms: int, and MPI_Count counts with MPI_Aint displacements.
void describeAlltoallv(const char* function, const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, const CommShape& shape, Request* r);
void describeAlltoallv(const char* function, const void* sendbuf, const MPI_Count sendcounts[],
                       const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], MPI_Datatype recvtype, const CommShape& shape, Request* r);

}  // namespace alloy_mpix
