// Fixture and helpers of the MPI extension's GPU tests: one CUDA device per rank (set before the first
// MPIX call, as an MPI+CUDA program does), a stream, device copies of host data, and the reference run
// of the MPI library's own collective on host copies of the same data.
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <string>
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
    seed = alloytest::mix64(alloytest::baseSeed() ^ std::hash<std::string>()(
        ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    trace_.reset(new ::testing::ScopedTrace(__FILE__, __LINE__, "base seed " + alloytest::hex(alloytest::baseSeed())));
  }
  void TearDown() override {
    MPI_Comm_free(&comm);  // releases the cached GPU communicator
    cudaStreamDestroy(stream);
  }

  // A device copy of `host` (NULL when empty, as a rank that moves nothing may pass).
  void* upload(const std::vector<uint8_t>& host) {
    if (host.empty()) return nullptr;
    void* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, host.size()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
    allocations_.push_back(d);
    return d;
  }
  std::vector<uint8_t> download(const void* d, size_t bytes) {
    std::vector<uint8_t> host(bytes);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    if (bytes > 0) {
      EXPECT_EQ(cudaMemcpy(host.data(), d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    }
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

  MPI_Comm comm = MPI_COMM_NULL;
  cudaStream_t stream = nullptr;
  int rank = 0, n = 1;
  uint64_t seed = 0;

 private:
  std::vector<void*> allocations_;
  std::unique_ptr<::testing::ScopedTrace> trace_;
};

}  // namespace mpixtest
