// What the measuring tools that run one MPI rank per GPU share: a check that ends the whole job with the
// failing call and its error's text, and the start that skips on a machine without a CUDA device.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>

// Aborts the job where `call` does not return `ok`, printing the call and errorString(what it returned).
#define TOOL_CHECK(call, ok, errorString)                                             \
  do {                                                                                \
    const auto tool_result_ = (call);                                                 \
    if (tool_result_ != (ok)) {                                                       \
      std::fprintf(stderr, "%s: %s\n", #call, errorString(tool_result_));             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_CUDA(call) TOOL_CHECK(call, cudaSuccess, cudaGetErrorString)

// MPI_Init, then this rank, the job's size and the CUDA devices this process sees. Without a device, rank
// 0 prints "<tool>: skipped: no CUDA device" (what the gpu-check modes look for), MPI is finalised, and
// the result is false: the tool then returns 0.
inline bool startOnGpus(int* argc, char*** argv, const char* tool, int* rank, int* size, int* devices) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  if (cudaGetDeviceCount(devices) == cudaSuccess && *devices > 0) return true;
  if (*rank == 0) std::printf("%s: skipped: no CUDA device\n", tool);
  MPI_Finalize();
  return false;
}
