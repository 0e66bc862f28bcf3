// layer-cost [rounds] [iterations]: what the MPI layer (docs/mpi-layer.md) adds to Alloy's own call, measured
// in one job so that both sides see the same machine. The tool links liballoy_mpi before MPI, so that its
// MPI_Alltoallv and MPI_Allreduce on device buffers go through the layer, and it also makes Alloy's own call
// on a communicator of its own created from MPI_COMM_WORLD. Both are timed as OSU 5.7 times a blocking
// collective (the call, then for Alloy's own cudaStreamSynchronize, on the host's clock, an MPI_Barrier
// after each call outside the clock; the ranks' average), in rounds of `iterations` calls that alternate
// the two sides and the order within a round (layer first, then Alloy first). Per size it prints the median
// round of each side and the median, first and third quartile of the rounds' differences (each round's
// layer time minus the same round's Alloy time): pairing the rounds leaves out the drift between separate
// runs that made single OSU sizes jump by 8-11 us in session 19. Each side's result is checked once per
// size against the data's own arithmetic before any timing. Run under mpirun with one rank per GPU of one
// host.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "alloy.h"
#include "mpi_gpu_tool.h"

namespace {

#define CHECK_ALLOY(call) TOOL_CHECK(call, alloySuccess, alloyGetErrorString)
#define CHECK_MPI(call) TOOL_CHECK(call, MPI_SUCCESS, mpiErrorString)

const char* mpiErrorString(int code) {
  static char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return text;
}

constexpr unsigned char kPoison = 0xa5;

struct Job {
  int rank, size;
  alloyComm_t comm;
  cudaStream_t stream;
};

// One side's call: the layer's (a blocking MPI call) or Alloy's own (enqueued, then synchronised).
using Call = std::function<void()>;

// The ranks' average time of one call over `iterations` calls, timed as OSU does, in us.
double averageCallUs(const Job& job, const Call& call, int iterations) {
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  double seconds = 0;
  for (int i = 0; i < iterations; ++i) {
    const double start = MPI_Wtime();
    call();
    seconds += MPI_Wtime() - start;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  }
  double sum = 0;
  const double mine = 1e6 * seconds / iterations;
  CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return sum / job.size;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// Rounds of both sides, alternating which goes first; prints one row and returns the median difference.
double compare(const Job& job, const char* op, size_t bytes, const Call& layer, const Call& own, int rounds,
               int iterations) {
  std::vector<double> layerUs, ownUs, costUs;
  for (int r = 0; r < rounds; ++r) {
    double l = 0, o = 0;
    if (r % 2 == 0) {
      l = averageCallUs(job, layer, iterations);
      o = averageCallUs(job, own, iterations);
    } else {
      o = averageCallUs(job, own, iterations);
      l = averageCallUs(job, layer, iterations);
    }
    layerUs.push_back(l);
    ownUs.push_back(o);
    costUs.push_back(l - o);
  }
  const double cost = quantile(costUs, 0.5);
  if (job.rank == 0)
    std::printf("%-10s %9zu %10.2f %10.2f %8.2f %8.2f %8.2f\n", op, bytes, quantile(layerUs, 0.5),
                quantile(ownUs, 0.5), cost, quantile(costUs, 0.25), quantile(costUs, 0.75));
  return cost;
}

// Every rank agrees whether `ok` held on all of them; rank 0 names the failing call.
void requireEverywhere(bool ok, const char* what, size_t bytes) {
  int all = 0, mine = ok ? 1 : 0;
  CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (all) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "layer-cost: wrong result of %s, %zu output bytes\n", what, bytes);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Runs `call` once on a poisoned output and compares the output with `expected`.
void checkOnce(const Call& call, void* out, const std::vector<unsigned char>& expected, const char* what) {
  CHECK_CUDA(cudaMemset(out, kPoison, expected.size()));
  CHECK_CUDA(cudaDeviceSynchronize());
  call();
  std::vector<unsigned char> got(expected.size());
  CHECK_CUDA(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
  requireEverywhere(got == expected, what, expected.size());
}

// One size of one operation: device buffers holding this rank's input and the output, and the output's
// expected bytes.
struct Trial {
  const char* op;
  size_t bytes;  // OSU's size: one rank's block (alltoallv), the whole buffer (allreduce)
  void* send;
  void* recv;
  std::vector<unsigned char> expected;
};

// Checks each side's result once, then times both (compare); frees the trial's buffers.
double checkAndCompare(const Job& job, const Trial& t, const Call& layer, const Call& own, int rounds,
                       int iterations) {
  checkOnce(layer, t.recv, t.expected, "the call through the layer");
  checkOnce(own, t.recv, t.expected, "Alloy's own call");
  const double cost = compare(job, t.op, t.bytes, layer, own, rounds, iterations);
  CHECK_CUDA(cudaFree(t.send));
  CHECK_CUDA(cudaFree(t.recv));
  return cost;
}

// Byte i of the block that rank `from` sends rank `to`, in the alltoallv's data.
unsigned char blockByte(int from, int to, size_t i) { return static_cast<unsigned char>(from * 31 + to * 7 + i); }

// osu_alltoallv's call: `block` bytes (MPI_CHAR) to and from every rank, displacements of whole blocks.
double alltoallv(const Job& job, size_t block, int rounds, int iterations) {
  const size_t total = block * job.size;
  Trial t{"alltoallv", block, nullptr, nullptr, std::vector<unsigned char>(total)};
  std::vector<unsigned char> input(total);
  for (int p = 0; p < job.size; ++p)
    for (size_t i = 0; i < block; ++i) {
      input[p * block + i] = blockByte(job.rank, p, i);
      t.expected[p * block + i] = blockByte(p, job.rank, i);
    }
  CHECK_CUDA(cudaMalloc(&t.send, total));
  CHECK_CUDA(cudaMalloc(&t.recv, total));
  CHECK_CUDA(cudaMemcpy(t.send, input.data(), total, cudaMemcpyHostToDevice));
  std::vector<int> counts(job.size, static_cast<int>(block)), displs(job.size);
  std::vector<size_t> ownCounts(job.size, block), ownDispls(job.size);
  for (int p = 0; p < job.size; ++p) {
    displs[p] = static_cast<int>(p * block);
    ownDispls[p] = p * block;
  }
  const Call layer = [&] {
    CHECK_MPI(MPI_Alltoallv(t.send, counts.data(), displs.data(), MPI_CHAR, t.recv, counts.data(), displs.data(),
                            MPI_CHAR, MPI_COMM_WORLD));
  };
  const Call own = [&] {
    CHECK_ALLOY(alloyAlltoAllv(t.send, ownCounts.data(), ownDispls.data(), t.recv, ownCounts.data(),
                               ownDispls.data(), nullptr, alloyUint8, job.comm, job.stream));
    CHECK_CUDA(cudaStreamSynchronize(job.stream));
  };
  return checkAndCompare(job, t, layer, own, rounds, iterations);
}

// osu_allreduce's call: `bytes` of MPI_FLOAT summed. Small integers, so that every order of the sum is exact.
double allreduce(const Job& job, size_t bytes, int rounds, int iterations) {
  const size_t count = bytes / sizeof(float);
  std::vector<float> input(count), sum(count);
  for (size_t i = 0; i < count; ++i) {
    input[i] = static_cast<float>((job.rank + 1) * (i % 7));
    sum[i] = static_cast<float>(job.size * (job.size + 1) / 2 * (i % 7));
  }
  Trial t{"allreduce", bytes, nullptr, nullptr, std::vector<unsigned char>(bytes)};
  std::memcpy(t.expected.data(), sum.data(), bytes);
  CHECK_CUDA(cudaMalloc(&t.send, bytes));
  CHECK_CUDA(cudaMalloc(&t.recv, bytes));
  CHECK_CUDA(cudaMemcpy(t.send, input.data(), bytes, cudaMemcpyHostToDevice));
  const Call layer = [&] {
    CHECK_MPI(MPI_Allreduce(t.send, t.recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  };
  const Call own = [&] {
    CHECK_ALLOY(alloyAllReduce(t.send, t.recv, count, alloyFloat32, alloySum, job.comm, job.stream));
    CHECK_CUDA(cudaStreamSynchronize(job.stream));
  };
  return checkAndCompare(job, t, layer, own, rounds, iterations);
}

}  // namespace

int main(int argc, char** argv) {
  Job job{};
  int devices = 0;
  if (!startOnGpus(&argc, &argv, "layer-cost", &job.rank, &job.size, &devices)) return 0;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 200;
  if (rounds < 1 || iterations < 1) {
    if (job.rank == 0) std::fprintf(stderr, "usage: layer-cost [rounds >= 1] [iterations >= 1]\n");
    MPI_Finalize();
    return 2;
  }
  CHECK_ALLOY(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &job.comm));
  int device = 0;
  CHECK_ALLOY(alloyCommCuDevice(job.comm, &device));
  CHECK_CUDA(cudaSetDevice(device));
  CHECK_CUDA(cudaStreamCreateWithFlags(&job.stream, cudaStreamNonBlocking));
  if (job.rank == 0) {
    std::printf("layer-cost: %d ranks, %d rounds of %d calls a side; us per call, ranks' average\n", job.size,
                rounds, iterations);
    std::printf("%-10s %9s %10s %10s %8s %8s %8s\n", "op", "bytes", "layer", "alloy", "cost", "cost q1",
                "cost q3");
  }
  double worst = 0;
  for (size_t block = 16; block <= 65536; block *= 2) worst = std::max(worst, alltoallv(job, block, rounds, iterations));
  for (size_t bytes = 8; bytes <= 65536; bytes *= 2) worst = std::max(worst, allreduce(job, bytes, rounds, iterations));
  if (job.rank == 0) std::printf("layer-cost: worst median cost %.2f us (bound 3 us)\n", worst);
  CHECK_CUDA(cudaStreamDestroy(job.stream));
  CHECK_ALLOY(alloyCommDestroy(job.comm));
  MPI_Finalize();
  return 0;
}
