// copy-engines: what one round of the network channel's stream work costs when two processes share a
// GPU, and which engine runs each kind of copy (docs/architecture.md, "Copy engines for the staging
// copies"). A round is a list of steps on a non-blocking stream: copies between a device buffer and
// pinned, mapped host memory, copies within the device, and a doorbell (a stream write of 1 that a host
// thread clears, and a stream wait for the 0), as lib/coll/p2p_plan.cc enqueues them. Run two at once
// (run-pair.sh): a round whose work mixes the compute engine and the copy engines waits for the other
// process's time slice, so its time tells which engine ran a copy.
//
//   copy-engines METHOD BYTES STEPS [SECONDS]
//     METHOD  linear: cudaMemcpyAsync; staged: enqueueStagedCopy (two-row copies below 4 KiB)
//     STEPS   comma-separated: d2h, h2d (BYTES each way), d2d (within the device), big-d2h (4 KiB
//             with cudaMemcpyAsync, a copy engine's), bell
//   Prints the median time per round of batches of 20 rounds over SECONDS (default 2).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "staged_copy.h"
#include "stream_word.h"

namespace {

constexpr size_t kSpace = 1 << 20;

[[noreturn]] void die(const char* what, const char* detail) {
  std::fprintf(stderr, "copy-engines: %s: %s\n", what, detail);
  std::exit(1);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(what, cudaGetErrorString(e));
}

void check(alloyResult_t r, const char* what) {
  if (r != alloySuccess) die(what, alloyGetLastError(nullptr));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) die("usage", "copy-engines linear|staged BYTES STEPS [SECONDS]");
  const std::string method = argv[1];
  if (method != "linear" && method != "staged") die("METHOD", "expected linear or staged");
  const size_t bytes = std::strtoull(argv[2], nullptr, 10);
  if (bytes == 0 || bytes > kSpace / 2) die("BYTES", "expected 1 .. 512 KiB");
  std::vector<std::string> steps;
  std::stringstream list(argv[3]);
  for (std::string step; std::getline(list, step, ',');) steps.push_back(step);
  const double seconds = argc > 4 ? std::atof(argv[4]) : 2.0;

  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  char *device = nullptr, *host = nullptr;
  uint32_t* bell = nullptr;
  check(cudaMalloc(&device, 2 * kSpace), "cudaMalloc");
  check(cudaHostAlloc(reinterpret_cast<void**>(&host), kSpace, cudaHostAllocMapped | cudaHostAllocPortable),
        "cudaHostAlloc");
  check(cudaHostAlloc(reinterpret_cast<void**>(&bell), 4096, cudaHostAllocMapped | cudaHostAllocPortable),
        "cudaHostAlloc");
  *bell = 0;
  void* bellForDevice = nullptr;
  check(cudaHostGetDevicePointer(&bellForDevice, bell, 0), "cudaHostGetDevicePointer");

  // The proxy's part: clear the doorbell as soon as it is rung.
  std::atomic<bool> stop{false};
  std::thread proxy([&] {
    while (!stop.load(std::memory_order_relaxed))
      if (__atomic_load_n(bell, __ATOMIC_ACQUIRE) != 0) __atomic_store_n(bell, 0u, __ATOMIC_RELEASE);
  });
  const auto copy = [&](void* dst, const void* src, size_t n) {
    if (method == "staged") check(alloy::enqueueStagedCopy(alloy::StagedCopy{dst, src, n}, stream), "staged copy");
    else check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream), "cudaMemcpyAsync");
  };
  const auto round = [&] {
    for (const std::string& step : steps) {
      if (step == "d2h") copy(host, device, bytes);
      else if (step == "h2d") copy(device + kSpace, host + kSpace / 2, bytes);
      else if (step == "d2d") copy(device + kSpace / 2, device, bytes);
      else if (step == "big-d2h")
        check(cudaMemcpyAsync(host + kSpace / 4, device, 4096, cudaMemcpyDefault, stream), "big-d2h");
      else if (step == "bell") {
        check(alloy::streamWriteWord(stream, bellForDevice, 1, "copy-engines"), "stream write");
        check(alloy::streamWaitWordEquals(stream, bellForDevice, 0, "copy-engines"), "stream wait");
      } else {
        die("STEPS", ("unknown step " + step).c_str());
      }
    }
  };
  for (int i = 0; i < 20; ++i) round();
  check(cudaStreamSynchronize(stream), "warm-up");
  // Batches over a fixed time, and their median: two processes started a little apart still overlap.
  std::vector<double> perRound;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) round();
    check(cudaStreamSynchronize(stream), "batch");
    perRound.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20);
  }
  stop = true;
  proxy.join();
  std::sort(perRound.begin(), perRound.end());
  std::printf("%-7s %7zu %-24s %8.1f us per round\n", method.c_str(), bytes, argv[3], perRound[perRound.size() / 2]);
  return 0;
}
