// Host memory: every MPIX function must give what the MPI library's own collective gives on the same
// input (it is what they call, after synchronising the stream). Buffers are compared byte for byte,
// padding included, against MPI's result from identically initialised buffers.
#include <cstring>

#include "mpix_test_util.h"

namespace mpixtest {
namespace {

class HostBuffers : public ::testing::Test {
 protected:
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = rankOf(MPI_COMM_WORLD);
  int n = sizeOf(MPI_COMM_WORLD);
};

// Runs `mpix` and `reference` (the MPI call) on two copies of `initial`, returns whether they agree.
template <typename Mpix, typename Reference>
void expectSameAsMpi(const std::vector<uint8_t>& initial, Mpix mpix, Reference reference, const char* what) {
  std::vector<uint8_t> mine = initial, expected = initial;
  ASSERT_EQ(mpix(mine.data()), MPI_SUCCESS) << what;
  ASSERT_EQ(reference(expected.data()), MPI_SUCCESS) << what;
  EXPECT_TRUE(mine == expected) << what << ": result differs from MPI's";
}

TEST_F(HostBuffers, AlltoallvRandomCountsAndTypes) {
  MPI_Datatype triple, strided;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  MPI_Type_vector(2, 1, 2, MPI_SHORT, &strided);  // non-contiguous: the host path takes it all the same
  MPI_Type_commit(&strided);
  const MPI_Datatype types[] = {MPI_BYTE, MPI_INT, MPI_DOUBLE, triple, strided};
  for (int t = 0; t < 5; ++t) {
    for (uint32_t round = 0; round < 4; ++round) {
      const std::vector<int> matrix = countMatrix(n, 1000 + round * 7 + t, 9);
      std::vector<int> sendcounts(n), recvcounts(n);
      for (int p = 0; p < n; ++p) {
        sendcounts[p] = matrix[rank * n + p];
        recvcounts[p] = matrix[p * n + rank];
      }
      int sendTotal = 0, recvTotal = 0;
      const std::vector<int> sdispls = displacementsOf(sendcounts, 2, &sendTotal);
      const std::vector<int> rdispls = displacementsOf(recvcounts, 1, &recvTotal);
      MPI_Aint lb = 0, extent = 0;
      MPI_Type_get_extent(types[t], &lb, &extent);
      const std::vector<uint8_t> send = pattern(sendTotal * extent, rank * 31 + round);
      const std::vector<uint8_t> initial = pattern(recvTotal * extent, 99 + rank);
      expectSameAsMpi(initial,
          [&](void* recv) {
            return MPIX_Alltoallv_cuda(send.data(), sendcounts.data(), sdispls.data(), types[t], recv, recvcounts.data(),
                                       rdispls.data(), types[t], comm, nullptr);
          },
          [&](void* recv) {
            return MPI_Alltoallv(send.data(), sendcounts.data(), sdispls.data(), types[t], recv, recvcounts.data(),
                                 rdispls.data(), types[t], comm);
          },
          "MPIX_Alltoallv_cuda");
      // The large-count form with the same values.
      std::vector<MPI_Count> sc(sendcounts.begin(), sendcounts.end()), rc(recvcounts.begin(), recvcounts.end());
      std::vector<MPI_Aint> sd(sdispls.begin(), sdispls.end()), rd(rdispls.begin(), rdispls.end());
      expectSameAsMpi(initial,
          [&](void* recv) {
            return MPIX_Alltoallv_cuda_c(send.data(), sc.data(), sd.data(), types[t], recv, rc.data(), rd.data(),
                                         types[t], comm, nullptr);
          },
          [&](void* recv) {
            return MPI_Alltoallv(send.data(), sendcounts.data(), sdispls.data(), types[t], recv, recvcounts.data(),
                                 rdispls.data(), types[t], comm);
          },
          "MPIX_Alltoallv_cuda_c");
    }
  }
  MPI_Type_free(&triple);
  MPI_Type_free(&strided);
}

TEST_F(HostBuffers, AlltoallvInPlace) {
  // In place, every pair exchanges equal counts: a symmetric matrix.
  std::vector<int> counts(n);
  for (int p = 0; p < n; ++p) counts[p] = (rank + p) % 3 == 0 ? 0 : rank + p + 1;
  int total = 0;
  const std::vector<int> displs = displacementsOf(counts, 3, &total);
  expectSameAsMpi(pattern(total * sizeof(int), 5 + rank),
      [&](void* buf) {
        return MPIX_Alltoallv_cuda(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buf, counts.data(), displs.data(),
                                   MPI_INT, comm, nullptr);
      },
      [&](void* buf) {
        return MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buf, counts.data(), displs.data(),
                             MPI_INT, comm);
      },
      "MPIX_Alltoallv_cuda in place");
}

TEST_F(HostBuffers, AlltoallAllgatherBcast) {
  const int count = 5;
  const std::vector<uint8_t> send = pattern(n * count * sizeof(double), 7 + rank);
  const std::vector<uint8_t> initial = pattern(n * count * sizeof(double), 70 + rank);
  expectSameAsMpi(initial,
      [&](void* recv) { return MPIX_Alltoall_cuda(send.data(), count, MPI_DOUBLE, recv, count, MPI_DOUBLE, comm, nullptr); },
      [&](void* recv) { return MPI_Alltoall(send.data(), count, MPI_DOUBLE, recv, count, MPI_DOUBLE, comm); },
      "MPIX_Alltoall_cuda");
  expectSameAsMpi(initial,
      [&](void* buf) { return MPIX_Alltoall_cuda(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, count, MPI_DOUBLE, comm, nullptr); },
      [&](void* buf) { return MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, count, MPI_DOUBLE, comm); },
      "MPIX_Alltoall_cuda in place");
  // Different types of equal signature size on the two sides.
  expectSameAsMpi(initial,
      [&](void* recv) { return MPIX_Allgather_cuda(send.data(), count * 8, MPI_BYTE, recv, count, MPI_DOUBLE, comm, nullptr); },
      [&](void* recv) { return MPI_Allgather(send.data(), count * 8, MPI_BYTE, recv, count, MPI_DOUBLE, comm); },
      "MPIX_Allgather_cuda");
  expectSameAsMpi(initial,
      [&](void* buf) { return MPIX_Allgather_cuda(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, count, MPI_DOUBLE, comm, nullptr); },
      [&](void* buf) { return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, count, MPI_DOUBLE, comm); },
      "MPIX_Allgather_cuda in place");
  for (int root = 0; root < n; ++root)
    expectSameAsMpi(initial,
        [&](void* buf) { return MPIX_Bcast_cuda(buf, count * n, MPI_DOUBLE, root, comm, nullptr); },
        [&](void* buf) { return MPI_Bcast(buf, count * n, MPI_DOUBLE, root, comm); }, "MPIX_Bcast_cuda");
}

TEST_F(HostBuffers, Reductions) {
  const int count = 7;
  std::vector<int> values(n * count);
  for (int i = 0; i < n * count; ++i) values[i] = (rank + 2) * (i % 5) - 3;
  const std::vector<uint8_t> send(reinterpret_cast<uint8_t*>(values.data()),
                                  reinterpret_cast<uint8_t*>(values.data() + values.size()));
  const std::vector<uint8_t> initial = pattern(send.size(), 3 + rank);
  // MPI_BAND is not one the GPU engine performs; the host path takes any operation, as MPI does.
  for (MPI_Op op : {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND}) {
    expectSameAsMpi(initial,
        [&](void* recv) { return MPIX_Allreduce_cuda(send.data(), recv, count, MPI_INT, op, comm, nullptr); },
        [&](void* recv) { return MPI_Allreduce(send.data(), recv, count, MPI_INT, op, comm); }, "MPIX_Allreduce_cuda");
    expectSameAsMpi(send,
        [&](void* buf) { return MPIX_Allreduce_cuda(MPI_IN_PLACE, buf, count, MPI_INT, op, comm, nullptr); },
        [&](void* buf) { return MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_INT, op, comm); },
        "MPIX_Allreduce_cuda in place");
    for (int root = 0; root < n; ++root) {
      expectSameAsMpi(initial,
          [&](void* recv) { return MPIX_Reduce_cuda(send.data(), recv, count, MPI_INT, op, root, comm, nullptr); },
          [&](void* recv) { return MPI_Reduce(send.data(), recv, count, MPI_INT, op, root, comm); }, "MPIX_Reduce_cuda");
      const void* sendOrInPlace = rank == root ? MPI_IN_PLACE : send.data();
      expectSameAsMpi(send,
          [&](void* buf) { return MPIX_Reduce_cuda(sendOrInPlace, buf, count, MPI_INT, op, root, comm, nullptr); },
          [&](void* buf) { return MPI_Reduce(sendOrInPlace, buf, count, MPI_INT, op, root, comm); },
          "MPIX_Reduce_cuda in place at the root");
    }
    const int block = count / n > 0 ? count / n : 1;
    expectSameAsMpi(initial,
        [&](void* recv) { return MPIX_Reduce_scatter_block_cuda(send.data(), recv, block, MPI_INT, op, comm, nullptr); },
        [&](void* recv) { return MPI_Reduce_scatter_block(send.data(), recv, block, MPI_INT, op, comm); },
        "MPIX_Reduce_scatter_block_cuda");
    expectSameAsMpi(send,
        [&](void* buf) { return MPIX_Reduce_scatter_block_cuda(MPI_IN_PLACE, buf, block, MPI_INT, op, comm, nullptr); },
        [&](void* buf) { return MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, block, MPI_INT, op, comm); },
        "MPIX_Reduce_scatter_block_cuda in place");
  }
}

TEST_F(HostBuffers, ZeroCountsEverywhereDoNothing) {
  uint8_t untouched = 0x5a;
  EXPECT_EQ(MPIX_Alltoall_cuda(nullptr, 0, MPI_INT, &untouched, 0, MPI_INT, comm, nullptr), MPI_SUCCESS);
  EXPECT_EQ(MPIX_Allreduce_cuda(nullptr, nullptr, 0, MPI_FLOAT, MPI_SUM, comm, nullptr), MPI_SUCCESS);
  EXPECT_EQ(MPIX_Bcast_cuda(nullptr, 0, MPI_INT, 0, comm, nullptr), MPI_SUCCESS);
  EXPECT_EQ(untouched, 0x5a);
}

}  // namespace
}  // namespace mpixtest
