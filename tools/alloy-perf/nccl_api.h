// NCCL, loaded at run time with dlopen so that alloy-perf builds and runs where NCCL is absent. The
// declarations below are NCCL's ABI written out by hand (no nccl.h needed): its enums are passed as int,
// and its data types and reduction operators are numbered as Alloy's are, so values pass unchanged.
#ifndef ALLOY_PERF_NCCL_API_H_
#define ALLOY_PERF_NCCL_API_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace alloyperf {

typedef struct ncclComm* ncclComm_t;
typedef int ncclResult_t;  // ncclSuccess = 0
typedef struct {
  char internal[128];  // NCCL_UNIQUE_ID_BYTES
} ncclUniqueId;

constexpr ncclResult_t kNcclSuccess = 0;
constexpr ncclResult_t kNcclInvalidArgument = 4;
constexpr ncclResult_t kNcclInvalidUsage = 5;

struct NcclApi {
  std::string path;  // what was loaded
  ncclResult_t (*getUniqueId)(ncclUniqueId* id);
  ncclResult_t (*commInitRank)(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank);
  ncclResult_t (*commDestroy)(ncclComm_t comm);
  ncclResult_t (*allReduce)(const void* send, void* recv, size_t count, int type, int op, ncclComm_t comm,
                            cudaStream_t stream);
  ncclResult_t (*reduce)(const void* send, void* recv, size_t count, int type, int op, int root,
                         ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*broadcast)(const void* send, void* recv, size_t count, int type, int root, ncclComm_t comm,
                            cudaStream_t stream);
  ncclResult_t (*allGather)(const void* send, void* recv, size_t sendCount, int type, ncclComm_t comm,
                            cudaStream_t stream);
  ncclResult_t (*reduceScatter)(const void* send, void* recv, size_t recvCount, int type, int op,
                                ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*send)(const void* buf, size_t count, int type, int peer, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*recv)(void* buf, size_t count, int type, int peer, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  const char* (*getErrorString)(ncclResult_t result);
  ncclResult_t (*getVersion)(int* version);  // optional: null when the library lacks it
};

// Loads $ALLOY_PERF_NCCL_LIB if set, else libnccl.so.2 from the loader's search path, and resolves every
// function above. Returns false with *why set if the library or a required symbol is missing.
bool loadNccl(NcclApi* api, std::string* why);

}  // namespace alloyperf

#endif  // ALLOY_PERF_NCCL_API_H_
