// Fixture and helpers of the MPI extension's GPU tests: one CUDA device per rank (set before the first
// MPIX call, as an MPI+CUDA program does), a stream, device copies of host data, and the reference run
// of the MPI library's own collective on host copies of the same data.
//
// Ordering: the MPIX calls run on `stream`, a cudaStreamNonBlocking stream, which does not wait for the
// legacy default stream. Every setup copy is therefore issued on `stream` itself and waited for before
// the call (a cudaMemcpy from pageable memory on the legacy stream may return before its data land,
// and nothing would order it before the collective), and every download waits for `stream` first.
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "context.h"
#include "gpu_test_util.h"
#include "mpix_test_util.h"

namespace mpixtest {

class MpixGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local = 0, devices = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    cudaGetDeviceCount(&devices);
    ASSERT_EQ(cudaSetDevice(local % devices), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    rank = rankOf(comm);
    n = sizeOf(comm);
    // Fresh data every run (and every repetition: gpu_main.cc sets the base seed per iteration).
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    seed = alloytest::mix64(alloytest::baseSeed() ^ std::hash<std::string>()(info->name()));
    trace_.reset(new ::testing::ScopedTrace(
        __FILE__, __LINE__,
        "rank " + std::to_string(rank) + " of " + std::to_string(n) + "; base seed " +
            alloytest::hex(alloytest::baseSeed()) + " (replay with ALLOY_TEST_SEED=" +
            alloytest::hex(alloytest::baseSeed()) + " --gtest_filter=" + info->test_suite_name() + "." +
            info->name() + ")"));
  }
  void TearDown() override {
    // Everything enqueued by the test has finished before the communicator and the buffers go.
    if (stream != nullptr) {
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    }
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);  // releases the cached GPU communicator
    if (stream != nullptr) cudaStreamDestroy(stream);
    stream = nullptr;
    // Rank 0's report names the test as failed when any rank failed it (as the native suite's fixture
    // does; gpu_main.cc prints the other ranks' messages at the end).
    const int failed = HasFailure() ? 1 : 0;
    int world = 0, me = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    std::vector<int> all(world, 0);
    MPI_Allgather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::string others;
    for (int r = 1; r < world; ++r)
      if (all[r]) others += " " + std::to_string(r);
    if (me == 0 && !others.empty())
      ADD_FAILURE() << alloytest::kOtherRanksFailed << others << " (their messages follow the test summary)";
    trace_.reset();
  }

  // A device copy of `host` (NULL when empty, as a rank that moves nothing may pass), complete on the
  // device when this returns: copied on `stream`, which is then synchronised.
  void* upload(const std::vector<uint8_t>& host) {
    if (host.empty()) return nullptr;
    void* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, host.size()), cudaSuccess);
    if (d == nullptr) return nullptr;
    allocations_.push_back(d);
    EXPECT_EQ(cudaMemcpyAsync(d, host.data(), host.size(), cudaMemcpyHostToDevice, stream), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    return d;
  }
  // `bytes` of device memory at d, read after everything enqueued on `stream` so far.
  std::vector<uint8_t> download(const void* d, size_t bytes) {
    std::vector<uint8_t> host(bytes);
    if (bytes > 0) {
      EXPECT_EQ(cudaMemcpyAsync(host.data(), d, bytes, cudaMemcpyDeviceToHost, stream), cudaSuccess);
    }
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    return host;
  }
  ~MpixGpu() override {
    for (void* d : allocations_) cudaFree(d);
  }

  // Runs `mpix` on device copies and `reference` (the MPI call) on host copies of the same send and
  // receive buffers; expects MPI_SUCCESS and byte-identical receive buffers. `send` may be empty.
  template <typename Mpix, typename Reference>
  void expectSameAsMpi(const std::vector<uint8_t>& send, const std::vector<uint8_t>& recvInitial, Mpix mpix,
                       Reference reference, const std::string& what) {
    void* dsend = upload(send);
    void* drecv = upload(recvInitial);
    const int code = mpix(dsend, drecv);
    EXPECT_EQ(code, MPI_SUCCESS) << what << ": " << errorString(code);
    const std::vector<uint8_t> got = download(drecv, recvInitial.size());
    std::vector<uint8_t> hsend = send, expected = recvInitial;
    ASSERT_EQ(reference(hsend.empty() ? nullptr : hsend.data(), expected.data()), MPI_SUCCESS) << what;
    EXPECT_TRUE(alloytest::bytesEqual(expected.data(), got.data(), got.size(), what));
  }

  // Whether `comm` now runs its GPU calls enqueue-only (docs/mpi-extension.md, "Enqueue-only calls"):
  // after its first agreed GPU call, unless ALLOY_MPIX_AGREE=1 or it spans hosts.
  bool enqueueOnly() const {
    const alloy_mpix::Context* c = alloy_mpix::existingContext(comm);
    return c != nullptr && c->enqueueOnly;
  }
  // The pending rejection as MPIX_Cuda_rejection reports it, read after the stream passed every
  // operation enqueued so far: (MPI_SUCCESS, MPI_PROC_NULL) when there is none.
  std::pair<int, int> pendingRejection() {
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    int cls = -1, who = -2;
    EXPECT_EQ(MPIX_Cuda_rejection(comm, &cls, &who), MPI_SUCCESS);
    return {cls, who};
  }

  MPI_Comm comm = MPI_COMM_NULL;
  cudaStream_t stream = nullptr;
  int rank = 0, n = 1;
  uint64_t seed = 0;

 private:
  std::vector<void*> allocations_;
  std::unique_ptr<::testing::ScopedTrace> trace_;
};

}  // namespace mpixtest
