// Bcast and allgather: data movement, moved by the GPU engine as bytes.
#include "alloy_mpix.h"
#include "arguments.h"
#include "describe.h"
#include "execute.h"

namespace alloy_mpix {

void describeBcast(const char* fn, void* buffer, int count, MPI_Datatype datatype, int root, const CommShape& shape,
                   Request* r) {
  TypeInfo type;
  size_t bytes = 0, span = 0;
  if (!checkType(r, fn, "datatype", datatype, false, &type) || !checkCount(r, fn, "count", count, type.size, &bytes) ||
      !checkCount(r, fn, "count", count, type.extent, &span) || !checkRoot(r, fn, root, shape))
    return;
  // One buffer: the root reads it, the others write it.
  r->send = r->recv = Region{buffer, span};
  r->sendName = r->recvName = "buffer";
  r->inPlace = true;
  r->viaGpu = [=](alloyComm_t gpu, const void*, cudaStream_t s) {
    return alloyBroadcast(buffer, buffer, bytes, alloyUint8, root, gpu, s);
  };
}

void describeAllgather(const char* fn, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, const CommShape& shape, Request* r) {
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  TypeInfo stype, rtype;
  size_t block = 0, recvSpan = 0, sendBytes = 0;
  if (!checkType(r, fn, "recvtype", recvtype, false, &rtype) ||
      !checkCount(r, fn, "recvcount", recvcount, rtype.size, &block) ||
      !checkCount(r, fn, "recvcount * nranks", static_cast<MPI_Count>(recvcount) * shape.size, rtype.extent, &recvSpan))
    return;
  r->recv = Region{recvbuf, recvSpan};
  if (inPlace) {  // this rank's block already sits at its place in recvbuf
    r->send = Region{static_cast<const char*>(recvbuf) + shape.rank * block, block};
    r->inPlace = true;
  } else {
    if (!checkType(r, fn, "sendtype", sendtype, false, &stype) ||
        !checkCount(r, fn, "sendcount", sendcount, stype.size, &sendBytes) ||
        !checkSignatures(r, fn, sendBytes, block, "the block"))
      return;
    r->send = Region{sendbuf, sendBytes};
  }
  r->viaGpu = [=](alloyComm_t gpu, const void* send, cudaStream_t s) {
    return alloyAllGather(send, recvbuf, block, alloyUint8, gpu, s);
  };
}

}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API int MPIX_Bcast_cuda(void* buffer, int count, MPI_Datatype datatype, int root,
                                             MPI_Comm comm, cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Bcast_cuda";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeBcast(fn, buffer, count, datatype, root, shape, r);
  }, [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

extern "C" ALLOY_MPIX_API int MPIX_Allgather_cuda(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                                 cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Allgather_cuda";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeAllgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, shape, r);
  }, [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}
