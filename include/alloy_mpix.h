/*
 * Alloy's MPI extension: MPI collectives on CUDA buffers, called exactly as the MPI function of the same
 * name plus a CUDA stream. See docs/mpi-extension.md.
 *
 * - Every function is collective over comm and enqueues its work on stream, then returns; the data are
 *   in place when the stream reaches that point. Nothing else is needed: the GPU communicator behind comm
 *   is created on the first call and freed with comm (MPI_Comm_free) or at MPI_Finalize.
 * - Buffers that CUDA knows (cudaMalloc, managed or pinned host memory) go through Alloy's GPU engine.
 *   Ordinary (pageable) host memory, and every buffer on a machine without a CUDA device, goes through
 *   the MPI library's own collective after cudaStreamSynchronize(stream): correct, but synchronous.
 *   Every rank of a call must use one kind; a mix (across ranks or within a rank) is MPI_ERR_BUFFER.
 *   Once a call on comm has used the GPU engine, later calls on comm enqueue without any host exchange
 *   and ordinary host memory on comm is MPI_ERR_BUFFER (set ALLOY_MPIX_AGREE=1 for the agreement on
 *   every call); a rank that rejects its arguments then still stops the operation on every rank.
 * - Errors go through comm's error handler with MPI error classes (MPI_ERR_COUNT, MPI_ERR_TYPE,
 *   MPI_ERR_BUFFER, MPI_ERR_COMM, MPI_ERR_ROOT, MPI_ERR_OP, MPI_ERR_ARG, MPI_ERR_OTHER); MPI_Error_string
 *   of the returned code says what was wrong.
 * - Data movement (alltoall(v), bcast, allgather) takes any contiguous datatype; reductions take the
 *   predefined integer and floating-point types Alloy reduces (see docs/mpi-extension.md) and MPI_SUM,
 *   MPI_PROD, MPI_MIN, MPI_MAX.
 */
#ifndef ALLOY_MPIX_H_
#define ALLOY_MPIX_H_

#include <mpi.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ALLOY_MPIX_API __attribute__((visibility("default")))
#else
#define ALLOY_MPIX_API
#endif

/* Defined so that programs can test for the extension with #ifdef, as for other MPIX_ extensions. */
#define ALLOY_MPIX_CUDA 1

ALLOY_MPIX_API int MPIX_Alltoallv_cuda(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                      cudaStream_t stream);
/* Large counts, as MPI-4's MPI_Alltoallv_c. */
ALLOY_MPIX_API int MPIX_Alltoallv_cuda_c(const void *sendbuf, const MPI_Count sendcounts[],
                                        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm comm, cudaStream_t stream);
ALLOY_MPIX_API int MPIX_Alltoall_cuda(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                     cudaStream_t stream);
ALLOY_MPIX_API int MPIX_Allreduce_cuda(const void *sendbuf, void *recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      cudaStream_t stream);
ALLOY_MPIX_API int MPIX_Reduce_cuda(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                   MPI_Op op, int root, MPI_Comm comm, cudaStream_t stream);
ALLOY_MPIX_API int MPIX_Bcast_cuda(void *buffer, int count, MPI_Datatype datatype, int root,
                                  MPI_Comm comm, cudaStream_t stream);
ALLOY_MPIX_API int MPIX_Allgather_cuda(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                      cudaStream_t stream);
ALLOY_MPIX_API int MPIX_Reduce_scatter_block_cuda(const void *sendbuf, void *recvbuf, int recvcount,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                 cudaStream_t stream);

/* The latest call on comm that another rank rejected and this rank has not been told of yet: its error
 * class (MPI_SUCCESS when there is none) and the rejecting rank (MPI_PROC_NULL when none). Such a call
 * moved no data on any rank; this rank learns of it once the call's place on its stream has been
 * reached, from this function or else from its next MPIX call on comm (docs/mpi-extension.md). Local:
 * not collective. */
ALLOY_MPIX_API int MPIX_Cuda_rejection(MPI_Comm comm, int *errorclass, int *rank);

#ifdef __cplusplus
}
#endif

#endif /* ALLOY_MPIX_H_ */
