// net-stages: where the time of one small operation between hosts goes (issue #36), on a communicator that
// spans hosts (real ones, or virtual ones: ALLOY_HOSTID per rank, as scripts/gpu-check.sh hosts sets it).
// Each call runs alone: a barrier, the call, a synchronisation of its stream; the host stamps the three
// moments and the network channel its operations' stages (the doorbell found rung, every send completed,
// every receive's data in, the doorbell released: alloyDebugNetStages), all on this machine's steady clock.
// Per operation kind, rank 0 prints each rank's medians (stage_split.h):
//   mpirun -np 4 <wrapper setting ALLOY_HOSTID> net-stages [-n CALLS] [-b BYTES]
// "to rung" holds the stream's copy into the staging and its doorbell write and the proxy's poll; "after
// release" the stream's wait on the doorbell, the copy out and the kernel of the ranks of this host.
#include <alloy.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpi_gpu_tool.h"
#include "remote_channel.h"
#include "stage_split.h"

#define ALLOY_CHECK(call) TOOL_CHECK(call, alloySuccess, alloyGetErrorString)

namespace {

constexpr int kWarmup = 5;
constexpr int kMostCalls = static_cast<int>(alloy::kNetStagesKept) / 2;  // each call may take two operations

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Operation {
  std::string name;
  std::function<void()> call;
};

// `calls` calls of op, each alone; the split of this rank's.
StageSplit measure(const Operation& op, int calls, alloyComm_t comm, cudaStream_t stream) {
  for (int i = 0; i < kWarmup; ++i) {
    op.call();
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  std::vector<CallTimes> times(calls);
  for (CallTimes& t : times) {
    MPI_Barrier(MPI_COMM_WORLD);
    t.start = nowNs();
    op.call();
    t.enqueued = nowNs();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    t.done = nowNs();
  }
  std::vector<alloy::NetStages> stages(alloy::kNetStagesKept);
  size_t count = 0;
  ALLOY_CHECK(alloyDebugNetStages(comm, stages.data(), stages.size(), &count));
  stages.resize(count);
  return splitStages(times, stages);
}

void print(const std::string& name, int calls, const StageSplit& mine, int rank, int size) {
  constexpr int kFields = 10;
  const double fields[kFields] = {static_cast<double>(mine.calls), mine.opsPerCall, mine.enqueue, mine.toRung,
                                  mine.rungToPosted, mine.rungToSent, mine.rungToIn, mine.network,
                                  mine.afterRelease, mine.total};
  std::vector<double> all(rank == 0 ? kFields * size : 0);
  MPI_Gather(fields, kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  std::printf("net-stages: %s: %d calls, each alone; medians, us (-: no call had that stage)\n", name.c_str(), calls);
  std::printf("rank  calls ops/call  enqueue  to rung  rung->posted  rung->sent  rung->in  network  after release    total\n");
  for (int r = 0; r < size; ++r) {
    const double* f = &all[kFields * r];
    auto cell = [](double v, int width) {
      if (v < 0) std::printf(" %*s", width, "-");
      else std::printf(" %*.2f", width, v);
    };
    std::printf("%4d %6.0f %8.2f", r, f[0], f[1]);
    const int widths[] = {8, 8, 13, 11, 9, 8, 14, 8};
    for (int k = 0; k < 8; ++k) cell(f[2 + k], widths[k]);
    std::printf("\n");
  }
}

bool parse(int argc, char** argv, int* calls, size_t* bytes) {
  for (int i = 1; i + 1 < argc; i += 2) {
    char* end = nullptr;
    const long long v = std::strtoll(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v <= 0) return false;
    if (std::strcmp(argv[i], "-n") == 0 && v <= kMostCalls) *calls = static_cast<int>(v);
    else if (std::strcmp(argv[i], "-b") == 0 && v <= (1ll << 20)) *bytes = static_cast<size_t>(v);
    else return false;
  }
  return argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, size = 0, devices = 0;
  if (!startOnGpus(&argc, &argv, "net-stages", &rank, &size, &devices)) return 0;
  int calls = kMostCalls;
  size_t bytes = 8;
  if (!parse(argc, argv, &calls, &bytes)) {
    if (rank == 0)
      std::fprintf(stderr, "usage: net-stages [-n CALLS (1..%d)] [-b BYTES (1..1048576, rounded up to whole float32 elements)]\n", kMostCalls);
    MPI_Finalize();
    return 2;
  }
  bytes = (bytes + 3) / 4 * 4;  // whole float32 elements
  CHECK_CUDA(cudaSetDevice(rank % devices));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  alloyComm_t comm = nullptr;
  ALLOY_CHECK(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  alloy::NetStages probe;
  size_t none = 0;
  if (alloyDebugNetStages(comm, &probe, 1, &none) != alloySuccess) {
    if (rank == 0)
      std::fprintf(stderr, "net-stages: %s\n(give the ranks hosts: ALLOY_HOSTID per rank, as scripts/gpu-check.sh "
                           "hosts does)\n", alloyGetLastError(nullptr));
    alloyCommDestroy(comm);
    MPI_Finalize();
    return 2;
  }
  char *send = nullptr, *recv = nullptr;
  CHECK_CUDA(cudaMalloc(&send, bytes * size));
  CHECK_CUDA(cudaMalloc(&recv, bytes * size));
  CHECK_CUDA(cudaMemset(send, 1, bytes * size));
  const size_t count = bytes / 4;
  const std::string sized = std::to_string(bytes) + " B";
  const std::vector<Operation> operations = {
      {"alloyAllGather " + sized + " per rank",
       [&] { ALLOY_CHECK(alloyAllGather(send, recv, count, alloyFloat32, comm, stream)); }},
      {"alloyAllReduce " + sized,
       [&] { ALLOY_CHECK(alloyAllReduce(send, recv, count, alloyFloat32, alloySum, comm, stream)); }},
      {"alloyBroadcast " + sized + " from rank 0",
       [&] { ALLOY_CHECK(alloyBroadcast(send, recv, count, alloyFloat32, 0, comm, stream)); }},
      {"alloyAlltoAll " + sized + " per peer",
       [&] { ALLOY_CHECK(alloyAlltoAll(send, recv, count, alloyFloat32, comm, stream)); }},
  };
  for (const Operation& op : operations) print(op.name, calls, measure(op, calls, comm, stream), rank, size);
  ALLOY_CHECK(alloyCommDestroy(comm));
  CHECK_CUDA(cudaFree(send));
  CHECK_CUDA(cudaFree(recv));
  CHECK_CUDA(cudaStreamDestroy(stream));
  MPI_Finalize();
  return 0;
}
