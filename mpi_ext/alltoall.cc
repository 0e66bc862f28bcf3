// Alltoall: a block of equal size to and from every rank; the GPU engine moves it as bytes.
#include "alloy_mpix.h"
#include "arguments.h"
#include "describe.h"
#include "execute.h"

namespace alloy_mpix {

void describeAlltoall(const char* fn, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, const CommShape& shape, Request* r) {
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  TypeInfo stype, rtype;
  size_t recvBlock = 0, recvSpan = 0, sendBlock = 0, sendSpan = 0;
  if (!checkType(r, fn, "recvtype", recvtype, false, &rtype) ||
      !checkCount(r, fn, "recvcount", recvcount, rtype.size, &recvBlock) ||
      !checkCount(r, fn, "recvcount * nranks", static_cast<MPI_Count>(recvcount) * shape.size, rtype.extent, &recvSpan))
    return;
  r->recv = Region{recvbuf, recvSpan};
  if (inPlace) {  // every rank's blocks are taken from recvbuf and replaced
    r->send = r->recv;
    sendBlock = recvBlock;
    r->inPlace = r->stageSend = true;
  } else {
    if (!checkType(r, fn, "sendtype", sendtype, false, &stype) ||
        !checkCount(r, fn, "sendcount", sendcount, stype.size, &sendBlock) ||
        !checkCount(r, fn, "sendcount * nranks", static_cast<MPI_Count>(sendcount) * shape.size, stype.extent,
                    &sendSpan) ||
        !checkSignatures(r, fn, sendBlock, recvBlock, "each block"))
      return;
    r->send = Region{sendbuf, sendSpan};
  }
  r->viaGpu = [=](alloyComm_t gpu, const void* send, cudaStream_t s) {
    return alloyAlltoAll(send, recvbuf, sendBlock, alloyUint8, gpu, s);
  };
}

}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API int MPIX_Alltoall_cuda(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                                cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Alltoall_cuda";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeAlltoall(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, shape, r);
  }, [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}
