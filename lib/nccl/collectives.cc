// The collectives, send/recv, and VCCL's ncclAlltoAllv, passed to Alloy's: the datatypes and built-in operators
// are numbered alike, so values pass through; Alloy checks everything else and its message names the
// argument. The operators of ncclRedOpCreatePreMulSum go to Alloy's reductions as a sum and this rank's
// scalar (reductions.h). Gather and scatter, which Alloy has no collective for, are groups of sends and
// receives.
#include "alloy_nccl.h"
#include "datatype.h"
#include "device_guard.h"
#include "error.h"
#include "nccl_comm.h"
#include "reductions.h"
#include "stream_scratch.h"

static_assert(ncclInt8 == static_cast<int>(alloyInt8) && ncclUint8 == static_cast<int>(alloyUint8) &&
                  ncclInt32 == static_cast<int>(alloyInt32) && ncclUint32 == static_cast<int>(alloyUint32) &&
                  ncclInt64 == static_cast<int>(alloyInt64) && ncclUint64 == static_cast<int>(alloyUint64) &&
                  ncclFloat16 == static_cast<int>(alloyFloat16) && ncclFloat32 == static_cast<int>(alloyFloat32) &&
                  ncclFloat64 == static_cast<int>(alloyFloat64) && ncclBfloat16 == static_cast<int>(alloyBfloat16) &&
                  ncclFloat8e4m3 == static_cast<int>(alloyFloat8e4m3) &&
                  ncclFloat8e5m2 == static_cast<int>(alloyFloat8e5m2) && ncclNumTypes == static_cast<int>(alloyNumTypes),
              "ncclDataType_t and alloyDataType_t number their types alike");
static_assert(ncclSum == static_cast<int>(alloySum) && ncclProd == static_cast<int>(alloyProd) &&
                  ncclMax == static_cast<int>(alloyMax) && ncclMin == static_cast<int>(alloyMin) &&
                  ncclAvg == static_cast<int>(alloyAvg) && ncclNumOps == static_cast<int>(alloyNumOps),
              "ncclRedOp_t and alloyRedOp_t number the built-in operators alike");

using namespace alloy::nccl;

namespace {

alloyDataType_t type(ncclDataType_t datatype) { return static_cast<alloyDataType_t>(datatype); }

// Where every call begins: a fresh last error, and the communicator.
alloyResult_t check(const ncclComm* comm, const char* function) {
  alloy::clearLastError();
  return checkComm(comm, function);
}

// NCCL's alltoall may run in place (nccl-tests does), Alloy's may not (every block would be overwritten while
// peers still read it): the send blocks go to stream-ordered scratch first, which CUDA graphs capture as an
// allocation node, and the scratch is freed on the stream once the operation is done with it. The
// allocation is made on the communicator's device: NCCL's callers need not make it current (nccl-tests -g
// calls every communicator of a group with the last device current).
alloyResult_t inPlaceAlltoAll(void* buffer, size_t count, alloyDataType_t datatype, alloyComm_t comm, int device,
                              cudaStream_t stream) {
  alloy::DeviceGuard guard(device);
  int nranks = 0;
  ALLOY_TRY(alloyCommCount(comm, &nranks));
  const size_t elementBytes = alloy::dataTypeSize(datatype);
  if (elementBytes == 0)
    return alloy::fail(alloyInvalidArgument, "ncclAlltoAll: datatype is %d; expected an ncclDataType_t",
                       static_cast<int>(datatype));
  const size_t bytes = count * elementBytes * static_cast<size_t>(nranks);
  alloy::StreamScratch scratch(comm, stream);  // freed on the stream when this function returns
  ALLOY_TRY(scratch.allocate(bytes, "ncclAlltoAll in place"));
  const cudaError_t err = cudaMemcpyAsync(scratch.get(), buffer, bytes, cudaMemcpyDeviceToDevice, stream);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return alloy::fail(alloyCudaError, "ncclAlltoAll in place: staging %zu bytes on the stream failed: %s", bytes,
                       cudaGetErrorString(err));
  }
  return alloyAlltoAll(scratch.get(), buffer, count, datatype, comm, stream);
}

// The communicator, and the operator as Alloy's reductions take it: a built-in one passes through; one of
// ncclRedOpCreatePreMulSum, checked against the call's datatype, is a sum of scaled inputs.
alloyResult_t checkReduction(const ncclComm* comm, ncclRedOp_t op, ncclDataType_t datatype, const char* function,
                             ResolvedOp* reduction) {
  ALLOY_TRY(check(comm, function));
  return comm->redOps.resolve(op, datatype, function, reduction);
}

// Gather (toRoot) or scatter: one block of count elements between root and every rank, as one group.
alloyResult_t rootedExchange(bool toRoot, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                             int root, ncclComm_t comm, cudaStream_t stream, const char* function) {
  ALLOY_TRY(check(comm, function));
  ALLOY_TRY(alloy::checkDataType(type(datatype), function));
  int nranks = 0, rank = 0;
  ALLOY_TRY(alloyCommCount(comm->alloy, &nranks));
  ALLOY_TRY(alloyCommUserRank(comm->alloy, &rank));
  if (root < 0 || root >= nranks)
    return alloy::fail(alloyInvalidArgument, "%s: root is %d; expected 0 <= root < %d", function, root, nranks);
  const size_t block = count * alloy::dataTypeSize(type(datatype));
  ALLOY_TRY(alloyGroupStart());
  alloyResult_t result = alloySuccess;
  if (rank == root) {
    for (int peer = 0; peer < nranks && result == alloySuccess; ++peer) {
      result = toRoot ? alloyRecv(static_cast<char*>(recvbuff) + peer * block, count, type(datatype), peer, comm->alloy, stream)
                      : alloySend(static_cast<const char*>(sendbuff) + peer * block, count, type(datatype), peer,
                                  comm->alloy, stream);
    }
  }
  if (result == alloySuccess)
    result = toRoot ? alloySend(sendbuff, count, type(datatype), root, comm->alloy, stream)
                    : alloyRecv(recvbuff, count, type(datatype), root, comm->alloy, stream);
  // The group is closed whatever happened; a failed operation inside it makes alloyGroupEnd enqueue nothing.
  const alloyResult_t ended = alloyGroupEnd();
  return result != alloySuccess ? result : ended;
}

}  // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  ResolvedOp r{};
  ALLOY_NCCL_TRY(checkReduction(comm, op, datatype, "ncclAllReduce", &r));
  return toNccl(alloy::allReduce(sendbuff, recvbuff, count, type(datatype), r.op, r.scalar, comm->alloy, stream));
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  ResolvedOp r{};
  ALLOY_NCCL_TRY(checkReduction(comm, op, datatype, "ncclReduce", &r));
  return toNccl(alloy::reduce(sendbuff, recvbuff, count, type(datatype), r.op, r.scalar, root, comm->alloy, stream));
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  ResolvedOp r{};
  ALLOY_NCCL_TRY(checkReduction(comm, op, datatype, "ncclReduceScatter", &r));
  return toNccl(alloy::reduceScatter(sendbuff, recvbuff, recvcount, type(datatype), r.op, r.scalar, comm->alloy,
                                     stream));
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  ALLOY_NCCL_TRY(check(comm, "ncclBroadcast"));
  return toNccl(alloyBroadcast(sendbuff, recvbuff, count, type(datatype), root, comm->alloy, stream));
}

// The in-place broadcast of NCCL's first API.
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  ALLOY_NCCL_TRY(check(comm, "ncclBcast"));
  return toNccl(alloyBroadcast(buff, buff, count, type(datatype), root, comm->alloy, stream));
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  ALLOY_NCCL_TRY(check(comm, "ncclAllGather"));
  return toNccl(alloyAllGather(sendbuff, recvbuff, sendcount, type(datatype), comm->alloy, stream));
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  ALLOY_NCCL_TRY(check(comm, "ncclAlltoAll"));
  int device = -1;
  ALLOY_NCCL_TRY(alloyCommCuDevice(comm->alloy, &device));
  // A host-only communicator refuses the call itself, naming why.
  if (sendbuff != recvbuff || count == 0 || device < 0)
    return toNccl(alloyAlltoAll(sendbuff, recvbuff, count, type(datatype), comm->alloy, stream));
  return toNccl(inPlaceAlltoAll(recvbuff, count, type(datatype), comm->alloy, device, stream));
}

ncclResult_t ncclAlltoAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[], void* recvbuff,
                           const size_t recvcounts[], const size_t rdispls[], void* relaybuff, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  ALLOY_NCCL_TRY(check(comm, "ncclAlltoAllv"));
  return toNccl(alloyAlltoAllv(sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, relaybuff, type(datatype),
                               comm->alloy, stream));
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return toNccl(rootedExchange(true, sendbuff, recvbuff, count, datatype, root, comm, stream, "ncclGather"));
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return toNccl(rootedExchange(false, sendbuff, recvbuff, count, datatype, root, comm, stream, "ncclScatter"));
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  ALLOY_NCCL_TRY(check(comm, "ncclSend"));
  return toNccl(alloySend(sendbuff, count, type(datatype), peer, comm->alloy, stream));
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  ALLOY_NCCL_TRY(check(comm, "ncclRecv"));
  return toNccl(alloyRecv(recvbuff, count, type(datatype), peer, comm->alloy, stream));
}

}  // extern "C"
