// The reducing collectives behind alloyAllReduce, alloyReduce and alloyReduceScatter, open to a PreMulSum
// (scaled_input.h): scalar is NULL for the public functions' behaviour, or this rank's scalar, op then
// being alloySum. lib/nccl calls these for ncclRedOpCreatePreMulSum's operators; the arguments are checked
// as the public functions check them, before anything is enqueued.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "scale_kernel.h"

namespace alloy {

alloyResult_t allReduce(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t datatype, alloyRedOp_t op,
                        const PreMulScalar* scalar, alloyComm_t comm, cudaStream_t stream);
alloyResult_t reduce(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t datatype, alloyRedOp_t op,
                     const PreMulScalar* scalar, int root, alloyComm_t comm, cudaStream_t stream);
alloyResult_t reduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, alloyDataType_t datatype,
                            alloyRedOp_t op, const PreMulScalar* scalar, alloyComm_t comm, cudaStream_t stream);

}  // namespace alloy
