/*
 * The layer of standard MPI collectives (docs/mpi-layer.md): its entry points in liballoy, one per
 * intercepted function, with that function's C signature. liballoy_mpi.so's definitions of MPI_Allreduce
 * and the rest, and of their Fortran names, call them; a program gets those definitions by linking
 * liballoy_mpi before MPI or by loading it with LD_PRELOAD. Exported from liballoy for liballoy_mpi only;
 * not part of the public API.
 *
 * Each runs the call on Alloy's GPU engine where every rank agrees that it can (GPU memory, datatypes
 * and operations Alloy takes, an intracommunicator), and otherwise calls PMPI_* with the caller's
 * arguments unchanged.
 */
#ifndef ALLOY_LAYER_ENTRY_H_
#define ALLOY_LAYER_ENTRY_H_

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ALLOY_LAYER_API __attribute__((visibility("default")))

ALLOY_LAYER_API int alloy_layer_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                       MPI_Op op, int root, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                           MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
ALLOY_LAYER_API int alloy_layer_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                           MPI_Op op, MPI_Comm comm, MPI_Request *request);
ALLOY_LAYER_API int alloy_layer_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                           MPI_Request *request);

#ifdef __cplusplus
}
#endif

#endif /* ALLOY_LAYER_ENTRY_H_ */
