// Alltoallv in both count forms (int, and MPI_Count with MPI_Aint displacements): one template over the
// count and displacement types, so both check and dispatch identically.
#include <climits>
#include <memory>
#include <type_traits>
#include <vector>

#include "alloy_mpix.h"
#include "byte_layout.h"
#include "describe.h"
#include "execute.h"

namespace alloy_mpix {
namespace {

// MPI_Alltoallv takes int arrays; large counts reach it only where they fit (Open MPI 4.1 has no
// MPI_Alltoallv_c).
template <typename T>
bool narrowInts(const T* values, int n, std::vector<int>* out) {
  if (values == nullptr) return true;  // MPI_IN_PLACE: the send arrays are not read
  out->resize(n);
  for (int i = 0; i < n; ++i) {
    if (values[i] < INT_MIN || values[i] > INT_MAX) return false;
    (*out)[i] = static_cast<int>(values[i]);
  }
  return true;
}

template <typename Count, typename Displ>
void describe(const char* function, const void* sendbuf, const Count sendcounts[], const Displ sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[], const Displ rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, const CommShape& shape, Request* r) {
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  TypeInfo rtype, stype;
  if (!checkType(r, function, "recvtype", recvtype, false, &rtype)) return;
  if (!inPlace && !checkType(r, function, "sendtype", sendtype, false, &stype)) return;
  ByteLayout send, recv;
  if (!byteLayout(r, function, "recvcounts", "rdispls", recvbuf, recvcounts, rdispls, rtype, shape.size, &recv)) return;
  if (inPlace) {
    // MPI_IN_PLACE: every rank sends what its receive layout holds, and the data are replaced.
    send = recv;
    r->inPlace = r->stageSend = true;
  } else {
    if (!byteLayout(r, function, "sendcounts", "sdispls", sendbuf, sendcounts, sdispls, stype, shape.size, &send))
      return;
    if (!checkSignatures(r, function, send.counts[shape.rank], recv.counts[shape.rank], "the block to itself")) return;
  }
  r->send = send.region;
  r->recv = recv.region;

  if constexpr (std::is_same_v<Count, int> && std::is_same_v<Displ, int>) {
    // MPI_Alltoallv's own arrays, which the MPI library reads during this call (execute.h runs viaMpi
    // inside it): no copy on a path that most calls on GPU buffers never take.
    r->viaMpi = [=] {
      return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    };
  } else {
    auto narrowed = std::make_shared<std::vector<std::vector<int>>>(4);
    if (!narrowInts(inPlace ? static_cast<const Count*>(nullptr) : sendcounts, shape.size, &(*narrowed)[0]) ||
        !narrowInts(inPlace ? static_cast<const Displ*>(nullptr) : sdispls, shape.size, &(*narrowed)[1]) ||
        !narrowInts(recvcounts, shape.size, &(*narrowed)[2]) || !narrowInts(rdispls, shape.size, &(*narrowed)[3]))
      r->rejectOnHost(problem(MPI_ERR_COUNT, "%s: counts or displacements beyond the int range need GPU buffers: "
                                             "this MPI library has no MPI_Alltoallv_c for host memory", function));
    r->viaMpi = [=] {
      const auto& n = *narrowed;
      return PMPI_Alltoallv(sendbuf, inPlace ? nullptr : n[0].data(), inPlace ? nullptr : n[1].data(), sendtype,
                            recvbuf, n[2].data(), n[3].data(), recvtype, comm);
    };
  }
  r->viaGpu = [send, recv, recvBase = r->recv.base](alloyComm_t gpu, const void* sendBase, cudaStream_t s) {
    return alloyAlltoAllv(sendBase, send.counts.data(), send.displs.data(), const_cast<void*>(recvBase),
                          recv.counts.data(), recv.displs.data(), nullptr, alloyUint8, gpu, s);
  };
}

}  // namespace

void describeAlltoallv(const char* function, const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm, const CommShape& shape, Request* r) {
  describe(function, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, shape, r);
}

void describeAlltoallv(const char* function, const void* sendbuf, const MPI_Count sendcounts[],
                       const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, const CommShape& shape,
                       Request* r) {
  describe(function, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, shape, r);
}

}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API int MPIX_Alltoallv_cuda(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                                 cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Alltoallv_cuda";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeAlltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, shape, r);
  });
}

extern "C" ALLOY_MPIX_API int MPIX_Alltoallv_cuda_c(const void* sendbuf, const MPI_Count sendcounts[],
                                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                                   MPI_Datatype recvtype, MPI_Comm comm, cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Alltoallv_cuda_c";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeAlltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, shape, r);
  });
}
