// MPIX_Alltoallv_cuda and its large-count form MPIX_Alltoallv_cuda_c: one template over the count and
// displacement types, so both check and dispatch identically.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <vector>

#include "alloy_mpix.h"
#include "arguments.h"
#include "execute.h"

namespace alloy_mpix {
namespace {

// One side of the exchange in bytes, relative to its lowest byte used: the GPU engine takes unsigned
// displacements, and MPI allows negative ones.
struct ByteLayout {
  Region region;
  std::vector<size_t> counts, displs;
};

template <typename Count, typename Displ>
bool byteLayout(Request* r, const char* function, const char* side, const void* buffer, const Count counts[],
                const Displ displs[], const TypeInfo& type, int nranks, ByteLayout* out) {
  const char* countsName = side[0] == 's' ? "sendcounts" : "recvcounts";
  if (counts == nullptr || displs == nullptr) {
    r->reject(problem(MPI_ERR_ARG, "%s: %s is NULL; expected an array of %d entries", function,
                      counts == nullptr ? countsName : side[0] == 's' ? "sdispls" : "rdispls", nranks));
    return false;
  }
  std::vector<long long> offsets(nranks, 0);
  out->counts.assign(nranks, 0);
  long long lowest = LLONG_MAX, highest = 0;
  for (int p = 0; p < nranks; ++p) {
    char name[32];
    std::snprintf(name, sizeof(name), "%s[%d]", countsName, p);
    if (!checkCount(r, function, name, counts[p], type.size, &out->counts[p])) return false;
    if (__builtin_mul_overflow(static_cast<long long>(displs[p]), static_cast<long long>(type.extent), &offsets[p]) ||
        offsets[p] > LLONG_MAX - static_cast<long long>(out->counts[p])) {
      r->reject(problem(MPI_ERR_ARG, "%s: %s displacement %lld of entry %d overflows", function, side,
                        static_cast<long long>(displs[p]), p));
      return false;
    }
    if (out->counts[p] == 0) continue;
    lowest = std::min(lowest, offsets[p]);
    highest = std::max(highest, offsets[p] + static_cast<long long>(out->counts[p]));
  }
  out->displs.assign(nranks, 0);
  if (lowest == LLONG_MAX) return true;  // this side moves nothing
  for (int p = 0; p < nranks; ++p)
    if (out->counts[p] > 0) out->displs[p] = static_cast<size_t>(offsets[p] - lowest);
  out->region = Region{static_cast<const char*>(buffer) + lowest, static_cast<size_t>(highest - lowest)};
  return true;
}

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
int alltoallv(const char* function, const void* sendbuf, const Count sendcounts[], const Displ sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[], const Displ rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, cudaStream_t stream) {
  return execute(function, comm, stream, [&](const CommShape& shape, Request* r) {
    const bool inPlace = sendbuf == MPI_IN_PLACE;
    TypeInfo rtype, stype;
    if (!checkType(r, function, "recvtype", recvtype, false, &rtype)) return;
    if (!inPlace && !checkType(r, function, "sendtype", sendtype, false, &stype)) return;
    ByteLayout send, recv;
    if (!byteLayout(r, function, "recv", recvbuf, recvcounts, rdispls, rtype, shape.size, &recv)) return;
    if (inPlace) {
      // MPI_IN_PLACE: every rank sends what its receive layout holds, and the data are replaced.
      send = recv;
      r->inPlace = r->stageSend = true;
    } else {
      if (!byteLayout(r, function, "send", sendbuf, sendcounts, sdispls, stype, shape.size, &send)) return;
      if (!checkSignatures(r, function, send.counts[shape.rank], recv.counts[shape.rank], "the block to itself")) return;
    }
    r->send = send.region;
    r->recv = recv.region;

    auto narrowed = std::make_shared<std::vector<std::vector<int>>>(4);
    if (!narrowInts(inPlace ? static_cast<const Count*>(nullptr) : sendcounts, shape.size, &(*narrowed)[0]) ||
        !narrowInts(inPlace ? static_cast<const Displ*>(nullptr) : sdispls, shape.size, &(*narrowed)[1]) ||
        !narrowInts(recvcounts, shape.size, &(*narrowed)[2]) || !narrowInts(rdispls, shape.size, &(*narrowed)[3]))
      r->rejectOnHost(problem(MPI_ERR_COUNT, "%s: counts or displacements beyond the int range need GPU buffers: "
                                             "this MPI library has no MPI_Alltoallv_c for host memory", function));
    r->viaMpi = [=] {
      const auto& n = *narrowed;
      return MPI_Alltoallv(sendbuf, inPlace ? nullptr : n[0].data(), inPlace ? nullptr : n[1].data(), sendtype,
                           recvbuf, n[2].data(), n[3].data(), recvtype, comm);
    };
    r->viaGpu = [send, recv, recvBase = r->recv.base](alloyComm_t gpu, const void* sendBase, cudaStream_t s) {
      return alloyAlltoAllv(sendBase, send.counts.data(), send.displs.data(), const_cast<void*>(recvBase),
                            recv.counts.data(), recv.displs.data(), nullptr, alloyUint8, gpu, s);
    };
  });
}

}  // namespace
}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API int MPIX_Alltoallv_cuda(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                                 cudaStream_t stream) {
  return alloy_mpix::alltoallv("MPIX_Alltoallv_cuda", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype, comm, stream);
}

extern "C" ALLOY_MPIX_API int MPIX_Alltoallv_cuda_c(const void* sendbuf, const MPI_Count sendcounts[],
                                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                                   MPI_Datatype recvtype, MPI_Comm comm, cudaStream_t stream) {
  return alloy_mpix::alltoallv("MPIX_Alltoallv_cuda_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype, comm, stream);
}
