// flag-barrier: the cost of one flag barrier between the GPUs of a host, one MPI rank per GPU, per
// kernel launched back to back, in a CUDA graph (no host launch cost) and eagerly. Each block's thread 0
// raises its flag at every peer and waits for every peer's; the orderings compared:
//   empty              the kernel alone
//   release/acquire    fence.sc.sys, then st.release.sys per peer; ld.acquire.sys polls (the rings' old
//                      publication, ALLOY_FENCE=sc)
//   fence + relaxed    fence.sc.sys, then relaxed stores; relaxed polls, then fence.sc.sys (the direct
//                      engine's old rounds, ALLOY_FENCE=sc)
//   acq_rel + relaxed  fence.acq_rel.sys, then relaxed stores; relaxed polls, then one ld.acquire.sys per
//                      peer (the library's publication since session 19: sync_primitives.cuh)
//   release only       st.release.sys per peer, no fence; relaxed polls, then ld.acquire.sys
//   relaxed only       relaxed stores and polls (what low-latency lines amount to: no fence)
// at 1, 4 and 32 blocks of 512 threads, first with nothing to publish, then with every block storing
// 64 KiB to each peer before its barrier (what a fence then waits for). Peers' memory is mapped with CUDA IPC.
//   mpirun -np <GPUs> flag-barrier
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "mpi_gpu_tool.h"

namespace {

constexpr int kMaxRanks = 16, kMaxBlocks = 32, kLine = 8;  // flags: one 64-byte line per (source, block)
constexpr size_t kPayload = 64 << 10;                         // bytes a block stores to each peer per barrier

enum Style { kEmpty, kReleaseAcquire, kFenceRelaxed, kAcqRelRelaxed, kReleaseOnly, kRelaxed, kStyles };
const char* const kStyleNames[kStyles] = {"empty", "release/acquire", "fence + relaxed", "acq_rel + relaxed",
                                          "release only", "relaxed only"};

struct Barrier {
  uint64_t* flags[kMaxRanks];  // every rank's flag area, mapped here
  uint4* data[kMaxRanks];      // every rank's payload area (a kPayload slot per source and block), mapped here
  uint64_t* count;             // this rank's barriers per block
  int rank, nranks, style, payload;
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
  if (b.payload) {
    const size_t words = kPayload / sizeof(uint4), slot = (b.rank * kMaxBlocks + blockIdx.x) * words;
    const uint4 value = make_uint4(blockIdx.x, threadIdx.x, b.rank, 0);
    for (int p = 0; p < b.nranks; ++p)
      if (p != b.rank)
        for (size_t i = threadIdx.x; i < words; i += blockDim.x) b.data[p][slot + i] = value;
    __syncthreads();
  }
  if (b.style == kEmpty || threadIdx.x != 0) return;
  const uint64_t step = b.count[blockIdx.x] + 1;
  const bool releaseStores = b.style == kReleaseAcquire || b.style == kReleaseOnly;
  if (b.style == kReleaseAcquire || b.style == kFenceRelaxed) __threadfence_system();
  if (b.style == kAcqRelRelaxed) asm volatile("fence.acq_rel.sys;" ::: "memory");
  for (int p = 0; p < b.nranks; ++p)
    if (p != b.rank) store(b.flags[p] + (b.rank * kMaxBlocks + blockIdx.x) * kLine, step, releaseStores);
  for (int q = 0; q < b.nranks; ++q) {
    if (q == b.rank) continue;
    const uint64_t* flag = b.flags[b.rank] + (q * kMaxBlocks + blockIdx.x) * kLine;
    while (load(flag, b.style == kReleaseAcquire) < step) {
    }
    if (b.style == kAcqRelRelaxed || b.style == kReleaseOnly) load(flag, true);
  }
  if (b.style == kFenceRelaxed) __threadfence_system();
  b.count[blockIdx.x] = step;
}

// Maps every peer's allocation areas[p] into areas[p] here (areas[rank] is this rank's own).
void mapPeers(void** areas, int rank, int nranks) {
  cudaIpcMemHandle_t mine, all[kMaxRanks];
  CHECK_CUDA(cudaIpcGetMemHandle(&mine, areas[rank]));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  for (int p = 0; p < nranks; ++p)
    if (p != rank) CHECK_CUDA(cudaIpcOpenMemHandle(&areas[p], all[p], cudaIpcMemLazyEnablePeerAccess));
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
  CHECK_CUDA(cudaMalloc(&b.data[rank], kPayload * kMaxRanks * kMaxBlocks));
  CHECK_CUDA(cudaMalloc(&b.count, sizeof(uint64_t) * kMaxBlocks));
  CHECK_CUDA(cudaMemset(b.count, 0, sizeof(uint64_t) * kMaxBlocks));
  mapPeers(reinterpret_cast<void**>(b.flags), rank, nranks);
  mapPeers(reinterpret_cast<void**>(b.data), rank, nranks);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaDeviceSynchronize());
  if (rank == 0) std::printf("%d ranks, one GPU each; microseconds per kernel\n", nranks);
  constexpr int kPerGraph = 100, kGraphs = 20, kEager = 2000;
  for (int payload : {0, 1}) {
    for (int style = 0; style < kStyles; ++style) {
      for (int blocks : {1, 4, kMaxBlocks}) {
        b.style = style;
        b.payload = payload;
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
        if (rank == 0)
          std::printf("%-17s %-12s %2d blocks: %6.2f in a graph, %6.2f eager\n", kStyleNames[style],
                      payload ? "64 KiB/peer" : "no payload", blocks, inGraph, eager);
        CHECK_CUDA(cudaGraphExecDestroy(exec));
        CHECK_CUDA(cudaGraphDestroy(graph));
        MPI_Barrier(MPI_COMM_WORLD);
      }
    }
  }
  for (int p = 0; p < nranks; ++p)
    if (p != rank) {
      CHECK_CUDA(cudaIpcCloseMemHandle(b.flags[p]));
      CHECK_CUDA(cudaIpcCloseMemHandle(b.data[p]));
    }
  CHECK_CUDA(cudaFree(b.flags[rank]));
  CHECK_CUDA(cudaFree(b.data[rank]));
  CHECK_CUDA(cudaFree(b.count));
  MPI_Finalize();
  return 0;
}
