// MPIX_Alltoallv_cuda(_c) on device memory against MPI_Alltoallv on host copies of the same data:
// random count matrices (zeros included, rank 1 sending nothing through a NULL sendbuf), gaps between
// blocks, every predefined datatype, derived datatypes, and MPI_IN_PLACE.
#include "gpu_mpix_util.h"

namespace mpixtest {
namespace {

struct NamedType {
  MPI_Datatype type;
  const char* name;
};

#define NAMED(t) NamedType{t, #t}
const NamedType kPredefined[] = {
    NAMED(MPI_CHAR), NAMED(MPI_SIGNED_CHAR), NAMED(MPI_UNSIGNED_CHAR), NAMED(MPI_BYTE), NAMED(MPI_WCHAR),
    NAMED(MPI_SHORT), NAMED(MPI_UNSIGNED_SHORT), NAMED(MPI_INT), NAMED(MPI_UNSIGNED), NAMED(MPI_LONG),
    NAMED(MPI_UNSIGNED_LONG), NAMED(MPI_LONG_LONG), NAMED(MPI_UNSIGNED_LONG_LONG), NAMED(MPI_FLOAT), NAMED(MPI_DOUBLE),
    NAMED(MPI_LONG_DOUBLE), NAMED(MPI_INT8_T), NAMED(MPI_INT16_T), NAMED(MPI_INT32_T), NAMED(MPI_INT64_T),
    NAMED(MPI_UINT8_T), NAMED(MPI_UINT16_T), NAMED(MPI_UINT32_T), NAMED(MPI_UINT64_T), NAMED(MPI_C_BOOL),
    NAMED(MPI_C_FLOAT_COMPLEX), NAMED(MPI_C_DOUBLE_COMPLEX), NAMED(MPI_AINT), NAMED(MPI_OFFSET), NAMED(MPI_COUNT),
    NAMED(MPI_INTEGER), NAMED(MPI_REAL), NAMED(MPI_DOUBLE_PRECISION), NAMED(MPI_COMPLEX), NAMED(MPI_LOGICAL),
    NAMED(MPI_CHARACTER), NAMED(MPI_2INT), NAMED(MPI_FLOAT_INT), NAMED(MPI_DOUBLE_INT), NAMED(MPI_SHORT_INT),
};
#undef NAMED

bool contiguous(MPI_Datatype type) {
  MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
  MPI_Type_size_x(type, &size);
  MPI_Type_get_extent_x(type, &lb, &extent);
  MPI_Type_get_true_extent_x(type, &tlb, &textent);
  return size == extent && lb == 0 && tlb == 0 && textent == size;
}

class MpixAlltoallv : public MpixGpu {
 protected:
  // One random exchange of `type`; contiguous types must match MPI byte for byte, others be refused
  // with MPI_ERR_TYPE on every rank.
  void exchange(MPI_Datatype type, const std::string& name, uint64_t tag, bool largeCounts) {
    const std::vector<int> matrix = countMatrix(n, static_cast<uint32_t>(alloytest::mix64(seed ^ tag)), 300);
    std::vector<int> sendcounts(n), recvcounts(n);
    for (int p = 0; p < n; ++p) {
      sendcounts[p] = matrix[rank * n + p];
      recvcounts[p] = matrix[p * n + rank];
    }
    int sendTotal = 0, recvTotal = 0;
    const std::vector<int> sdispls = displacementsOf(sendcounts, 3, &sendTotal);
    const std::vector<int> rdispls = displacementsOf(recvcounts, 5, &recvTotal);
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(type, &lb, &extent);
    bool sendsNothing = true;
    for (int c : sendcounts) sendsNothing = sendsNothing && c == 0;
    const std::vector<uint8_t> send =
        sendsNothing ? std::vector<uint8_t>() : alloytest::genVector(alloytest::streamOf(seed, tag, rank), sendTotal * extent);
    const std::vector<uint8_t> poison(recvTotal * extent, alloytest::kPoison);
    std::vector<MPI_Count> sc(sendcounts.begin(), sendcounts.end()), rc(recvcounts.begin(), recvcounts.end());
    std::vector<MPI_Aint> sd(sdispls.begin(), sdispls.end()), rd(rdispls.begin(), rdispls.end());
    auto mpix = [&](void* s, void* r) {
      return largeCounts ? MPIX_Alltoallv_cuda_c(s, sc.data(), sd.data(), type, r, rc.data(), rd.data(), type, comm, stream)
                         : MPIX_Alltoallv_cuda(s, sendcounts.data(), sdispls.data(), type, r, recvcounts.data(),
                                               rdispls.data(), type, comm, stream);
    };
    if (!contiguous(type)) {
      // Refused where the rank has data on the GPU; a rank that moves nothing learns it from the others.
      // When the random matrix gives no rank any data, nothing is refused: MPI accepts that call too.
      bool receivesNothing = true;
      for (int c : recvcounts) receivesNothing = receivesNothing && c == 0;
      const int idle = sendsNothing && receivesNothing;
      int everyRankIdle = 0;
      MPI_Allreduce(&idle, &everyRankIdle, 1, MPI_INT, MPI_LAND, comm);
      // The lowest rank with data is the one an idle rank hears of.
      const int busy = idle ? n : rank;
      int lowestBusy = n;
      MPI_Allreduce(&busy, &lowestBusy, 1, MPI_INT, MPI_MIN, comm);
      const bool wasEnqueueOnly = enqueueOnly();
      if (everyRankIdle) EXPECT_EQ(mpix(nullptr, upload(poison)), MPI_SUCCESS) << name << ": no rank moves data";
      else if (!idle) EXPECT_MPIX_ERROR(mpix(upload(send), upload(poison)), MPI_ERR_TYPE, "not contiguous");
      else if (!wasEnqueueOnly) EXPECT_MPIX_ERROR(mpix(nullptr, upload(poison)), MPI_ERR_OTHER, "rejected");
      else EXPECT_EQ(mpix(nullptr, upload(poison)), MPI_SUCCESS) << name << ": an enqueue-only call returns before the verdict";
      // An enqueue-only idle rank learns of the rejection after the operation; nothing stays pending.
      const std::pair<int, int> expected = idle && !everyRankIdle && wasEnqueueOnly
                                               ? std::make_pair(static_cast<int>(MPI_ERR_TYPE), lowestBusy)
                                               : std::make_pair(static_cast<int>(MPI_SUCCESS), static_cast<int>(MPI_PROC_NULL));
      EXPECT_EQ(pendingRejection(), expected) << name;
      return;
    }
    expectSameAsMpi(send, poison, mpix,
        [&](void* s, void* r) {
          return MPI_Alltoallv(s, sendcounts.data(), sdispls.data(), type, r, recvcounts.data(), rdispls.data(), type, comm);
        },
        name + (largeCounts ? " (large-count form)" : ""));
  }
};

TEST_F(MpixAlltoallv, EveryPredefinedType) {
  uint64_t tag = 1;
  for (const NamedType& t : kPredefined) {
    exchange(t.type, t.name, tag++, false);
    exchange(t.type, t.name, tag++, true);
  }
}

TEST_F(MpixAlltoallv, DerivedTypes) {
  MPI_Datatype triple, strided, resized;
  MPI_Type_contiguous(3, MPI_SHORT, &triple);
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_create_resized(MPI_INT, 0, 8, &resized);  // gaps between elements
  for (MPI_Datatype* t : {&triple, &strided, &resized}) MPI_Type_commit(t);
  exchange(triple, "3 x MPI_SHORT", 100, false);
  exchange(strided, "vector of MPI_INT", 101, false);
  exchange(resized, "MPI_INT resized to 8 bytes", 102, false);
  for (MPI_Datatype* t : {&triple, &strided, &resized}) MPI_Type_free(t);
}

TEST_F(MpixAlltoallv, InPlace) {
  std::vector<int> counts(n);  // symmetric, as MPI_IN_PLACE requires
  for (int p = 0; p < n; ++p) counts[p] = (rank + p) % 3 == 0 ? 0 : 1000 * (rank + p) + 7;
  int total = 0;
  const std::vector<int> displs = displacementsOf(counts, 2, &total);
  const std::vector<uint8_t> initial = alloytest::genVector(alloytest::streamOf(seed, 7, rank), total * sizeof(double));
  expectSameAsMpi({}, initial,
      [&](void*, void* r) {
        return MPIX_Alltoallv_cuda(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, r, counts.data(), displs.data(),
                                   MPI_DOUBLE, comm, stream);
      },
      [&](void*, void* r) {
        return MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, r, counts.data(), displs.data(),
                             MPI_DOUBLE, comm);
      },
      "in place");
}

// Host memory on one rank and GPU memory on another, or both on one rank: refused on every rank.
TEST_F(MpixAlltoallv, MixedMemoryIsRefusedEverywhere) {
  std::vector<int> counts(n, 4), displs(n);
  for (int p = 0; p < n; ++p) displs[p] = 4 * p;
  std::vector<uint8_t> hostSend(16 * n, 1), hostRecv(16 * n, 0);
  void* dsend = upload(hostSend);
  void* drecv = upload(hostRecv);
  EXPECT_MPIX_ERROR(MPIX_Alltoallv_cuda(hostSend.data(), counts.data(), displs.data(), MPI_INT, drecv, counts.data(),
                                        displs.data(), MPI_INT, comm, stream),
                    MPI_ERR_BUFFER, "this rank passed host memory and GPU memory");
  if (n < 2) return;
  const bool host = rank == 0;
  EXPECT_MPIX_ERROR(MPIX_Alltoallv_cuda(host ? hostSend.data() : dsend, counts.data(), displs.data(), MPI_INT,
                                        host ? hostRecv.data() : drecv, counts.data(), displs.data(), MPI_INT, comm,
                                        stream),
                    MPI_ERR_BUFFER, "some ranks passed host memory and others GPU memory");
}

// Dup, use with GPU memory, free: each cycle creates and releases a GPU communicator.
TEST_F(MpixAlltoallv, DupUseFreeCyclesReleaseGpuComms) {
  const int base = alloy_mpix::liveGpuComms();
  std::vector<int> counts(n, 16), displs(n);
  for (int p = 0; p < n; ++p) displs[p] = 16 * p;
  void* dsend = upload(std::vector<uint8_t>(64 * n, 3));
  void* drecv = upload(std::vector<uint8_t>(64 * n, 0));
  for (int cycle = 0; cycle < 20; ++cycle) {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_dup(comm, &c);
    ASSERT_EQ(MPIX_Alltoallv_cuda(dsend, counts.data(), displs.data(), MPI_INT, drecv, counts.data(), displs.data(),
                                  MPI_INT, c, stream), MPI_SUCCESS);
    EXPECT_EQ(alloy_mpix::liveGpuComms(), base + 1);
    MPI_Comm_free(&c);
    ASSERT_EQ(alloy_mpix::liveGpuComms(), base) << "cycle " << cycle;
  }
  EXPECT_EQ(download(drecv, 64 * n), std::vector<uint8_t>(64 * n, 3));
}

}  // namespace
}  // namespace mpixtest
