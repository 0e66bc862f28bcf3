// Alltoallv in both count forms (int, and MPI_Count with MPI_Aint displacements): one template over the
// count and displacement types, so both check and dispatch identically.
#include <algorithm>
#include <climits>
#include <type_traits>
#include <utility>
#include <vector>

#include "alloy_mpix.h"
#include "byte_layout.h"
#include "describe.h"
#include "execute.h"

namespace alloy_mpix {
namespace {

// MPI_Alltoallv takes int arrays; large counts reach it only where they fit (Open MPI 4.1 has no
// MPI_Alltoallv_c). values: nullptr for MPI_IN_PLACE's send arrays, which are not read.
template <typename T>
bool fitInts(const T* values, int n) {
  return values == nullptr || std::all_of(values, values + n, [](T v) { return v >= INT_MIN && v <= INT_MAX; });
}

template <typename T>
std::vector<int> toInts(const T* values, int n) {
  std::vector<int> ints(values == nullptr ? 0 : n);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int>(values[i]);
  return ints;
}

template <typename Count, typename Displ>
void describe(const char* function, const void* sendbuf, const Count sendcounts[], const Displ sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[], const Displ rdispls[],
              MPI_Datatype recvtype, const CommShape& shape, Request* r) {
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

  if constexpr (!std::is_same_v<Count, int> || !std::is_same_v<Displ, int>) {
    const int n = shape.size;
    if (!fitInts(inPlace ? nullptr : sendcounts, n) || !fitInts(inPlace ? nullptr : sdispls, n) ||
        !fitInts(recvcounts, n) || !fitInts(rdispls, n))
      r->rejectOnHost(problem(MPI_ERR_COUNT, "%s: counts or displacements beyond the int range need GPU buffers: "
                                             "this MPI library has no MPI_Alltoallv_c for host memory", function));
  }
  // The layouts move into the operation, which is the last to read them.
  r->viaGpu = [send = std::move(send), recv = std::move(recv), recvBase = r->recv.base](
                  alloyComm_t gpu, const void* sendBase, cudaStream_t s) {
    return alloyAlltoAllv(sendBase, send.counts.data(), send.displs.data(), const_cast<void*>(recvBase),
                          recv.counts.data(), recv.displs.data(), nullptr, alloyUint8, gpu, s);
  };
}

// MPIX_Alltoallv_cuda_c's host path: MPI_Alltoallv on the arrays narrowed to int, built only where the
// ranks chose the MPI library, not on every call. describe rejected that path for a value beyond the int
// range where this rank moves data; where it moves none, no byte MPI moves depends on such a value.
int alltoallvNarrowed(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm) {
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  int n = 0;
  MPI_Comm_size(comm, &n);
  const std::vector<int> sc = toInts(inPlace ? nullptr : sendcounts, n), sd = toInts(inPlace ? nullptr : sdispls, n);
  const std::vector<int> rc = toInts(recvcounts, n), rd = toInts(rdispls, n);
  return PMPI_Alltoallv(sendbuf, inPlace ? nullptr : sc.data(), inPlace ? nullptr : sd.data(), sendtype, recvbuf,
                        rc.data(), rd.data(), recvtype, comm);
}

}  // namespace

void describeAlltoallv(const char* function, const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, const CommShape& shape, Request* r) {
  describe(function, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, shape, r);
}

void describeAlltoallv(const char* function, const void* sendbuf, const MPI_Count sendcounts[],
                       const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], MPI_Datatype recvtype, const CommShape& shape, Request* r) {
  describe(function, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, shape, r);
}

}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API int MPIX_Alltoallv_cuda(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                                 cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Alltoallv_cuda";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeAlltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, shape, r);
  }, [&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  });
}

extern "C" ALLOY_MPIX_API int MPIX_Alltoallv_cuda_c(const void* sendbuf, const MPI_Count sendcounts[],
                                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                                   MPI_Datatype recvtype, MPI_Comm comm, cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Alltoallv_cuda_c";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeAlltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, shape, r);
  }, [&] {
    return alltoallvNarrowed(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  });
}
