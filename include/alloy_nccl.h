/*
 * What Alloy's libnccl.so.2 offers beyond NCCL's own nccl.h (docs/nccl-compat.md). Include after, or
 * instead of, <nccl.h>; link with that library.
 */
#ifndef ALLOY_NCCL_H_
#define ALLOY_NCCL_H_

#include <stddef.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * VCCL's all-to-all with variable counts, with Alloy's argument types: counts and displacements are host
 * arrays of nranks size_t, in elements of datatype; relaybuff is optional device scratch (NULL always
 * works; docs/api.md, alloyAlltoAllv). Buffers must not overlap.
 */
ncclResult_t ncclAlltoAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[], void* recvbuff,
                           const size_t recvcounts[], const size_t rdispls[], void* relaybuff,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);

/*
 * Which library this is: "Alloy <version> (NCCL API <major>.<minor>.<patch>)", the NCCL version being that of
 * the nccl.h it was built against (ncclGetVersion reports that one, so that programs' feature checks hold).
 * Only Alloy's libnccl.so.2 has it: look it up with dlsym to tell it from NVIDIA's.
 */
const char* alloyNcclIdentity(void);

#ifdef __cplusplus
}
#endif

#endif /* ALLOY_NCCL_H_ */
