// flag-barrier: the cost of one flag barrier between the GPUs of a host, one MPI rank per GPU, per
// kernel launched back to back, in a CUDA graph (no host launch cost) and eagerly. Each block's thread 0
// raises its flag at every peer and waits for every peer's; the orderings compared:
//   empty              the kernel alone
//   release/acquire    fence.sc.sys, then st.release.sys per peer; ld.acquire.sys polls
//   fence + relaxed    fence.sc.sys, then relaxed stores; relaxed polls, then fence.sc.sys
//   relaxed only       relaxed stores and polls (what low-latency lines amount to: no fence)
// at 1, 4 and 32 blocks of 512 threads. Peers' flags are mapped with CUDA IPC.
//   mpirun -np <GPUs> flag-barrier
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "mpi_gpu_tool.h"

namespace {

constexpr int kMaxRanks = 16, kMaxBlocks = 32, kLine = 8;  // flags: one 64-byte line per (source, block)

enum Style { kEmpty, kReleaseAcquire, kFenceRelaxed, kRelaxed, kStyles };
const char* const kStyleNames[kStyles] = {"empty", "release/acquire", "fence + relaxed", "relaxed only"};

struct Barrier {
  uint64_t* flags[kMaxRanks];  // every rank's flag area, mapped here
  uint64_t* count;             // this rank's barriers per block
  int rank, nranks, style;
};

__device__ uint64_t load(const uint64_t* p, bool acquire) {
  uint64_t v;
  if (acquire) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ void store(uint64_t* p, uint64_t v, bool release) {
  if (release) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  else asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void barrier(Barrier b) {
  if (b.style == kEmpty || threadIdx.x != 0) return;
  const uint64_t step = b.count[blockIdx.x] + 1;
  const bool strong = b.style == kReleaseAcquire;
  if (b.style != kRelaxed) __threadfence_system();
  for (int p = 0; p < b.nranks; ++p)
    if (p != b.rank) store(b.flags[p] + (b.rank * kMaxBlocks + blockIdx.x) * kLine, step, strong);
  for (int q = 0; q < b.nranks; ++q) {
    if (q == b.rank) continue;
    const uint64_t* flag = b.flags[b.rank] + (q * kMaxBlocks + blockIdx.x) * kLine;
    while (load(flag, strong) < step) {
    }
  }
  if (b.style == kFenceRelaxed) __threadfence_system();
  b.count[blockIdx.x] = step;
}

double microsPer(int launches, const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / launches;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, nranks = 0, devices = 0;
  if (!startOnGpus(&argc, &argv, "flag-barrier", &rank, &nranks, &devices)) return 0;
  if (nranks > kMaxRanks || nranks > devices) {
    if (rank == 0) std::fprintf(stderr, "flag-barrier: one rank per GPU, at most %d (%d GPUs)\n", kMaxRanks, devices);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  CHECK_CUDA(cudaSetDevice(rank));
  const size_t flagBytes = sizeof(uint64_t) * kLine * kMaxRanks * kMaxBlocks;
  Barrier b{};
  b.rank = rank;
  b.nranks = nranks;
  CHECK_CUDA(cudaMalloc(&b.flags[rank], flagBytes));
  CHECK_CUDA(cudaMemset(b.flags[rank], 0, flagBytes));
  CHECK_CUDA(cudaMalloc(&b.count, sizeof(uint64_t) * kMaxBlocks));
  CHECK_CUDA(cudaMemset(b.count, 0, sizeof(uint64_t) * kMaxBlocks));
  cudaIpcMemHandle_t mine, all[kMaxRanks];
  CHECK_CUDA(cudaIpcGetMemHandle(&mine, b.flags[rank]));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  for (int p = 0; p < nranks; ++p) {
    if (p == rank) continue;
    void* mapped = nullptr;
    CHECK_CUDA(cudaIpcOpenMemHandle(&mapped, all[p], cudaIpcMemLazyEnablePeerAccess));
    b.flags[p] = static_cast<uint64_t*>(mapped);
  }
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaDeviceSynchronize());
  if (rank == 0) std::printf("%d ranks, one GPU each; microseconds per kernel\n", nranks);
  constexpr int kPerGraph = 100, kGraphs = 20, kEager = 2000;
  for (int style = 0; style < kStyles; ++style) {
    for (int blocks : {1, 4, kMaxBlocks}) {
      b.style = style;
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < kPerGraph; ++i) barrier<<<blocks, 512, 0, stream>>>(b);
      CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
      CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
      CHECK_CUDA(cudaGraphLaunch(exec, stream));  // warm-up
      CHECK_CUDA(cudaStreamSynchronize(stream));
      MPI_Barrier(MPI_COMM_WORLD);
      auto start = std::chrono::steady_clock::now();
      for (int g = 0; g < kGraphs; ++g) CHECK_CUDA(cudaGraphLaunch(exec, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double inGraph = microsPer(kGraphs * kPerGraph, start);
      MPI_Barrier(MPI_COMM_WORLD);
      start = std::chrono::steady_clock::now();
      for (int i = 0; i < kEager; ++i) barrier<<<blocks, 512, 0, stream>>>(b);
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double eager = microsPer(kEager, start);
      if (rank == 0) std::printf("%-16s %2d blocks: %6.2f in a graph, %6.2f eager\n", kStyleNames[style], blocks, inGraph, eager);
      CHECK_CUDA(cudaGraphExecDestroy(exec));
      CHECK_CUDA(cudaGraphDestroy(graph));
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  for (int p = 0; p < nranks; ++p)
    if (p != rank) CHECK_CUDA(cudaIpcCloseMemHandle(b.flags[p]));
  CHECK_CUDA(cudaFree(b.flags[rank]));
  CHECK_CUDA(cudaFree(b.count));
  MPI_Finalize();
  return 0;
}
