// host-cost: where a small operation's time goes when operations run back to back (nccl-tests' loop), one
// MPI rank per GPU:
//   - the host time of single CUDA runtime calls that Alloy's launch path makes (pointer attributes, the
//     capture query, the stream's id, an event record and wait, a kernel launch with small and with
//     DirectLaunch-sized parameters), a launch followed by an event record or by a stream write of a word
//     (the two ways to mark a communicator's latest launch), a stream word write and wait with no launch
//     (what handing work to a resident kernel would cost), and all of an allreduce's calls in sequence;
//   - per Alloy call of 8 bytes (allreduce, reduce, broadcast, all-gather, reduce-scatter, alltoall, a
//     send/recv ring in a group; besides, an allreduce of 32 KB and an all-gather of 8 KB per rank): the
//     host time of the call alone ("host"), and the time per call of a batch that then synchronises the
//     stream ("with the GPU"). Where "host" is close to "with the GPU",
//     the host sets the pace of back-to-back calls. "GPU alone": the same batch enqueued behind a kernel
//     that holds the stream until the host has enqueued all of it, timed by events around the batch: the
//     GPU's own time per call, launches' overhead on the host taken out.
// Each figure is the median over rounds of batches on the slowest rank ("GPU alone": the least rank's).
//   mpirun -np <GPUs> --bind-to none host-cost
// With --profile ROW CALLS FILE, no tables: every rank makes CALLS calls of the row named ROW (a name of
// either table) back to back while rank 0 samples its own thread every 20 us (pc_sampler.h) and writes the
// samples to FILE; tools/host-profile/fold-profile.sh turns them into time per module and function.
// With --trace ROW, no tables: every rank makes the row's calls back to back behind a hold (as "GPU alone"
// does), and prints the direct engine's launches split into phases from the kernel trace (a build
// configured with -DALLOY_KERNEL_TRACE=ON; trace_phases.h), one line per rank, and for reductions in
// windows where each round's time goes; rows of 128 MB and 8 MB reductions serve --trace alone.
#include <alloy.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "mpi_gpu_tool.h"
#include "kernel_trace.h"
#include "pc_sampler.h"
#include "trace_phases.h"

#define ALLOY_CHECK(call) TOOL_CHECK(call, alloySuccess, alloyGetErrorString)

namespace {

constexpr int kBatch = 100, kRounds = 15, kGpuRounds = 5;

struct Parameters {  // the size of DirectLaunch (656 bytes when written)
  char bytes[656];
};
__global__ void emptyKernel(int) {}
__global__ void emptyKernelWide(const __grid_constant__ Parameters) {}

// Spins until the GPU's clock passes `until` (ns of %globaltimer): holds a stream while the host enqueues.
__global__ void holdUntil(unsigned long long until) {
  unsigned long long now = 0;
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now < until);
}

// The GPU's clock now, read by a one-thread kernel (ns of %globaltimer).
__global__ void readClock(unsigned long long* now) { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(*now)); }

// A driver entry point looked up through the runtime (no link to libcuda), or NULL.
void* driverEntry(const char* name) {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &entry, 11070, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return entry;
}

struct Row {
  const char* name;
  std::function<void()> call;
};

// A driver result for TOOL_CHECK's message (its name would need libcuda linked).
const char* cuResultText(CUresult r) {
  static char text[32];
  std::snprintf(text, sizeof text, "CUresult %d", static_cast<int>(r));
  return text;
}

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double host, withGpu, gpuAlone;  // us per call; gpuAlone < 0: the hold ended before the batch was enqueued
};

// The GPU's clock (ns), read through stream.
unsigned long long gpuClock(cudaStream_t stream, unsigned long long* word) {
  unsigned long long now = 0;
  readClock<<<1, 1, 0, stream>>>(word);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpyAsync(&now, word, sizeof now, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return now;
}

// The GPU's time per call of a batch enqueued while the stream is held: events around the batch, behind a
// hold long enough for every rank to enqueue it (the same length on every rank, from the slowest rank's
// host time; -1 where the hold ended first). Ranks' holds end a little apart, and the ranks that end first
// wait for the last at their first call: the last rank's time is the GPU's, and the caller takes the least.
double gpuAlone(cudaStream_t stream, const std::function<void()>& call, double hostUs, unsigned long long* word) {
  cudaEvent_t start, end;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&end));
  double slowestHostUs = 0;
  MPI_Allreduce(&hostUs, &slowestHostUs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const unsigned long long holdNs = static_cast<unsigned long long>(slowestHostUs * kBatch * 1000 * 2) + 200000;
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long until = gpuClock(stream, word) + holdNs;
  holdUntil<<<1, 1, 0, stream>>>(until);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(start, stream));
  for (int i = 0; i < kBatch; ++i) call();
  CHECK_CUDA(cudaEventRecord(end, stream));
  const bool enqueuedInTime = cudaEventQuery(start) == cudaErrorNotReady;
  CHECK_CUDA(cudaEventSynchronize(end));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, end));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(end));
  return enqueuedInTime ? ms * 1000.0 / kBatch : -1;
}

// kRounds rounds of kBatch calls of `call`: the host time of each batch, then the batch with the stream's
// synchronisation; medians, the slowest rank's; then the GPU's time alone (gpuAlone), its median over a
// few rounds, the least over the ranks.
Timing timeCalls(cudaStream_t stream, const std::function<void()>& call, unsigned long long* word) {
  std::vector<double> host, all, gpu;
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
  for (int round = 0; round < kGpuRounds; ++round) gpu.push_back(gpuAlone(stream, call, host[kRounds / 2], word));
  std::sort(gpu.begin(), gpu.end());
  Timing mine{host[kRounds / 2], all[kRounds / 2], gpu.front() < 0 ? -1 : gpu[kGpuRounds / 2]}, slowest{};
  MPI_Allreduce(&mine, &slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&mine.gpuAlone, &slowest.gpuAlone, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  int late = mine.gpuAlone < 0, anyLate = 0;
  MPI_Allreduce(&late, &anyLate, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyLate) slowest.gpuAlone = -1;
  return slowest;
}

// The row named `name` in any of the tables, or nullptr.
const Row* findRow(const std::vector<const std::vector<Row>*>& tables, const char* name) {
  for (const std::vector<Row>* table : tables)
    for (const Row& candidate : *table)
      if (std::strcmp(candidate.name, name) == 0) return &candidate;
  return nullptr;
}

// --profile: `calls` calls of the row named `name` on every rank, rank 0 sampling its thread; false where no
// row has that name.
bool profileRow(const std::vector<const std::vector<Row>*>& tables, const char* name, long calls, const char* file,
                int rank, cudaStream_t stream) {
  const Row* row = findRow(tables, name);
  if (row == nullptr) return false;
  for (int i = 0; i < 1000; ++i) row->call();  // warm-up
  CHECK_CUDA(cudaStreamSynchronize(stream));
  MPI_Barrier(MPI_COMM_WORLD);
  PcSampler sampler;
  if (rank == 0 && !sampler.start(20)) std::perror("host-cost: the sampler did not start");
  const double start = seconds();
  for (long i = 0; i < calls; ++i) row->call();
  const double enqueued = seconds();
  sampler.stop();
  CHECK_CUDA(cudaStreamSynchronize(stream));
  if (rank != 0) return true;
  std::FILE* out = std::fopen(file, "w");
  if (out == nullptr) {
    std::perror(file);
    return true;
  }
  std::fprintf(out, "# host-cost --profile '%s': %ld calls, %.2f us per call on the host\n", name, calls,
               (enqueued - start) / calls * 1e6);
  const size_t samples = sampler.write(out);
  std::fclose(out);
  std::printf("host-cost: '%s', %ld calls, %.2f us per call; %zu samples in %s\n", name, calls,
              (enqueued - start) / calls * 1e6, samples, file);
  return true;
}

// --trace: the row's calls, kBatch of them behind a hold (gpuAlone), then each rank's launches of that batch
// split into phases; rank 0 prints a line per rank. False where no row has that name; *traced false
// where the build has no trace.
bool traceRow(const std::vector<const std::vector<Row>*>& tables, const char* name, int rank, int size,
              cudaStream_t stream, unsigned long long* word, bool* traced) {
  const Row* row = findRow(tables, name);
  if (row == nullptr) return false;
  for (int i = 0; i < 1000; ++i) row->call();  // warm-up
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const double start = seconds();
  for (int i = 0; i < kBatch; ++i) row->call();
  const double hostUs = (seconds() - start) / kBatch * 1e6;
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const double gpuUs = gpuAlone(stream, row->call, hostUs, word);
  std::vector<alloy::KernelTraceRecord> records(alloy::kKernelTraceRecords);
  size_t count = 0;
  const alloyResult_t result = alloyDebugKernelTrace(records.data(), records.size(), &count);
  *traced = result == alloySuccess;
  if (!*traced) {
    if (rank == 0) std::fprintf(stderr, "host-cost --trace: %s\n", alloyGetLastError(nullptr));
    return true;
  }
  records.resize(count);
  // The batch's first launch waited for the hold: its gap is the hold's, not the stream's.
  const TracePhases p = tracePhases(records, kBatch - 1);
  const double mine[12] = {static_cast<double>(p.launches), p.gap,    p.loaded,      p.sent,
                           p.received,                      p.end,    p.total,       gpuUs,
                           p.rounds,                        p.roundStores, p.roundReduce, p.roundWhole};
  std::vector<double> all(12 * static_cast<size_t>(size));
  MPI_Gather(mine, 12, MPI_DOUBLE, all.data(), 12, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank != 0) return true;
  std::printf("host-cost --trace '%s': %d calls back to back behind a hold; medians of block 0's stamps, us "
              "(- : not stamped; the bulk steps stamp no sent or received)\n", name, kBatch);
  std::printf("%4s %8s %10s %8s %8s %8s %8s %8s %10s\n", "rank", "launches", "gap before", "loaded", "sent", "received",
              "end", "total", "GPU alone");
  for (int r = 0; r < size; ++r) {
    const double* v = &all[12 * static_cast<size_t>(r)];
    std::printf("%4d %8.0f", r, v[0]);
    const int widths[] = {10, 8, 8, 8, 8, 8, 10};
    for (int k = 1; k < 8; ++k) {
      if (v[k] < 0) std::printf(" %*s", widths[k - 1], "-");
      else std::printf(" %*.2f", widths[k - 1], v[k]);
    }
    std::printf("\n");
  }
  // Windows in rounds (kernel_trace.h, KernelTraceRound): a round's whole beyond its longer half is the
  // stores' drain, the flag round trip and the wait for the slowest peer.
  for (int r = 0; r < size; ++r) {
    const double* v = &all[12 * static_cast<size_t>(r) + 8];
    if (v[0] < 0) continue;
    std::printf("rank %d: %.0f rounds a launch; per round, us: storing half %.2f, reducing half %.2f, whole %.2f, "
                "whole beyond the longer half %.2f\n",
                r, v[0], v[1], v[2], v[3], v[3] - std::max(v[1], v[2]));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, size = 0, devices = 0;
  if (!startOnGpus(&argc, &argv, "host-cost", &rank, &size, &devices)) return 0;
  const bool trace = argc == 3 && std::strcmp(argv[1], "--trace") == 0;
  const bool profiling = argc == 5 && std::strcmp(argv[1], "--profile") == 0;
  const bool oneRow = profiling || trace;  // no tables
  if (argc != 1 && !oneRow) {
    if (rank == 0) std::fprintf(stderr, "usage: host-cost [--profile ROW CALLS FILE | --trace ROW]\n");
    MPI_Finalize();
    return 2;
  }
  CHECK_CUDA(cudaSetDevice(rank % devices));
  cudaStream_t stream;
  cudaEvent_t event;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  char *send = nullptr, *recv = nullptr;
  CHECK_CUDA(cudaMalloc(&send, 1 << 20));
  CHECK_CUDA(cudaMalloc(&recv, 1 << 20));
  CHECK_CUDA(cudaMemset(send, 0, 1 << 20));

  cudaPointerAttributes attributes;
  cudaStreamCaptureStatus capture;
  unsigned long long id = 0;
  int device = 0;
  Parameters wide{};
  unsigned long long* word = nullptr;  // the GPU clock's (gpuAlone) and the stream write's word
  CHECK_CUDA(cudaMalloc(&word, sizeof *word));
  const auto writeWord = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(driverEntry("cuStreamWriteValue32"));
  const auto waitWord = reinterpret_cast<PFN_cuStreamWaitValue32_v11070>(driverEntry("cuStreamWaitValue32"));
  if (writeWord == nullptr || waitWord == nullptr) {
    std::fprintf(stderr, "host-cost: the driver has no cuStreamWriteValue32 or cuStreamWaitValue32\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  uint32_t wordValue = 0;
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
      {"launch <<<64, 512>>>, 656 B, then event record", [&] {
         emptyKernelWide<<<64, 512, 0, stream>>>(wide);
         CHECK_CUDA(cudaGetLastError());
         CHECK_CUDA(cudaEventRecord(event, stream));
       }},
      // A stream memory operation in place of the record: what a launch would cost if the communicator
      // marked its latest launch with a word rather than an event.
      {"launch <<<64, 512>>>, 656 B, then a stream word write", [&] {
         emptyKernelWide<<<64, 512, 0, stream>>>(wide);
         CHECK_CUDA(cudaGetLastError());
         TOOL_CHECK(writeWord(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(word), ++wordValue,
                              CU_STREAM_WRITE_VALUE_DEFAULT),
                    CUDA_SUCCESS, cuResultText);
       }},
      // What enqueuing an operation would cost a kernel that stays resident and is handed its work through
      // memory: a stream write of a word (the operation may start once the stream's earlier work is done)
      // and a stream wait on a word (the stream's later work waits for the operation), no launch.
      {"a stream word write and a stream word wait", [&] {
         const CUstream s = reinterpret_cast<CUstream>(stream);
         const CUdeviceptr w = reinterpret_cast<CUdeviceptr>(word);
         TOOL_CHECK(writeWord(s, w, ++wordValue, CU_STREAM_WRITE_VALUE_DEFAULT), CUDA_SUCCESS, cuResultText);
         TOOL_CHECK(waitWord(s, w, wordValue, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS, cuResultText);
       }},
      // The CUDA calls of an allreduce's launch path, in its order, without Alloy's own work.
      {"the launch path's CUDA calls in sequence", [&] {
         CHECK_CUDA(cudaGetDevice(&device));
         CHECK_CUDA(cudaPointerGetAttributes(&attributes, send));
         CHECK_CUDA(cudaPointerGetAttributes(&attributes, recv));
         CHECK_CUDA(cudaGetDevice(&device));
         CHECK_CUDA(cudaStreamIsCapturing(stream, &capture));
         CHECK_CUDA(cudaStreamGetId(stream, &id));
         emptyKernelWide<<<64, 512, 0, stream>>>(wide);
         CHECK_CUDA(cudaGetLastError());
         CHECK_CUDA(cudaEventRecord(event, stream));
       }},
  };
  if (rank == 0 && !oneRow)
    std::printf("host-cost: %d ranks, one per GPU; us per call, median of %d rounds of %d, slowest rank\n", size,
                kRounds, kBatch);
  const auto print = [rank](const char* name, const Timing& t) {
    if (rank != 0) return;
    if (t.gpuAlone < 0) std::printf("%-48s %8.2f %12.2f %10s\n", name, t.host, t.withGpu, "(late)");
    else std::printf("%-48s %8.2f %12.2f %10.2f\n", name, t.host, t.withGpu, t.gpuAlone);
  };
  if (rank == 0 && !oneRow)
    std::printf("%-48s %8s %12s %10s\n", "CUDA runtime call", "host", "with the GPU", "GPU alone");
  for (const Row& row : runtime) {
    if (oneRow) break;
    timeCalls(stream, row.call, word);  // warm-up: the first launches load kernels
    print(row.name, timeCalls(stream, row.call, word));
  }

  alloyComm_t comm = nullptr;
  ALLOY_CHECK(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  const std::vector<Row> alloy = {
      {"alloyAllReduce 8 B", [&] { ALLOY_CHECK(alloyAllReduce(send, recv, 2, alloyFloat32, alloySum, comm, stream)); }},
      {"alloyAllReduce 32 KB", [&] {
         ALLOY_CHECK(alloyAllReduce(send, recv, 8192, alloyFloat32, alloySum, comm, stream));
       }},
      {"alloyReduce 8 B", [&] { ALLOY_CHECK(alloyReduce(send, recv, 2, alloyFloat32, alloySum, 0, comm, stream)); }},
      {"alloyBroadcast 8 B", [&] { ALLOY_CHECK(alloyBroadcast(send, recv, 2, alloyFloat32, 0, comm, stream)); }},
      {"alloyAllGather 8 B per rank", [&] { ALLOY_CHECK(alloyAllGather(send, recv, 2, alloyFloat32, comm, stream)); }},
      {"alloyAllGather 8 KB per rank", [&] {
         ALLOY_CHECK(alloyAllGather(send, recv, 2048, alloyFloat32, comm, stream));
       }},
      {"alloyReduceScatter 8 B per rank", [&] {
         ALLOY_CHECK(alloyReduceScatter(send, recv, 2, alloyFloat32, alloySum, comm, stream));
       }},
      // nccl-tests' 8 KB row at 4 ranks: in session 12 it took 8.7 us there where the 8-byte row's host and
      // GPU times were 6.4-6.5.
      {"alloyReduceScatter 2 KB per rank", [&] {
         ALLOY_CHECK(alloyReduceScatter(send, recv, 512, alloyFloat32, alloySum, comm, stream));
       }},
      {"alloyAlltoAll 8 B per peer", [&] { ALLOY_CHECK(alloyAlltoAll(send, recv, 2, alloyFloat32, comm, stream)); }},
      {"send/recv ring in a group, 8 B", [&] {
         ALLOY_CHECK(alloyGroupStart());
         ALLOY_CHECK(alloySend(send, 2, alloyFloat32, next, comm, stream));
         ALLOY_CHECK(alloyRecv(recv, 2, alloyFloat32, previous, comm, stream));
         ALLOY_CHECK(alloyGroupEnd());
       }},
  };
  // Reductions for --trace only (not in the tables), in 128 MiB buffers allocated only then: in the direct
  // engine's windows (their rounds) at 128 MB, in lines or one window at 8 MB.
  char *bulkSend = nullptr, *bulkRecv = nullptr;
  constexpr size_t kBulkBytes = size_t{128} << 20, kBulkFloats = kBulkBytes / sizeof(float);
  if (trace) {
    CHECK_CUDA(cudaMalloc(&bulkSend, kBulkBytes));
    CHECK_CUDA(cudaMalloc(&bulkRecv, kBulkBytes));
    CHECK_CUDA(cudaMemset(bulkSend, 0, kBulkBytes));
  }
  const std::vector<Row> bulk = {
      {"alloyAllReduce 128 MB", [&] {
         ALLOY_CHECK(alloyAllReduce(bulkSend, bulkRecv, kBulkFloats, alloyFloat32, alloySum, comm, stream));
       }},
      {"alloyReduce 128 MB", [&] {
         ALLOY_CHECK(alloyReduce(bulkSend, bulkRecv, kBulkFloats, alloyFloat32, alloySum, 0, comm, stream));
       }},
      {"alloyReduceScatter 128 MB", [&] {
         ALLOY_CHECK(alloyReduceScatter(bulkSend, bulkRecv, kBulkFloats / size, alloyFloat32, alloySum, comm, stream));
       }},
      // The medium sizes that issue #32 measures: the reduce by parts in 128-byte lines (3-4 ranks), the
      // allreduce in one window.
      {"alloyReduce 8 MB", [&] {
         ALLOY_CHECK(alloyReduce(bulkSend, bulkRecv, kBulkFloats / 16, alloyFloat32, alloySum, 0, comm, stream));
       }},
      {"alloyAllReduce 8 MB", [&] {
         ALLOY_CHECK(alloyAllReduce(bulkSend, bulkRecv, kBulkFloats / 16, alloyFloat32, alloySum, comm, stream));
       }},
  };
  bool traced = true;
  const bool unknownRow =
      trace ? !traceRow({&runtime, &alloy, &bulk}, argv[2], rank, size, stream, word, &traced)
            : profiling && !profileRow({&runtime, &alloy}, argv[2], std::atol(argv[3]), argv[4], rank, stream);
  if (unknownRow && rank == 0) std::fprintf(stderr, "host-cost: no row named '%s'\n", argv[2]);
  if (rank == 0 && !oneRow) std::printf("%-48s %8s %12s %10s\n", "Alloy call", "host", "with the GPU", "GPU alone");
  for (const Row& row : alloy) {
    if (oneRow) break;
    timeCalls(stream, row.call, word);  // warm-up: the first launches load kernels
    print(row.name, timeCalls(stream, row.call, word));
  }
  CHECK_CUDA(cudaFree(word));
  CHECK_CUDA(cudaFree(bulkSend));
  CHECK_CUDA(cudaFree(bulkRecv));
  ALLOY_CHECK(alloyCommDestroy(comm));
  CHECK_CUDA(cudaFree(send));
  CHECK_CUDA(cudaFree(recv));
  CHECK_CUDA(cudaEventDestroy(event));
  CHECK_CUDA(cudaStreamDestroy(stream));
  MPI_Finalize();
  return unknownRow || !traced ? 2 : 0;
}
