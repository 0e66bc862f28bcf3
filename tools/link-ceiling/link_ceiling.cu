// link-ceiling: the most every GPU of a host can send to all of its peers at once, which bounds what any
// collective moving (n - 1) / n of its data over the links per step can reach (allreduce, reduce-scatter,
// all-gather and alltoall bus bandwidth is that per-GPU traffic). One process drives every visible GPU with
// peer access; all GPUs send at the same time, each the same bytes to every peer:
//   SM stores      a kernel of B blocks x 512 threads loads 16-byte vectors of its source once and stores
//                  each to every peer's buffer (the direct engine's pattern), for several B;
//   SM stores, ring  the same bytes all to the next GPU (a ring's pattern, NCCL's: on 4 x H100 its
//                  broadcast and reduce ran a few percent above the all-peers figure);
//   copy engines   one cudaMemcpyPeerAsync per peer, each on a stream of its own.
// It prints, per path, the slowest and the mean GPU's egress (GB/s, 1e9 bytes) and then the best slowest
// GPU's figure: the ceiling.
//   link-ceiling [bytes per peer, default 268435456] [iterations, default 10]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kMaxGpus = 16, kThreads = 512, kUnroll = 4;

#define CHECK(call)                                                                          \
  do {                                                                                       \
    const cudaError_t err = (call);                                                          \
    if (err != cudaSuccess) {                                                                \
      std::fprintf(stderr, "link-ceiling: %s failed: %s\n", #call, cudaGetErrorString(err)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

struct Peers {
  uint4* dst[kMaxGpus - 1];  // this GPU's slot in every peer's receive buffer
  int count;
};

// Every thread takes kUnroll vectors per step, loads them all, then stores each to every peer.
__global__ void __launch_bounds__(kThreads) pushToPeers(const uint4* src, Peers peers, size_t vectors) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(src + i + u * stride);
    for (int p = 0; p < peers.count; ++p) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) peers.dst[p][i + u * stride] = v[u];
    }
  }
  for (; i < vectors; i += stride) {
    const uint4 v = __ldcg(src + i);
    for (int p = 0; p < peers.count; ++p) peers.dst[p][i] = v;
  }
}

struct Gpu {
  char* src = nullptr;
  char* recv = nullptr;  // (n - 1) slots, one per peer that sends here
  cudaStream_t streams[kMaxGpus] = {};
  cudaEvent_t start = nullptr, stop = nullptr;
};

// The slot that GPU `from` writes in GPU `to`'s receive buffer.
char* slotAt(std::vector<Gpu>& gpus, int to, int from, size_t bytes) {
  return gpus[to].recv + static_cast<size_t>(from < to ? from : from - 1) * bytes;
}

// Runs `iterations` rounds of one path on every GPU at once; each GPU's egress in GB/s into egress[].
template <typename Enqueue>
void timeAll(std::vector<Gpu>& gpus, size_t bytes, int iterations, Enqueue enqueue, std::vector<double>* egress) {
  const int n = static_cast<int>(gpus.size());
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaDeviceSynchronize());
  }
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaEventRecord(gpus[d].start, gpus[d].streams[0]));
    for (int it = 0; it < iterations; ++it) enqueue(d);
    CHECK(cudaEventRecord(gpus[d].stop, gpus[d].streams[0]));
  }
  egress->assign(n, 0);
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaEventSynchronize(gpus[d].stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, gpus[d].start, gpus[d].stop));
    (*egress)[d] = static_cast<double>(n - 1) * bytes * iterations / (ms * 1e-3) / 1e9;
  }
}

void report(const char* path, const char* blocks, const std::vector<double>& egress, double* best, const char** bestPath) {
  double lowest = egress[0], sum = 0;
  for (double e : egress) {
    lowest = e < lowest ? e : lowest;
    sum += e;
  }
  std::printf("%-16s %8s %12.1f %10.1f\n", path, blocks, lowest, sum / egress.size());
  if (lowest > *best) {
    *best = lowest;
    *bestPath = path;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 0) / 16 * 16 : size_t{256} << 20;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 10;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
    std::printf("link-ceiling: skipped: fewer than 2 CUDA devices\n");
    return 0;
  }
  if (n > kMaxGpus || bytes == 0 || iterations <= 0) {
    std::fprintf(stderr, "link-ceiling: expected at most %d GPUs, bytes >= 16 and iterations > 0\n", kMaxGpus);
    return 2;
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      int can = 1;
      if (a != b) CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) {
        std::fprintf(stderr, "link-ceiling: GPU %d cannot access GPU %d's memory\n", a, b);
        return 1;
      }
    }
  std::vector<Gpu> gpus(n);
  int sms = 0;
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    for (int p = 0; p < n; ++p)
      if (p != d) CHECK(cudaDeviceEnablePeerAccess(p, 0));
    CHECK(cudaMalloc(&gpus[d].src, bytes));
    CHECK(cudaMalloc(&gpus[d].recv, static_cast<size_t>(n - 1) * bytes));
    CHECK(cudaMemset(gpus[d].src, d + 1, bytes));
    for (int s = 0; s < n; ++s) CHECK(cudaStreamCreateWithFlags(&gpus[d].streams[s], cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&gpus[d].start));
    CHECK(cudaEventCreate(&gpus[d].stop));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("link-ceiling: %d x %s, %zu bytes from every GPU to each peer, %d iterations\n", n, prop.name, bytes,
              iterations);
  std::printf("%-16s %8s %12s %10s\n", "path", "blocks", "slowest GPU", "mean GB/s");

  double best = 0;
  const char* bestPath = "none";
  std::vector<double> egress;
  for (int blocks : {32, 64, sms, 2 * sms}) {
    timeAll(gpus, bytes, iterations, [&](int d) {
      Peers peers{};
      for (int p = 0; p < n; ++p)
        if (p != d) peers.dst[peers.count++] = reinterpret_cast<uint4*>(slotAt(gpus, p, d, bytes));
      pushToPeers<<<blocks, kThreads, 0, gpus[d].streams[0]>>>(reinterpret_cast<const uint4*>(gpus[d].src), peers,
                                                              bytes / 16);
      CHECK(cudaGetLastError());
    }, &egress);
    report("SM stores", std::to_string(blocks).c_str(), egress, &best, &bestPath);
  }
  // The ring: GPU d's (n - 1) x bytes all go into the next GPU's receive buffer, whose only sender it is.
  for (int blocks : {32, 64, sms, 2 * sms}) {
    timeAll(gpus, bytes, iterations, [&](int d) {
      Peers next{};
      for (int k = 0; k < n - 1; ++k)
        next.dst[next.count++] = reinterpret_cast<uint4*>(gpus[(d + 1) % n].recv + static_cast<size_t>(k) * bytes);
      pushToPeers<<<blocks, kThreads, 0, gpus[d].streams[0]>>>(reinterpret_cast<const uint4*>(gpus[d].src), next,
                                                              bytes / 16);
      CHECK(cudaGetLastError());
    }, &egress);
    report("SM stores, ring", std::to_string(blocks).c_str(), egress, &best, &bestPath);
  }
  // Copies to the peers on streams 1..n-1, joined back to stream 0 (which carries the events) per round.
  std::vector<cudaEvent_t> joins(static_cast<size_t>(n) * n);
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    for (int s = 0; s < n; ++s) CHECK(cudaEventCreateWithFlags(&joins[d * n + s], cudaEventDisableTiming));
  }
  timeAll(gpus, bytes, iterations, [&](int d) {
    CHECK(cudaEventRecord(joins[d * n], gpus[d].streams[0]));
    int s = 1;
    for (int p = 0; p < n; ++p) {
      if (p == d) continue;
      CHECK(cudaStreamWaitEvent(gpus[d].streams[s], joins[d * n], 0));
      CHECK(cudaMemcpyPeerAsync(slotAt(gpus, p, d, bytes), p, gpus[d].src, d, bytes, gpus[d].streams[s]));
      CHECK(cudaEventRecord(joins[d * n + s], gpus[d].streams[s]));
      CHECK(cudaStreamWaitEvent(gpus[d].streams[0], joins[d * n + s], 0));
      ++s;
    }
  }, &egress);
  report("copy engines", "-", egress, &best, &bestPath);
  std::printf("ceiling: %.1f GB/s per GPU (%s, the slowest GPU)\n", best, bestPath);

  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    for (int s = 0; s < n; ++s) {
      CHECK(cudaEventDestroy(joins[d * n + s]));
      CHECK(cudaStreamDestroy(gpus[d].streams[s]));
    }
    CHECK(cudaEventDestroy(gpus[d].start));
    CHECK(cudaEventDestroy(gpus[d].stop));
    CHECK(cudaFree(gpus[d].src));
    CHECK(cudaFree(gpus[d].recv));
  }
  return 0;
}
