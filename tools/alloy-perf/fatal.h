// Error handling shared by every file of alloy-perf.
//
// The tool runs as one process per GPU under mpirun. A rank that stops on its own would leave the others
// blocked in a collective forever, so every unrecoverable error goes through fatal(), which prints the
// message with the rank and then takes the whole job down with MPI_Abort.
#ifndef ALLOY_PERF_FATAL_H_
#define ALLOY_PERF_FATAL_H_

#include <cuda_runtime.h>
#include <mpi.h>

namespace alloyperf {

// Prints "alloy-perf: rank R: <message>" to stderr and aborts every rank with a non-zero exit status.
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The rank used in messages; set once MPI is initialised (-1 before).
void setMessageRank(int rank);

}  // namespace alloyperf

// Every CUDA runtime call of the tool goes through CUDA_CHECK: a failed call names itself and its place.
#define CUDA_CHECK(call)                                                                         \
  do {                                                                                           \
    cudaError_t err_ = (call);                                                                   \
    if (err_ != cudaSuccess)                                                                     \
      ::alloyperf::fatal("%s:%d: %s failed: %s", __FILE__, __LINE__, #call,                      \
                         cudaGetErrorString(err_));                                              \
  } while (0)

#define MPI_CHECK(call)                                                                          \
  do {                                                                                           \
    int err_ = (call);                                                                           \
    if (err_ != MPI_SUCCESS) ::alloyperf::fatal("%s:%d: %s failed (%d)", __FILE__, __LINE__, #call, err_); \
  } while (0)

#endif  // ALLOY_PERF_FATAL_H_
