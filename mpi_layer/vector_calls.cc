#include "vector_calls.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "byte_layout.h"
#include "error.h"

namespace alloy_layer {

using alloy_mpix::checkCount;
using alloy_mpix::checkType;
using alloy_mpix::problem;
using alloy_mpix::Region;

void describeAllgatherv(const char* fn, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        const alloy_mpix::CommShape& shape, alloy_mpix::Request* r) {
  alloy_mpix::TypeInfo rtype, stype;
  alloy_mpix::ByteLayout recv;
  if (!checkType(r, fn, "recvtype", recvtype, false, &rtype) ||
      !alloy_mpix::byteLayout(r, fn, "recvcounts", "displs", recvbuf, recvcounts, displs, rtype, shape.size, &recv))
    return;
  const size_t own = recv.counts[shape.rank];
  r->recv = recv.region;
  if (sendbuf == MPI_IN_PLACE) {
    // This rank's block already sits at its place in recvbuf; the engine sends it from a copy, since it
    // does not read and write one buffer in an alltoallv.
    r->send = Region{static_cast<const char*>(recv.region.base) + recv.displs[shape.rank], own};
    r->inPlace = r->stageSend = true;
  } else {
    size_t sendBytes = 0;
    if (!checkType(r, fn, "sendtype", sendtype, false, &stype) ||
        !checkCount(r, fn, "sendcount", sendcount, stype.size, &sendBytes) ||
        !alloy_mpix::checkSignatures(r, fn, sendBytes, own, "the block"))
      return;
    r->send = Region{sendbuf, sendBytes};
  }
  // The layout moves into the operation, which is the last to read it.
  r->viaGpu = [own, recv = std::move(recv), recvBase = r->recv.base, n = shape.size](
                  alloyComm_t gpu, const void* send, cudaStream_t s) {
    const std::vector<size_t> sendCounts(n, own), sendDispls(n, 0);
    return alloyAlltoAllv(send, sendCounts.data(), sendDispls.data(), const_cast<void*>(recvBase), recv.counts.data(),
                          recv.displs.data(), nullptr, alloyUint8, gpu, s);
  };
}

namespace {

// The allreduce of the whole input into scratch, of which this rank's block is copied to recvbuf.
alloyResult_t allreduceThenKeep(const void* send, void* recvbuf, size_t count, alloyDataType_t type, alloyRedOp_t op,
                                size_t ownOffset, size_t ownBytes, size_t elementBytes, alloyComm_t gpu,
                                cudaStream_t s) {
  void* scratch = nullptr;
  ALLOY_CUDA_TRY(cudaMallocAsync(&scratch, count * elementBytes, s));
  alloyResult_t result = alloyAllReduce(send, scratch, count, type, op, gpu, s);
  if (result == alloySuccess && ownBytes > 0) {
    const cudaError_t err =
        cudaMemcpyAsync(recvbuf, static_cast<char*>(scratch) + ownOffset, ownBytes, cudaMemcpyDeviceToDevice, s);
    if (err != cudaSuccess)
      result = alloy::fail(alloyCudaError, "copying this rank's block out of the reduced scratch failed: %s",
                           cudaGetErrorString(err));
  }
  cudaFreeAsync(scratch, s);
  return result;
}

}  // namespace

void describeReduceScatter(const char* fn, const void* sendbuf, void* recvbuf, const int recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, const alloy_mpix::CommShape& shape,
                           alloy_mpix::Request* r) {
  alloy_mpix::TypeInfo type;
  alloyRedOp_t alloyOp = alloySum;
  if (!checkType(r, fn, "datatype", datatype, true, &type) || !alloy_mpix::checkOp(r, fn, op, &alloyOp)) return;
  if (recvcounts == nullptr) {
    r->reject(problem(MPI_ERR_ARG, "%s: recvcounts is NULL; expected an array of %d entries", fn, shape.size));
    return;
  }
  MPI_Count total = 0, before = 0;
  for (int p = 0; p < shape.size; ++p) {
    char name[32];
    std::snprintf(name, sizeof(name), "recvcounts[%d]", p);
    size_t bytes = 0;
    if (!checkCount(r, fn, name, recvcounts[p], type.size, &bytes)) return;
    if (p < shape.rank) before += recvcounts[p];
    total += recvcounts[p];
  }
  size_t totalBytes = 0, ownBytes = 0;
  if (!checkCount(r, fn, "the sum of recvcounts", total, type.size, &totalBytes) ||
      !checkCount(r, fn, "recvcounts[rank]", recvcounts[shape.rank], type.size, &ownBytes))
    return;
  r->inPlace = sendbuf == MPI_IN_PLACE;  // the input is in recvbuf, this rank's block lands at its start
  r->send = Region{r->inPlace ? recvbuf : sendbuf, totalBytes};
  r->recv = Region{recvbuf, r->inPlace ? totalBytes : ownBytes};
  const bool equal = std::all_of(recvcounts, recvcounts + shape.size, [&](int c) { return c == recvcounts[0]; });
  // The engine's reduce-scatter reads its input in place only at the rank's own offset: from a copy here.
  r->stageSend = r->inPlace && equal;
  const size_t ownOffset = static_cast<size_t>(before) * type.size, elementBytes = type.size;
  const int first = recvcounts[0];
  r->viaGpu = [=, alloyType = type.alloyType](alloyComm_t gpu, const void* send, cudaStream_t s) {
    if (equal) return alloyReduceScatter(send, recvbuf, first, alloyType, alloyOp, gpu, s);
    return allreduceThenKeep(send, recvbuf, total, alloyType, alloyOp, ownOffset, ownBytes, elementBytes, gpu, s);
  };
}

}  // namespace alloy_layer
