/*
 * Alloy: MPI-integrated GPU collective communication.
 *
 * Plain C API. Every function returns an alloyResult_t and never aborts or throws on bad input;
 * alloyGetLastError() gives the calling thread's message for its last failure (which argument, which
 * rank, what was expected). Semantics follow NCCL where NCCL has an answer: counts are in elements,
 * a reduction or gather is in place when sendbuff == recvbuff (alltoall and alltoallv never are: their
 * buffers must not overlap), and operations are enqueued on the caller's stream.
 */
#ifndef ALLOY_H_
#define ALLOY_H_

#include <stddef.h>
#include <mpi.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ALLOY_API __attribute__((visibility("default")))
#else
#define ALLOY_API
#endif

#define ALLOY_MAJOR 0
#define ALLOY_MINOR 1
#define ALLOY_PATCH 0
/* Encoded as NCCL encodes its version: major*10000 + minor*100 + patch. */
#define ALLOY_VERSION_CODE (ALLOY_MAJOR * 10000 + ALLOY_MINOR * 100 + ALLOY_PATCH)

typedef enum {
  alloySuccess = 0,
  alloyCudaError = 1,        /* a CUDA call failed */
  alloySystemError = 2,      /* an operating-system call failed (memory, files, sockets) */
  alloyInternalError = 3,    /* a bug in Alloy, or a runtime (PMIx, MPI) that misbehaved */
  alloyInvalidArgument = 4,  /* an argument has a value the function does not accept */
  alloyInvalidUsage = 5,     /* the call is not allowed in this state (MPI not initialised, no GPU, ...) */
  alloyRemoteError = 6,      /* another rank of the communicator failed or reported an error */
  alloyInProgress = 7,       /* an asynchronous operation has not finished yet */
  alloyTimeout = 8,          /* an operation did not complete within the communicator's timeout */
  alloyNotSupported = 9,     /* valid request that this build or machine cannot serve */
  alloyNumResults = 10
} alloyResult_t;

/* Numbered as NCCL numbers them, so that values pass through unchanged. */
typedef enum {
  alloyInt8 = 0, alloyChar = 0,
  alloyUint8 = 1,
  alloyInt32 = 2, alloyInt = 2,
  alloyUint32 = 3,
  alloyInt64 = 4,
  alloyUint64 = 5,
  alloyFloat16 = 6, alloyHalf = 6,
  alloyFloat32 = 7, alloyFloat = 7,
  alloyFloat64 = 8, alloyDouble = 8,
  alloyBfloat16 = 9,
  alloyFloat8e4m3 = 10,
  alloyFloat8e5m2 = 11,
  alloyNumTypes = 12
} alloyDataType_t;

typedef enum {
  alloySum = 0,
  alloyProd = 1,
  alloyMax = 2,
  alloyMin = 3,
  alloyAvg = 4,
  alloyNumOps = 5
} alloyRedOp_t;

typedef struct alloyComm* alloyComm_t;

/*
 * Communicator configuration. The first member is the structure's own size, so that the structure can
 * grow without breaking compiled callers: always start from ALLOY_CONFIG_INITIALIZER.
 */
typedef struct {
  size_t size;           /* sizeof(alloyConfig_t) as the caller was compiled */
  unsigned int magic;    /* ALLOY_CONFIG_MAGIC: catches uninitialised structures */
  int cudaDevice;        /* CUDA device ordinal; -1: the calling thread's current device if the thread has
                            used CUDA, else (local rank) % (visible devices), made current (docs/api.md) */
  int timeoutMs;         /* operation timeout in milliseconds; 0 takes ALLOY_TIMEOUT_MS (default 300000) */
} alloyConfig_t;

#define ALLOY_CONFIG_MAGIC 0xa110c0f6u
#define ALLOY_CONFIG_INITIALIZER { sizeof(alloyConfig_t), ALLOY_CONFIG_MAGIC, -1, 0 }

ALLOY_API const char* alloyGetErrorString(alloyResult_t result);
/* The calling thread's last error message; comm may be NULL. Never NULL; "" after no error. */
ALLOY_API const char* alloyGetLastError(alloyComm_t comm);
ALLOY_API alloyResult_t alloyGetVersion(int* version);

/*
 * Collective over the MPI communicator: every rank must call it. Endpoint addresses are exchanged
 * through PMIx (MPI_Allgather where PMIx is unavailable, or when ALLOY_BOOTSTRAP=mpi). The MPI
 * communicator is duplicated internally and never modified. config may be NULL.
 */
ALLOY_API alloyResult_t alloyCommCreateFromMPI(MPI_Comm mpiComm, const alloyConfig_t* config,
                                               alloyComm_t* comm);
/*
 * Without MPI, and several ranks in one process: one process makes a unique id (it starts the bootstrap's
 * root, a thread of that process) and shares it with every process by any means; each then creates its
 * ranks of the communicator with it.
 */
#define ALLOY_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[ALLOY_UNIQUE_ID_BYTES];
} alloyUniqueId;
ALLOY_API alloyResult_t alloyGetUniqueId(alloyUniqueId* id);
/*
 * Collective over the nranks ranks that pass id: creates this process's count ranks at once (a thread each):
 * comms[i] is rank ranks[i], on CUDA device devices[i] (devices NULL: config's device rule for each). Each rank
 * of a process needs a GPU of its own. All or none: on failure no comms[i] is written. config may be NULL.
 */
ALLOY_API alloyResult_t alloyCommInitRanks(const alloyUniqueId* id, int nranks, int count, const int ranks[],
                                           const int devices[], const alloyConfig_t* config, alloyComm_t comms[]);
/*
 * Collective over the MPI communicator: every MPI process creates its count ranks of one communicator at
 * once, comms[i] on devices[i] (NULL: config's device rule for each); ranks are numbered by MPI rank, then
 * in order (process r's first rank is the sum of the counts of processes 0 .. r-1). Endpoints travel over
 * the unique-id bootstrap, whose id travels over MPI. Destroy them with alloyCommDestroyAll.
 */
ALLOY_API alloyResult_t alloyCommCreateFromMPIRanks(MPI_Comm mpiComm, int count, const int devices[],
                                                    const alloyConfig_t* config, alloyComm_t comms[]);
/* alloyCommDestroy of count communicators at once (a thread each): ranks of one communicator that one thread
 * drives must be destroyed together, since each destroy waits for every rank. */
ALLOY_API alloyResult_t alloyCommDestroyAll(alloyComm_t comms[], int count);
/* Collective; waits for the communicator's outstanding work on the device and for every rank (at most the
 * communicator's timeout: alloyTimeout; after a rank's alloyCommAbort every rank must abort), then frees
 * everything. */
ALLOY_API alloyResult_t alloyCommDestroy(alloyComm_t comm);
/* Local, not collective: stops this rank's kernels that wait on peers, then frees the communicator. */
ALLOY_API alloyResult_t alloyCommAbort(alloyComm_t comm);
/* alloySuccess, or the error a kernel or peer reported (alloyTimeout, alloyRemoteError, ...). */
ALLOY_API alloyResult_t alloyCommGetAsyncError(alloyComm_t comm, alloyResult_t* asyncError);
ALLOY_API alloyResult_t alloyCommCount(const alloyComm_t comm, int* count);
ALLOY_API alloyResult_t alloyCommUserRank(const alloyComm_t comm, int* rank);
/* CUDA device ordinal of this rank; -1 for a host-only communicator (machine without a CUDA device). */
ALLOY_API alloyResult_t alloyCommCuDevice(const alloyComm_t comm, int* device);

/* Collectives, in NCCL's argument order. All are enqueued on stream and return at once. */
ALLOY_API alloyResult_t alloyAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       alloyDataType_t datatype, alloyRedOp_t op, alloyComm_t comm,
                                       cudaStream_t stream);
ALLOY_API alloyResult_t alloyBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                       alloyDataType_t datatype, int root, alloyComm_t comm,
                                       cudaStream_t stream);
ALLOY_API alloyResult_t alloyReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    alloyDataType_t datatype, alloyRedOp_t op, int root,
                                    alloyComm_t comm, cudaStream_t stream);
/* sendcount elements per rank; recvbuff holds nranks * sendcount. */
ALLOY_API alloyResult_t alloyAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                       alloyDataType_t datatype, alloyComm_t comm,
                                       cudaStream_t stream);
/* recvcount elements per rank; sendbuff holds nranks * recvcount. */
ALLOY_API alloyResult_t alloyReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                           alloyDataType_t datatype, alloyRedOp_t op,
                                           alloyComm_t comm, cudaStream_t stream);
/* count elements to and from every rank: sendbuff and recvbuff hold nranks * count. */
ALLOY_API alloyResult_t alloyAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                      alloyDataType_t datatype, alloyComm_t comm,
                                      cudaStream_t stream);
/*
 * Counts and displacements are host arrays of nranks size_t, in elements. relaybuff is optional device
 * scratch the caller may offer (NULL always works); see docs/api.md for its size and use.
 */
ALLOY_API alloyResult_t alloyAlltoAllv(const void* sendbuff, const size_t sendcounts[],
                                       const size_t sdispls[], void* recvbuff,
                                       const size_t recvcounts[], const size_t rdispls[],
                                       void* relaybuff, alloyDataType_t datatype, alloyComm_t comm,
                                       cudaStream_t stream);
ALLOY_API alloyResult_t alloySend(const void* sendbuff, size_t count, alloyDataType_t datatype,
                                  int peer, alloyComm_t comm, cudaStream_t stream);
ALLOY_API alloyResult_t alloyRecv(void* recvbuff, size_t count, alloyDataType_t datatype, int peer,
                                  alloyComm_t comm, cudaStream_t stream);
/* Operations between GroupStart and GroupEnd are fused into one launch at GroupEnd. Groups nest. */
ALLOY_API alloyResult_t alloyGroupStart(void);
ALLOY_API alloyResult_t alloyGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* ALLOY_H_ */
