// main() of alloy_gpu_tests, run under mpirun with one process per rank.
//
// Without a CUDA device every rank prints "skipped: no CUDA device" and exits 77 (ctest's
// SKIP_RETURN_CODE). Otherwise GoogleTest runs on every rank in the same order; only rank 0 prints
// (the other ranks' failure messages are gathered and printed by rank 0 at the end, or printed
// directly with ALLOY_TEST_VERBOSE=1), and the exit code is 1 when any rank failed anything.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_util.h"

namespace {

// Collects this rank's failed assertions, for rank 0 to print after the run.
class FailureCollector : public ::testing::EmptyTestEventListener {
 public:
  // GoogleTest calls OnTestPartResult under its own lock: asking UnitTest for the current test there
  // would deadlock, so the name is noted when the test starts.
  void OnTestStart(const ::testing::TestInfo& info) override {
    test_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestEnd(const ::testing::TestInfo&) override { test_ = "(outside a test)"; }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    const std::string message = result.message();
    if (message.compare(0, sizeof(alloytest::kOtherRanksFailed) - 1, alloytest::kOtherRanksFailed) != 0) ownFailures_ = true;
    std::ostringstream os;
    os << test_ << " at " << (result.file_name() != nullptr ? result.file_name() : "?") << ":" << result.line_number()
       << "\n" << result.message() << "\n";
    log_ += os.str();
  }
  const std::string& log() const { return log_; }
  // Whether this rank failed anything itself (rank 0 also fails a test on behalf of other ranks).
  bool ownFailures() const { return ownFailures_; }

 private:
  std::string log_;
  std::string test_ = "(outside a test)";
  bool ownFailures_ = false;
};

uint64_t drawBaseSeed() {
  if (const char* fixed = std::getenv("ALLOY_TEST_SEED")) {
    if (fixed[0] != '\0') return std::strtoull(fixed, nullptr, 0);
  }
  std::random_device device;
  const uint64_t clock = static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return alloytest::mix64((static_cast<uint64_t>(device()) << 32 ^ device()) ^ clock);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();
    devices = 0;
  }
  int fewest = 0;
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest == 0) {
    std::printf("skipped: no CUDA device\n");
    std::fflush(stdout);
    MPI_Finalize();
    return 77;
  }

  ::testing::InitGoogleTest(&argc, argv);

  // One base seed for the run, from rank 0: the tests' data are fresh each run, equal in shape on all
  // ranks, and a failure can be replayed with ALLOY_TEST_SEED.
  uint64_t seed = rank == 0 ? drawBaseSeed() : 0;
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  alloytest::setBaseSeed(seed);
  // Every rank must run the tests in the same order, also under --gtest_shuffle.
  int shuffleSeed = GTEST_FLAG_GET(random_seed);
  if (shuffleSeed == 0) shuffleSeed = static_cast<int>(seed % 99999) + 1;  // GoogleTest's range is 1..99999
  MPI_Bcast(&shuffleSeed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  GTEST_FLAG_SET(random_seed, shuffleSeed);

  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  auto* collector = new FailureCollector;
  listeners.Append(collector);  // owned by GoogleTest
  const char* verbose = std::getenv("ALLOY_TEST_VERBOSE");
  const bool allPrint = verbose != nullptr && verbose[0] != '\0' && verbose[0] != '0';
  if (rank != 0 && !allPrint) delete listeners.Release(listeners.default_result_printer());
  if (rank == 0)
    std::printf("alloy_gpu_tests: %d rank(s), %d CUDA device(s) visible, base seed %s\n", nranks, devices,
                alloytest::hex(seed).c_str());

  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;

  // Rank 0 prints the other ranks' failures.
  std::string log = rank == 0 || allPrint ? std::string() : collector->log();
  int length = static_cast<int>(log.size());
  std::vector<int> lengths(nranks, 0), offsets(nranks, 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < nranks; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<char> all(rank == 0 ? total + 1 : 1, '\0');
  MPI_Gatherv(log.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);

  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const int ownFailed = collector->ownFailures() ? 1 : 0;
  std::vector<int> whoFailed(nranks, 0);
  MPI_Gather(&ownFailed, 1, MPI_INT, whoFailed.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 1; r < nranks; ++r) {
      if (lengths[r] == 0) continue;
      std::printf("\n[rank %d] failures:\n%.*s", r, lengths[r], all.data() + offsets[r]);
    }
    if (anyFailed) {
      std::printf("\nalloy_gpu_tests FAILED on rank(s):");
      for (int r = 0; r < nranks; ++r)
        if (whoFailed[r]) std::printf(" %d", r);
      std::printf(" (base seed %s: rerun with ALLOY_TEST_SEED=%s)\n", alloytest::hex(seed).c_str(),
                  alloytest::hex(seed).c_str());
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return anyFailed ? 1 : 0;
}
