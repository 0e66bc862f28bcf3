// host-cost: where a small operation's time goes when operations run back to back (nccl-tests' loop), one
// MPI rank per GPU:
//   - the host time of single CUDA runtime calls that Alloy's launch path makes (pointer attributes, the
//     capture query, the stream's id, an event record and wait, a kernel launch with small and with
//     DirectLaunch-sized parameters);
//   - per Alloy call of 8 bytes (allreduce, reduce, broadcast, all-gather, reduce-scatter, alltoall, a
//     send/recv ring in a group): the host time of the call alone ("host"), and the time per call of a
//     batch that then synchronises the stream ("with the GPU"). Where "host" is close to "with the GPU",
//     the host sets the pace of back-to-back calls.
// Each figure is the median over rounds of batches on the slowest rank.
//   mpirun -np <GPUs> --bind-to none host-cost
#include <alloy.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "mpi_gpu_tool.h"

#define ALLOY_CHECK(call) TOOL_CHECK(call, alloySuccess, alloyGetErrorString)

namespace {

constexpr int kBatch = 100, kRounds = 15;

struct Parameters {  // the size of DirectLaunch (656 bytes when written)
  char bytes[656];
};
__global__ void emptyKernel(int) {}
__global__ void emptyKernelWide(const __grid_constant__ Parameters) {}

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double host, withGpu;  // us per call
};

// kRounds rounds of kBatch calls of `call`: the host time of each batch, then the batch with the stream's
// synchronisation; medians, the slowest rank's.
Timing timeCalls(cudaStream_t stream, const std::function<void()>& call) {
  std::vector<double> host, all;
  for (int round = 0; round < kRounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = seconds();
    for (int i = 0; i < kBatch; ++i) call();
    const double enqueued = seconds();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double done = seconds();
    host.push_back((enqueued - start) / kBatch * 1e6);
    all.push_back((done - start) / kBatch * 1e6);
  }
  std::sort(host.begin(), host.end());
  std::sort(all.begin(), all.end());
  Timing mine{host[kRounds / 2], all[kRounds / 2]}, slowest{};
  MPI_Allreduce(&mine, &slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, size = 0, devices = 0;
  if (!startOnGpus(&argc, &argv, "host-cost", &rank, &size, &devices)) return 0;
  CHECK_CUDA(cudaSetDevice(rank % devices));
  cudaStream_t stream;
  cudaEvent_t event;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  char *send = nullptr, *recv = nullptr;
  CHECK_CUDA(cudaMalloc(&send, 1 << 20));
  CHECK_CUDA(cudaMalloc(&recv, 1 << 20));
  CHECK_CUDA(cudaMemset(send, 0, 1 << 20));

  struct Row {
    const char* name;
    std::function<void()> call;
  };
  cudaPointerAttributes attributes;
  cudaStreamCaptureStatus capture;
  unsigned long long id = 0;
  int device = 0;
  Parameters wide{};
  const std::vector<Row> runtime = {
      {"cudaGetDevice", [&] { CHECK_CUDA(cudaGetDevice(&device)); }},
      {"cudaPointerGetAttributes", [&] { CHECK_CUDA(cudaPointerGetAttributes(&attributes, send)); }},
      {"cudaStreamIsCapturing", [&] { CHECK_CUDA(cudaStreamIsCapturing(stream, &capture)); }},
      {"cudaStreamGetId", [&] { CHECK_CUDA(cudaStreamGetId(stream, &id)); }},
      {"cudaEventRecord", [&] { CHECK_CUDA(cudaEventRecord(event, stream)); }},
      {"cudaStreamWaitEvent", [&] { CHECK_CUDA(cudaStreamWaitEvent(stream, event, 0)); }},
      {"launch <<<1, 32>>>, 4-byte parameters", [&] { emptyKernel<<<1, 32, 0, stream>>>(0); CHECK_CUDA(cudaGetLastError()); }},
      {"launch <<<64, 512>>>, 656-byte parameters", [&] {
         emptyKernelWide<<<64, 512, 0, stream>>>(wide);
         CHECK_CUDA(cudaGetLastError());
       }},
  };
  if (rank == 0) std::printf("host-cost: %d ranks, one per GPU; us per call, median of %d rounds of %d, slowest rank\n",
                             size, kRounds, kBatch);
  if (rank == 0) std::printf("%-44s %10s %14s\n", "CUDA runtime call", "host", "with the GPU");
  for (const Row& row : runtime) {
    const Timing t = timeCalls(stream, row.call);
    if (rank == 0) std::printf("%-44s %10.2f %14.2f\n", row.name, t.host, t.withGpu);
  }

  alloyComm_t comm = nullptr;
  ALLOY_CHECK(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  const std::vector<Row> alloy = {
      {"alloyAllReduce 8 B", [&] { ALLOY_CHECK(alloyAllReduce(send, recv, 2, alloyFloat32, alloySum, comm, stream)); }},
      {"alloyReduce 8 B", [&] { ALLOY_CHECK(alloyReduce(send, recv, 2, alloyFloat32, alloySum, 0, comm, stream)); }},
      {"alloyBroadcast 8 B", [&] { ALLOY_CHECK(alloyBroadcast(send, recv, 2, alloyFloat32, 0, comm, stream)); }},
      {"alloyAllGather 8 B per rank", [&] { ALLOY_CHECK(alloyAllGather(send, recv, 2, alloyFloat32, comm, stream)); }},
      {"alloyReduceScatter 8 B per rank", [&] {
         ALLOY_CHECK(alloyReduceScatter(send, recv, 2, alloyFloat32, alloySum, comm, stream));
       }},
      {"alloyAlltoAll 8 B per peer", [&] { ALLOY_CHECK(alloyAlltoAll(send, recv, 2, alloyFloat32, comm, stream)); }},
      {"send/recv ring in a group, 8 B", [&] {
         ALLOY_CHECK(alloyGroupStart());
         ALLOY_CHECK(alloySend(send, 2, alloyFloat32, next, comm, stream));
         ALLOY_CHECK(alloyRecv(recv, 2, alloyFloat32, previous, comm, stream));
         ALLOY_CHECK(alloyGroupEnd());
       }},
  };
  if (rank == 0) std::printf("%-44s %10s %14s\n", "Alloy call", "host", "with the GPU");
  for (const Row& row : alloy) {
    timeCalls(stream, row.call);  // warm-up: first launches load kernels
    const Timing t = timeCalls(stream, row.call);
    if (rank == 0) std::printf("%-44s %10.2f %14.2f\n", row.name, t.host, t.withGpu);
  }
  ALLOY_CHECK(alloyCommDestroy(comm));
  CHECK_CUDA(cudaFree(send));
  CHECK_CUDA(cudaFree(recv));
  CHECK_CUDA(cudaEventDestroy(event));
  CHECK_CUDA(cudaStreamDestroy(stream));
  MPI_Finalize();
  return 0;
}
